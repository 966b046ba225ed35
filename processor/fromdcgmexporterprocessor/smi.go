package fromdcgmexporterprocessor

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// nvidia_gpu_exporter (utkuozdemir/nvidia_gpu_exporter, MIT) serves what
// nvidia-smi --query-gpu prints, where a fleet runs no DCGM: nvidia_smi_NAME
// with the GPU's UUID, without its GPU- prefix, in the label uuid, in the
// units its names say (ratios, bytes, hertz), and the GPU's model, index,
// driver and bus in nvidia_smi_gpu_info's labels. The fields it shares with
// DCGM's catalogue are read here, converted to DCGM's units.

// smiField is one nvidia_smi series: the DCGM field it is, and what turns
// its unit into the field's.
type smiField struct {
	field f.Field
	scale float64
}

const mib = 1 << 20

var smiNames = map[string]smiField{
	"nvidia_smi_utilization_gpu_ratio":                 {f.GPUUtil, 100},
	"nvidia_smi_utilization_memory_ratio":              {f.MemCopyUtil, 100},
	"nvidia_smi_utilization_encoder_ratio":             {f.EncUtil, 100},
	"nvidia_smi_utilization_decoder_ratio":             {f.DecUtil, 100},
	"nvidia_smi_memory_used_bytes":                     {f.FBUsed, 1.0 / mib},
	"nvidia_smi_memory_free_bytes":                     {f.FBFree, 1.0 / mib},
	"nvidia_smi_memory_total_bytes":                    {f.FBTotal, 1.0 / mib},
	"nvidia_smi_power_draw_watts":                      {f.PowerUsage, 1},
	"nvidia_smi_enforced_power_limit_watts":            {f.EnforcedPowerLimit, 1},
	"nvidia_smi_temperature_gpu":                       {f.GPUTemp, 1},
	"nvidia_smi_temperature_memory":                    {f.MemoryTemp, 1},
	"nvidia_smi_clocks_current_sm_clock_hz":            {f.SMClock, 1e-6},
	"nvidia_smi_clocks_current_memory_clock_hz":        {f.MemClock, 1e-6},
	"nvidia_smi_clocks_event_reasons_active":           {f.ClocksEventReasons, 1},
	"nvidia_smi_ecc_errors_corrected_volatile_total":   {f.ECCSBEVolTotal, 1},
	"nvidia_smi_ecc_errors_uncorrected_volatile_total": {f.ECCDBEVolTotal, 1},
}

// smiScale is each field's scale, by field: one nvidia_smi name per field.
var smiScale = func() (out [f.Count]float64) {
	for _, s := range smiNames {
		out[s.field] = s.scale
	}
	return out
}()

// smiInfoMetric carries a GPU's model, index, driver and bus as labels.
const smiInfoMetric = "nvidia_smi_gpu_info"

// smiUUID is the GPU's UUID as DCGM and NVML name it: nvidia_gpu_exporter
// drops the GPU- prefix.
func smiUUID(uuid string) string {
	if strings.HasPrefix(uuid, "GPU-") || strings.HasPrefix(uuid, "MIG-") {
		return uuid
	}
	return "GPU-" + uuid
}

// applySMIInfo sets what nvidia_smi_gpu_info says of a device.
func applySMIInfo(dev *gpu.Device, attrs pcommon.Map) {
	if v := label(attrs, "name"); v != "" {
		dev.Model = v
	}
	if v := label(attrs, "index"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			dev.Index = n
		}
	}
	if v := label(attrs, "driver_version"); v != "" {
		dev.DriverVersion = v
	}
	if v := label(attrs, "pci_bus_id"); v != "" {
		dev.PCIBusID = v
	}
}
