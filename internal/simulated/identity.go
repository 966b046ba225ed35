package simulated

import (
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// boardIdentity gives d, a simulated GPU, what a backend reads of its
// board once: a serial number, its VBIOS version and its temperature
// thresholds, as nvidia-smi -q and amd-smi static show them for the model.
// The serial is a function of the UUID, not a draw from the fleet's
// sequence, so that the UUIDs drawn after it stay as they were.
func boardIdentity(d *gpu.Device) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(d.UUID))
	n := h.Sum64()
	if d.IsAMD() {
		d.SerialNumber = fmt.Sprintf("6923%08d", n%100_000_000)
		d.FirmwareVersion = "113-M3000100-102"
		// AMD SMI's critical and emergency temperatures of the hotspot
		// and the VRAM; the MI250's edge sensor has its own. The MI300X
		// has no edge sensor.
		d.TempLimits = []gpu.TempLimit{
			{Sensor: gpu.SensorHotspot, Kind: gpu.LimitSlowdown, Celsius: 110},
			{Sensor: gpu.SensorHotspot, Kind: gpu.LimitShutdown, Celsius: 115},
			{Sensor: gpu.SensorMemory, Kind: gpu.LimitSlowdown, Celsius: 95},
			{Sensor: gpu.SensorMemory, Kind: gpu.LimitShutdown, Celsius: 105},
		}
		if !strings.Contains(d.Model, "MI300") {
			d.FirmwareVersion = "113-D65201-046"
			d.TempLimits = append(d.TempLimits,
				gpu.TempLimit{Sensor: gpu.SensorEdge, Kind: gpu.LimitSlowdown, Celsius: 100},
				gpu.TempLimit{Sensor: gpu.SensorEdge, Kind: gpu.LimitShutdown, Celsius: 105})
		}
		return
	}
	d.SerialNumber = fmt.Sprintf("1654%09d", n%1_000_000_000)
	// The slowdown and shutdown thresholds of the die, and, on HBM boards,
	// the memory's maximum operating temperature.
	slowdown, shutdown, memMax := 89.0, 92.0, 95.0
	switch {
	case strings.Contains(d.Model, "H100"):
		d.FirmwareVersion = "96.00.99.00.01"
	case strings.Contains(d.Model, "A100"):
		d.FirmwareVersion = "92.00.45.00.03"
	case strings.Contains(d.Model, "L40S"):
		d.FirmwareVersion = "95.02.5D.00.01"
		slowdown, shutdown, memMax = 88, 93, 0
	case strings.Contains(d.Model, "T4"):
		d.FirmwareVersion = "90.04.96.00.02"
		slowdown, shutdown, memMax = 93, 96, 0
	default:
		d.FirmwareVersion = "86.00.40.00.05"
		slowdown, shutdown, memMax = 85, 88, 0
	}
	d.TempLimits = []gpu.TempLimit{
		{Sensor: gpu.SensorDie, Kind: gpu.LimitSlowdown, Celsius: slowdown},
		{Sensor: gpu.SensorDie, Kind: gpu.LimitShutdown, Celsius: shutdown},
	}
	if memMax > 0 {
		d.TempLimits = append(d.TempLimits, gpu.TempLimit{Sensor: gpu.SensorMemory, Kind: gpu.LimitSlowdown, Celsius: memMax})
	}
}
