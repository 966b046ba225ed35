package fromdcgmexporterprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// legacyNames are dcgm-exporter 1.x's series (NVIDIA's gpu-monitoring-tools,
// exporters/prometheus-dcgm/dcgm-exporter, 2018 to 2020: a script turning
// `dcgmi dmon` into node-exporter textfiles), still served where a fleet
// never moved on: dcgm_NAME with the labels gpu and uuid, in DCGM's own units.
// Only the fields whose units are DCGM's: the script's fi_prof_* series said
// "(in %)" of what dcgmi prints as ratios, and its PCIe throughput counts KB,
// so neither is read.
var legacyNames = map[string]f.Field{
	"dcgm_sm_clock":                 f.SMClock,
	"dcgm_memory_clock":             f.MemClock,
	"dcgm_memory_temp":              f.MemoryTemp,
	"dcgm_gpu_temp":                 f.GPUTemp,
	"dcgm_power_usage":              f.PowerUsage,
	"dcgm_total_energy_consumption": f.TotalEnergy,
	"dcgm_pcie_replay_counter":      f.PCIeReplayCounter,
	"dcgm_gpu_utilization":          f.GPUUtil,
	"dcgm_mem_copy_utilization":     f.MemCopyUtil,
	"dcgm_enc_utilization":          f.EncUtil,
	"dcgm_dec_utilization":          f.DecUtil,
	"dcgm_xid_errors":               f.XIDErrors,
	"dcgm_power_violation":          f.PowerViolation,
	"dcgm_thermal_violation":        f.ThermalViolation,
	"dcgm_fb_total":                 f.FBTotal,
	"dcgm_fb_free":                  f.FBFree,
	"dcgm_fb_used":                  f.FBUsed,
	"dcgm_ecc_sbe_volatile_total":   f.ECCSBEVolTotal,
	"dcgm_ecc_dbe_volatile_total":   f.ECCDBEVolTotal,
}

// legacyPod is the pod that 1.x's pod-devices exporter (2019) labelled a
// GPU's series with: pod_name, pod_namespace and container_name.
func legacyPod(attrs pcommon.Map) gpu.Pod {
	pod := label(attrs, "pod_name")
	if pod == "" {
		return gpu.Pod{}
	}
	return gpu.Pod{Namespace: label(attrs, "pod_namespace"), Name: pod, Container: label(attrs, "container_name")}
}
