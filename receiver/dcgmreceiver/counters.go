package dcgmreceiver

import (
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// Cumulative counters that the source keeps (DCGM's energy, ECC and
// violation totals). They are emitted relative to a baseline taken at their
// start time, so that value and start time always agree.
const (
	srcEnergy = iota
	srcSBE
	srcDBE
	srcPowerViolation
	srcThermalViolation
	srcPCIeReplay
	numSources
)

type sourceCounter struct {
	ok    bool
	base  float64
	last  float64
	start pcommon.Timestamp
}

// counterState is what one device's cumulative metrics need between samples.
type counterState struct {
	epoch      uint64
	epochStart pcommon.Timestamp
	samples    int
	last       time.Time
	src        [numSources]sourceCounter
	// bytes integrates PCIe tx, rx and NVLink tx, rx rates.
	bytes [4]float64
	xids  map[uint32]int64
	// amd holds an AMD GPU's cumulative counters (ECC per block, XGMI
	// traffic, PCIe replays), cper its CPER record counts and lastCPER
	// the last record read; empty for NVIDIA's.
	amd amdCounters
	// amdStarts is set once an AMD counter started after the epoch did
	// (it appeared later, or went back): start times are then looked up.
	amdStarts bool
	cper      map[cperKey]int64
	lastCPER  *gpu.CPERRecord
}

func newCounterState(epoch uint64, start time.Time) *counterState {
	return &counterState{
		epoch:      epoch,
		epochStart: pcommon.NewTimestampFromTime(start),
		last:       start,
		xids:       make(map[uint32]int64),
	}
}

// source updates a source-kept counter with the sample's raw value and
// returns the value to emit. A raw value lower than the last one is a reset
// (a driver reload, a wrap): the counter starts again from zero at the
// previous sample's time, and never goes negative.
func (cs *counterState) source(i int, vs *f.Values, field f.Field, ts pcommon.Timestamp) (float64, bool) {
	raw, ok := value(vs, field)
	if !ok {
		return 0, false
	}
	c := &cs.src[i]
	switch {
	case !c.ok:
		*c = sourceCounter{ok: true, base: raw, last: raw, start: ts}
	case raw < c.last:
		start := pcommon.NewTimestampFromTime(cs.last)
		if cs.samples == 0 {
			start = ts
		}
		*c = sourceCounter{ok: true, base: 0, last: raw, start: start}
	default:
		c.last = raw
	}
	return raw - c.base, true
}

// setStartTimes gives each cumulative data point of one device's resource
// the start time of its own counter.
func (cs *counterState) setStartTimes(rm pmetric.ResourceMetrics) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Type() != pmetric.MetricTypeSum {
				continue
			}
			dps := m.Sum().DataPoints()
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				dp.SetStartTimestamp(cs.startOf(m.Name(), dp.Attributes()))
			}
		}
	}
}

func (cs *counterState) startOf(metric string, attrs pcommon.Map) pcommon.Timestamp {
	if strings.HasPrefix(metric, "amd.gpu.") {
		if start, ok := cs.amdStartOf(metric, attrs); ok {
			return start
		}
		return cs.epochStart
	}
	src := -1
	switch metric {
	case metricnames.HWEnergy:
		src = srcEnergy
	case metricnames.NvidiaGPUPCIeReplays:
		src = srcPCIeReplay
	case metricnames.HWErrors:
		src = srcSBE
		if v, ok := attrs.Get(metricnames.AttrErrorType); ok && v.Str() == metadata.AttributeErrorTypeUncorrected.String() {
			src = srcDBE
		}
	case metricnames.NvidiaGPUThrottleTime:
		src = srcPowerViolation
		if v, ok := attrs.Get(metricnames.AttrNvidiaGPUThrottleReason); ok && v.Str() == metadata.AttributeNvidiaGpuThrottleReasonThermal.String() {
			src = srcThermalViolation
		}
	}
	if src >= 0 && cs.src[src].ok {
		return cs.src[src].start
	}
	return cs.epochStart
}

func itoa(i int) string { return strconv.Itoa(i) }
