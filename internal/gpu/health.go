package gpu

// HealthSystem is a GPU subsystem that a health check judges: DCGM's
// health watches (dcgmHealthSystems_t) that apply to a GPU, in the order of
// their bits, and what NVML can say of some of them. The names are the
// receiver's nvidia.gpu.health.system values.
type HealthSystem uint8

// The subsystems, in the order of DCGM's dcgmHealthSystems_t bits (PCIe is
// 0x1, NVSwitch fatal 0x800). DCGM's ConnectX and IMEX watches judge
// devices other than GPUs and are not among them.
const (
	HealthPCIe HealthSystem = iota
	HealthNVLink
	HealthPMU
	HealthMCU
	HealthMemory
	HealthSM
	HealthInfoROM
	HealthThermal
	HealthPower
	HealthDriver
	HealthNVSwitchNonFatal
	HealthNVSwitchFatal
	NumHealthSystems
)

var healthSystemNames = [NumHealthSystems]string{
	"pcie", "nvlink", "pmu", "mcu", "memory", "sm", "inforom", "thermal", "power", "driver",
	"nvswitch_nonfatal", "nvswitch_fatal",
}

func (s HealthSystem) String() string {
	if s >= NumHealthSystems {
		return "invalid"
	}
	return healthSystemNames[s]
}

// HealthSystems lists every subsystem in order.
func HealthSystems() []HealthSystem {
	out := make([]HealthSystem, NumHealthSystems)
	for i := range out {
		out[i] = HealthSystem(i)
	}
	return out
}

// ParseHealthSystem reads a subsystem's name.
func ParseHealthSystem(name string) (HealthSystem, bool) {
	for i, n := range healthSystemNames {
		if n == name {
			return HealthSystem(i), true
		}
	}
	return 0, false
}

// HealthResult is a subsystem's result, in rising order of how bad: the
// receiver's metric value (DCGM's PASS 0, WARN 10, FAIL 20 divided by 10).
type HealthResult uint8

// The results.
const (
	HealthPass HealthResult = iota
	HealthWarn
	HealthFail
)

var healthResultNames = [...]string{"pass", "warn", "fail"}

func (r HealthResult) String() string {
	if int(r) >= len(healthResultNames) {
		return "invalid"
	}
	return healthResultNames[r]
}

// Health is what a health check says of one GPU: for each subsystem
// watched, the worst result of its incidents (pass without one). Its zero
// value watches nothing: the source did not check the GPU's health.
type Health struct {
	// Watched has bit s set for each subsystem s the source checks.
	Watched uint16
	Result  [NumHealthSystems]HealthResult
}

// Watches reports whether the subsystem is checked.
func (h *Health) Watches(s HealthSystem) bool { return h.Watched&(1<<s) != 0 }

// Watch marks the subsystem checked.
func (h *Health) Watch(s HealthSystem) { h.Watched |= 1 << s }

// Report files a result of a watched subsystem, keeping the worst.
func (h *Health) Report(s HealthSystem, r HealthResult) {
	if s < NumHealthSystems && h.Watches(s) && r > h.Result[s] {
		h.Result[s] = r
	}
}
