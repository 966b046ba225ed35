package nvmlbackend

import (
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// readBoard reads what a GPU's board says of itself once: its serial
// number, VBIOS version and temperature thresholds. A call the GPU does
// not support (a consumer board has no serial) leaves its figure absent.
func readBoard(h nvml.Device, d *gpu.Device) {
	if s, ret := h.GetSerial(); ret == nvml.SUCCESS {
		d.SerialNumber = strings.TrimSpace(s)
	}
	if v, ret := h.GetVbiosVersion(); ret == nvml.SUCCESS {
		d.FirmwareVersion = strings.TrimSpace(v)
	}
	d.TempLimits = nil
	for _, t := range thresholds {
		// 0 °C is no threshold a GPU runs under: a driver that answers
		// without knowing it.
		if c, ret := h.GetTemperatureThreshold(t.nvml); ret == nvml.SUCCESS && c > 0 && c < 200 {
			d.TempLimits = append(d.TempLimits, gpu.TempLimit{Sensor: t.sensor, Kind: t.kind, Celsius: float64(c)})
		}
	}
}

// thresholds are the NVML temperature thresholds read, and what each is:
// the die slows down at SLOWDOWN and shuts down at SHUTDOWN; MEM_MAX is
// the memory's maximum operating temperature, above which the driver
// slows the GPU down too (nvidia-smi's "Memory Max Operating Temp").
var thresholds = []struct {
	nvml   nvml.TemperatureThresholds
	sensor gpu.TempSensor
	kind   gpu.TempLimitKind
}{
	{nvml.TEMPERATURE_THRESHOLD_SLOWDOWN, gpu.SensorDie, gpu.LimitSlowdown},
	{nvml.TEMPERATURE_THRESHOLD_SHUTDOWN, gpu.SensorDie, gpu.LimitShutdown},
	{nvml.TEMPERATURE_THRESHOLD_MEM_MAX, gpu.SensorMemory, gpu.LimitSlowdown},
}
