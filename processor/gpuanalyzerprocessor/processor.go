package gpuanalyzerprocessor

import (
	"context"
	"math"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// StepComputeDurationMetric is the metric a training framework reports, on
// the GPU's resource (hw.id), with one rank's compute time per training step,
// excluding the time spent waiting in collectives. It is what tells a slow
// rank in synchronous training, where every rank's wall-clock step is equal.
const StepComputeDurationMetric = "training.step.compute.duration"

// Names of the metrics the analyzer adds.
const (
	MetricBottleneckState = "nvidia.gpu.bottleneck.state"
	MetricBottleneckTime  = "nvidia.gpu.bottleneck.time"
	MetricStragglerState  = "nvidia.gpu.straggler.state"
	MetricStragglerScore  = "nvidia.gpu.straggler.score"
	MetricAlerts          = "nvidia.gpu.alerts"

	AttrBottleneckClass = "nvidia.gpu.bottleneck.class"
	// AttrBottleneckHint is the next step for the class, on the current
	// class's state; absent where there is none (idle, unknown).
	AttrBottleneckHint = "nvidia.gpu.bottleneck.hint"
	AttrAlertName      = "alertname"
	AttrAlertState     = "alertstate"
	AttrSeverity       = "severity"
)

type analyzerProcessor struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder

	mu sync.Mutex
	an *analysis.Analyzer
	// rms maps each GPU of the batch being processed to its resource.
	rms     map[string]pmetric.ResourceMetrics
	scratch []byte
	keys    map[string]string // interned group keys
	evicted int64             // evictions already counted in telemetry

	// client keeps the state across restarts, when storage is configured.
	client   storage.Client
	chunks   int   // chunks written last
	lastSave int64 // data time of the last checkpoint

	prices   *pricer
	costOn   bool          // prices are configured: emit nvidia.gpu.cost
	costUnit string        // {USD}
	summary  *fleetSummary // nil unless summary_interval is set

	// bad counts the batch's data points not analysed for what they are,
	// reported as rejected_data_points; now is the clock they are checked
	// against.
	bad rejectCounts
	now func() time.Time
}

func newAnalyzerProcessor(cfg *Config, set processor.Settings) (*analyzerProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &analyzerProcessor{
		cfg:    cfg,
		id:     set.ID,
		logger: set.Logger,
		tb:     tb,
		an:     analysis.New(cfg.analysisConfig()),
		rms:    map[string]pmetric.ResourceMetrics{},
		keys:   map[string]string{},

		prices:   newPricer(&cfg.Cost),
		costOn:   cfg.Cost.enabled(),
		costUnit: "{" + cfg.Cost.Currency + "}",
		now:      time.Now,
	}
	p.an.Notify = p.logTransition
	if cfg.SummaryInterval > 0 {
		p.summary = newFleetSummary(set.Logger, cfg)
	}
	return p, nil
}

func (p *analyzerProcessor) shutdown(ctx context.Context) error {
	err := p.closeStorage(ctx)
	p.tb.Shutdown()
	return err
}

// processMetrics analyses every GPU resource of the batch and adds the
// verdicts to it. Everything that came in goes out unchanged.
func (p *analyzerProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var unanalyzed, ignored, rejected, outOfOrder, latest int64
	rms := md.ResourceMetrics()
	var s analysis.Sample
	p.bad = rejectCounts{horizon: p.now().Add(p.cfg.GPUTTL).UnixNano()}
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		idv, ok := attrs.Get("hw.id")
		if !ok || idv.Type() != pcommon.ValueTypeStr || idv.Str() == "" {
			unanalyzed += int64(dataPoints(rm))
			continue
		}
		id := idv.Str()
		s.Reset()
		var fb frameBuffer
		ignored += p.extract(rm, &s, &fb)
		fb.into(&s)
		if s.Time == 0 {
			continue // no GPU reading on this resource
		}
		latest = max(latest, s.Time)
		s.Group = p.groupKey(attrs)
		_, s.PodAttributed = attrs.Get("k8s.pod.name")
		if p.costOn {
			s.PricePerHour = p.prices.of(attrs)
		}
		res := p.an.Ingest(id, &s)
		if res == analysis.Flush {
			p.an.Evaluate(p.emit)
			clear(p.rms)
			res = p.an.Ingest(id, &s)
		}
		switch res {
		case analysis.Accepted:
			p.rms[id] = rm
		case analysis.Rejected:
			rejected++
		case analysis.OutOfOrder:
			outOfOrder++
		}
	}
	p.an.Evaluate(p.emit)
	clear(p.rms)
	p.checkpoint(ctx, latest)
	if p.summary != nil {
		p.summary.flush()
	}

	p.tb.ProcessorGpuAnalyzerTrackedGpus.Record(ctx, int64(p.an.Tracked()))
	if unanalyzed > 0 {
		p.tb.ProcessorGpuAnalyzerUnanalyzedDataPoints.Add(ctx, unanalyzed)
	}
	if ignored > 0 {
		p.tb.ProcessorGpuAnalyzerValuesIgnored.Add(ctx, ignored)
	}
	if rejected > 0 {
		p.tb.ProcessorGpuAnalyzerGpusRejected.Add(ctx, rejected)
	}
	p.bad.record(ctx, p.tb)
	if outOfOrder > 0 {
		p.tb.ProcessorGpuAnalyzerSamplesOutOfOrder.Add(ctx, outOfOrder)
	}
	if ev := p.an.Counters().Evicted; ev > p.evicted {
		p.tb.ProcessorGpuAnalyzerGpusEvicted.Add(ctx, ev-p.evicted)
		p.evicted = ev
	}
	return md, nil
}

// groupKey joins the group_by attributes; a GPU missing any has no group.
func (p *analyzerProcessor) groupKey(attrs pcommon.Map) string {
	if len(p.cfg.GroupBy) == 0 {
		return ""
	}
	b := p.scratch[:0]
	for i, k := range p.cfg.GroupBy {
		v, ok := attrs.Get(k)
		if !ok || v.AsString() == "" {
			return ""
		}
		if i > 0 {
			b = append(b, 0)
		}
		b = append(b, v.AsString()...)
	}
	p.scratch = b
	// Intern: the same few keys come with every batch.
	if k, ok := p.keys[string(b)]; ok {
		return k
	}
	k := string(b)
	if len(p.keys) < 4*p.cfg.MaxGPUs {
		p.keys[k] = k
	}
	return k
}

func dataPoints(rm pmetric.ResourceMetrics) int {
	n := 0
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				n += m.Gauge().DataPoints().Len()
			case pmetric.MetricTypeSum:
				n += m.Sum().DataPoints().Len()
			case pmetric.MetricTypeHistogram:
				n += m.Histogram().DataPoints().Len()
			case pmetric.MetricTypeExponentialHistogram:
				n += m.ExponentialHistogram().DataPoints().Len()
			case pmetric.MetricTypeSummary:
				n += m.Summary().DataPoints().Len()
			}
		}
	}
	return n
}

func attrStr(dp pmetric.NumberDataPoint, key string) string {
	v, ok := dp.Attributes().Get(key)
	if !ok {
		return ""
	}
	return v.Str()
}

// extract reads one GPU's readings from its resource's metrics. It returns
// the number of readings ignored as NaN, negative or out of range.
func (p *analyzerProcessor) extract(rm pmetric.ResourceMetrics, s *analysis.Sample, fb *frameBuffer) (ignored int64) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		if sms.At(i).Scope().Name() == metadata.ScopeName {
			continue // our own verdicts, from an earlier pass
		}
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			dps, ok := metricpoints.Of(m)
			if !ok {
				p.bad.wrongType(m)
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				if p.bad.future(dp) {
					continue
				}
				if !p.read(m.Name(), dp, s, fb) {
					ignored++
				}
			}
		}
	}
	return ignored
}

// read takes one data point into the sample. It returns false if the value
// is not a plausible reading.
func (p *analyzerProcessor) read(name string, dp pmetric.NumberDataPoint, s *analysis.Sample, fb *frameBuffer) bool {
	v := metricpoints.Value(dp)
	in := func(lo, hi float64) bool { return !math.IsNaN(v) && v >= lo && v <= hi }
	ratio := func(dst *float64, bit uint16) bool {
		if !in(0, 1) {
			return false
		}
		*dst, s.Has = v, s.Has|bit
		return true
	}
	ok := true
	used := true
	switch name {
	case "nvidia.gpu.sm.active":
		ok = ratio(&s.SMActive, analysis.HasSMActive)
	case "nvidia.gpu.dram.active":
		ok = ratio(&s.DRAMActive, analysis.HasDRAMActive)
	case "hw.gpu.memory.utilization":
		ok = ratio(&s.MemRatio, analysis.HasMemRatio)
	case "hw.gpu.memory.usage":
		if ok = in(0, math.MaxFloat64); ok {
			fb.used, fb.hasUsed = v/(1<<20), true
		}
	case "hw.gpu.memory.limit":
		if ok = in(0, math.MaxFloat64); ok {
			fb.limit, fb.hasLimit = v/(1<<20), true
		}
	case "nvidia.gpu.sm.occupancy":
		ok = ratio(&s.Occupancy, analysis.HasOccupancy)
	case "nvidia.gpu.pipe.active":
		if attrStr(dp, "nvidia.gpu.pipe") != "tensor" {
			used = false
			break
		}
		ok = ratio(&s.Tensor, analysis.HasTensor)
	case "nvidia.gpu.nvlink.io":
		// Both directions add up: collectives send and receive.
		if ok = in(0, math.MaxFloat64); ok {
			if s.Has&analysis.HasNVLink == 0 {
				s.NVLink = analysis.Counter{Start: int64(dp.StartTimestamp())}
			}
			s.NVLink.Value += v
			s.Has |= analysis.HasNVLink
		}
	case "hw.gpu.io":
		if attrStr(dp, "network.io.direction") != "receive" {
			used = false
			break
		}
		if ok = in(0, math.MaxFloat64); ok {
			s.PCIeRx, s.Has = analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}, s.Has|analysis.HasPCIeRx
		}
	case "hw.gpu.utilization":
		if attrStr(dp, "hw.gpu.task") != "general" {
			used = false
			break
		}
		if ok = in(0, 1); ok {
			s.GPUUtil, s.Has = v*100, s.Has|analysis.HasGPUUtil
		}
	case "nvidia.gpu.clock.frequency":
		if attrStr(dp, "nvidia.gpu.clock") != "sm" {
			used = false
			break
		}
		if ok = in(0, 1e11); ok {
			s.SMClock, s.Has = v/1e6, s.Has|analysis.HasSMClock
		}
	case "hw.temperature":
		if ok = in(0, 200); ok {
			s.Temp, s.Has = v, s.Has|analysis.HasTemp
		}
	case "nvidia.gpu.clock.event_reasons":
		if ok = in(0, 1<<53); ok {
			s.Reasons, s.Has = uint64(v), s.Has|analysis.HasReasons
		}
	case "nvidia.gpu.row_remap.failure":
		if ok = in(0, 1); ok {
			s.RowRemapFail, s.Has = v, s.Has|analysis.HasRowRemapFailure
		}
	case "hw.errors":
		if attrStr(dp, "error.type") != "uncorrected" {
			used = false
			break
		}
		if ok = in(0, math.MaxFloat64); ok {
			s.DBE, s.Has = analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}, s.Has|analysis.HasDBE
		}
	case "nvidia.gpu.xid.errors":
		code, has := dp.Attributes().Get("nvidia.gpu.xid")
		if !has || code.Type() != pcommon.ValueTypeInt || code.Int() < 0 {
			return false
		}
		if ok = in(0, math.MaxFloat64); ok {
			s.XIDs = append(s.XIDs, analysis.XIDCount{Code: uint32(code.Int()), Counter: analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}})
		}
	case StepComputeDurationMetric:
		if ok = in(0, 1e6) && v > 0; ok {
			s.Step, s.Has = v, s.Has|analysis.HasStep
		}
	default:
		used = false
	}
	if used && ok {
		s.Time = max(s.Time, int64(dp.Timestamp()))
	}
	return ok
}

// frameBuffer gathers the memory readings of one GPU, which give the frame
// buffer's free memory only together.
type frameBuffer struct {
	used, limit       float64 // MiB
	hasUsed, hasLimit bool
}

// into sets the sample's FB use and free memory: free from the utilization,
// which is FB_USED / (FB_USED + FB_FREE), else from the limit.
func (fb *frameBuffer) into(s *analysis.Sample) {
	if !fb.hasUsed {
		return
	}
	switch {
	case s.Has&analysis.HasMemRatio != 0 && s.MemRatio > 0:
		s.FBFree = max(fb.used/s.MemRatio-fb.used, 0)
	case fb.hasLimit && fb.limit >= fb.used:
		s.FBFree = fb.limit - fb.used
	default:
		return
	}
	s.FBUsed, s.Has = fb.used, s.Has|analysis.HasFB
}

var (
	classNames = func() []string {
		out := make([]string, analysis.NumClasses)
		for _, c := range analysis.Classes() {
			out[c] = c.String()
		}
		return out
	}()
	alertStates = [...]string{analysis.Pending: "pending", analysis.Firing: "firing"}
	hintNames   = func() []string {
		out := make([]string, analysis.NumHints)
		for h := range analysis.NumHints {
			out[h] = h.String()
		}
		return out
	}()
)

// emit adds a verdict's metrics to the GPU's resource, in a scope of the
// analyzer's own.
func (p *analyzerProcessor) emit(v *analysis.Verdict) {
	rm, ok := p.rms[v.ID]
	if !ok {
		return
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()
	ms.EnsureCapacity(7)
	ts := pcommon.Timestamp(v.Time)

	// State-set and class time: the current class at every sample, and the
	// class the GPU just left once more, so that its state ends at 0 and its
	// time counter takes its last increment. Series of other classes are not
	// repeated: a query for the current class (== 1) and increase() over a
	// class's time behave as if every class were sent every time. The state
	// carries the hint, so a new hint in the same class ends the old series
	// at 0 too.
	classes := [2]analysis.Class{v.Class, v.PrevClass}
	hints := [2]analysis.Hint{v.Hint, v.PrevHint}
	n := 1
	if v.PrevClass != v.Class {
		n = 2
	}
	states := n
	if v.PrevHint != v.Hint {
		states = 2
	}
	state := ms.AppendEmpty()
	state.SetName(MetricBottleneckState)
	state.SetDescription("1 for the GPU's current bottleneck class (with the next step as hint); 0 for the class it just left.")
	state.SetUnit("{state}")
	dps := state.SetEmptyGauge().DataPoints()
	dps.EnsureCapacity(states)
	for i := range states {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(int64(1 - i))
		dp.Attributes().PutStr(AttrBottleneckClass, classNames[classes[i]])
		if hints[i] != analysis.NoHint {
			dp.Attributes().PutStr(AttrBottleneckHint, hintNames[hints[i]])
		}
	}

	spent := ms.AppendEmpty()
	spent.SetName(MetricBottleneckTime)
	spent.SetDescription("Time the GPU spent in each bottleneck class.")
	spent.SetUnit("s")
	sum := spent.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	sum.DataPoints().EnsureCapacity(n)
	for _, c := range classes[:n] {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.Timestamp(v.ClassStart))
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v.ClassSeconds[c])
		dp.Attributes().PutStr(AttrBottleneckClass, classNames[c])
	}

	p.emitUsage(ms, v, ts)
	if p.summary != nil {
		p.summary.observe(v, rm.Resource().Attributes())
	}

	// A GPU without peers is never a straggler: nothing to report.
	if v.HasPeers {
		strag := ms.AppendEmpty()
		strag.SetName(MetricStragglerState)
		strag.SetDescription("1 while the GPU is a straggler among its peers.")
		strag.SetUnit("{state}")
		dp := strag.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		if v.Straggler {
			dp.SetIntValue(1)
		} else {
			dp.SetIntValue(0)
		}

		score := ms.AppendEmpty()
		score.SetName(MetricStragglerScore)
		score.SetDescription("The GPU's largest deviation from its peers; 1 is the straggler threshold.")
		score.SetUnit("1")
		dp = score.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v.Score)
	}

	var alerts pmetric.NumberDataPointSlice
	for name, st := range v.Alerts {
		if st == analysis.Inactive {
			continue
		}
		if alerts == (pmetric.NumberDataPointSlice{}) {
			m := ms.AppendEmpty()
			m.SetName(MetricAlerts)
			m.SetDescription("1 for each pending or firing alert of the GPU, like Prometheus' ALERTS.")
			m.SetUnit("{alert}")
			alerts = m.SetEmptyGauge().DataPoints()
		}
		dp := alerts.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(1)
		a := dp.Attributes()
		a.PutStr(AttrAlertName, analysis.AlertName(name).String())
		a.PutStr(AttrAlertState, alertStates[st])
		a.PutStr(AttrSeverity, p.cfg.Alerts.byName()[name].Severity)
	}
}

// logTransition logs alert and straggler transitions, naming the GPU the
// way a person finds it: host, device name, and job.
func (p *analyzerProcessor) logTransition(e analysis.Event) {
	fields := []zap.Field{zap.String("hw.id", e.ID), zap.Time("at", time.Unix(0, e.Time).UTC())}
	if rm, ok := p.rms[e.ID]; ok {
		attrs := rm.Resource().Attributes()
		for _, k := range []string{"host.name", "hw.name", "k8s.namespace.name", "k8s.job.name", "k8s.pod.name"} {
			if v, ok := attrs.Get(k); ok {
				fields = append(fields, zap.String(k, v.AsString()))
			}
		}
	}
	switch e.Kind {
	case analysis.AlertFiring:
		p.logger.Info("GPU alert firing", append(fields, zap.String("alertname", e.Alert.String()), zap.String("bottleneck", e.Class.String()))...)
	case analysis.AlertResolved:
		p.logger.Info("GPU alert resolved", append(fields, zap.String("alertname", e.Alert.String()))...)
	case analysis.StragglerStarted:
		p.logger.Info("GPU is a straggler", append(fields, zap.Float64("score", e.Score))...)
	case analysis.StragglerEnded:
		p.logger.Info("GPU is no longer a straggler", fields...)
	case analysis.ClassChanged:
		if p.summary != nil {
			return // the summary logs each change once per interval, with its hint
		}
		fields = append(fields, zap.String("bottleneck", e.Class.String()), zap.String("was", e.Prev.String()))
		if e.Hint != analysis.NoHint {
			fields = append(fields, zap.String("hint", e.Hint.String()))
		}
		p.logger.Info("GPU bottleneck changed", fields...)
	}
}
