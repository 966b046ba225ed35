package dcgmreceiver

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// The labels AMD's device-metrics-exporter puts on every GPU series, as
// its exporterconfig.proto and gpuagent client name them.
const (
	amdLabelGPUID            = "gpu_id"
	amdLabelGPUUUID          = "gpu_uuid"
	amdLabelPartitionID      = "gpu_partition_id"
	amdLabelComputePartition = "gpu_compute_partition_type"
	amdLabelMemoryPartition  = "gpu_memory_partition_type"
	amdLabelHostname         = "hostname"
	amdLabelCardSeries       = "card_series"
	amdLabelCardVendor       = "card_vendor"
	amdLabelDriverVersion    = "driver_version"
	amdLabelPod              = "pod"
	amdLabelNamespace        = "namespace"
	amdLabelContainer        = "container"
	// Labels of single series.
	amdLabelClockType  = "clock_type"
	amdLabelClockIndex = "clock_index"
	amdLabelLinkIndex  = "link_index"
	amdLabelSeverity   = "severity"
	amdLabelAFIDIndex  = "afid_index"
)

// amdExporterBlocks names the RAS blocks as the exporter's
// GPU_ECC_{CORRECT,UNCORRECT,DEFERRED}_<BLOCK> fields do.
var amdExporterBlocks = map[string]string{"pcie_bif": "bif"}

// appendDeviceMetricsExporter appends one AMD sample as AMD's
// device-metrics-exporter exposes it: gauges named gpu_*, pcie_* in its
// units (percent, MB, W, µJ, °C, MHz, KB), raw counts as the driver keeps
// them, with its labels. A figure not read is left out, as the exporter
// leaves out a field marked unsupported.
func (m *mapper) appendDeviceMetricsExporter(s *gpu.Sample, cs *counterState) {
	rm := m.out.ResourceMetrics().AppendEmpty()
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()
	ts := pcommon.NewTimestampFromTime(s.Time)
	labels := pcommon.NewMap()
	deviceMetricsExporterLabels(labels, s.Device)
	vs := &s.Values
	add := func(name string, v float64) { addGauge(ms, name, ts, v, labels) }
	with := func(name string, v float64, kv ...string) {
		l := pcommon.NewMap()
		labels.CopyTo(l)
		for i := 0; i+1 < len(kv); i += 2 {
			l.PutStr(kv[i], kv[i+1])
		}
		addGauge(ms, name, ts, v, l)
	}

	if v, ok := value(vs, f.GPUUtil); ok {
		add("gpu_gfx_activity", v)
	}
	if v, ok := value(vs, f.FBTotal); ok {
		add("gpu_total_vram", v)
		if used, ok := value(vs, f.FBUsed); ok {
			add("gpu_used_vram", used)
			add("gpu_free_vram", v-used)
		}
	}
	if v, ok := value(vs, f.PowerUsage); ok {
		add("gpu_power_usage", v)
	}
	if v, ok := value(vs, f.TotalEnergy); ok {
		add("gpu_energy_consumed", v*1000) // mJ to µJ
	}
	a := s.AMD
	if a == nil {
		return
	}
	get := func(field gpu.AMDField, name string) {
		if v, ok := a.Get(field); ok {
			add(name, v)
		}
	}
	get(gpu.AMDUMCActivity, "gpu_umc_activity")
	get(gpu.AMDPowerCurrent, "gpu_package_power")
	get(gpu.AMDPowerAverage, "gpu_average_package_power")
	get(gpu.AMDTempEdge, "gpu_edge_temperature")
	get(gpu.AMDTempHotspot, "gpu_junction_temperature")
	get(gpu.AMDTempVRAM, "gpu_memory_temperature")
	get(gpu.AMDPCIeReplays, "pcie_replay_count")
	get(gpu.AMDViolationPower, "gpu_violation_ppt_residency_percentage")
	get(gpu.AMDViolationSocketThermal, "gpu_violation_socket_thermal_residency_percentage")
	get(gpu.AMDViolationVRThermal, "gpu_violation_vr_thermal_residency_percentage")
	get(gpu.AMDViolationHBMThermal, "gpu_violation_hbm_thermal_residency_percentage")
	get(gpu.AMDViolationProchot, "gpu_violation_processor_hot_residency_percentage")
	if v, ok := a.Get(gpu.AMDClockGFX); ok {
		with("gpu_clock", v, amdLabelClockIndex, "0", amdLabelClockType, "system")
	}
	if v, ok := a.Get(gpu.AMDClockMem); ok {
		with("gpu_clock", v, amdLabelClockIndex, "0", amdLabelClockType, "memory")
	}
	if len(a.ECC) > 0 {
		var total [3]float64
		for _, blk := range a.ECC {
			name := blk.Block
			if n, ok := amdExporterBlocks[name]; ok {
				name = n
			}
			add("gpu_ecc_correct_"+name, float64(blk.Corrected))
			add("gpu_ecc_uncorrect_"+name, float64(blk.Uncorrected))
			add("gpu_ecc_deferred_"+name, float64(blk.Deferred))
			total[0] += float64(blk.Corrected)
			total[1] += float64(blk.Uncorrected)
			total[2] += float64(blk.Deferred)
		}
		add("gpu_ecc_correct_total", total[0])
		add("gpu_ecc_uncorrect_total", total[1])
		add("gpu_ecc_deferred_total", total[2])
	}
	for _, l := range a.Links {
		idx := strconv.Itoa(l.Index)
		with("gpu_xgmi_link_rx", float64(l.ReadKB), amdLabelLinkIndex, idx)
		with("gpu_xgmi_link_tx", float64(l.WriteKB), amdLabelLinkIndex, idx)
	}
	// gpu_afid_errors is the exporter's view of the last RAS event: one
	// series per AFID of the last record, valued the AFID.
	cs.countCPER(a.CPER)
	if r := cs.lastCPER; r != nil {
		sev := strings.ReplaceAll(r.Severity, "nonfatal", "non_fatal")
		for i, id := range r.AFIDs {
			with("gpu_afid_errors", float64(id), amdLabelSeverity, sev, amdLabelAFIDIndex, strconv.Itoa(i))
		}
	}
}

func deviceMetricsExporterLabels(m pcommon.Map, d *gpu.Device) {
	m.PutStr(amdLabelGPUID, strconv.Itoa(d.Index))
	m.PutStr(amdLabelGPUUUID, d.UUID)
	m.PutStr(amdLabelCardSeries, d.Model)
	m.PutStr(amdLabelCardVendor, "AMD")
	part, compute, memory := "NA", "none", "none"
	if a := d.AMD; a != nil {
		if a.PartitionID >= 0 {
			part = strconv.Itoa(a.PartitionID)
		}
		if a.ComputePartition != "" {
			compute = strings.ToLower(a.ComputePartition)
		}
		if a.MemoryPartition != "" {
			memory = strings.ToLower(a.MemoryPartition)
		}
	}
	m.PutStr(amdLabelPartitionID, part)
	m.PutStr(amdLabelComputePartition, compute)
	m.PutStr(amdLabelMemoryPartition, memory)
	if d.Host != "" {
		m.PutStr(amdLabelHostname, d.Host)
	}
	if d.DriverVersion != "" {
		m.PutStr(amdLabelDriverVersion, d.DriverVersion)
	}
	if d.Pod.Name != "" {
		m.PutStr(amdLabelPod, d.Pod.Name)
		m.PutStr(amdLabelNamespace, d.Pod.Namespace)
		m.PutStr(amdLabelContainer, d.Pod.Container)
	}
}
