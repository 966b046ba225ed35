package whatif

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A burst of ten minutes at 2.5 pods over a base of half a pod, two
// hours, 3-minute start-ups, warm (one pod ready). Foresight asks for the
// burst's two extra pods a start-up ahead and lets them go at its end:
// 2 h + 2 × 13 min, with no SLO minute, against the ideal's 2 h + 2 × 10
// min. Skipping intervals shorter than 20 minutes spends the 2 h alone and
// violates the SLO from the burst until its backlog (900 pod-seconds,
// drained at half a pod) is down to the 2 s the SLO allows.
func TestForesightByHand(t *testing.T) {
	d := readDemand(t, writeSeries(t, "burst.csv", 2*time.Hour, func(at time.Duration) float64 {
		if at >= time.Hour && at < time.Hour+10*time.Minute {
			return 2.5
		}
		return 0.5
	}))
	points, err := Foresight(d, Options{Startup: 180 * time.Second})
	require.NoError(t, err)
	require.Len(t, points, len(foresightSkips))
	none := points[0].Summary
	require.Equal(t, "foresight skip 0s", points[0].Name)
	require.InDelta(t, (7200+2*780)/3600.0, none.GPUHours, 1e-6)
	require.InDelta(t, (7200+2*600)/3600.0, none.IdealGPUHours, 1e-6)
	require.Zero(t, none.SLOViolationMinutes)
	require.Equal(t, "warm", none.Start)
	require.EqualValues(t, 1, none.InitialReplicas)
	require.EqualValues(t, 3, none.PeakReplicas)

	var skip20 Summary
	for _, p := range points {
		if p.Name == "foresight skip 20m0s" {
			skip20 = p.Summary
		}
	}
	require.InDelta(t, 2.0, skip20.GPUHours, 1e-6, "the burst is left to the queue")
	// The wait passes 2 s within the burst's first seconds and falls back
	// under it once the backlog, 900 pod-seconds at the burst's end, is
	// down to 2 pod-seconds at half a pod a second: 600 + 1796 s.
	require.InDelta(t, (600+1796)/60.0, skip20.SLOViolationMinutes, 0.1)
}

// A gap no longer than the start-up is kept through (a pod let go would
// have to be asked for again before the gap ends); a longer one is not.
func TestForesightKeepsThroughShortGaps(t *testing.T) {
	burst := func(gap time.Duration) *Demand {
		return readDemand(t, writeSeries(t, "gaps.csv", 2*time.Hour, func(at time.Duration) float64 {
			first := at >= time.Hour && at < time.Hour+5*time.Minute
			second := at >= time.Hour+5*time.Minute+gap && at < time.Hour+10*time.Minute+gap
			if first || second {
				return 2
			}
			return 0.5
		}))
	}
	short, err := Foresight(burst(2*time.Minute), Options{Startup: 180 * time.Second})
	require.NoError(t, err)
	// Kept: one start-up, 5 + 2 + 5 minutes of need.
	require.InDelta(t, (7200+180+720)/3600.0, short[0].Summary.GPUHours, 1e-6)
	require.Equal(t, 1, short[0].Summary.ScaleUps)
	long, err := Foresight(burst(5*time.Minute), Options{Startup: 180 * time.Second})
	require.NoError(t, err)
	// Let go and asked for again: two start-ups, ten minutes of need.
	require.InDelta(t, (7200+2*180+600)/3600.0, long[0].Summary.GPUHours, 1e-6)
	require.Equal(t, 2, long[0].Summary.ScaleUps)
	require.Zero(t, long[0].Summary.SLOViolationMinutes)
}

// Cold, no pod is ready at t = 0: foresight asks for the first a start-up
// before the demand, which the plan cannot do before t = 0, so the first
// start-up is violated as every cold run's is: 180 s with no pod, then
// the 90 pod-seconds queued drain at half a pod a second to 2 (176 s).
func TestForesightCold(t *testing.T) {
	d := readDemand(t, writeSeries(t, "flat.csv", time.Hour, func(time.Duration) float64 { return 0.5 }))
	points, err := Foresight(d, Options{Startup: 180 * time.Second, Cold: true})
	require.NoError(t, err)
	s := points[0].Summary
	require.Equal(t, "cold", s.Start)
	require.InDelta(t, 1.0, s.GPUHours, 1e-6)
	require.InDelta(t, (180+176)/60.0, s.SLOViolationMinutes, 0.05)
}
