package gpuanalyzerprocessor

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

func attrStr(dp pmetric.NumberDataPoint, key string) string {
	v, ok := dp.Attributes().Get(key)
	if !ok {
		return ""
	}
	return v.Str()
}

// extract reads one GPU's readings from its resource's metrics. It returns
// the number of readings ignored as NaN, negative or out of range.
func (p *analyzerProcessor) extract(rm pmetric.ResourceMetrics, s *analysis.Sample, fb *deferred) (ignored int64) {
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
func (p *analyzerProcessor) read(name string, dp pmetric.NumberDataPoint, s *analysis.Sample, fb *deferred) bool {
	// The value is read where a case uses it: reading it is a first touch
	// of the point's memory, wasted on the metrics the analyzer passes by.
	var v float64
	in := func(lo, hi float64) bool { v = metricpoints.Value(dp); return !math.IsNaN(v) && v >= lo && v <= hi }
	ratio := func(dst *float64, bit uint32) bool {
		if !in(0, 1) {
			return false
		}
		*dst, s.Has = v, s.Has|bit
		return true
	}
	ok := true
	used := true
	switch name {
	case metricnames.NvidiaGPUSMActive:
		ok = ratio(&s.SMActive, analysis.HasSMActive)
	case metricnames.NvidiaGPUDRAMActive:
		ok = ratio(&s.DRAMActive, analysis.HasDRAMActive)
	case metricnames.HWGPUMemoryUtilization:
		ok = ratio(&s.MemRatio, analysis.HasMemRatio)
	case metricnames.HWGPUMemoryUsage:
		if ok = in(0, math.MaxFloat64); ok {
			fb.used, fb.hasUsed = v, true
		}
	case metricnames.HWGPUMemoryLimit:
		if ok = in(0, math.MaxFloat64); ok {
			fb.limit, fb.hasLimit = v, true
		}
	case metricnames.NvidiaGPUSMOccupancy:
		ok = ratio(&s.Occupancy, analysis.HasOccupancy)
	case metricnames.NvidiaGPUPipeActive:
		if attrStr(dp, metricnames.AttrNvidiaGPUPipe) != metricnames.AttrNvidiaGPUPipeTensor {
			used = false
			break
		}
		ok = ratio(&s.Tensor, analysis.HasTensor)
	case metricnames.NvidiaGPUNVLinkIO:
		// Both directions add up: collectives send and receive.
		if ok = in(0, math.MaxFloat64); ok {
			if s.Has&analysis.HasNVLink == 0 {
				s.NVLink = analysis.Counter{Start: int64(dp.StartTimestamp())}
			}
			s.NVLink.Value += v
			s.Has |= analysis.HasNVLink
		}
	case metricnames.HWGPUIO:
		var dst *analysis.Counter
		var bit uint32
		switch attrStr(dp, metricnames.AttrNetworkIODirection) {
		case metricnames.AttrNetworkIODirectionReceive:
			dst, bit = &s.PCIeRx, analysis.HasPCIeRx
		case metricnames.AttrNetworkIODirectionTransmit:
			dst, bit = &s.PCIeTx, analysis.HasPCIeTx
		default:
			used = false
		}
		if dst != nil {
			if ok = in(0, math.MaxFloat64); ok {
				*dst, s.Has = analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}, s.Has|bit
			}
		}
	case metricnames.NvidiaGPUGraphicsEngineActive:
		// Taken in into, once GPU utilization is known: the receiver
		// reports utilization here where DCGM profiles no engine.
		if ok = in(0, 1); ok {
			fb.gr, fb.hasGR = v, true
		}
	case metricnames.NvidiaGPUMemoryCopyUtilization:
		if ok = in(0, 1); ok {
			fb.memCopy, fb.hasMemCopy, used = v, true, false
		}
	case metricnames.HWGPUUtilization:
		if attrStr(dp, metricnames.AttrHWGPUTask) != metricnames.AttrHWGPUTaskGeneral {
			used = false
			break
		}
		if ok = in(0, 1); ok {
			s.GPUUtil, s.Has = v, s.Has|analysis.HasGPUUtil
		}
	case metricnames.NvidiaGPUClockFrequency:
		if attrStr(dp, metricnames.AttrNvidiaGPUClock) != metricnames.AttrNvidiaGPUClockSM {
			used = false
			break
		}
		if ok = in(0, 1e11); ok {
			s.SMClock, s.Has = v, s.Has|analysis.HasSMClock
		}
	case metricnames.HWPower:
		// Read in into, once the sample is known to lack SM activity.
		fb.power, fb.hasPower, used = dp, true, false
	case metricnames.NvidiaGPUPowerLimit:
		fb.powerLimit, fb.hasPowerLimit, used = dp, true, false
	case metricnames.HWTemperature:
		// The GPU's own temperature: the die's (NVIDIA) or the hotspot's
		// (AMD), or a point without a location (an older receiver, or a
		// source that has one sensor); not the memory's or the edge's.
		if loc := attrStr(dp, metricnames.AttrHWSensorLocation); loc != "" &&
			loc != metricnames.AttrHWSensorLocationDie && loc != metricnames.AttrHWSensorLocationHotspot {
			used = false
			break
		}
		if ok = in(0, 200); ok {
			s.Temp, s.Has = v, s.Has|analysis.HasTemp
		}
	case metricnames.NvidiaGPUClockEventReasons:
		if ok = in(0, 1<<53); ok {
			s.Reasons, s.Has = uint64(v), s.Has|analysis.HasReasons
		}
	case metricnames.NvidiaGPURowRemapFailure:
		if ok = in(0, 1); ok {
			s.RowRemapFail, s.Has = v, s.Has|analysis.HasRowRemapFailure
		}
	case metricnames.NvidiaGPURecoveryAction:
		if ok = in(0, 255); ok {
			s.Recovery, s.Has = int(v), s.Has|analysis.HasRecovery
		}
	case metricnames.NvidiaGPUHealth:
		sys, known := gpu.ParseHealthSystem(attrStr(dp, metricnames.AttrNvidiaGPUHealthSystem))
		if !known {
			used = false
			break
		}
		if ok = in(0, float64(gpu.HealthFail)); ok {
			s.Health.Watch(sys)
			s.Health.Report(sys, gpu.HealthResult(v))
		}
	case metricnames.HWErrors:
		if attrStr(dp, metricnames.AttrErrorType) != metricnames.AttrErrorTypeUncorrected {
			used = false
			break
		}
		if ok = in(0, math.MaxFloat64); ok {
			s.DBE, s.Has = analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}, s.Has|analysis.HasDBE
		}
	case metricnames.NvidiaGPUXIDErrors:
		code, has := dp.Attributes().Get(metricnames.AttrNvidiaGPUXID)
		if !has || code.Type() != pcommon.ValueTypeInt || code.Int() < 0 {
			return false
		}
		if ok = in(0, math.MaxFloat64); ok {
			s.XIDs = append(s.XIDs, analysis.XIDCount{Code: uint32(code.Int()), Counter: analysis.Counter{Value: v, Start: int64(dp.StartTimestamp())}})
		}
	case metricnames.AmdGPUUmcActivity:
		ok = ratio(&s.UMCActive, analysis.HasUMCActive)
	case metricnames.AmdGPUXgmiIO:
		// Both directions, as NVLink's; a trace recorded before the
		// links were summed has a point per link, which add up the same.
		if ok = in(0, math.MaxFloat64); ok {
			if s.Has&analysis.HasXGMI == 0 {
				s.XGMI = analysis.Counter{Start: int64(dp.StartTimestamp())}
			}
			s.XGMI.Value += v
			s.Has |= analysis.HasXGMI
		}
	case metricnames.AmdGPUXgmiBandwidth:
		// Each way, all links (or per link in an older trace, summed
		// here): the links carry twice this, sending and receiving.
		if ok = in(0, math.MaxFloat64); ok {
			s.XGMICapacity += 2 * v
		}
	case metricnames.AmdGPUViolationResidency:
		r, known := violationReasons[attrStr(dp, metricnames.AttrAmdGPUViolationReason)]
		if !known {
			used = false
			break
		}
		if ok = in(0, 1); ok {
			s.Violation[r], s.ViolationPresent = v, s.ViolationPresent|1<<r
			s.Has |= analysis.HasViolation
		}
	case metricnames.AmdGPUCperRecords:
		if attrStr(dp, metricnames.AttrAmdGPUCperSeverity) != metricnames.AttrAmdGPUCperSeverityFatal {
			used = false
			break
		}
		// One point per AMD Field ID: any of them tells a fatal error.
		if ok = in(0, math.MaxFloat64); ok {
			if s.Has&analysis.HasFatalRAS == 0 {
				s.FatalRAS = analysis.Counter{Start: int64(dp.StartTimestamp())}
			}
			s.FatalRAS.Value += v
			s.Has |= analysis.HasFatalRAS
		}
	case metricnames.AmdGPUBadPages:
		if ok = in(0, math.MaxFloat64); ok {
			fb.badPages, fb.hasBadPages = fb.badPages+v, true
		}
	case metricnames.AmdGPUBadPagesThreshold:
		if ok = in(0, math.MaxFloat64); ok {
			fb.badPageThreshold = v
		}
	case metricnames.AmdGPUPowerCap:
		fb.powerLimit, fb.hasPowerLimit, used = dp, true, false
	case metricnames.TrainingStepComputeDuration:
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
