package gpuanalyzerprocessor

import (
	"cmp"
	"maps"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// boardPower is the maximum board power, in W, of the data-centre GPUs a
// fleet runs, by the model name every source carries (hw.model: DCGM's and
// NVML's name, dcgm-exporter's modelName), from NVIDIA's product data
// sheets. It is a GPU's reference power where its enforced power limit is
// not reported: what it draws at full work. A key matches the model as a
// whole word and the longest key wins, so "H100 PCIe" wins over "H100" and
// "A10" does not match "A100". A form factor the name does not say (an
// "NVIDIA H100" of a recording that kept only that) takes the SXM module's
// power, the form of the 8-GPU training nodes.
//
// AMD's Instinct parts are keyed by the name in amdsmi's market name
// ("AMD Instinct MI300X"), at their peak total board power from AMD's
// data sheets and product pages: MI300X
// (https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/amd-instinct-mi300x-data-sheet.pdf),
// MI325X
// (https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/product-briefs/instinct-mi325x-datasheet.pdf),
// MI350X and MI355X (https://www.amd.com/en/products/accelerators/instinct/mi350.html),
// MI250X and MI250 (https://www.amd.com/en/products/accelerators/instinct/mi200.html).
// An MI250X's amdsmi device is one of its two dies (GCDs), each with its
// own power reading, which AMD reports for the whole module; its power
// cap, where the receiver reads it, is the better reference.
var boardPower = map[string]float64{
	"MI355X": 1400,
	"MI350X": 1000,
	"MI325X": 1000,
	"MI300X": 750,
	"MI250X": 560,
	"MI250":  560,

	"B200":           1000, // HGX B200
	"H200":           700,  // H200 SXM
	"H200 NVL":       600,
	"H100":           700, // H100 SXM5: "NVIDIA H100 80GB HBM3"
	"H100 PCIe":      350,
	"H100 NVL":       400,
	"H800":           700,
	"A100":           400, // A100 SXM4: "NVIDIA A100-SXM4-80GB"
	"A100-PCIE-40GB": 250,
	"A100 PCIe":      300, // "NVIDIA A100 80GB PCIe"
	"A100 80GB PCIe": 300,
	"A800":           400,
	"A40":            300,
	"A30":            165,
	"A10":            150,
	"L40S":           350,
	"L40":            300,
	"L4":             72,
	"T4":             70,
	"V100":           300, // V100 SXM2: "Tesla V100-SXM2-32GB"
	"V100-PCIE":      250,
	"V100S":          250,
	"P100":           250, // "Tesla P100-PCIE-16GB"
	"P100-SXM2":      300,
	"P40":            250,
	"P4":             75,
}

// modelTable finds a figure of a GPU's model (its board power, its maximum SM
// clock) by hw.model.
type modelTable struct {
	watts   map[string]float64
	keys    []string // longest first
	byModel map[string]float64
}

// newPowerTable is the board power table with the configuration's
// bottleneck::board_power over it.
func newPowerTable(overrides map[string]float64) *modelTable {
	return newModelTable(boardPower, overrides)
}

func newModelTable(base, overrides map[string]float64) *modelTable {
	t := &modelTable{watts: maps.Clone(base), byModel: map[string]float64{}}
	maps.Copy(t.watts, overrides)
	t.keys = slices.SortedFunc(maps.Keys(t.watts), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), cmp.Compare(a, b))
	})
	return t
}

// of is the figure of the GPU with these resource attributes; 0 for a model
// the table does not know (the analyzer then learns it).
func (t *modelTable) of(attrs pcommon.Map) float64 {
	v, ok := attrs.Get(metricnames.AttrHWModel)
	if !ok {
		return 0
	}
	model := v.Str()
	if w, ok := t.byModel[model]; ok {
		return w
	}
	var w float64
	for _, k := range t.keys {
		if containsWord(model, k) {
			w = t.watts[k]
			break
		}
	}
	if len(t.byModel) < 1024 {
		t.byModel[model] = w
	}
	return w
}
