package whatif

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector"
)

func readDemand(t *testing.T, path string) *Demand {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	d, err := ReadDemand(f, path)
	require.NoError(t, err)
	return d
}

// TestRecommendedBeatsFrontier runs the shipped LLM-serving settings
// (serving mode v3) and the reactive frontier (spec section 5: 20 HPA
// settings, warm, as the contract judges) on the three shared demand
// series with 3-minute start-ups, and checks the comparison.
//
// The settings were tuned on the code and conversation series and hold
// the Mooncake series out (README, "Serving mode"). On the two tuned
// series they meet issue 23's goal (at least 20 % fewer GPU-hours than the
// frontier at equal SLO minutes); on the held-out Mooncake series at ×1
// they save 4.1 %, short of the 5 % per row, which the README explains: a
// steady, heavy load whose 15-second peaks are 1.5 times its mean, where a
// reactive HPA at SM activity 0.85 is already close to what any autoscaler
// whose pods take minutes to start can do. The test pins the measured
// figures, so that a change that moves them is seen and restated (the
// last: a just-ready pod's queue counted, which cut conversation ×5 from
// 13.69 to 11.89 GPU-hours at 1.2 more SLO minutes, and code ×20 from
// 33.26 to 31.81 at 1.7 more).
func TestRecommendedBeatsFrontier(t *testing.T) {
	settings, err := LoadSettings("../../../../examples/autoscaling/llm-serving.yaml")
	require.NoError(t, err)
	for _, tc := range []struct {
		Scenario
		want Comparison
	}{
		{Scenario{"testdata/azure-llm-2023-conv.csv", 5, 180 * time.Second},
			Comparison{GPUHours: 11.893889, SLOViolationMinutes: 8.866667, FrontierGPUHours: 25.712303, Saving: 0.537424, Between: []string{"sm.active 0.35", "sm.active 0.45"}}},
		{Scenario{"testdata/mooncake-conversation.csv", 1, 180 * time.Second},
			Comparison{GPUHours: 9.3825, SLOViolationMinutes: 0.916667, FrontierGPUHours: 9.785024, Saving: 0.041137, Between: []string{"sm.active 0.85", "sm.active 0.90"}}},
		{Scenario{"testdata/azure-llm-2023-code.csv", 20, 180 * time.Second},
			Comparison{GPUHours: 31.814722, SLOViolationMinutes: 22.116667, FrontierGPUHours: 43.78426, Saving: 0.273375, Between: []string{"sm.active 0.75", "sm.active 0.80"}}},
	} {
		d := readDemand(t, tc.Demand)
		opts := Options{Startup: tc.Startup, Scale: tc.Scale}
		frontier, err := Frontier(d, opts)
		require.NoError(t, err)
		require.Len(t, frontier, 20)
		sum, err := Run(settings, d, opts, nil)
		require.NoError(t, err)
		require.Equal(t, "warm", sum.Start)
		for _, p := range frontier {
			require.Equal(t, "warm", p.Summary.Start, p.Name)
		}
		c := Compare(sum, frontier, floorGPUHours(d))
		t.Logf("%s ×%g, startup %v: %+v", tc.Demand, tc.Scale, tc.Startup, c)
		if tc.Demand != "testdata/mooncake-conversation.csv" {
			require.GreaterOrEqual(t, c.Saving, 0.20, tc.Demand)
		}
		require.InDelta(t, tc.want.GPUHours, c.GPUHours, 1e-6, tc.Demand)
		require.InDelta(t, tc.want.SLOViolationMinutes, c.SLOViolationMinutes, 1e-6, tc.Demand)
		require.InDelta(t, tc.want.FrontierGPUHours, c.FrontierGPUHours, 1e-6, tc.Demand)
		require.InDelta(t, tc.want.Saving, c.Saving, 1e-6, tc.Demand)
		require.Equal(t, tc.want.Between, c.Between, tc.Demand)
		require.Equal(t, tc.want.Outside, c.Outside, tc.Demand)
	}
}

// The frontier's settings (spec section 5): SM activity every 0.05 from
// 0.30 to 0.90, GPU_UTIL at 0.6, the queue per pod at 1 to 50; reactive,
// the default behavior, min 1 and the max given.
func TestReactiveSettings(t *testing.T) {
	var names []string
	for _, s := range reactiveSettings(42) {
		names = append(names, s.name)
		cfg, err := components.AutoscaleSettings(s.m)
		require.NoError(t, err, s.name)
		require.NoError(t, cfg.Validate(), s.name)
		tc := cfg.Targets[0]
		require.Equal(t, int32(1), tc.MinReplicas)
		require.Equal(t, int32(42), tc.MaxReplicas)
		require.Empty(t, tc.Mode, "reactive: the HPA's algorithm")
		require.Equal(t, gpuautoscaleconnector.BehaviorConfig{}, tc.Behavior, "the HPA's default behavior")
		switch {
		case strings.HasPrefix(s.name, "sm.active "):
			require.Equal(t, "nvidia.gpu.sm.active", tc.Metric)
			v, err := strconv.ParseFloat(strings.TrimPrefix(s.name, "sm.active "), 64)
			require.NoError(t, err)
			require.Equal(t, v, tc.TargetValue) // the double nearest the decimal
		case s.name == "gpu.utilization 0.6":
			require.Equal(t, "hw.gpu.utilization", tc.Metric)
			require.Equal(t, map[string]string{"hw.gpu.task": "general"}, tc.MetricAttributes)
			require.Equal(t, 0.6, tc.TargetValue)
		default:
			require.Equal(t, "vllm:num_requests_waiting", tc.Metric, s.name)
			require.Equal(t, "queue "+strconv.FormatFloat(tc.TargetValue, 'g', -1, 64), s.name)
		}
	}
	require.Equal(t, []string{
		"sm.active 0.30", "sm.active 0.35", "sm.active 0.40", "sm.active 0.45", "sm.active 0.50",
		"sm.active 0.55", "sm.active 0.60", "sm.active 0.65", "sm.active 0.70", "sm.active 0.75",
		"sm.active 0.80", "sm.active 0.85", "sm.active 0.90",
		"gpu.utilization 0.6",
		"queue 1", "queue 2", "queue 5", "queue 10", "queue 20", "queue 50",
	}, names)
}

func pt(name string, slo, h float64) Point {
	return Point{Name: name, Summary: Summary{SLOViolationMinutes: slo, GPUHours: h}}
}

// The lower envelope: the points no other point beats on both figures.
func TestEnvelopeByHand(t *testing.T) {
	env := Envelope([]Point{
		pt("a", 10, 100), pt("b", 30, 40), pt("c", 20, 60), pt("d", 30, 50),
		pt("e", 12, 110), // more minutes and more hours than a
		pt("f", 20, 60),  // equal to c: the first given stays
		pt("g", 40, 40),  // as cheap as b with more minutes
	})
	var names []string
	for _, p := range env {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"a", "c", "b"}, names)
}

// The comparison by hand (spec section 5): linear between the two
// nearest envelope points; fewer minutes than every point, that with the
// fewest; more minutes than every point, the last segment extended, never
// below the floor.
func TestCompareByHand(t *testing.T) {
	frontier := []Point{pt("a", 10, 100), pt("b", 30, 40), pt("c", 20, 60), pt("d", 30, 50), pt("e", 12, 110)}
	c := Compare(Summary{SLOViolationMinutes: 15, GPUHours: 40}, frontier, 1)
	// Halfway from a (10, 100) to c (20, 60); e (12, 110) is not on the
	// envelope, so not one of the two nearest.
	require.Equal(t, 80.0, c.FrontierGPUHours)
	require.Equal(t, 0.5, c.Saving)
	require.Equal(t, []string{"a", "c"}, c.Between)
	require.Empty(t, c.Outside)
	c = Compare(Summary{SLOViolationMinutes: 11, GPUHours: 48}, frontier, 1)
	require.Equal(t, 96.0, c.FrontierGPUHours) // a tenth of the way: 100 − 4
	require.Equal(t, 0.5, c.Saving)
	c = Compare(Summary{SLOViolationMinutes: 30, GPUHours: 30}, frontier, 1)
	require.Equal(t, 40.0, c.FrontierGPUHours) // the cheaper of two at equal minutes
	require.Equal(t, []string{"b"}, c.Between)
	require.Equal(t, 0.25, c.Saving)

	// Fewer minutes than every point (it dominates the frontier): the
	// point with the fewest minutes, not the line extended (which would
	// ask 120 at 5 minutes): it claims no more than it dominates.
	c = Compare(Summary{SLOViolationMinutes: 5, GPUHours: 50}, frontier, 1)
	require.Equal(t, "below", c.Outside)
	require.Equal(t, 100.0, c.FrontierGPUHours)
	require.Equal(t, 0.5, c.Saving)
	require.Equal(t, []string{"a"}, c.Between)
	// Of two points tied at the fewest minutes, the cheaper.
	c = Compare(Summary{SLOViolationMinutes: 0, GPUHours: 45}, append(frontier, pt("z", 10, 90)), 1)
	require.Equal(t, 90.0, c.FrontierGPUHours)
	require.Equal(t, 0.5, c.Saving)
	// A recommendation that costs more than that point: a negative saving,
	// reported as it is.
	c = Compare(Summary{SLOViolationMinutes: 5, GPUHours: 150}, frontier, 1)
	require.Equal(t, -0.5, c.Saving)

	// More minutes than every point: on from c (20, 60) through b (30, 40).
	c = Compare(Summary{SLOViolationMinutes: 40, GPUHours: 10}, frontier, 1)
	require.Equal(t, "above", c.Outside)
	require.Equal(t, 20.0, c.FrontierGPUHours)
	require.Equal(t, []string{"c", "b"}, c.Between)
	require.Equal(t, 0.5, c.Saving)
	// ... never below the floor (one pod for the whole series).
	c = Compare(Summary{SLOViolationMinutes: 60, GPUHours: 10}, frontier, 16)
	require.Equal(t, 16.0, c.FrontierGPUHours)
	require.Equal(t, 0.375, c.Saving)
	// One envelope point: its GPU-hours.
	c = Compare(Summary{SLOViolationMinutes: 60, GPUHours: 10}, []Point{pt("a", 10, 20), pt("b", 12, 25)}, 1)
	require.Equal(t, 20.0, c.FrontierGPUHours)
	require.Equal(t, []string{"a"}, c.Between)
}

// No row is ever left out of a mean (spec section 5): rows below and
// above the frontier's range and a row whose frontier is the floor count
// like the others.
func TestTableMeansEveryRow(t *testing.T) {
	frontier := []Point{pt("a", 10, 100), pt("b", 30, 40)}
	row := func(demand string, slo, h, ratio float64) Row {
		sum := Summary{SLOViolationMinutes: slo, GPUHours: h, GPUHoursOverIdeal: ratio}
		return Row{Scenario: Scenario{demand, 1, 180 * time.Second}, Summary: sum, Comparison: Compare(sum, frontier, 5), Frontier: frontier}
	}
	rows := []Row{
		row("x.csv", 5, 50, 1),  // below: against a's 100, +50 %
		row("x.csv", 20, 35, 2), // between: 70, +50 %
		row("y.csv", 60, 10, 3), // above: 100 − 3 × 50 < 0, the floor 5: −100 %
		row("y.csv", 30, 60, 6), // at b: −50 %
	}
	var out bytes.Buffer
	WriteTable(&out, rows, Options{})
	text := out.String()
	require.Contains(t, text, "warm start, -sample 5s, -slo-wait 2s; frontier: the 20 reactive settings")
	require.Contains(t, text, "| x.csv | 1 | 180 s | 50.00 | 5.0 | 100.00 (fewer SLO min than every reactive setting: the one with the fewest) | 50.0 % | 1.00 | a: 10.0 min, 100.00 h |")
	require.Contains(t, text, "| y.csv | 1 | 180 s | 10.00 | 60.0 | 5.00 (more SLO min than every reactive setting: extended) | -100.0 % | 3.00 | a: 10.0 min, 100.00 h; b: 30.0 min, 40.00 h |")
	require.Contains(t, text, "- x.csv: mean saving 50.0 % (lowest 50.0 %) over 2 rows; mean GPU-hours / ideal 1.50\n")
	require.Contains(t, text, "- y.csv: mean saving -75.0 % (lowest -100.0 %) over 2 rows; mean GPU-hours / ideal 4.50\n")
	require.Contains(t, text, "- all: mean saving -12.5 % (lowest -100.0 %) over all 4 rows; mean GPU-hours / ideal 3.00\n")

	out.Reset()
	WriteTable(&out, rows[:1], Options{Cold: true, Sample: 15 * time.Second, SLOWait: 10 * time.Second})
	require.True(t, strings.HasPrefix(out.String(), "cold start (-cold: min_replicas, none ready), -sample 15s, -slo-wait 10s;"), out.String())
}

// -table's runs take every option but the scenario's scale and startup
// from the command line: the sample interval, the SLO wait and the start
// each change the figures.
func TestCompareAllHonoursOptions(t *testing.T) {
	settings, err := LoadSettings("../../../../examples/autoscaling/llm-serving.yaml")
	require.NoError(t, err)
	scenarios := []Scenario{{"testdata/azure-llm-2023-conv.csv", 1, 180 * time.Second}}
	table := func(opts Options) Row {
		rows, err := CompareAll(settings, scenarios, opts, 2)
		require.NoError(t, err)
		require.Len(t, rows, 1)
		return rows[0]
	}
	base := table(Options{})
	require.Equal(t, "warm", base.Summary.Start)
	d := readDemand(t, scenarios[0].Demand)
	direct, err := Run(settings, d, Options{Scale: 1, Startup: 180 * time.Second}, nil)
	require.NoError(t, err)
	require.Equal(t, direct, base.Summary, "a row is the run with the same options")

	slo := table(Options{SLOWait: 10 * time.Second})
	require.Less(t, slo.SLOViolationMinutes, base.SLOViolationMinutes, "a longer SLO wait is violated less")
	require.Equal(t, base.GPUHours, slo.GPUHours, "the SLO wait changes no decision")
	for i := range base.Frontier {
		require.LessOrEqual(t, slo.Frontier[i].Summary.SLOViolationMinutes, base.Frontier[i].Summary.SLOViolationMinutes, base.Frontier[i].Name)
	}

	sample := table(Options{Sample: 30 * time.Second})
	require.NotEqual(t, base.Summary, sample.Summary, "pods reporting every 30 s instead of 5 s")
	changed := 0
	for i := range base.Frontier {
		if base.Frontier[i].Summary != sample.Frontier[i].Summary {
			changed++
		}
	}
	require.Positive(t, changed, "the frontier runs with -sample too")

	cold := table(Options{Cold: true})
	require.Equal(t, "cold", cold.Summary.Start)
	for _, p := range cold.Frontier {
		require.Equal(t, "cold", p.Summary.Start, p.Name)
	}
}
