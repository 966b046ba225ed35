package dcgmreceiver

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// amdCounter names one of an AMD GPU's cumulative counters: kind, and the
// block or link and the error type or direction it is of.
type amdCounter struct {
	kind  uint8
	block string
	index int
	sub   uint8
}

// Kinds of AMD counters.
const (
	amdECC = iota
	amdXGMI
	amdPCIeReplays
)

// cperKey is a CPER severity and AFID, which amd.gpu.cper.records counts.
type cperKey struct {
	severity string
	afid     uint64
}

var eccTypes = [3]metadata.AttributeErrorType{
	metadata.AttributeErrorTypeCorrected, metadata.AttributeErrorTypeUncorrected, metadata.AttributeErrorTypeDeferred,
}

var cperSeverities = map[string]metadata.AttributeAmdGpuCperSeverity{
	gpu.CPERFatal:               metadata.AttributeAmdGpuCperSeverityFatal,
	gpu.CPERNonFatalUncorrected: metadata.AttributeAmdGpuCperSeverityNonfatalUncorrected,
	gpu.CPERNonFatalCorrected:   metadata.AttributeAmdGpuCperSeverityNonfatalCorrected,
}

var violationReasons = []struct {
	field gpu.AMDField
	attr  metadata.AttributeAmdGpuViolationReason
}{
	{gpu.AMDViolationPower, metadata.AttributeAmdGpuViolationReasonPower},
	{gpu.AMDViolationSocketThermal, metadata.AttributeAmdGpuViolationReasonSocketThermal},
	{gpu.AMDViolationVRThermal, metadata.AttributeAmdGpuViolationReasonVrThermal},
	{gpu.AMDViolationHBMThermal, metadata.AttributeAmdGpuViolationReasonHbmThermal},
	{gpu.AMDViolationProchot, metadata.AttributeAmdGpuViolationReasonProchot},
}

var temperatureSensors = []struct {
	field gpu.AMDField
	attr  metadata.AttributeAmdGpuTemperatureSensor
}{
	{gpu.AMDTempEdge, metadata.AttributeAmdGpuTemperatureSensorEdge},
	{gpu.AMDTempHotspot, metadata.AttributeAmdGpuTemperatureSensorHotspot},
	{gpu.AMDTempVRAM, metadata.AttributeAmdGpuTemperatureSensorVram},
}

var badPageStates = []struct {
	field gpu.AMDField
	attr  metadata.AttributeAmdGpuBadPageStatus
}{
	{gpu.AMDBadPagesReserved, metadata.AttributeAmdGpuBadPageStatusReserved},
	{gpu.AMDBadPagesPending, metadata.AttributeAmdGpuBadPageStatusPending},
	{gpu.AMDBadPagesUnreservable, metadata.AttributeAmdGpuBadPageStatusUnreservable},
}

// recordAMD records the amd.gpu.* metrics, and hw.errors summed over the
// RAS blocks. Cumulative counts count from the device's first sample, as
// the NVIDIA counters do.
func (m *mapper) recordAMD(s *gpu.Sample, cs *counterState, ts pcommon.Timestamp) {
	mb := m.mb
	a := s.AMD
	if v, ok := a.Get(gpu.AMDUMCActivity); ok {
		mb.RecordAmdGpuUmcActivityDataPoint(ts, v/100)
	}
	if v, ok := a.Get(gpu.AMDMMActivity); ok {
		mb.RecordAmdGpuMmActivityDataPoint(ts, v/100)
	}
	if v, ok := a.Get(gpu.AMDPowerCap); ok {
		mb.RecordAmdGpuPowerCapDataPoint(ts, v)
	}
	for _, t := range temperatureSensors {
		if v, ok := a.Get(t.field); ok {
			mb.RecordAmdGpuTemperatureDataPoint(ts, v, t.attr)
		}
	}
	if v, ok := a.Get(gpu.AMDClockGFX); ok {
		mb.RecordAmdGpuClockFrequencyDataPoint(ts, v*1e6, metadata.AttributeAmdGpuClockGfx)
	}
	if v, ok := a.Get(gpu.AMDClockMem); ok {
		mb.RecordAmdGpuClockFrequencyDataPoint(ts, v*1e6, metadata.AttributeAmdGpuClockMemory)
	}
	for _, r := range violationReasons {
		if v, ok := a.Get(r.field); ok {
			mb.RecordAmdGpuViolationResidencyDataPoint(ts, v/100, r.attr)
		}
	}

	if len(a.ECC) > 0 {
		var sums [3]int64
		for _, blk := range a.ECC {
			for i, raw := range [3]uint64{blk.Corrected, blk.Uncorrected, blk.Deferred} {
				v := int64(cs.amdCount(amdCounter{kind: amdECC, block: blk.Block, sub: uint8(i)}, float64(raw), ts))
				sums[i] += v
				mb.RecordAmdGpuEccErrorsDataPoint(ts, v, eccTypes[i], blk.Block)
			}
		}
		for i, v := range sums {
			mb.RecordHwErrorsDataPoint(ts, v, eccTypes[i])
		}
	}
	for _, st := range badPageStates {
		if v, ok := a.Get(st.field); ok {
			mb.RecordAmdGpuBadPagesDataPoint(ts, int64(v), st.attr)
		}
	}
	if v, ok := a.Get(gpu.AMDBadPageThreshold); ok {
		mb.RecordAmdGpuBadPagesThresholdDataPoint(ts, int64(v))
	}
	for _, l := range a.Links {
		idx := int64(l.Index)
		rd := cs.amdCount(amdCounter{kind: amdXGMI, index: l.Index, sub: 0}, float64(l.ReadKB)*1024, ts)
		wr := cs.amdCount(amdCounter{kind: amdXGMI, index: l.Index, sub: 1}, float64(l.WriteKB)*1024, ts)
		mb.RecordAmdGpuXgmiIoDataPoint(ts, int64(rd), metadata.AttributeNetworkIoDirectionReceive, idx)
		mb.RecordAmdGpuXgmiIoDataPoint(ts, int64(wr), metadata.AttributeNetworkIoDirectionTransmit, idx)
		if l.MaxBandwidthGbps > 0 {
			mb.RecordAmdGpuXgmiBandwidthDataPoint(ts, l.MaxBandwidthGbps*1e9/8, idx)
		}
	}
	if v, ok := a.Get(gpu.AMDPCIeReplays); ok {
		mb.RecordAmdGpuPcieReplaysDataPoint(ts, int64(cs.amdCount(amdCounter{kind: amdPCIeReplays}, v, ts)))
	}
	if v, ok := a.Get(gpu.AMDProcesses); ok {
		mb.RecordAmdGpuProcessCountDataPoint(ts, int64(v))
	}

	cs.countCPER(a.CPER)
	if len(cs.cper) > 0 {
		keys := make([]cperKey, 0, len(cs.cper))
		for k := range cs.cper {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool {
			if keys[i].severity != keys[j].severity {
				return keys[i].severity < keys[j].severity
			}
			return keys[i].afid < keys[j].afid
		})
		for _, k := range keys {
			mb.RecordAmdGpuCperRecordsDataPoint(ts, cs.cper[k], cperSeverities[k.severity], int64(k.afid))
		}
	}
}

// amdCount returns a cumulative AMD counter's count since it was first
// seen, starting it anew when the raw count went down (a driver reload).
func (cs *counterState) amdCount(k amdCounter, raw float64, ts pcommon.Timestamp) float64 {
	if cs.amd == nil {
		cs.amd = make(map[amdCounter]*sourceCounter)
	}
	c, ok := cs.amd[k]
	switch {
	case !ok:
		// A counter seen from the device's first sample on counts from
		// the epoch's start; one that appears later, from now.
		start := ts
		if cs.samples == 0 {
			start = cs.epochStart
		}
		cs.amd[k] = &sourceCounter{ok: true, base: raw, last: raw, start: start}
		return 0
	case raw < c.last:
		*c = sourceCounter{ok: true, base: 0, last: raw, start: pcommon.NewTimestampFromTime(cs.last)}
	default:
		c.last = raw
	}
	return raw - c.base
}

// countCPER adds CPER records to the counts per severity and AFID; a
// record without an AFID counts under AFID 0.
func (cs *counterState) countCPER(recs []gpu.CPERRecord) {
	if len(recs) == 0 {
		return
	}
	if cs.cper == nil {
		cs.cper = make(map[cperKey]int64)
	}
	for _, r := range recs {
		if len(r.AFIDs) == 0 {
			cs.cper[cperKey{r.Severity, 0}]++
			continue
		}
		for _, id := range r.AFIDs {
			cs.cper[cperKey{r.Severity, id}]++
		}
	}
	last := recs[len(recs)-1]
	cs.lastCPER = &last
}

// amdStartOf returns the start time of an AMD counter's data point, and
// whether metric is one.
func (cs *counterState) amdStartOf(metric string, attrs pcommon.Map) (pcommon.Timestamp, bool) {
	var k amdCounter
	switch metric {
	case metricnames.AmdGPUEccErrors:
		k.kind = amdECC
		if v, ok := attrs.Get(metricnames.AttrAmdGPURasBlock); ok {
			k.block = v.Str()
		}
		if v, ok := attrs.Get(metricnames.AttrErrorType); ok {
			for i, t := range eccTypes {
				if t.String() == v.Str() {
					k.sub = uint8(i)
				}
			}
		}
	case metricnames.AmdGPUXgmiIO:
		k.kind = amdXGMI
		if v, ok := attrs.Get(metricnames.AttrAmdGPUXgmiLink); ok {
			k.index = int(v.Int())
		}
		if v, ok := attrs.Get(metricnames.AttrNetworkIODirection); ok && v.Str() == metadata.AttributeNetworkIoDirectionTransmit.String() {
			k.sub = 1
		}
	case metricnames.AmdGPUPCIeReplays:
		k.kind = amdPCIeReplays
	default:
		return 0, false
	}
	if c, ok := cs.amd[k]; ok {
		return c.start, true
	}
	return cs.epochStart, true
}
