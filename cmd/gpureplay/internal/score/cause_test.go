package score

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// every5 is one GPU's verdicts every 5 s over [from, to), each from f.
func every5(uuid string, from, to float64, f func(t float64) Verdict) []Verdict {
	var vs []Verdict
	for t := from; t < to; t += 5 {
		v := f(t)
		v.Time, v.UUID = t, uuid
		vs = append(vs, v)
	}
	return vs
}

// TestCauseScore: the cause's accuracy counts, from start + 40 s, the
// verdicts of the labelled class only; its latency runs from the start to
// the first verdict with the cause; a cause that never comes is missed.
func TestCauseScore(t *testing.T) {
	labels := []Label{
		{UUID: "a", Kind: "bottleneck", Value: "input_bound", Start: 0, End: 200},
		{UUID: "a", Kind: "cause", Value: "cpu_throttled", Start: 0, End: 200},
		{UUID: "b", Kind: "cause", Value: "fabric_errors", Start: 100, End: 200},
	}
	verdicts := map[string][]Verdict{
		// The cause from 20 s on, except at 100 s (none) and at 150 s,
		// where the class is wrong: not a cause sample.
		"a": every5("a", 0, 200, func(t float64) Verdict {
			v := Verdict{Bottleneck: "input_bound"}
			switch {
			case t == 150:
				v.Bottleneck = "compute_bound"
			case t >= 20 && t != 100:
				v.Cause = "cpu_throttled"
			}
			return v
		}),
		"b": every5("b", 0, 200, func(float64) Verdict { return Verdict{Bottleneck: "compute_bound", Cause: "none_found"} }),
	}
	r := Score(labels, verdicts)
	// a: 40..195 is 32 samples, 31 of the labelled class, 30 right; b: 140..195
	// is 12 samples (no bottleneck label: all count), none right.
	require.Equal(t, 31+12, r.CauseSamples)
	require.InDelta(t, 30.0/43, r.CauseAccuracy, 1e-9)
	require.Equal(t, 20.0, r.CauseLatencyMean)
	require.Equal(t, 20.0, r.CauseLatencyMax)
	require.Equal(t, 1, r.CauseMissed)
	require.InDelta(t, 31.0/32, r.BottleneckAccuracy, 1e-9, "the class's own figure: the wrong class at 150 s")

	// Coarser verdicts widen the grace, as for the bottleneck.
	r = ScoreAt(labels[:2], verdicts, 15)
	require.Equal(t, 28, r.CauseSamples, "from 55 s: 29 samples, 28 of the labelled class")

	// Without cause labels, NaN.
	r = Score(labels[:1], verdicts)
	require.Zero(t, r.CauseSamples)
	require.True(t, math.IsNaN(r.CauseAccuracy))
	require.True(t, math.IsNaN(r.CauseLatencyMean))
}
