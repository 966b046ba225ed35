package dcgmreceiver

import (
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// neededFields is the DCGM fields the enabled metrics are made from, in
// catalog order: the DCGM backend watches only these, so that the host
// engine samples and the receiver copies nothing it would drop. A field
// that a metric falls back on (GPU_UTIL for graphics engine activity,
// FB_FREE for the memory limit, ...) counts as needed by that metric. The
// exporter namings emit every field, so they need them all.
func neededFields(cfg *Config) []f.Field {
	if exporterNaming(cfg.Naming) {
		return f.All()
	}
	m := &cfg.Metrics
	var need [f.Count]bool
	use := func(enabled bool, fields ...f.Field) {
		if enabled {
			for _, field := range fields {
				need[field] = true
			}
		}
	}
	use(m.HwGpuUtilization.Enabled, f.GPUUtil, f.EncUtil, f.DecUtil)
	use(m.HwGpuMemoryUsage.Enabled, f.FBUsed)
	use(m.HwGpuMemoryLimit.Enabled, f.FBTotal, f.FBUsed, f.FBFree, f.FBReserved)
	use(m.HwGpuMemoryUtilization.Enabled, f.FBUsed, f.FBFree, f.FBTotal)
	use(m.HwPower.Enabled, f.PowerUsage)
	use(m.NvidiaGpuPowerLimit.Enabled, f.EnforcedPowerLimit)
	use(m.HwTemperature.Enabled, f.GPUTemp, f.MemoryTemp)
	use(m.HwEnergy.Enabled, f.TotalEnergy)
	use(m.HwErrors.Enabled, f.ECCSBEVolTotal, f.ECCDBEVolTotal)
	use(m.HwGpuIo.Enabled, f.PCIeTxBytes, f.PCIeRxBytes)
	use(m.NvidiaGpuMemoryTemperature.Enabled, f.MemoryTemp)
	use(m.NvidiaGpuMemoryCopyUtilization.Enabled, f.MemCopyUtil)
	use(m.NvidiaGpuGraphicsEngineActive.Enabled, f.GREngineActive, f.GPUUtil)
	use(m.NvidiaGpuDramActive.Enabled, f.DRAMActive, f.MemCopyUtil)
	use(m.NvidiaGpuSmActive.Enabled, f.SMActive)
	use(m.NvidiaGpuSmOccupancy.Enabled, f.SMOccupancy)
	use(m.NvidiaGpuPipeActive.Enabled, f.PipeTensorActive, f.PipeFP64Active, f.PipeFP32Active, f.PipeFP16Active)
	use(m.NvidiaGpuClockFrequency.Enabled, f.SMClock, f.MemClock)
	use(m.NvidiaGpuClockEventReasons.Enabled || m.NvidiaGpuClockEventActive.Enabled, f.ClocksEventReasons)
	use(m.NvidiaGpuNvlinkIo.Enabled, f.NVLinkTxBytes, f.NVLinkRxBytes)
	use(m.NvidiaGpuThrottleTime.Enabled, f.PowerViolation, f.ThermalViolation)
	use(m.NvidiaGpuPcieReplays.Enabled, f.PCIeReplayCounter)
	use(m.NvidiaGpuXidErrors.Enabled, f.XIDErrors)
	use(m.NvidiaGpuRowRemapFailure.Enabled, f.RowRemapFailure)
	use(m.NvidiaGpuRecoveryAction.Enabled, f.RecoveryAction)
	use(m.NvidiaGpuRowRemapRows.Enabled, f.CorrectableRemappedRows, f.UncorrectableRemappedRows)

	// nvidia.gpu.health reads no field: the DCGM backend asks DCGM's health
	// watches, which watch what they read themselves (healthWanted).

	var out []f.Field
	for _, field := range f.All() {
		if need[field] {
			out = append(out, field)
		}
	}
	return out
}
