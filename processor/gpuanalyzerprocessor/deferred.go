package gpuanalyzerprocessor

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// deferred holds the readings that are taken once the whole resource has
// been read: the frame buffer, whose free memory comes from the
// utilization or the limit; power, which is evidence only for a GPU without
// SM activity or clock event reasons and is not even read for the others
// (two data points per GPU per batch that the analyzer's hot path would pay
// for nothing); and what tells profiled activity from its stand-ins.
type deferred struct {
	used, limit       float64 // frame buffer bytes
	hasUsed, hasLimit bool

	power, powerLimit       pmetric.NumberDataPoint
	hasPower, hasPowerLimit bool

	// The graphics engine's activity and the memory copy utilization, to
	// tell the engine's and DRAM's activity from the receiver's stand-ins
	// for them (profilingInto).
	gr, memCopy       float64
	hasGR, hasMemCopy bool

	// An AMD GPU's retired pages, and the count at which its driver marks
	// it bad (0: not reported).
	badPages, badPageThreshold float64
	hasBadPages                bool
}

// violationReasons are the receiver's names of AMD's violation reasons.
var violationReasons = map[string]analysis.ViolationReason{
	metricnames.AttrAmdGPUViolationReasonPower:         analysis.ViolationPower,
	metricnames.AttrAmdGPUViolationReasonSocketThermal: analysis.ViolationSocketThermal,
	metricnames.AttrAmdGPUViolationReasonVrThermal:     analysis.ViolationVRThermal,
	metricnames.AttrAmdGPUViolationReasonHbmThermal:    analysis.ViolationHBMThermal,
	metricnames.AttrAmdGPUViolationReasonProchot:       analysis.ViolationProchot,
}

// into completes the sample and returns the readings it ignored as not
// plausible.
func (fb *deferred) into(s *analysis.Sample) (ignored int64) {
	fb.profilingInto(s)
	if powerEvidence(s) {
		ignored = fb.powerInto(s)
	}
	fb.frameBufferInto(s)
	if fb.hasBadPages && fb.badPageThreshold > 0 {
		// Pages retired up to the driver's threshold: the memory can no
		// longer be repaired by retiring, as when NVIDIA's row remapping
		// fails.
		s.RowRemapFail, s.Has = 0, s.Has|analysis.HasRowRemapFailure|analysis.HasBadPages
		s.BadPages, s.BadPageLimit = fb.badPages, fb.badPageThreshold
		if fb.badPages >= fb.badPageThreshold {
			s.RowRemapFail = 1
		}
	}
	return ignored
}

// powerEvidence says whether power is evidence for the sample's GPU: without
// SM activity it tells work from waiting, without clock event reasons a
// power cap. With both, the analyzer's hot path does not read it.
func powerEvidence(s *analysis.Sample) bool {
	return s.Has&analysis.HasSMActive == 0 || s.Has&analysis.HasReasons == 0
}

// profilingInto takes the graphics engine's activity unless it is GPU
// utilization standing in for it, and drops DRAM activity that is the memory
// copy utilization standing in for it: the dcgm receiver (and
// from_dcgm_exporter) fill both from NVML's utilization where DCGM profiles
// nothing, as DCGM itself does, and they are no evidence of SM or DRAM
// activity. The stand-in is the same value, divided by 100 the same way: a
// profiled engine whose ratio equals utilization to the last bit says no
// more than utilization does.
func (fb *deferred) profilingInto(s *analysis.Sample) {
	if fb.hasGR && (s.Has&analysis.HasGPUUtil == 0 || fb.gr != s.GPUUtil) {
		s.GREngine, s.Has = fb.gr, s.Has|analysis.HasGREngine
	}
	if fb.hasMemCopy && s.Has&analysis.HasSMActive == 0 && s.Has&analysis.HasDRAMActive != 0 && s.DRAMActive == fb.memCopy {
		s.DRAMActive, s.Has = 0, s.Has&^analysis.HasDRAMActive
	}
}

// powerInto takes the board's power and the power limit the driver enforces
// into the sample. The limit is the GPU's reference power (an
// administrator's cap lowers what full work draws); 0 means unknown.
func (fb *deferred) powerInto(s *analysis.Sample) (ignored int64) {
	take := func(dp pmetric.NumberDataPoint) (float64, bool) {
		v := metricpoints.Value(dp)
		if math.IsNaN(v) || v < 0 || v > 1e4 {
			ignored++
			return 0, false
		}
		s.Time = max(s.Time, int64(dp.Timestamp()))
		return v, true
	}
	if fb.hasPower {
		if v, ok := take(fb.power); ok {
			s.Power, s.Has = v, s.Has|analysis.HasPower
		}
	}
	if fb.hasPowerLimit {
		if v, ok := take(fb.powerLimit); ok && v > 0 {
			s.RefPower = v
		}
	}
	return ignored
}

// frameBufferInto sets the sample's FB use and free memory: free from the
// utilization, which is FB_USED / (FB_USED + FB_FREE), else from the limit.
func (fb *deferred) frameBufferInto(s *analysis.Sample) {
	if !fb.hasUsed {
		return
	}
	s.FBUsed, s.Has = fb.used, s.Has|analysis.HasFBUsed
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
