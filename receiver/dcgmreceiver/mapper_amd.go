package dcgmreceiver

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// amdCounters are an AMD GPU's cumulative counters: ECC counts per RAS
// block (corrected, uncorrected, deferred), XGMI traffic over all links
// and, when asked for, per link (received, transmitted), PCIe replays.
type amdCounters struct {
	ecc      map[string]*[3]sourceCounter
	xgmi     [2]sourceCounter
	xgmiLink [][2]sourceCounter
	replays  sourceCounter
}

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

// temperatureSensors are AMD's sensors as amd.gpu.temperature and
// hw.temperature name them: vram is hw.temperature's memory.
var temperatureSensors = []struct {
	field    gpu.AMDField
	attr     metadata.AttributeAmdGpuTemperatureSensor
	location metadata.AttributeHwSensorLocation
}{
	{gpu.AMDTempEdge, metadata.AttributeAmdGpuTemperatureSensorEdge, metadata.AttributeHwSensorLocationEdge},
	{gpu.AMDTempHotspot, metadata.AttributeAmdGpuTemperatureSensorHotspot, metadata.AttributeHwSensorLocationHotspot},
	{gpu.AMDTempVRAM, metadata.AttributeAmdGpuTemperatureSensorVram, metadata.AttributeHwSensorLocationMemory},
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
	// hw.temperature{hw.sensor_location} carries each; the vendor's name,
	// deprecated, while the gate sends the old names.
	if legacynames.Enabled() {
		for _, t := range temperatureSensors {
			if v, ok := a.Get(t.field); ok {
				mb.RecordAmdGpuTemperatureDataPoint(ts, v, t.attr)
			}
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
		// Every block's counts are followed, but a block is reported
		// only once the driver has counted an error in it: an MI300X
		// checks some twenty blocks, and sixty series of zeros per GPU
		// say nothing hw.errors, always reported, does not.
		var sums [3]int64
		for _, blk := range a.ECC {
			raw := [3]uint64{blk.Corrected, blk.Uncorrected, blk.Deferred}
			c := cs.eccCounters(blk.Block)
			var counted [3]int64
			for i := range raw {
				counted[i] = int64(cs.amdCount(&c[i], float64(raw[i]), ts))
				sums[i] += counted[i]
			}
			if raw == [3]uint64{} {
				continue
			}
			for i, v := range counted {
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
	if len(a.Links) > 0 {
		m.recordXGMI(a.Links, cs, ts)
	}
	if v, ok := a.Get(gpu.AMDPCIeReplays); ok {
		mb.RecordAmdGpuPcieReplaysDataPoint(ts, int64(cs.amdCount(&cs.amd.replays, v, ts)))
	}
	if v, ok := a.Get(gpu.AMDProcesses); ok {
		mb.RecordOtelgpuProcessCountDataPoint(ts, int64(v))
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

// recordXGMI records the XGMI links' traffic and bandwidth summed over
// the links, as NVLink's traffic is one figure per direction; and per
// link when a per-link metric is enabled. The sums are what the analyzer
// reads (traffic against bandwidth), and per link an MI300X's seven links
// would make 21 series per GPU, more than half of the rest together.
func (m *mapper) recordXGMI(links []gpu.XGMILink, cs *counterState, ts pcommon.Timestamp) {
	var rd, wr uint64
	var bw float64
	for _, l := range links {
		rd += l.ReadKB
		wr += l.WriteKB
		bw += l.MaxBandwidthGbps
	}
	// Summed, a link's reset shows as the sum going back, which restarts
	// the sum's count: its rate is lost for one interval, never doubled.
	mb := m.mb
	mb.RecordAmdGpuXgmiIoDataPoint(ts, int64(cs.amdCount(&cs.amd.xgmi[0], float64(rd)*1024, ts)), metadata.AttributeNetworkIoDirectionReceive)
	mb.RecordAmdGpuXgmiIoDataPoint(ts, int64(cs.amdCount(&cs.amd.xgmi[1], float64(wr)*1024, ts)), metadata.AttributeNetworkIoDirectionTransmit)
	if bw > 0 {
		mb.RecordAmdGpuXgmiBandwidthDataPoint(ts, bw*1e9/8)
	}
	if !m.xgmiPerLink {
		return
	}
	for _, l := range links {
		idx := int64(l.Index)
		c := cs.xgmiLinkCounters(l.Index)
		lrd := cs.amdCount(&c[0], float64(l.ReadKB)*1024, ts)
		lwr := cs.amdCount(&c[1], float64(l.WriteKB)*1024, ts)
		mb.RecordAmdGpuXgmiLinkIoDataPoint(ts, int64(lrd), metadata.AttributeNetworkIoDirectionReceive, idx)
		mb.RecordAmdGpuXgmiLinkIoDataPoint(ts, int64(lwr), metadata.AttributeNetworkIoDirectionTransmit, idx)
		if l.MaxBandwidthGbps > 0 {
			mb.RecordAmdGpuXgmiLinkBandwidthDataPoint(ts, l.MaxBandwidthGbps*1e9/8, idx)
		}
	}
}

// amdCount returns a cumulative AMD counter's count since it was first
// seen, starting it anew when the raw count went down (a driver reload).
func (cs *counterState) amdCount(c *sourceCounter, raw float64, ts pcommon.Timestamp) float64 {
	switch {
	case !c.ok:
		// A counter seen from the device's first sample on counts from
		// the epoch's start; one that appears later, from now.
		start := ts
		if cs.samples == 0 {
			start = cs.epochStart
		} else {
			cs.amdStarts = true
		}
		*c = sourceCounter{ok: true, base: raw, last: raw, start: start}
		return 0
	case raw < c.last:
		*c = sourceCounter{ok: true, base: 0, last: raw, start: pcommon.NewTimestampFromTime(cs.last)}
		cs.amdStarts = true
	default:
		c.last = raw
	}
	return raw - c.base
}

// eccCounters returns the counters of a RAS block.
func (cs *counterState) eccCounters(block string) *[3]sourceCounter {
	if cs.amd.ecc == nil {
		cs.amd.ecc = make(map[string]*[3]sourceCounter)
	}
	c, ok := cs.amd.ecc[block]
	if !ok {
		c = new([3]sourceCounter)
		cs.amd.ecc[block] = c
	}
	return c
}

// xgmiLinkCounters returns the counters of an XGMI link.
func (cs *counterState) xgmiLinkCounters(link int) *[2]sourceCounter {
	for len(cs.amd.xgmiLink) <= link {
		cs.amd.xgmiLink = append(cs.amd.xgmiLink, [2]sourceCounter{})
	}
	return &cs.amd.xgmiLink[link]
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
	if !cs.amdStarts {
		// Every counter started with the epoch: no lookup needed.
		return cs.epochStart, true
	}
	var c *sourceCounter
	switch metric {
	case metricnames.AmdGPUEccErrors:
		blk, _ := attrs.Get(metricnames.AttrAmdGPURasBlock)
		typ, _ := attrs.Get(metricnames.AttrErrorType)
		if cs3, ok := cs.amd.ecc[blk.Str()]; ok {
			for i, t := range eccTypes {
				if t.String() == typ.Str() {
					c = &cs3[i]
				}
			}
		}
	case metricnames.AmdGPUXgmiIO:
		c = &cs.amd.xgmi[xgmiDirection(attrs)]
	case metricnames.AmdGPUXgmiLinkIO:
		link, _ := attrs.Get(metricnames.AttrAmdGPUXgmiLink)
		if i := int(link.Int()); i >= 0 && i < len(cs.amd.xgmiLink) {
			c = &cs.amd.xgmiLink[i][xgmiDirection(attrs)]
		}
	case metricnames.AmdGPUPCIeReplays:
		c = &cs.amd.replays
	default:
		return 0, false
	}
	if c != nil && c.ok {
		return c.start, true
	}
	return cs.epochStart, true
}

// xgmiDirection is the index of an XGMI data point's counter: 0 received,
// 1 transmitted.
func xgmiDirection(attrs pcommon.Map) int {
	if dir, _ := attrs.Get(metricnames.AttrNetworkIODirection); dir.Str() == metadata.AttributeNetworkIoDirectionTransmit.String() {
		return 1
	}
	return 0
}
