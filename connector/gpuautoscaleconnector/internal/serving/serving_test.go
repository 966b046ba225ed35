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
