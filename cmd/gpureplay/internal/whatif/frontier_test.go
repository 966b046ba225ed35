package whatif

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// TestRecommendedBeatsFrontier runs the shipped LLM-serving settings and the
// reactive frontier (spec section 5) on real demand and requires the
// settings to need at least 10 % fewer GPU-hours than the frontier at their
// SLO-violation minutes, and to violate the SLO no longer than the best
// reactive setting.
func TestRecommendedBeatsFrontier(t *testing.T) {
	settings, err := LoadSettings("../../../../examples/autoscaling/llm-serving.yaml")
	require.NoError(t, err)
	for _, s := range []Scenario{
		{"testdata/azure-llm-2023-conv.csv", 5, 180 * time.Second},
		{"testdata/mooncake-conversation.csv", 1, 180 * time.Second},
		// Bursty code completion: the headroom cap keeps serving mode from
		// paying for the bursts' peak all the time.
		{"testdata/azure-llm-2023-code.csv", 20, 180 * time.Second},
	} {
		d := readDemand(t, s.Demand)
		opts := Options{Startup: s.Startup, Scale: s.Scale}
		frontier, err := Frontier(d, opts)
		require.NoError(t, err)
		sum, err := Run(settings, d, opts, nil)
		require.NoError(t, err)
		c := Compare(sum, frontier)
		t.Logf("%s ×%g, startup %v: %+v", s.Demand, s.Scale, s.Startup, c)
		for _, p := range frontier {
			require.LessOrEqual(t, sum.SLOViolationMinutes, p.Summary.SLOViolationMinutes, "%s: %s serves better", s.Demand, p.Name)
		}
		require.GreaterOrEqual(t, c.Saving, 0.10, "%s: GPU-hours %.2f against the frontier's %.2f", s.Demand, c.GPUHours, c.FrontierGPUHours)
	}
}

// The comparison itself, by hand: linear between the two nearest points,
// and outside the range the documented ends.
func TestCompareByHand(t *testing.T) {
	pt := func(slo, h float64) Point { return Point{Summary: Summary{SLOViolationMinutes: slo, GPUHours: h}} }
	frontier := []Point{pt(10, 100), pt(30, 40), pt(20, 60), pt(30, 50)}
	c := Compare(Summary{SLOViolationMinutes: 15, GPUHours: 40}, frontier)
	require.Equal(t, 80.0, c.FrontierGPUHours) // halfway from (10, 100) to (20, 60)
	require.Equal(t, 0.5, c.Saving)
	require.Empty(t, c.Outside)
	c = Compare(Summary{SLOViolationMinutes: 30, GPUHours: 30}, frontier)
	require.Equal(t, 40.0, c.FrontierGPUHours) // the cheaper of two at equal minutes
	c = Compare(Summary{SLOViolationMinutes: 5, GPUHours: 50}, frontier)
	require.Equal(t, "below", c.Outside)
	require.Equal(t, 100.0, c.FrontierGPUHours)
	// Read literally: on from (20, 60) through (10, 100), 4 GPU-hours a
	// minute, to 120 at 5 minutes.
	require.Equal(t, 120.0, c.FrontierGPUHoursLinear)
	require.Equal(t, round(1-50.0/120), c.SavingLinear)
	// A frontier that does not fall as minutes grow gives the clamp.
	flat := []Point{pt(10, 100), pt(20, 100), pt(30, 120)}
	c = Compare(Summary{SLOViolationMinutes: 5, GPUHours: 50}, flat)
	require.Equal(t, 100.0, c.FrontierGPUHours)
	require.Equal(t, 100.0, c.FrontierGPUHoursLinear)
	// A dominated point between is not one of the two nearest.
	c = Compare(Summary{SLOViolationMinutes: 0, GPUHours: 50}, []Point{pt(10, 100), pt(12, 110), pt(20, 80)})
	require.Equal(t, 120.0, c.FrontierGPUHoursLinear) // through (10, 100) and (20, 80)
	require.Equal(t, 100.0, c.FrontierGPUHours)
	c = Compare(Summary{SLOViolationMinutes: 40, GPUHours: 30}, frontier)
	require.Equal(t, "above", c.Outside)
	require.Equal(t, 20.0, c.FrontierGPUHours) // on from (20, 60) through (30, 40)
	require.Equal(t, 20.0, c.FrontierGPUHoursLinear)
	require.Equal(t, c.Saving, c.SavingLinear)
}
