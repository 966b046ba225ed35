package serving

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func calibratedParams() Params {
	p := params()
	p.Attainment, p.ColdHeadroom = 0.9, 1.2
	return p
}

// Until a forecaster has enough matured errors, the provision is the peak
// need of the last start-up times the cold headroom.
func TestCalibratedColdIsThePeakTimesColdHeadroom(t *testing.T) {
	f := newFleet(calibratedParams())
	f.step(rates(2, 500), false, 2)
	e := f.step(rates(2, 500), false, 2)
	require.Equal(t, ForecastPeak, e.Forecaster)
	require.InDelta(t, 1.2, e.Headroom, 1e-9)
	require.Zero(t, e.Errors)
}

// Noise defeats every forecaster alike: the provision must still cover the
// need a start-up later about the attainment's share of the time, and the
// daily profile, with no day seen, never decides.
func TestCalibratedCoversNoiseAtTheAttainment(t *testing.T) {
	p := calibratedParams()
	p.Seasonal = true
	f := newFleet(p)
	rng := rand.New(rand.NewPCG(1, 2))
	var provided []float64
	var needs []float64
	for range 400 {
		r := 3000 * (0.6 + 0.8*rng.Float64())
		e := f.step([]float64{r}, false, 1)
		provided = append(provided, e.Forecast*e.Headroom)
		needs = append(needs, e.Need)
		require.NotEqual(t, ForecastSeasonal, e.Forecaster)
	}
	const ahead = 12 // a start-up of 3 minutes in 15 s steps
	covered, n := 0, 0
	for i := 100; i+ahead < len(needs); i++ {
		n++
		if provided[i] >= needs[i+ahead]*(1-1e-9) {
			covered++
		}
	}
	share := float64(covered) / float64(n)
	require.Greater(t, share, 0.85, "the provision covers the need a start-up later about 90 %% of the time, got %.2f", share)
	require.Less(t, share, 0.97, "and not much more, or it buys more than the attainment asks, got %.2f", share)
}

// A step up: the errors measured before it say nothing of it, so for a
// start-up it is under-provisioned; then the need now carries it, and the
// provision settles within a few percent above the new level once the
// old errors age out.
func TestCalibratedFollowsAStep(t *testing.T) {
	p := calibratedParams()
	f := newFleet(p)
	var e Estimate
	for range 100 {
		e = f.step([]float64{1000}, false, 1)
	}
	for range 100 {
		e = f.step([]float64{3000}, false, 1)
	}
	sized := e.Forecast * e.Headroom
	require.GreaterOrEqual(t, sized, e.Need*(1-1e-9))
	require.Less(t, sized, 1.2*3000, "a steady level needs no more than its errors show")
	require.False(t, math.IsNaN(sized))
}

// A calibrated estimator that has just begun (a first deployment, or a
// restart without its saved state) keeps the ready pods it found through
// its first start-up: it knows no provision of the last start-up to hold,
// and a pod let go then cannot be back before one has passed. Seven pods
// serve 700 tokens/s each against a configured 1000: the cold provision,
// 4900 × 1.2, asks for 6 from the first evaluation; the seventh goes only
// once a start-up (180 s) of evaluations has passed. The shipped mode
// lets it go at once, as before.
func TestFreshCalibratedEstimatorKeepsThePodsItFound(t *testing.T) {
	p := calibratedParams()
	p.Capacity = 1000
	f := newFleet(p)
	for s := 15; s < 15+180; s += 15 {
		e := f.step(rates(7, 700), false, 7)
		require.Equal(t, 6, e.SLOPods, "at %d s", s)
		require.Equal(t, 7, e.Pods, "at %d s: let go within the first start-up", s)
		require.Equal(t, ReasonHold, e.Reason)
	}
	e := f.step(rates(7, 700), false, 7)
	require.Equal(t, 6, e.Pods, "a start-up after the first evaluation")
	require.Equal(t, ReasonForecast, e.Reason)

	p.Attainment = 0
	shipped := newFleet(p).step(rates(7, 700), false, 7)
	require.Less(t, shipped.Pods, 7)
}
