package gpuanalyzerprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestBoardPower: models as DCGM, NVML and dcgm-exporter name them find their
// board power; the longest whole-word key wins, a configured value
// overrides the table, and an unknown model has none (the analyzer learns).
func TestBoardPower(t *testing.T) {
	tbl := newPowerTable(map[string]float64{"L40S": 325, "MI300X": 750})
	for model, want := range map[string]float64{
		"NVIDIA H100 80GB HBM3":   700,
		"NVIDIA H100 PCIe":        350,
		"NVIDIA H100 NVL":         400,
		"NVIDIA H100":             700,
		"NVIDIA A100-SXM4-80GB":   400,
		"NVIDIA A100-PCIE-40GB":   250,
		"NVIDIA A100 80GB PCIe":   300,
		"NVIDIA A10":              150,
		"Tesla V100-SXM2-32GB":    300,
		"Tesla P100-PCIE-16GB":    250,
		"Tesla T4":                70,
		"NVIDIA L4":               72,
		"NVIDIA L40S":             325,
		"AMD Instinct MI300X":     750,
		"NVIDIA GeForce RTX 4090": 0,
		"":                        0,
	} {
		attrs := pcommon.NewMap()
		if model != "" {
			attrs.PutStr(metricnames.AttrHWModel, model)
		}
		require.Equal(t, want, tbl.of(attrs), model)
		require.Equal(t, want, tbl.of(attrs), "%s, cached", model)
	}
}
