package record

import (
	"slices"
	"strings"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	mn "github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// shape is the naming a series in Prometheus has.
type shape uint8

const (
	// shapeDCGM is dcgm-exporter's: a DCGM_FI_* gauge per field, in DCGM's
	// units, labelled UUID, gpu, modelName, Hostname, namespace, pod,
	// container (GPU_I_ID for a MIG instance). The dcgm receiver's
	// `naming: dcgm_exporter` writes the same.
	shapeDCGM shape = iota
	// shapeOTel is the dcgm receiver's default OpenTelemetry metrics as
	// the collector's prometheus and prometheusremotewrite exporters name
	// them, with resource_to_telemetry_conversion: hw_gpu_utilization_ratio
	// {hw_id, host_name, ...}.
	shapeOTel
)

// conv says how a series' samples become trace cells.
type conv uint8

const (
	convValue      conv = iota // the value, times scale, is the field's
	convXIDGauge               // dcgm-exporter's last XID, per GPU: an XID where it changes to a new code
	convXIDCounter             // XIDs counted per code: an XID where the count goes up
	convRate                   // bytes integrated from a rate: the rate again
	convMemUtil                // FB_USED / (FB_USED + FB_FREE): FB_FREE again
	convGREngine               // GR_ENGINE_ACTIVE, or the receiver's fallback GPU_UTIL / 100
	convDRAM                   // DRAM_ACTIVE, or the receiver's fallback MEM_COPY_UTIL / 100
)

// promMetric is one metric name gpurecord reads.
type promMetric struct {
	name  string
	shape shape
	conv  conv
	field f.Field
	scale float64 // 0 means 1
	// label, when set, is the label whose value picks the field from
	// fields: hw_gpu_task="encoder" is DCGM_FI_DEV_ENC_UTIL.
	label  string
	fields map[string]f.Field
}

// otelType is an OpenTelemetry metric's type, which its Prometheus name
// depends on.
type otelType uint8

const (
	otelGauge   otelType = iota
	otelCounter          // a monotonic cumulative sum: _total
	otelUpDown           // a non-monotonic sum: a Prometheus gauge
)

// otelMetric is one of the receiver's metrics (receiver/dcgmreceiver/
// metadata.yaml) and how to read it back in DCGM's units.
type otelMetric struct {
	name, unit string
	typ        otelType
	conv       conv
	field      f.Field
	scale      float64
	label      string
	fields     map[string]f.Field
}

const mib = 1 << 20

// otelMetrics are the receiver's metrics that hold a trace field. Left out:
// nvidia.gpu.clock.event.active (the bitmask, one bit per series).
var otelMetrics = []otelMetric{
	{name: mn.HWGPUUtilization, unit: mn.HWGPUUtilizationUnit, typ: otelGauge, scale: 100, label: mn.AttrHWGPUTask,
		fields: map[string]f.Field{mn.AttrHWGPUTaskGeneral: f.GPUUtil, mn.AttrHWGPUTaskEncoder: f.EncUtil, mn.AttrHWGPUTaskDecoder: f.DecUtil}},
	{name: mn.NvidiaGPUMemoryCopyUtilization, unit: mn.NvidiaGPUMemoryCopyUtilizationUnit, typ: otelGauge, field: f.MemCopyUtil, scale: 100},
	{name: mn.HWGPUMemoryUsage, unit: mn.HWGPUMemoryUsageUnit, typ: otelUpDown, field: f.FBUsed, scale: 1.0 / mib},
	{name: mn.HWGPUMemoryLimit, unit: mn.HWGPUMemoryLimitUnit, typ: otelUpDown, field: f.FBTotal, scale: 1.0 / mib},
	{name: mn.HWGPUMemoryUtilization, unit: mn.HWGPUMemoryUtilizationUnit, typ: otelGauge, conv: convMemUtil},
	{name: mn.HWPower, unit: mn.HWPowerUnit, typ: otelGauge, field: f.PowerUsage},
	{name: mn.NvidiaGPUPowerLimit, unit: mn.NvidiaGPUPowerLimitUnit, typ: otelGauge, field: f.EnforcedPowerLimit},
	{name: mn.HWEnergy, unit: mn.HWEnergyUnit, typ: otelCounter, field: f.TotalEnergy, scale: 1000},
	// The GPU's own temperature is the die's, or an AMD GPU's hotspot's;
	// a collector that predates hw.sensor_location sends it without one.
	{name: mn.HWTemperature, unit: mn.HWTemperatureUnit, typ: otelGauge, label: mn.AttrHWSensorLocation,
		fields: map[string]f.Field{"": f.GPUTemp, mn.AttrHWSensorLocationDie: f.GPUTemp, mn.AttrHWSensorLocationHotspot: f.GPUTemp}},
	{name: mn.NvidiaGPUMemoryTemperature, unit: mn.NvidiaGPUMemoryTemperatureUnit, typ: otelGauge, field: f.MemoryTemp},
	{name: mn.NvidiaGPUClockFrequency, unit: mn.NvidiaGPUClockFrequencyUnit, typ: otelGauge, scale: 1e-6, label: mn.AttrNvidiaGPUClock,
		fields: map[string]f.Field{mn.AttrNvidiaGPUClockSM: f.SMClock, mn.AttrNvidiaGPUClockMemory: f.MemClock}},
	{name: mn.NvidiaGPUClockEventReasons, unit: mn.NvidiaGPUClockEventReasonsUnit, typ: otelGauge, field: f.ClocksEventReasons},
	{name: mn.NvidiaGPUThrottleTime, unit: mn.NvidiaGPUThrottleTimeUnit, typ: otelCounter, scale: 1e6, label: mn.AttrNvidiaGPUThrottleReason,
		fields: map[string]f.Field{mn.AttrNvidiaGPUThrottleReasonPower: f.PowerViolation, mn.AttrNvidiaGPUThrottleReasonThermal: f.ThermalViolation}},
	{name: mn.HWErrors, unit: mn.HWErrorsUnit, typ: otelCounter, label: mn.AttrErrorType,
		fields: map[string]f.Field{mn.AttrErrorTypeCorrected: f.ECCSBEVolTotal, mn.AttrErrorTypeUncorrected: f.ECCDBEVolTotal}},
	{name: mn.NvidiaGPURowRemapFailure, unit: mn.NvidiaGPURowRemapFailureUnit, typ: otelGauge, field: f.RowRemapFailure},
	{name: mn.NvidiaGPURecoveryAction, unit: mn.NvidiaGPURecoveryActionUnit, typ: otelGauge, field: f.RecoveryAction},
	{name: mn.NvidiaGPURowRemapRows, unit: mn.NvidiaGPURowRemapRowsUnit, typ: otelUpDown, label: mn.AttrErrorType,
		fields: map[string]f.Field{mn.AttrErrorTypeCorrected: f.CorrectableRemappedRows, mn.AttrErrorTypeUncorrected: f.UncorrectableRemappedRows}},
	{name: mn.NvidiaGPUPCIeReplays, unit: mn.NvidiaGPUPCIeReplaysUnit, typ: otelCounter, field: f.PCIeReplayCounter},
	{name: mn.NvidiaGPUGraphicsEngineActive, unit: mn.NvidiaGPUGraphicsEngineActiveUnit, typ: otelGauge, conv: convGREngine},
	{name: mn.NvidiaGPUSMActive, unit: mn.NvidiaGPUSMActiveUnit, typ: otelGauge, field: f.SMActive},
	{name: mn.NvidiaGPUSMOccupancy, unit: mn.NvidiaGPUSMOccupancyUnit, typ: otelGauge, field: f.SMOccupancy},
	{name: mn.NvidiaGPUPipeActive, unit: mn.NvidiaGPUPipeActiveUnit, typ: otelGauge, label: mn.AttrNvidiaGPUPipe,
		fields: map[string]f.Field{mn.AttrNvidiaGPUPipeTensor: f.PipeTensorActive, mn.AttrNvidiaGPUPipeFp64: f.PipeFP64Active,
			mn.AttrNvidiaGPUPipeFp32: f.PipeFP32Active, mn.AttrNvidiaGPUPipeFp16: f.PipeFP16Active}},
	{name: mn.NvidiaGPUDRAMActive, unit: mn.NvidiaGPUDRAMActiveUnit, typ: otelGauge, conv: convDRAM},
	{name: mn.HWGPUIO, unit: mn.HWGPUIOUnit, typ: otelCounter, conv: convRate, label: mn.AttrNetworkIODirection,
		fields: map[string]f.Field{mn.AttrNetworkIODirectionTransmit: f.PCIeTxBytes, mn.AttrNetworkIODirectionReceive: f.PCIeRxBytes}},
	{name: mn.NvidiaGPUNVLinkIO, unit: mn.NvidiaGPUNVLinkIOUnit, typ: otelCounter, conv: convRate, label: mn.AttrNetworkIODirection,
		fields: map[string]f.Field{mn.AttrNetworkIODirectionTransmit: f.NVLinkTxBytes, mn.AttrNetworkIODirectionReceive: f.NVLinkRxBytes}},
	{name: mn.NvidiaGPUXIDErrors, unit: mn.NvidiaGPUXIDErrorsUnit, typ: otelCounter, conv: convXIDCounter, label: mn.AttrNvidiaGPUXID},
}

// unitSuffixes are the Prometheus name suffixes of the receiver's units,
// as the OpenTelemetry-to-Prometheus translation appends them; units in
// braces add none.
var unitSuffixes = map[string]string{"By": "bytes", "Hz": "hertz", "W": "watts", "J": "joules", "Cel": "celsius", "s": "seconds"}

// promName is the Prometheus name of an OpenTelemetry metric: dots become
// underscores and, with suffixes (the exporters' add_metric_suffixes, on by
// default), the unit, _total for a counter and _ratio for a gauge of unit
// 1 are appended.
func promName(name, unit string, typ otelType, suffixes bool) string {
	n := strings.ReplaceAll(name, ".", "_")
	if !suffixes {
		return n
	}
	if s := unitSuffixes[unit]; s != "" && !strings.HasSuffix(n, "_"+s) {
		n += "_" + s
	}
	switch {
	case typ == otelCounter:
		n += "_total"
	case typ == otelGauge && unit == "1":
		n += "_ratio"
	}
	return n
}

// promLabel is the Prometheus label name of an OpenTelemetry attribute.
func promLabel(attr string) string { return strings.ReplaceAll(attr, ".", "_") }

// The labels that identify a GPU.
var (
	// dcgm-exporter's.
	dcgmUUID, dcgmGPU, dcgmModel, dcgmHost, dcgmMIG = "UUID", "gpu", "modelName", "Hostname", "GPU_I_ID"
	dcgmNamespace, dcgmPod, dcgmContainer           = "namespace", "pod", "container"
	// The collector's resource attributes.
	otelUUID      = promLabel(mn.AttrHWID)
	otelGPU       = promLabel(mn.AttrNvidiaGPUIndex)
	otelModel     = promLabel(mn.AttrHWModel)
	otelHost      = promLabel(mn.AttrHostName)
	otelNamespace = promLabel(mn.AttrK8sNamespaceName)
	otelPod       = promLabel(mn.AttrK8sPodName)
	otelContainer = promLabel(mn.AttrK8sContainerName)
	otelJob       = promLabel(mn.AttrK8sJobName)
)

// promMetrics are the names gpurecord reads, in the order it reads them:
// dcgm-exporter's first (they win over the collector's for the same GPU),
// the XID counters last (whether a new XID series is a new XID depends on
// the GPU's other rows).
var promMetrics, promByName = func() ([]promMetric, map[string]*promMetric) {
	var ms []promMetric
	for _, field := range f.All() {
		c := convValue
		if field == f.XIDErrors {
			c = convXIDGauge
		}
		info := field.Info()
		for _, name := range []string{info.Name, info.Alias} {
			if name != "" {
				ms = append(ms, promMetric{name: name, shape: shapeDCGM, conv: c, field: field})
			}
		}
	}
	var xids []promMetric
	seen := map[string]bool{}
	for _, suffixes := range []bool{true, false} {
		for _, o := range otelMetrics {
			name := promName(o.name, o.unit, o.typ, suffixes)
			if seen[name] {
				continue
			}
			seen[name] = true
			m := promMetric{name: name, shape: shapeOTel, conv: o.conv, field: o.field, scale: o.scale, fields: o.fields}
			if o.label != "" {
				m.label = promLabel(o.label)
			}
			if o.conv == convXIDCounter {
				xids = append(xids, m)
				continue
			}
			ms = append(ms, m)
		}
	}
	ms = append(ms, xids...)
	by := make(map[string]*promMetric, len(ms))
	for i := range ms {
		by[ms[i].name] = &ms[i]
	}
	return slices.Clip(ms), by
}()

// promNamesRegexp matches every name gpurecord reads, for the names query.
const promNamesRegexp = "DCGM_FI_.+|hw_.+|nvidia_gpu_.+"
