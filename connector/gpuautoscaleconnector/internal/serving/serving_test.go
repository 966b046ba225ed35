package serving

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1767225600, 0)

func params() Params {
	return Params{
		Target: 0.8, PodThroughput: 20, StableWindow: 60 * time.Second, PanicWindow: 6 * time.Second,
		PanicThreshold: 2, DrainTime: 100 * time.Second,
	}
}

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// A steady load without a queue asks for the load at the target.
func TestSteadyLoad(t *testing.T) {
	e := New(params())
	for s := 0; s <= 60; s += 15 {
		est := e.Observe(Observation{Now: at(s), Ready: 4, Load: 3.2})
		require.InDelta(t, 3.2/0.8, est.Pods, 1e-9)
		require.False(t, est.Panic)
	}
}

// A growing queue is work arriving that the pods do not serve: one pod,
// saturated, and 2,000 requests (100 pod-seconds at 20 requests/s) more
// after 15 s means 100/15 more pods of work arrive, and the backlog adds
// 100/100 s. The panic window (the last interval) sees 8.67 pods against
// 1 ready: a panic, as in Knative.
func TestQueueGrowthIsArrival(t *testing.T) {
	e := New(params())
	e.Observe(Observation{Now: at(0), Ready: 1, Load: 1})
	est := e.Observe(Observation{Now: at(15), Ready: 1, Load: 1, Waiting: 2000})
	require.InDelta(t, 1+100.0/15, est.Arrival, 1e-9)
	require.InDelta(t, 100, est.Backlog, 1e-9)
	require.InDelta(t, (1+100.0/15+1)/0.8, est.Pods, 1e-9)
	require.True(t, est.Panic)

	// The queue stops growing: the stable window (60 s) averages the
	// growth, 100 pod-seconds over the 30 s since its first observation.
	est = e.Observe(Observation{Now: at(30), Ready: 1, Load: 1, Waiting: 2000})
	require.InDelta(t, 1+100.0/30, est.Arrival, 1e-9)
	require.InDelta(t, (1+100.0/30+1)/0.8, est.Pods, 1e-9)
}

// The headroom covers the quantile of the interval arrival rates of the
// window: with quantile 1, the peak of the last 60 s.
func TestHeadroomQuantile(t *testing.T) {
	p := params()
	p.HeadroomWindow, p.HeadroomQuantile = 60*time.Second, 1
	e := New(p)
	loads := []float64{1, 4, 1, 1, 1, 1, 1}
	var got []float64
	for i, l := range loads {
		got = append(got, e.Observe(Observation{Now: at(15 * i), Ready: 4, Load: l}).Pods)
	}
	// The interval rate of an observation is its load (no queue). The peak
	// of 4 (at 15 s) is held while it is within 60 s, then the level is 1.
	require.InDeltaSlice(t, []float64{1 / 0.8, 4 / 0.8, 4 / 0.8, 4 / 0.8, 4 / 0.8, 4 / 0.8, 1 / 0.8}, got, 1e-9)

	// The median of 1, 2, 3, 4 (nearest rank) is 2.
	p.HeadroomQuantile = 0.5
	e = New(p)
	for i, l := range []float64{5, 1, 2, 3, 4} {
		got[0] = e.Observe(Observation{Now: at(15 * i), Ready: 4, Load: l}).Arrival
	}
	require.InDelta(t, 3.0, got[0], 1e-9) // the stable mean (3) is above the median rate (2)
}

// The cap holds the headroom and the panic window's estimate to a multiple
// of the mean interval rate of the headroom window; the stable window's
// rate is not capped.
func TestHeadroomMaxRatio(t *testing.T) {
	p := params()
	p.HeadroomWindow, p.HeadroomQuantile, p.HeadroomMaxRatio = 60*time.Second, 1, 1.5
	p.StableWindow, p.PanicWindow = 6*time.Second, 6*time.Second // the last interval
	e := New(p)
	var got []Estimate
	for i, l := range []float64{1, 1, 1, 9, 1} {
		got = append(got, e.Observe(Observation{Now: at(15 * i), Ready: 2, Load: l}))
	}
	// At 45 s the rates of the window are 1, 1, 9 (the first observation
	// has none): mean 11/3, cap 5.5. The burst of 9 is the stable rate
	// too, so it is not capped; the panic estimate equals it.
	require.InDelta(t, 9/0.8, got[3].Pods, 1e-9)
	require.True(t, got[3].Panic)
	// At 60 s the stable rate is 1; the headroom (peak 9) is capped at
	// 1.5 × mean(1, 1, 9, 1) = 4.5.
	require.InDelta(t, 4.5/0.8, got[4].Pods, 1e-9)

	// With Knative's windows, a burst in the last interval panics, but the
	// panic estimate is capped too: the stable mean of 1, 1, 1, 1, 9 is
	// 2.6, the cap 1.5 × mean(1, 1, 1, 9) = 4.5.
	p.StableWindow, p.PanicWindow = 60*time.Second, 6*time.Second
	e = New(p)
	for i, l := range []float64{1, 1, 1, 1, 9} {
		got[i] = e.Observe(Observation{Now: at(15 * i), Ready: 2, Load: l})
	}
	require.True(t, got[4].Panic)
	require.InDelta(t, 4.5/0.8, got[4].Pods, 1e-9)

	// Without the cap the peak is held.
	p.StableWindow, p.PanicWindow = 6*time.Second, 6*time.Second
	p.HeadroomMaxRatio = 0
	e = New(p)
	for i, l := range []float64{1, 1, 1, 9, 1} {
		got[i] = e.Observe(Observation{Now: at(15 * i), Ready: 2, Load: l})
	}
	require.InDelta(t, 9/0.8, got[4].Pods, 1e-9)
}
