package gpuanalyzerprocessor

// maxSMClock is the highest SM clock, in MHz, of the data-centre GPUs a
// fleet runs, by model name as boardPower is keyed: the boost clock of
// NVIDIA's product data sheets, which nvidia-smi -q reports as "Max Clocks,
// SM". Without clock event reasons (dcgm-exporter's default counters have
// none), a GPU whose SM clock is far below this while it draws its power
// limit or runs hot is throttled; the analyzer also takes the most a GPU has
// reported, so a model missing here is judged once it has run at full
// clock.
var maxSMClock = map[string]float64{
	"H200":      1980,
	"H100":      1980, // SXM5
	"H100 PCIe": 1755,
	"H100 NVL":  1785,
	"H800":      1980,
	"A100":      1410, // SXM4 and PCIe alike
	"A800":      1410,
	"A40":       1740,
	"A30":       1440,
	"A10":       1695,
	"L40S":      2520,
	"L40":       2490,
	"L4":        2040,
	"T4":        1590,
	"V100":      1530, // SXM2
	"V100-PCIE": 1380,
	"V100S":     1597,
	"P100":      1329, // PCIe
	"P100-SXM2": 1480,
	"P40":       1531,
}

// newClockTable is the maximum SM clock table.
func newClockTable() *modelTable { return newModelTable(maxSMClock, nil) }
