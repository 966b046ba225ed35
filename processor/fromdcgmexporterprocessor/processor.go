package fromdcgmexporterprocessor

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmmapping"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadata"
)

// Reasons a data point is refused, the reason attribute of
// rejected_data_points.
const (
	reasonNoUUID     = "no_uuid"
	reasonTwoHosts   = "uuid_on_two_hosts"
	reasonNotFinite  = "not_finite"
	reasonOutOfRange = "out_of_range"
	reasonBadLabel   = "bad_label"
	reasonWrongType  = "wrong_type"
	reasonOutOfOrder = "out_of_order"
	reasonFuture     = "future_timestamp"
	reasonTooMany    = "too_many_gpus"
)

// cumulative are the fields DCGM keeps as running totals. dcgm-exporter
// serves them as counters or gauges, as its counters file says; either way
// a value lower than the last one is a reset.
var cumulative = []f.Field{
	f.TotalEnergy, f.PowerViolation, f.ThermalViolation, f.ECCSBEVolTotal, f.ECCDBEVolTotal,
	f.CorrectableRemappedRows, f.UncorrectableRemappedRows, f.PCIeReplayCounter,
}

// maxXIDCount bounds a DCGM_EXP_XID_ERRORS_COUNT value: one increase
// becomes that many events, and no GPU logs a million XIDs in a window.
const maxXIDCount = 1 << 20

// translator is the processor. It keeps, per device, what translation
// needs between scrapes (the last XID, the XID counts, the cumulative
// counters, the epoch), and the dcgm receiver's mapping, which keeps the
// counters' baselines and start times.
type translator struct {
	cfg *Config
	tb  *metadata.TelemetryBuilder
	now func() time.Time

	mu      sync.Mutex
	mapping offline.Receiver
	devices map[string]*device
	// clock is the newest data time seen, for gpu_ttl.
	clock     pcommon.Timestamp
	lastSweep pcommon.Timestamp

	// per batch
	pending  map[sampleKey]*pending
	rejected map[string]int64
	resets   int64
	xids     [2]int64 // events from the XID count, from the last XID
}

// device is the state of one GPU or MIG instance between scrapes.
type device struct {
	host    string
	touched pcommon.Timestamp // newest data point accepted
	last    pcommon.Timestamp // newest sample translated
	epoch   uint64

	counters    [f.Count]float64
	hasCounters [f.Count]bool

	lastXIDSeen bool
	lastXID     uint32
	xidCounts   map[uint32]float64 // nil until the XID count was seen
}

type sampleKey struct {
	id string
	ts pcommon.Timestamp
}

// pending is one device's sample at one scrape, as its data points come in.
type pending struct {
	key     sampleKey
	seq     int // order of first appearance in the batch
	dev     gpu.Device
	mig     gpu.MIG
	values  f.Values
	lastXID float64
	hasXID  bool
	counts  map[uint32]float64 // the XID count, when served (possibly empty)
}

func newTranslator(cfg *Config, set processor.Settings) (*translator, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	// The receiver's mapping gets no telemetry of its own (it is never
	// started), but the collector's version for its scope, as the receiver
	// in the same collector would have.
	tel := componenttest.NewNopTelemetrySettings()
	tel.Logger = set.Logger
	m, err := dcgmmapping.New(receiver.Settings{ID: component.NewID(metadata.Type), TelemetrySettings: tel, BuildInfo: set.BuildInfo})
	if err != nil {
		tb.Shutdown()
		return nil, err
	}
	return &translator{
		cfg:      cfg,
		tb:       tb,
		now:      time.Now,
		mapping:  m,
		devices:  map[string]*device{},
		pending:  map[sampleKey]*pending{},
		rejected: map[string]int64{},
	}, nil
}

func (t *translator) shutdown(context.Context) error {
	t.tb.Shutdown()
	return nil
}

// source says what a metric is to the processor.
type source int

const (
	other    source = iota // not dcgm-exporter's, or a field it does not translate
	field                  // a DCGM field of the catalog
	xidCount               // DCGM_EXP_XID_ERRORS_COUNT
	smi                    // nvidia_gpu_exporter's series of a DCGM field (smi.go)
	smiInfo                // nvidia_gpu_exporter's nvidia_smi_gpu_info
)

func classify(name string) (source, f.Field) {
	if name == f.XIDCountMetric {
		return xidCount, 0
	}
	if fl, ok := legacyNames[name]; ok {
		return field, fl
	}
	if s, ok := smiNames[name]; ok {
		return smi, s.field
	}
	if name == smiInfoMetric {
		return smiInfo, 0
	}
	if !strings.HasPrefix(name, "DCGM_FI_") {
		return other, 0
	}
	if fl, ok := f.ByName(name); ok {
		return field, fl
	}
	return other, 0
}

// processMetrics translates the batch's dcgm-exporter series and appends
// the translation, one resource per device and scrape, to the batch.
func (t *translator) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	clear(t.pending)
	clear(t.rejected)
	t.resets, t.xids = 0, [2]int64{}
	horizon := pcommon.NewTimestampFromTime(t.now().Add(t.cfg.GPUTTL))

	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				t.read(ms.At(k), horizon)
			}
		}
	}
	samples := t.samples()
	if !t.cfg.KeepOriginals {
		dropTranslated(md)
	}
	if len(samples) > 0 {
		out := t.mapping.Map(samples)
		out.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	t.sweep()
	t.record(ctx)
	return md, nil
}

// read takes the data points of one metric.
func (t *translator) read(m pmetric.Metric, horizon pcommon.Timestamp) {
	src, fl := classify(m.Name())
	if src == other {
		return
	}
	dps, ok := metricpoints.Of(m)
	if !ok {
		t.rejected[reasonWrongType] += int64(metricpoints.Count(m))
		return
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		if dp.Flags().NoRecordedValue() {
			// A staleness marker: the series is gone. Nothing to translate,
			// and nothing wrong.
			continue
		}
		if reason := t.point(src, fl, dp, horizon); reason != "" {
			t.rejected[reason]++
		}
	}
}

// point takes one data point into its device's pending sample, or returns
// why not.
func (t *translator) point(src source, fl f.Field, dp pmetric.NumberDataPoint, horizon pcommon.Timestamp) string {
	var v float64
	switch dp.ValueType() {
	case pmetric.NumberDataPointValueTypeDouble:
		v = dp.DoubleValue()
	case pmetric.NumberDataPointValueTypeInt:
		v = float64(dp.IntValue())
	default:
		return reasonWrongType
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return reasonNotFinite
	}
	attrs := dp.Attributes()
	uuid := label(attrs, f.LabelUUID, f.LabelUUIDOld)
	if uuid == "" {
		return reasonNoUUID
	}
	if src == smi || src == smiInfo {
		uuid = smiUUID(uuid)
		v *= smiScale[fl]
	}
	ts := dp.Timestamp()
	if ts > horizon {
		return reasonFuture
	}
	id := uuid
	var mig *gpu.MIG
	board := false
	if gi := label(attrs, f.LabelGPUInstanceID); gi != "" {
		n, err := strconv.Atoi(gi)
		if err != nil || n < 0 {
			return reasonBadLabel
		}
		if board = boardField(src, fl); !board {
			mig = &gpu.MIG{ParentUUID: uuid, GPUInstance: n, Profile: label(attrs, f.LabelGPUInstanceProfile)}
			id = migID(uuid, n)
		}
	}
	var xid uint32
	hasXID := false
	switch {
	case src == xidCount:
		if code := label(attrs, f.LabelXID); code != "" {
			n, err := strconv.ParseUint(code, 10, 32)
			if err != nil {
				return reasonBadLabel
			}
			xid, hasXID = uint32(n), true
		}
		if v < 0 || v > maxXIDCount || v != math.Trunc(v) {
			return reasonOutOfRange
		}
	case src == smiInfo:
	case fl == f.XIDErrors:
		if v < 0 || v > math.MaxUint32 || v != math.Trunc(v) {
			return reasonOutOfRange
		}
	case !f.Valid(fl, v):
		return reasonOutOfRange
	}
	index, ok := gpuIndex(attrs)
	if !ok {
		return reasonBadLabel
	}
	host := label(attrs, f.LabelHostname, f.LabelHostnameNew)

	d := t.devices[id]
	if d == nil {
		if len(t.devices) >= t.cfg.MaxGPUs {
			return reasonTooMany
		}
		d = &device{host: host, epoch: 1}
		t.devices[id] = d
	}
	switch {
	case d.host == "":
		d.host = host
	case host != "" && host != d.host:
		return reasonTwoHosts
	}
	if ts <= d.last {
		return reasonOutOfOrder
	}
	d.touched = max(d.touched, ts)
	t.clock = max(t.clock, ts)

	key := sampleKey{id: id, ts: ts}
	p := t.pending[key]
	if p == nil {
		p = &pending{key: key, seq: len(t.pending)}
		p.dev = gpu.Device{
			UUID:          id,
			Index:         index,
			Model:         label(attrs, f.LabelModelName),
			DriverVersion: label(attrs, f.LabelDriverVersion),
			PCIBusID:      label(attrs, f.LabelPCIBusID),
			Host:          d.host,
		}
		if mig != nil {
			p.mig = *mig
			p.dev.MIG = &p.mig
		}
		if !board {
			p.dev.Pod = podOf(attrs)
		}
		t.pending[key] = p
	} else if pod := podOf(attrs); !board && pod.Name != "" && (p.dev.Pod.Name == "" || podLess(pod, p.dev.Pod)) {
		// A GPU shared by several pods is served once per pod, with the
		// same values: the first pod in name order gets it.
		p.dev.Pod = pod
	}
	switch {
	case src == smiInfo:
		applySMIInfo(&p.dev, attrs)
	case src == xidCount:
		if p.counts == nil {
			p.counts = map[uint32]float64{}
		}
		if hasXID {
			p.counts[xid] = v
		}
	case fl == f.XIDErrors:
		p.lastXID, p.hasXID = v, true
	default:
		p.values.Set(fl, v)
	}
	return ""
}

// gpuIndex reads the GPU's index from the gpu label, or the device label
// (nvidiaN) without it; a device with neither is GPU 0.
func gpuIndex(attrs pcommon.Map) (int, bool) {
	if s := label(attrs, f.LabelGPU); s != "" {
		n, err := strconv.Atoi(s)
		return n, err == nil && n >= 0
	}
	if s, ok := strings.CutPrefix(label(attrs, f.LabelDevice), "nvidia"); ok {
		if n, err := strconv.Atoi(s); err == nil && n >= 0 {
			return n, true
		}
	}
	return 0, true
}

// podOf reads the pod a device is allocated to. A scrape whose target has
// labels of its own named namespace, pod or container (Kubernetes service
// discovery relabelled so, without honor_labels) keeps dcgm-exporter's as
// exported_namespace, exported_pod and exported_container: those are the
// workload's, the others dcgm-exporter's own pod.
func podOf(attrs pcommon.Map) gpu.Pod {
	if pod := label(attrs, "exported_"+f.LabelPod); pod != "" {
		return gpu.Pod{
			Namespace: label(attrs, "exported_"+f.LabelNamespace),
			Name:      pod,
			Container: label(attrs, "exported_"+f.LabelContainer),
		}
	}
	pod := label(attrs, f.LabelPod)
	if pod == "" {
		return legacyPod(attrs)
	}
	return gpu.Pod{Namespace: label(attrs, f.LabelNamespace), Name: pod, Container: label(attrs, f.LabelContainer)}
}

func podLess(a, b gpu.Pod) bool {
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Container < b.Container
}

// label returns the first of the names that the attributes hold as a
// non-empty string.
func label(attrs pcommon.Map, names ...string) string {
	for _, n := range names {
		if v, ok := attrs.Get(n); ok && v.Type() == pcommon.ValueTypeStr && v.Str() != "" {
			return v.Str()
		}
	}
	return ""
}

// samples turns the batch's pending samples, in time order, into the
// samples the receiver's mapping takes, updating each device's state.
func (t *translator) samples() []gpu.Sample {
	if len(t.pending) == 0 {
		return nil
	}
	ps := make([]*pending, 0, len(t.pending))
	for _, p := range t.pending {
		ps = append(ps, p)
	}
	// In time order, and at one time in the order the devices came in
	// (dcgm-exporter's, by GPU index).
	slices.SortFunc(ps, func(a, b *pending) int {
		if a.key.ts != b.key.ts {
			return cmpTS(a.key.ts, b.key.ts)
		}
		return a.seq - b.seq
	})
	out := make([]gpu.Sample, 0, len(ps))
	for _, p := range ps {
		d := t.devices[p.key.id]
		if d == nil || p.key.ts <= d.last {
			continue // forgotten or overtaken; cannot happen within a batch
		}
		d.last = p.key.ts
		t.counters(d, &p.values)
		xids := t.xidEvents(d, p)
		if p.values.Len() == 0 && len(xids) == 0 {
			// Nothing but XID bookkeeping: a sample with no value says
			// nothing, as the receiver's backends leave it out.
			continue
		}
		dev := p.dev
		if dev.MIG != nil {
			m := *dev.MIG
			dev.MIG = &m
		}
		out = append(out, gpu.Sample{
			Device: &dev,
			Time:   p.key.ts.AsTime(),
			Values: p.values,
			XIDs:   xids,
			Epoch:  d.epoch,
		})
	}
	return out
}

func cmpTS(a, b pcommon.Timestamp) int {
	if a < b {
		return -1
	}
	return 1
}

// counters holds each cumulative field's last value; one that went down
// was reset (a driver reload, a GPU reset): the device's counters start a
// new epoch, as they do in the receiver when its source reconnects.
func (t *translator) counters(d *device, vs *f.Values) {
	reset := false
	for _, fl := range cumulative {
		v, ok := vs.Get(fl)
		if !ok {
			continue
		}
		if d.hasCounters[fl] && v < d.counters[fl] {
			reset = true
		}
		d.counters[fl], d.hasCounters[fl] = v, true
	}
	if reset {
		d.epoch++
		t.resets++
	}
}

// xidEvents infers the XID events since the device's previous scrape.
// dcgm-exporter's XID count (DCGM_EXP_XID_ERRORS_COUNT), where served, is
// preferred: each unit of increase of a code's count in the window is one
// event. Otherwise DCGM_FI_DEV_XID_ERRORS, the last XID's code: a change
// to a new non-zero code is one event, and a repeat of the same code is
// invisible. At a device's first scrape both are history, not events.
func (t *translator) xidEvents(d *device, p *pending) []uint32 {
	var xids []uint32
	lastXID := uint32(p.lastXID)
	switch {
	case p.counts != nil:
		if d.xidCounts != nil {
			codes := make([]uint32, 0, len(p.counts))
			for code := range p.counts {
				codes = append(codes, code)
			}
			slices.Sort(codes)
			for _, code := range codes {
				for n := p.counts[code] - d.xidCounts[code]; n > 0; n-- {
					xids = append(xids, code)
				}
			}
			t.xids[0] += int64(len(xids))
		}
		d.xidCounts = p.counts
	case p.hasXID && d.lastXIDSeen && lastXID != 0 && lastXID != d.lastXID:
		xids = append(xids, lastXID)
		t.xids[1]++
	}
	if p.hasXID {
		d.lastXID, d.lastXIDSeen = lastXID, true
	}
	return xids
}

// sweep forgets the devices not scraped for gpu_ttl of data time.
func (t *translator) sweep() {
	ttl := pcommon.Timestamp(t.cfg.GPUTTL)
	if t.clock-t.lastSweep < ttl/4 {
		return
	}
	t.lastSweep = t.clock
	for id, d := range t.devices {
		if d.touched+ttl < t.clock {
			delete(t.devices, id)
		}
	}
}

func (t *translator) record(ctx context.Context) {
	for reason, n := range t.rejected {
		t.tb.ProcessorFromDcgmExporterRejectedDataPoints.Add(ctx, n, metric.WithAttributes(attribute.String("reason", reason)))
	}
	if t.resets > 0 {
		t.tb.ProcessorFromDcgmExporterCounterResets.Add(ctx, t.resets)
	}
	if t.xids[0] > 0 {
		t.tb.ProcessorFromDcgmExporterXidEvents.Add(ctx, t.xids[0], metric.WithAttributes(attribute.String("source", "xid_count")))
	}
	if t.xids[1] > 0 {
		t.tb.ProcessorFromDcgmExporterXidEvents.Add(ctx, t.xids[1], metric.WithAttributes(attribute.String("source", "last_xid")))
	}
	t.tb.ProcessorFromDcgmExporterTrackedGpus.Record(ctx, int64(len(t.devices)))
}

// dropTranslated removes the metrics the processor translates, and the
// scopes and resources that held nothing else.
func dropTranslated(md pmetric.Metrics) {
	md.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
		sms := rm.ScopeMetrics()
		if sms.Len() == 0 {
			return false
		}
		removed := false
		sms.RemoveIf(func(sm pmetric.ScopeMetrics) bool {
			ms := sm.Metrics()
			n := ms.Len()
			ms.RemoveIf(func(m pmetric.Metric) bool {
				src, _ := classify(m.Name())
				return src != other && (m.Type() == pmetric.MetricTypeGauge || m.Type() == pmetric.MetricTypeSum)
			})
			if ms.Len() < n {
				removed = true
				return ms.Len() == 0
			}
			return false
		})
		return removed && sms.Len() == 0
	})
}
