package gpuremediationconnector

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	gpuhw "github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// Names read from the pipeline: the dcgm receiver's metrics and the
// gpu_analyzer processor's verdict.
const (
	metricXID       = metricnames.NvidiaGPUXIDErrors
	attrXID         = metricnames.AttrNvidiaGPUXID
	metricECC       = metricnames.HWErrors
	attrErrorType   = metricnames.AttrErrorType
	metricRowRemap  = metricnames.NvidiaGPURowRemapFailure
	metricVerdict   = metricnames.OTelGPUBottleneckState
	metricRecovery  = metricnames.NvidiaGPURecoveryAction
	metricHealth    = metricnames.NvidiaGPUHealth
	attrHealthSys   = metricnames.AttrNvidiaGPUHealthSystem
	attrVerdict     = metricnames.AttrOTelGPUBottleneckClass
	verdictFaulted  = "faulted"
	attrNode        = metricnames.AttrK8sNodeName
	attrHost        = metricnames.AttrHostName
	attrGPU         = metricnames.AttrHWID
	attrPodName     = metricnames.AttrK8sPodName
	attrPodNS       = metricnames.AttrK8sNamespaceName
	eccUncorrectedV = "uncorrected"

	// AMD GPUs'.
	attrVendor         = metricnames.AttrHWVendor
	vendorAMD          = "AMD"
	metricCPER         = metricnames.AmdGPUCperRecords
	attrCPERSeverity   = metricnames.AttrAmdGPUCperSeverity
	attrAFID           = metricnames.AttrAmdGPUAfid
	metricBadPages     = metricnames.AmdGPUBadPages
	metricBadPageLimit = metricnames.AmdGPUBadPagesThreshold
	eccCorrectedV      = metricnames.AttrErrorTypeCorrected
	eccDeferredV       = metricnames.AttrErrorTypeDeferred
	cperFatalV         = metricnames.AttrAmdGPUCperSeverityFatal
	cperUncorrectedV   = metricnames.AttrAmdGPUCperSeverityNonfatalUncorrected
)

// gpuState is what is known of one GPU's fault evidence.
type gpuState struct {
	node      string
	pod       string // namespace/name of the pod holding it, if attributed
	firstSeen int64
	counters  map[string]counter
	// level evidence: row-remap failure and the analyzer's verdict.
	remap, faulted         bool
	remapKnown, verdictSet bool
	// the driver's recovery action (0: none), and whether it was read
	recovery      int
	recoveryKnown bool
	// an AMD GPU's retired pages at the driver's threshold, and whether
	// that was read
	badPagesFull, badPagesKnown bool
	// each DCGM health subsystem's failure, and whether it was read
	healthFailed, healthKnown [gpuhw.NumHealthSystems]bool
	lastFault                 time.Time
	lastSeen                  time.Time
	// index is the GPU's index on its node (nvidia.gpu.index or
	// amd.gpu.index): Slurm's GRES index, when indexKnown.
	index      int
	indexKnown bool
}

// gpuIndex returns a GPU's index on its node, as its metrics said.
func (r *remediator) gpuIndex(uuid string) (int, bool) {
	if g := r.gpus[uuid]; g != nil && g.indexKnown {
		return g.index, true
	}
	return 0, false
}

type counter struct {
	start int64
	value float64
}

// detected is one fault on one GPU.
type detected struct {
	at    time.Time
	node  string
	gpu   string
	pod   string
	fault policy.Fault
	// arrived is when this replica read it (its clock, not the data's).
	arrived time.Time
	// fresh is true for an event seen to happen (a counter's increase, a
	// level's rise); false for a level already high when first seen (after
	// a restart, say), which is not a new fault.
	fresh bool
	// nic is the port and rail of a fabric fault (gpu is then the port's
	// hw.id); nil for a GPU's.
	nic *nicPort
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

// detect reads one resource's metrics and returns the faults they show.
func (r *remediator) detect(rm pmetric.ResourceMetrics) []detected {
	attrs := rm.Resource().Attributes()
	node := str(attrs, attrNode)
	if node == "" {
		node = str(attrs, attrHost)
	}
	if isNetwork(attrs) {
		return r.detectFabric(rm)
	}
	gpu := str(attrs, attrGPU)
	if _, split := attrs.Get(metricnames.AttrOTelGPUProcessOwner); split {
		// A GPU's per-process split (the receiver's per_process): the
		// GPU's own resource carries its faults and its pod.
		return nil
	}
	if node == "" || gpu == "" {
		r.bad.noGPU += evidencePoints(rm)
		return nil
	}
	g := r.gpus[gpu]
	if g == nil {
		g = &gpuState{counters: map[string]counter{}, firstSeen: -1}
		r.gpus[gpu] = g
	}
	g.node = node
	for _, k := range []string{metricnames.AttrNvidiaGPUIndex, metricnames.AttrAmdGPUIndex} {
		if v, ok := attrs.Get(k); ok {
			if i, err := strconv.Atoi(v.AsString()); err == nil && i >= 0 {
				g.index, g.indexKnown = i, true
			}
		}
	}
	if pod := str(attrs, attrPodName); pod != "" {
		g.pod = str(attrs, attrPodNS) + "/" + pod
	}
	amd := str(attrs, attrVendor) == vendorAMD
	var out []detected
	add := func(ts pcommon.Timestamp, f policy.Fault, fresh bool) {
		at := ts.AsTime()
		if f.Kind != policy.ECCCorrectable {
			// Corrected errors are the ECC working: a GPU that logs them
			// is still healthy after its reboot.
			g.lastFault = at
		}
		out = append(out, detected{at: at, node: node, gpu: gpu, pod: g.pod, fault: f, fresh: fresh})
	}
	var badPages, badPageLimit float64
	var hasBadPages bool
	var badPagesAt pcommon.Timestamp
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Name() {
			case metricXID:
				if m.Type() != pmetric.MetricTypeSum {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				dps := m.Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					code, ok := dp.Attributes().Get(attrXID)
					if !ok || code.Type() != pcommon.ValueTypeInt || code.Int() < 1 || code.Int() > 255 {
						r.bad.invalidXID++
						continue
					}
					if !r.bad.count(dp) {
						continue
					}
					g.see(dp.Timestamp(), r)
					if g.increase("xid_"+strconv.FormatInt(code.Int(), 10), dp) {
						add(dp.Timestamp(), policy.Fault{Kind: policy.XID, Code: int(code.Int())}, true)
					}
				}
			case metricECC:
				if m.Type() != pmetric.MetricTypeSum {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				dps := m.Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					// On NVIDIA GPUs only uncorrectable errors are
					// evidence, as before; an AMD GPU's corrected and
					// deferred errors are recorded too (AMD's health
					// rules count uncorrectable ones only).
					kind, key := policy.ECCUncorrectable, "ecc"
					switch typ := str(dp.Attributes(), attrErrorType); {
					case typ == eccUncorrectedV:
					case amd && typ == eccCorrectedV:
						kind, key = policy.ECCCorrectable, "ecc_corrected"
					case amd && typ == eccDeferredV:
						kind, key = policy.ECCDeferred, "ecc_deferred"
					default:
						continue
					}
					if !r.bad.count(dp) {
						continue
					}
					g.see(dp.Timestamp(), r)
					if g.increase(key, dp) {
						add(dp.Timestamp(), policy.Fault{Kind: kind}, true)
					}
				}
			case metricCPER:
				if m.Type() != pmetric.MetricTypeSum {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				dps := m.Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					var kind policy.Kind
					switch str(dp.Attributes(), attrCPERSeverity) {
					case cperFatalV:
						kind = policy.CPERFatal
					case cperUncorrectedV:
						kind = policy.CPERUncorrected
					default:
						continue // corrected records: the hardware fixed it
					}
					afid := int64(0)
					if v, ok := dp.Attributes().Get(attrAFID); ok {
						if v.Type() != pcommon.ValueTypeInt || v.Int() < 0 || v.Int() > math.MaxInt32 {
							r.bad.invalidValue++
							continue
						}
						afid = v.Int()
					}
					if !r.bad.count(dp) {
						continue
					}
					g.see(dp.Timestamp(), r)
					f := policy.Fault{Kind: kind, Code: int(afid)}
					if g.increase(f.String(), dp) {
						add(dp.Timestamp(), f, true)
					}
				}
			case metricRowRemap:
				r.levels(m, g, func(dp pmetric.NumberDataPoint) {
					failed := value(dp) >= 1
					if failed && !g.remap {
						add(dp.Timestamp(), policy.Fault{Kind: policy.RowRemapFailure}, g.remapKnown)
					}
					g.remap, g.remapKnown = failed, true
				})
			case metricRecovery:
				r.levels(m, g, func(dp pmetric.NumberDataPoint) {
					action := int(value(dp))
					if action != gpuhealth.RecoveryNone && action != g.recovery {
						add(dp.Timestamp(), policy.Fault{Kind: policy.RecoveryAction, Code: action}, g.recoveryKnown)
					}
					g.recovery, g.recoveryKnown = action, true
				})
			case metricHealth:
				// A failure is a fault, when it starts; a warning calls
				// for nothing (gpuhealth.DCGMHealth) and is no fault.
				r.levels(m, g, func(dp pmetric.NumberDataPoint) {
					sys, ok := gpuhw.ParseHealthSystem(str(dp.Attributes(), attrHealthSys))
					if !ok {
						r.bad.invalidValue++
						return
					}
					failed := value(dp) >= float64(gpuhw.HealthFail)
					if failed && !g.healthFailed[sys] {
						add(dp.Timestamp(), policy.Fault{Kind: policy.DCGMHealth, Code: int(sys)}, g.healthKnown[sys])
					}
					g.healthFailed[sys], g.healthKnown[sys] = failed, true
				})
			case metricBadPages, metricBadPageLimit:
				r.levels(m, g, func(dp pmetric.NumberDataPoint) {
					if m.Name() == metricBadPageLimit {
						badPageLimit = value(dp)
						return
					}
					// Every state counts: pending pages are retired at
					// the next reset, and the driver's table holds them.
					badPages += value(dp)
					hasBadPages, badPagesAt = true, max(badPagesAt, dp.Timestamp())
				})
			case metricVerdict:
				if m.Type() != pmetric.MetricTypeGauge {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				dps := m.Gauge().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					if value(dp) != 1 {
						continue
					}
					g.see(dp.Timestamp(), r)
					faulted := str(dp.Attributes(), attrVerdict) == verdictFaulted
					if faulted && !g.faulted {
						add(dp.Timestamp(), policy.Fault{Kind: policy.GPUFaulted}, g.verdictSet)
					}
					g.faulted, g.verdictSet = faulted, true
				}
			default:
				if m.Type() == pmetric.MetricTypeGauge && m.Gauge().DataPoints().Len() > 0 {
					g.see(m.Gauge().DataPoints().At(0).Timestamp(), r)
				}
			}
		}
	}
	if hasBadPages && badPageLimit > 0 {
		full := badPages >= badPageLimit
		if full && !g.badPagesFull {
			add(badPagesAt, policy.Fault{Kind: policy.BadPageThreshold}, g.badPagesKnown)
		}
		g.badPagesFull, g.badPagesKnown = full, true
	}
	return out
}

// levels hands each valid point of a level gauge (row-remap failure, the
// recovery action) to each, after noting that the GPU reported; a metric
// of another type, or a point that is not a number, is counted as refused.
func (r *remediator) levels(m pmetric.Metric, g *gpuState, each func(pmetric.NumberDataPoint)) {
	if m.Type() != pmetric.MetricTypeGauge {
		r.bad.wrongType += int64(metricpoints.Count(m))
		return
	}
	dps := m.Gauge().DataPoints()
	for k := 0; k < dps.Len(); k++ {
		dp := dps.At(k)
		if !r.bad.level(dp) {
			continue
		}
		g.see(dp.Timestamp(), r)
		each(dp)
	}
}

func value(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// see notes that the GPU (and its node) reported at ts.
func (g *gpuState) see(ts pcommon.Timestamp, r *remediator) {
	if g.firstSeen < 0 {
		g.firstSeen = int64(ts)
	}
	at := ts.AsTime()
	if at.After(g.lastSeen) {
		g.lastSeen = at
	}
	if at.After(r.seen[g.node]) {
		r.seen[g.node] = at
	}
}

// increase reports whether a cumulative counter grew: under the same start
// time, a larger value; a counter that first appears on a GPU already seen
// without it, any count (the receiver reports an XID's counter from its
// first event); under a new start time (a reset), any count, but only if
// the counter started no earlier than this GPU was first seen (or at this
// very sample). History from before the collector watched is never taken
// as a new fault.
func (g *gpuState) increase(key string, dp pmetric.NumberDataPoint) bool {
	prev, known := g.counters[key]
	c := counter{start: int64(dp.StartTimestamp()), value: value(dp)}
	g.counters[key] = c
	switch {
	case known && c.start == prev.start:
		return c.value > prev.value
	case !known && int64(dp.Timestamp()) > g.firstSeen:
		return c.value > 0
	case c.start >= g.firstSeen || c.start == int64(dp.Timestamp()):
		return c.value > 0
	default:
		return false
	}
}

// rejected counts the data points of fault evidence not taken, by reason,
// for the connector's rejected_data_points telemetry.
type rejected struct{ wrongType, invalidXID, invalidValue, noGPU int64 }

// count reports whether a counter's point is a count: finite, not negative.
func (r *rejected) count(dp pmetric.NumberDataPoint) bool {
	if v := value(dp); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		r.invalidValue++
		return false
	}
	return true
}

// level reports whether a level's point is a number.
func (r *rejected) level(dp pmetric.NumberDataPoint) bool {
	if v := value(dp); math.IsNaN(v) || math.IsInf(v, 0) {
		r.invalidValue++
		return false
	}
	return true
}

func (r *rejected) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	for _, c := range []struct {
		reason string
		n      int64
	}{{"wrong_type", r.wrongType}, {"invalid_xid", r.invalidXID}, {"invalid_value", r.invalidValue}, {"no_gpu", r.noGPU}} {
		if c.n > 0 {
			tb.ConnectorGpuRemediationRejectedDataPoints.Add(ctx, c.n, metric.WithAttributes(attribute.String("reason", c.reason)))
		}
	}
	*r = rejected{}
}

// evidencePoints counts a resource's data points of fault evidence.
func evidencePoints(rm pmetric.ResourceMetrics) int64 {
	var n int64
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			switch m := ms.At(j); m.Name() {
			case metricXID, metricECC, metricRowRemap, metricRecovery, metricCPER, metricBadPages, metricBadPageLimit, metricHealth:
				n += int64(metricpoints.Count(m))
			}
		}
	}
	return n
}

// conditionReason names a fault as the GPUHealthy condition's reason.
func conditionReason(f policy.Fault) string {
	switch f.Kind {
	case policy.RecoveryAction:
		return "RecoveryAction"
	case policy.XID:
		return fmt.Sprintf("XID%d", f.Code)
	case policy.ECCUncorrectable:
		return "UncorrectableECC"
	case policy.RowRemapFailure:
		return "RowRemapFailure"
	case policy.ECCDeferred:
		return "DeferredECC"
	case policy.ECCCorrectable:
		return "CorrectableECC"
	case policy.CPERFatal:
		return fmt.Sprintf("FatalCPERAFID%d", f.Code)
	case policy.CPERUncorrected:
		return fmt.Sprintf("UncorrectedCPERAFID%d", f.Code)
	case policy.BadPageThreshold:
		return "BadPageThreshold"
	case policy.DCGMHealth:
		return "DCGMHealth" + camel(gpuhw.HealthSystem(f.Code).String())
	}
	return "GPUFaulted"
}

// camel spells a snake_case name in CamelCase, as a condition's reason
// is spelled: nvswitch_fatal, NvswitchFatal.
func camel(s string) string {
	var b strings.Builder
	up := true
	for _, c := range s {
		switch {
		case c == '_':
			up = true
		case up && c >= 'a' && c <= 'z':
			b.WriteRune(c - 'a' + 'A')
			up = false
		default:
			b.WriteRune(c)
			up = false
		}
	}
	return b.String()
}
