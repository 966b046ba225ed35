package dcgmreceiver

import (
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

const mib = 1 << 20

// mapper turns GPU samples into OTLP metrics. It keeps the state that
// cumulative counters need (start times, baselines, integrated byte counts),
// so one mapper must see every sample of the devices it maps, in time order.
// It is the receiver's own mapping; trace replay reaches it through the
// factory (offline.Receiver), so that a replay exercises the shipped code.
// A mapper is not safe for concurrent use.
type mapper struct {
	naming  string
	mb      *metadata.MetricsBuilder
	rb      *metadata.ResourceBuilder
	devices map[string]*counterState
	out     pmetric.Metrics
	// ttl drops the counter state of devices that stopped reporting.
	ttl       time.Duration
	lastSweep time.Time
	// pmb builds the per-process resources (process.go); processes is set
	// when it holds some.
	pmb       *metadata.MetricsBuilder
	processes bool
	// groups is the scratch of appendProcesses.
	groups []procGroup
	// xgmiPerLink is set when a per-link XGMI metric is enabled: only then
	// are the links' own counters kept.
	xgmiPerLink bool
}

// newMapper returns a mapper for the given metric settings and naming mode
// (NamingOTel, NamingDCGMExporter or NamingDeviceMetricsExporter).
func newMapper(mbc metadata.MetricsBuilderConfig, naming string, set receiver.Settings) *mapper {
	return &mapper{
		naming:  naming,
		mb:      metadata.NewMetricsBuilder(mbc, set),
		pmb:     metadata.NewMetricsBuilder(mbc, set),
		rb:      metadata.NewResourceBuilder(mbc.ResourceAttributes),
		devices: make(map[string]*counterState),
		out:     pmetric.NewMetrics(),
		ttl:     10 * time.Minute,

		xgmiPerLink: mbc.Metrics.AmdGpuXgmiLinkIo.Enabled || mbc.Metrics.AmdGpuXgmiLinkBandwidth.Enabled,
	}
}

// Append maps one sample. Samples of one device must come in time order.
func (m *mapper) Append(s *gpu.Sample) {
	cs := m.state(s)
	if exporterNaming(m.naming) {
		if s.Device.IsAMD() {
			m.appendDeviceMetricsExporter(s, cs)
		} else {
			appendDCGMExporter(m.out, s)
		}
		return
	}
	m.record(s, cs)
	name := s.Device.Name()
	m.setResource(s.Device, name)
	md := m.mb.Emit(metadata.WithResourceMoved(m.rb.Emit()))
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		cs.setStartTimes(rms.At(i))
		if s.Device.IsAMD() {
			legacynames.AppendOldResource(rms.At(i)) // otelgpu.process.count's deprecated name
		}
	}
	rms.MoveAndAppendTo(m.out.ResourceMetrics())
	if len(s.Processes) > 0 {
		m.appendProcesses(s, cs, name)
	}
}

// Emit returns everything appended since the last Emit.
func (m *mapper) Emit() pmetric.Metrics {
	out := m.out
	m.out = pmetric.NewMetrics()
	if m.processes {
		m.processes = false
		rms := m.pmb.Emit().ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			legacynames.AppendOldResource(rms.At(i))
		}
		rms.MoveAndAppendTo(out.ResourceMetrics())
	}
	return out
}

// state returns the counter state of the sample's device, starting it anew
// when the device is new or its source's epoch changed (a reconnect or a
// driver reload): counters from before are not comparable with those after.
func (m *mapper) state(s *gpu.Sample) *counterState {
	cs, ok := m.devices[s.Device.UUID]
	if !ok || cs.epoch != s.Epoch {
		cs = newCounterState(s.Epoch, s.Time)
		m.devices[s.Device.UUID] = cs
	}
	if s.Time.Sub(m.lastSweep) > m.ttl {
		for id, st := range m.devices {
			if s.Time.Sub(st.last) > m.ttl {
				delete(m.devices, id)
			}
		}
		m.lastSweep = s.Time
	}
	return cs
}

// setResource sets the device's resource attributes; name is d.Name().
func (m *mapper) setResource(d *gpu.Device, name string) {
	rb := m.rb
	rb.EnsureCapacity(deviceAttributes)
	rb.SetHwID(d.UUID)
	rb.SetHwName(name)
	rb.SetHwType("gpu")
	rb.SetHwVendor(d.VendorName())
	setIf(rb.SetHwModel, d.Model)
	setIf(rb.SetHwDriverVersion, d.DriverVersion)
	setIf(rb.SetHostName, d.Host)
	setIf(rb.SetHwSerialNumber, d.SerialNumber)
	setIf(rb.SetHwFirmwareVersion, d.FirmwareVersion)
	if d.IsAMD() {
		rb.SetAmdGpuIndex(int64(d.Index))
		setIf(rb.SetAmdGpuPciBusID, d.PCIBusID)
		if a := d.AMD; a != nil {
			setIf(rb.SetAmdGpuPartitionCompute, a.ComputePartition)
			setIf(rb.SetAmdGpuPartitionMemory, a.MemoryPartition)
			if a.ParentUUID != "" {
				rb.SetHwParent(a.ParentUUID)
				if a.PartitionID >= 0 {
					rb.SetAmdGpuPartitionID(int64(a.PartitionID))
				}
			}
		}
	} else {
		rb.SetNvidiaGpuIndex(int64(d.Index))
		setIf(rb.SetNvidiaGpuPciBusID, d.PCIBusID)
	}
	if d.MIG != nil {
		// hw.parent is the conventions' name for it; the vendor's,
		// deprecated, while the gate sends the old names.
		setIf(rb.SetHwParent, d.MIG.ParentUUID)
		if legacynames.Enabled() {
			rb.SetNvidiaGpuMigParentID(d.MIG.ParentUUID)
		}
		rb.SetNvidiaGpuMigInstance(migInstance(d.MIG))
		setIf(rb.SetNvidiaGpuMigProfile, d.MIG.Profile)
	}
	setIf(rb.SetK8sNamespaceName, d.Pod.Namespace)
	setIf(rb.SetK8sPodName, d.Pod.Name)
	setIf(rb.SetK8sContainerName, d.Pod.Container)
	setIf(rb.SetK8sJobName, d.Pod.Job)
	setIf(rb.SetK8sResourceclaimName, d.Pod.Claim)
	setSlurm(rb, &d.Slurm)
}

// setSlurm sets a job's slurm.* attributes, those known.
func setSlurm(rb *metadata.ResourceBuilder, j *gpu.SlurmJob) {
	if !j.Known() {
		return
	}
	rb.SetSlurmJobID(j.ID)
	setIf(rb.SetSlurmJobStep, j.Step)
	setIf(rb.SetSlurmJobName, j.Name)
	setIf(rb.SetSlurmJobUser, j.User)
	setIf(rb.SetSlurmJobAccount, j.Account)
	setIf(rb.SetSlurmJobPartition, j.Partition)
	setIf(rb.SetSlurmClusterName, j.Cluster)
}

// deviceAttributes is how many attributes setResource sets at most.
const deviceAttributes = 26

func setIf(set func(string), v string) {
	if v != "" {
		set(v)
	}
}

// value returns a field's value if it is present and plausible; NaN,
// negative, out-of-range and DCGM blank values are treated as absent.
func value(vs *f.Values, field f.Field) (float64, bool) {
	v, ok := vs.Get(field)
	if !ok || !f.Valid(field, v) {
		return 0, false
	}
	return v, true
}

func (m *mapper) record(s *gpu.Sample, cs *counterState) {
	mb := m.mb
	vs := &s.Values
	ts := pcommon.NewTimestampFromTime(s.Time)

	if v, ok := value(vs, f.GPUUtil); ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, v/100, metadata.AttributeHwGpuTaskGeneral)
	}
	if v, ok := value(vs, f.EncUtil); ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, v/100, metadata.AttributeHwGpuTaskEncoder)
	}
	if v, ok := value(vs, f.DecUtil); ok {
		mb.RecordHwGpuUtilizationDataPoint(ts, v/100, metadata.AttributeHwGpuTaskDecoder)
	}

	used, hasUsed := value(vs, f.FBUsed)
	limit, hasLimit := value(vs, f.FBTotal)
	if !hasLimit && hasUsed {
		if free, ok := value(vs, f.FBFree); ok {
			reserved, _ := value(vs, f.FBReserved)
			limit, hasLimit = used+free+reserved, true
		}
	}
	if hasUsed {
		mb.RecordHwGpuMemoryUsageDataPoint(ts, int64(used*mib))
	}
	if hasLimit {
		mb.RecordHwGpuMemoryLimitDataPoint(ts, int64(limit*mib))
	}
	// Utilization is the share of usable memory in use, FB_USED / (FB_USED
	// + FB_FREE), as DCGM defines it: reserved memory is never usable.
	if free, ok := value(vs, f.FBFree); hasUsed && ok && used+free > 0 {
		mb.RecordHwGpuMemoryUtilizationDataPoint(ts, used/(used+free))
	} else if hasUsed && hasLimit && limit > 0 {
		mb.RecordHwGpuMemoryUtilizationDataPoint(ts, used/limit)
	}

	if v, ok := value(vs, f.PowerUsage); ok {
		mb.RecordHwPowerDataPoint(ts, v)
	}
	m.recordTemperatures(s, ts)

	// Counters both vendors have.
	dt := s.Time.Sub(cs.last).Seconds()
	if cs.samples == 0 || dt < 0 {
		dt = 0
	}
	for i, r := range integrated {
		if v, ok := value(vs, r.field); ok {
			cs.bytes[i] += v * dt
		}
	}
	if vs.Has(f.PCIeTxBytes) || vs.Has(f.PCIeRxBytes) {
		mb.RecordHwGpuIoDataPoint(ts, int64(cs.bytes[0]), metadata.AttributeNetworkIoDirectionTransmit)
		mb.RecordHwGpuIoDataPoint(ts, int64(cs.bytes[1]), metadata.AttributeNetworkIoDirectionReceive)
	}
	if v, ok := cs.source(srcEnergy, vs, f.TotalEnergy, ts); ok {
		mb.RecordHwEnergyDataPoint(ts, v/1000)
	}
	// An AMD GPU's errors are summed over its RAS blocks (recordAMD); a
	// trace of one has only the totals.
	if s.AMD == nil || len(s.AMD.ECC) == 0 {
		if v, ok := cs.source(srcSBE, vs, f.ECCSBEVolTotal, ts); ok {
			mb.RecordHwErrorsDataPoint(ts, int64(v), metadata.AttributeErrorTypeCorrected)
		}
		if v, ok := cs.source(srcDBE, vs, f.ECCDBEVolTotal, ts); ok {
			mb.RecordHwErrorsDataPoint(ts, int64(v), metadata.AttributeErrorTypeUncorrected)
		}
	}

	if s.Device.IsAMD() {
		if s.AMD != nil {
			m.recordAMD(s, cs, ts)
		}
	} else {
		m.recordNVIDIA(s, cs, ts)
	}
	cs.last = s.Time
	cs.samples++
}

// sensorLocations are the hw.sensor_location of each gpu.TempSensor.
var sensorLocations = [...]metadata.AttributeHwSensorLocation{
	gpu.SensorDie:     metadata.AttributeHwSensorLocationDie,
	gpu.SensorMemory:  metadata.AttributeHwSensorLocationMemory,
	gpu.SensorEdge:    metadata.AttributeHwSensorLocationEdge,
	gpu.SensorHotspot: metadata.AttributeHwSensorLocationHotspot,
}

// limitTypes are the hw.limit_type of each gpu.TempLimitKind.
var limitTypes = [...]metadata.AttributeHwLimitType{
	gpu.LimitSlowdown: metadata.AttributeHwLimitTypeHighDegraded,
	gpu.LimitShutdown: metadata.AttributeHwLimitTypeHighCritical,
}

// recordTemperatures records every temperature the sample has as
// hw.temperature with its sensor's location, and the device's thresholds
// as hw.temperature.limit. An AMD GPU's GPU_TEMP is its hotspot's, which
// its own figures hold too; a trace of one has only GPU_TEMP.
func (m *mapper) recordTemperatures(s *gpu.Sample, ts pcommon.Timestamp) {
	mb := m.mb
	vs := &s.Values
	switch {
	case s.Device.IsAMD() && s.AMD != nil:
		for _, t := range temperatureSensors {
			if v, ok := s.AMD.Get(t.field); ok {
				mb.RecordHwTemperatureDataPoint(ts, v, t.location)
			}
		}
	case s.Device.IsAMD():
		if v, ok := value(vs, f.GPUTemp); ok {
			mb.RecordHwTemperatureDataPoint(ts, v, metadata.AttributeHwSensorLocationHotspot)
		}
	default:
		if v, ok := value(vs, f.GPUTemp); ok {
			mb.RecordHwTemperatureDataPoint(ts, v, metadata.AttributeHwSensorLocationDie)
		}
		if v, ok := value(vs, f.MemoryTemp); ok {
			mb.RecordHwTemperatureDataPoint(ts, v, metadata.AttributeHwSensorLocationMemory)
		}
	}
	for _, l := range s.Device.TempLimits {
		if int(l.Sensor) < len(sensorLocations) && int(l.Kind) < len(limitTypes) {
			mb.RecordHwTemperatureLimitDataPoint(ts, l.Celsius, sensorLocations[l.Sensor], limitTypes[l.Kind])
		}
	}
}

// recordNVIDIA records the nvidia.gpu.* metrics.
func (m *mapper) recordNVIDIA(s *gpu.Sample, cs *counterState, ts pcommon.Timestamp) {
	mb := m.mb
	vs := &s.Values
	// A limit of 0 W is no limit a board could run under: a source that
	// does not know it.
	if v, ok := value(vs, f.EnforcedPowerLimit); ok && v > 0 {
		mb.RecordNvidiaGpuPowerLimitDataPoint(ts, v)
	}
	// hw.temperature{hw.sensor_location=memory} carries it; the vendor's
	// name, deprecated, while the gate sends the old names.
	if v, ok := value(vs, f.MemoryTemp); ok && legacynames.Enabled() {
		mb.RecordNvidiaGpuMemoryTemperatureDataPoint(ts, v)
	}
	memCopy, hasMemCopy := value(vs, f.MemCopyUtil)
	if hasMemCopy {
		mb.RecordNvidiaGpuMemoryCopyUtilizationDataPoint(ts, memCopy/100)
	}

	// Profiling fields, with DCGM's documented fallbacks where a GPU does not
	// support profiling. SM activity has no honest fallback and stays absent.
	if v, ok := value(vs, f.GREngineActive); ok {
		mb.RecordNvidiaGpuGraphicsEngineActiveDataPoint(ts, v)
	} else if v, ok := value(vs, f.GPUUtil); ok {
		mb.RecordNvidiaGpuGraphicsEngineActiveDataPoint(ts, v/100)
	}
	if v, ok := value(vs, f.DRAMActive); ok {
		mb.RecordNvidiaGpuDramActiveDataPoint(ts, v)
	} else if hasMemCopy {
		mb.RecordNvidiaGpuDramActiveDataPoint(ts, memCopy/100)
	}
	if v, ok := value(vs, f.SMActive); ok {
		mb.RecordNvidiaGpuSmActiveDataPoint(ts, v)
	}
	if v, ok := value(vs, f.SMOccupancy); ok {
		mb.RecordNvidiaGpuSmOccupancyDataPoint(ts, v)
	}
	for _, p := range pipes {
		if v, ok := value(vs, p.field); ok {
			mb.RecordNvidiaGpuPipeActiveDataPoint(ts, v, p.attr)
		}
	}

	if v, ok := value(vs, f.SMClock); ok {
		mb.RecordNvidiaGpuClockFrequencyDataPoint(ts, v*1e6, metadata.AttributeNvidiaGpuClockSm)
	}
	if v, ok := value(vs, f.MemClock); ok {
		mb.RecordNvidiaGpuClockFrequencyDataPoint(ts, v*1e6, metadata.AttributeNvidiaGpuClockMemory)
	}
	if v, ok := value(vs, f.ClocksEventReasons); ok {
		mask := int64(v)
		mb.RecordNvidiaGpuClockEventReasonsDataPoint(ts, mask)
		for _, r := range clockEventReasons {
			var active int64
			if mask&r.bit != 0 {
				active = 1
			}
			mb.RecordNvidiaGpuClockEventActiveDataPoint(ts, active, r.attr)
		}
	}

	// Counters.
	if vs.Has(f.NVLinkTxBytes) || vs.Has(f.NVLinkRxBytes) {
		mb.RecordNvidiaGpuNvlinkIoDataPoint(ts, int64(cs.bytes[2]), metadata.AttributeNetworkIoDirectionTransmit)
		mb.RecordNvidiaGpuNvlinkIoDataPoint(ts, int64(cs.bytes[3]), metadata.AttributeNetworkIoDirectionReceive)
	}
	if v, ok := cs.source(srcPowerViolation, vs, f.PowerViolation, ts); ok {
		mb.RecordNvidiaGpuThrottleTimeDataPoint(ts, v/1e6, metadata.AttributeNvidiaGpuThrottleReasonPower)
	}
	if v, ok := cs.source(srcThermalViolation, vs, f.ThermalViolation, ts); ok {
		mb.RecordNvidiaGpuThrottleTimeDataPoint(ts, v/1e6, metadata.AttributeNvidiaGpuThrottleReasonThermal)
	}
	if v, ok := cs.source(srcPCIeReplay, vs, f.PCIeReplayCounter, ts); ok {
		mb.RecordNvidiaGpuPcieReplaysDataPoint(ts, int64(v))
	}

	for _, code := range s.XIDs {
		cs.xids[code]++
	}
	if len(cs.xids) > 0 {
		codes := make([]uint32, 0, len(cs.xids))
		for c := range cs.xids {
			codes = append(codes, c)
		}
		sort.Slice(codes, func(i, j int) bool { return codes[i] < codes[j] })
		for _, c := range codes {
			mb.RecordNvidiaGpuXidErrorsDataPoint(ts, cs.xids[c], int64(c))
		}
	}

	if v, ok := value(vs, f.RowRemapFailure); ok {
		mb.RecordNvidiaGpuRowRemapFailureDataPoint(ts, int64(v))
	}
	// 0 (no action) is a reading like any other: it is what tells a GPU
	// whose driver reports the action apart from one whose driver does not
	// (no point at all).
	if v, ok := value(vs, f.RecoveryAction); ok {
		mb.RecordNvidiaGpuRecoveryActionDataPoint(ts, int64(v))
	}
	if v, ok := value(vs, f.CorrectableRemappedRows); ok {
		mb.RecordNvidiaGpuRowRemapRowsDataPoint(ts, int64(v), metadata.AttributeErrorTypeCorrected)
	}
	if v, ok := value(vs, f.UncorrectableRemappedRows); ok {
		mb.RecordNvidiaGpuRowRemapRowsDataPoint(ts, int64(v), metadata.AttributeErrorTypeUncorrected)
	}
	// A pass is a reading like any other, as the recovery action's 0: it
	// tells a subsystem checked and found well from one not checked.
	for _, sys := range gpu.HealthSystems() {
		if s.Health.Watches(sys) {
			mb.RecordNvidiaGpuHealthDataPoint(ts, int64(s.Health.Result[sys]), healthSystems[sys])
		}
	}
}

// healthSystems are the nvidia.gpu.health.system of each gpu.HealthSystem,
// by name (TestHealthSystemsMapped).
var healthSystems = func() (out [gpu.NumHealthSystems]metadata.AttributeNvidiaGpuHealthSystem) {
	for _, sys := range gpu.HealthSystems() {
		out[sys] = metadata.MapAttributeNvidiaGpuHealthSystem[sys.String()]
	}
	return out
}()

var pipes = []struct {
	field f.Field
	attr  metadata.AttributeNvidiaGpuPipe
}{
	{f.PipeTensorActive, metadata.AttributeNvidiaGpuPipeTensor},
	{f.PipeFP64Active, metadata.AttributeNvidiaGpuPipeFp64},
	{f.PipeFP32Active, metadata.AttributeNvidiaGpuPipeFp32},
	{f.PipeFP16Active, metadata.AttributeNvidiaGpuPipeFp16},
}

var clockEventReasons = []struct {
	bit  int64
	attr metadata.AttributeNvidiaGpuClockEventReason
}{
	{f.ClocksEventGPUIdle, metadata.AttributeNvidiaGpuClockEventReasonGpuIdle},
	{f.ClocksEventAppClockSetting, metadata.AttributeNvidiaGpuClockEventReasonApplicationsClocksSetting},
	{f.ClocksEventSWPowerCap, metadata.AttributeNvidiaGpuClockEventReasonSwPowerCap},
	{f.ClocksEventHWSlowdown, metadata.AttributeNvidiaGpuClockEventReasonHwSlowdown},
	{f.ClocksEventSyncBoost, metadata.AttributeNvidiaGpuClockEventReasonSyncBoost},
	{f.ClocksEventSWThermal, metadata.AttributeNvidiaGpuClockEventReasonSwThermal},
	{f.ClocksEventHWThermal, metadata.AttributeNvidiaGpuClockEventReasonHwThermal},
	{f.ClocksEventHWPowerBrake, metadata.AttributeNvidiaGpuClockEventReasonHwPowerBrake},
	{f.ClocksEventDisplayClockSetting, metadata.AttributeNvidiaGpuClockEventReasonDisplayClocksSetting},
}

// integrated lists the rate fields integrated into byte counters, in the
// order of counterState.bytes.
var integrated = []struct{ field f.Field }{
	{f.PCIeTxBytes}, {f.PCIeRxBytes}, {f.NVLinkTxBytes}, {f.NVLinkRxBytes},
}

func migInstance(m *gpu.MIG) string {
	return itoa(m.GPUInstance) + "." + itoa(m.ComputeInstance)
}
