package gpuhealth

import "github.com/otelcol-gpu/otelcol-gpu/internal/gpu"

// DCGMHealth is the catalogue's entry for a health check's result on one
// subsystem (DCGM's health watches, or the NVML backend's equivalents of
// them; the dcgm receiver's nvidia.gpu.health):
//
//   - pass: ok.
//   - warn: degraded, no action. DCGM warns where the GPU works with less
//     margin or less speed: pages or rows pending retirement or remapping
//     (reset at the next opportunity, as for XID 63), a corrupt InfoROM,
//     a PCIe replay rate, NVLink CRC errors below the failing rate, a
//     thermal slowdown, an NVSwitch's non-fatal error. The one exception
//     is power: DCGM warns on any power violation time, which is a GPU
//     held at its power cap (or, rarely, a power reading that failed);
//     the analyzer counts a GPU at its cap as ok (it does what its cap
//     says), and so does this.
//   - fail: failed, a drain. DCGM fails a GPU whose memory cannot be
//     trusted (a volatile double-bit error, a failed row remapping, the
//     retired-page limits, an uncontained error), whose NVLink is down or
//     erring past its replay and recovery limits, or whose NVSwitch had a
//     fatal error: NVIDIA's catalogue drains for each (XIDs 48, 64, 95,
//     74, 145 to 150), since a reset of the one GPU does not bring back
//     the node's NVLink fabric. A failure of a subsystem DCGM does not
//     judge today (PMU, MCU, SM, driver; PCIe, InfoROM, thermal and power
//     only warn) is a drain too: the host engine says the GPU is failed,
//     and a person reads why.
func DCGMHealth(sys gpu.HealthSystem, r gpu.HealthResult) Entry {
	switch {
	case r == gpu.HealthPass:
		return Entry{}
	case r == gpu.HealthWarn && sys == gpu.HealthPower:
		return Entry{}
	case r == gpu.HealthWarn:
		return entry(None, Degraded)
	default:
		return entry(Drain, Failed)
	}
}

// DCGMHealthState is a health check's state for the GPU: the worst of its
// subsystems', named dcgm_health_<system> (the first subsystem of that
// state, in DCGM's order), or ok with no name.
func DCGMHealthState(h gpu.Health) (State, string) {
	worst, why := OK, ""
	for _, sys := range gpu.HealthSystems() {
		if !h.Watches(sys) {
			continue
		}
		if e := DCGMHealth(sys, h.Result[sys]); e.State > worst {
			worst, why = e.State, DCGMHealthFault(sys)
		}
	}
	return worst, why
}

// DCGMHealthFault names a subsystem's fault, as the remediation names it:
// dcgm_health_memory.
func DCGMHealthFault(sys gpu.HealthSystem) string { return "dcgm_health_" + sys.String() }

// DCGMHealthActions returns, per subsystem, the action its failure calls
// for: the remediation's defaults. A warning calls for none.
func DCGMHealthActions() map[gpu.HealthSystem]Action {
	m := make(map[gpu.HealthSystem]Action, gpu.NumHealthSystems)
	for _, sys := range gpu.HealthSystems() {
		m[sys] = DCGMHealth(sys, gpu.HealthFail).Action
	}
	return m
}
