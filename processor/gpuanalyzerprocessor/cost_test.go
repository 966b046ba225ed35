package gpuanalyzerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

func TestCostConfig(t *testing.T) {
	c := loadConfig(t, "cost")
	require.NoError(t, confmap.Validate(c))
	require.Equal(t, "EUR", c.Cost.Currency)
	require.True(t, c.Cost.enabled())
	require.False(t, createDefaultConfig().(*Config).Cost.enabled(), "no prices by default")

	err := confmap.Validate(loadConfig(t, "bad_cost"))
	for _, want := range []string{
		`cost: currency must be an ISO 4217 code of three capital letters such as USD, got "usd"`,
		"; default_per_gpu_hour must be a finite price, not negative, got -1",
		"; per_gpu_hour::H100 must be a finite price, not negative, got -2",
		"cost::overrides::0: attribute must name a resource attribute",
		"e.g. host.type; set exactly one of per_gpu_hour and factor",
		"cost::overrides::1: set exactly one of per_gpu_hour and factor",
		"cost::overrides::2: factor must be finite and not negative, got -1",
	} {
		require.ErrorContains(t, err, want)
	}
}

func TestPrices(t *testing.T) {
	p := newPricer(&loadConfig(t, "cost").Cost)
	for _, tt := range []struct {
		name  string
		attrs map[string]any
		want  float64
	}{
		{"by model, as a word of hw.model", map[string]any{"hw.model": "NVIDIA H100 80GB HBM3"}, 4.0},
		{"a word bounded by a dash", map[string]any{"hw.model": "NVIDIA A100-SXM4-80GB"}, 3.0},
		{"L4 is not L40S: the default", map[string]any{"hw.model": "NVIDIA L40S"}, 1.5},
		{"L4", map[string]any{"hw.model": "NVIDIA L4"}, 0.8},
		{"no model: the default", map[string]any{}, 1.5},
		{"an instance type sets the price", map[string]any{"hw.model": "NVIDIA H100 80GB HBM3", "host.type": "p5.48xlarge"}, 3.93},
		{"spot scales the model's price", map[string]any{"hw.model": "NVIDIA A100-SXM4-80GB", "k8s.node.label.spot": "true"}, 3.0 * 0.35},
		{"the first override that matches wins", map[string]any{"hw.model": "NVIDIA H100 80GB HBM3", "host.type": "p5.48xlarge", "k8s.node.label.spot": "true"}, 3.93},
		{"an override needs its value", map[string]any{"hw.model": "NVIDIA H100 80GB HBM3", "k8s.node.label.spot": "false"}, 4.0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			attrs := pcommon.NewMap()
			require.NoError(t, attrs.FromRaw(tt.attrs))
			require.InDelta(t, tt.want, p.of(attrs), 1e-12)
			require.InDelta(t, tt.want, p.of(attrs), 1e-12, "the same from the model cache")
		})
	}
	// The longest key wins over a shorter one that also matches.
	q := newPricer(&CostConfig{PerGPUHour: map[string]float64{"H100": 4, "H100 NVL": 5}})
	attrs := pcommon.NewMap()
	attrs.PutStr("hw.model", "NVIDIA H100 NVL")
	require.Equal(t, 5.0, q.of(attrs))
}

// usageOf reads a GPU's otelgpu.time or otelgpu.cost by state.
func usageOf(m pmetric.Metric) map[string]float64 {
	out := map[string]float64{}
	dps := m.Sum().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		st, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUUsageState)
		out[st.Str()] = dps.At(i).DoubleValue()
	}
	return out
}

// TestUsageMetrics runs the default simulated fleet for 90 s at 1 s and
// checks the usage metrics on two GPUs: a training GPU busy throughout and a
// spare without a pod.
func TestUsageMetrics(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	cfg := everySample()
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 3.6}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	cumulative := map[string]map[string]float64{} // hw.id -> state -> seconds, latest
	reports := map[string][]int{}                 // hw.id -> batches with usage metrics
	for range 91 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	out := sink.AllMetrics()
	byName := map[string]string{}
	for i, md := range out {
		for id, m := range verdicts(md) {
			spent, ok := m[metricnames.OTelGPUTime]
			if !ok {
				require.NotContains(t, m, metricnames.OTelGPUCost, "time and cost go together")
				continue
			}
			reports[id] = append(reports[id], i)
			if cumulative[id] == nil {
				cumulative[id] = map[string]float64{}
			}
			for st, v := range usageOf(spent) {
				cumulative[id][st] = v
			}
		}
	}
	last := out[len(out)-1]
	for i := 0; i < last.ResourceMetrics().Len(); i++ {
		a := last.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		byName[a["host.name"].(string)+"/"+a["hw.name"].(string)] = a["hw.id"].(string)
	}
	v := verdicts(last)
	busy := byName["gpu-node-0/gpu0"]
	require.Equal(t, map[string]float64{"used": 90}, cumulative[busy])
	require.Equal(t, []int{0, 30, 60, 90}, reports[busy], "at the first sample and every report_interval (30 s)")
	require.InDelta(t, 90*0.001, usageOf(v[busy][metricnames.OTelGPUCost])["used"], 1e-12)
	spare := byName["gpu-node-1/gpu7"]
	require.Equal(t, map[string]float64{"cluster_idle": 90}, cumulative[spare])

	m := v[busy][metricnames.OTelGPUCost]
	require.Equal(t, "{USD}", m.Unit())
	require.True(t, m.Sum().IsMonotonic())
	require.Equal(t, pcommon.NewTimestampFromTime(f.t0), m.Sum().DataPoints().At(0).StartTimestamp())

	require.Equal(t, []int{0, 30, 60, 90}, reports[spare])

	// Without prices: time, no cost.
	f = newFleet(t, simulated.DefaultConfig())
	p, sink = newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
	require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	for _, m := range verdicts(sink.AllMetrics()[0]) {
		require.Contains(t, m, metricnames.OTelGPUTime)
		require.NotContains(t, m, metricnames.OTelGPUCost)
	}
}

// TestExampleConfigs loads the gpu_analyzer settings that the examples ship
// and checks they are valid and priced.
func TestExampleConfigs(t *testing.T) {
	for file, key := range map[string]string{
		"../../examples/local/config.yaml":      "processors::gpu_analyzer",
		"../../examples/prometheus/config.yaml": "processors::gpu_analyzer",
		"../../examples/cost/prices.yaml":       "",
	} {
		t.Run(file, func(t *testing.T) {
			cm, err := confmaptest.LoadConf(file)
			require.NoError(t, err)
			if key != "" {
				cm, err = cm.Sub(key)
				require.NoError(t, err)
			}
			cfg := everySample()
			require.NoError(t, cm.Unmarshal(cfg))
			require.NoError(t, confmap.Validate(cfg))
			require.True(t, cfg.Cost.enabled())
			attrs := pcommon.NewMap()
			attrs.PutStr("hw.model", "NVIDIA H100 80GB HBM3")
			require.Equal(t, 6.88, newPricer(&cfg.Cost).of(attrs))
		})
	}
}
