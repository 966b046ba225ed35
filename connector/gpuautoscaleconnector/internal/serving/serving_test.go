package serving

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1767225600, 0)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func params() Params {
	return Params{
		SLOWait: 2 * time.Second, Startup: 3 * time.Minute, Lookback: 3 * time.Minute,
		Peak: 1, Quantile: 0.9, ErrorHistory: time.Hour, ColdHeadroom: 1, DrainTime: time.Minute,
	}
}

// fleet drives an estimator with n pods whose counters grow at rate
// tokens per second each, sampled every 15 s.
type fleet struct {
	e      *Estimator
	tokens map[string]float64
	s      int
}

func newFleet(p Params) *fleet { return &fleet{e: New(p), tokens: map[string]float64{}} }

// step advances 15 s with the given per-pod rates; busy marks the rates as
// served with a queue behind them.
func (f *fleet) step(rates []float64, busy bool, current int) Estimate {
	f.s += 15
	var pods []Pod
	for i, r := range rates {
		name := "p" + string(rune('a'+i))
		f.tokens[name] += 15 * r
		p := Pod{Name: name, Tokens: f.tokens[name], TokensStart: t0, At: at(f.s), HasTokens: true}
		if busy {
			p.Waiting, p.Busy = 1, []float64{r}
		}
		pods = append(pods, p)
	}
	return f.e.Observe(Observation{Now: at(f.s), Pods: pods, Current: current})
}

func rates(n int, r float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = r
	}
	return out
}

// Until a pod has a queue, its capacity is only known from below: the
// most any pod served (or a configured guess above that). A busy pod says
// what a pod serves, and the estimate moves to the median of the busy
// pods' rates.
func TestCapacityIsLearnedFromBusyPods(t *testing.T) {
	f := newFleet(params())
	f.step(rates(2, 600), false, 2)
	e := f.step([]float64{600, 700}, false, 2)
	require.Equal(t, "observed", e.CapacityFrom)
	require.InDelta(t, 700, e.Capacity, 1e-9)

	p := params()
	p.Capacity = 900
	g := newFleet(p)
	g.step(rates(2, 600), false, 2)
	e = g.step(rates(2, 600), false, 2)
	require.Equal(t, "configured", e.CapacityFrom)
	require.InDelta(t, 900, e.Capacity, 1e-9)

	e = g.step([]float64{1000, 1000, 1200}, true, 3)
	require.Equal(t, "busy", e.CapacityFrom)
	require.InDelta(t, 1000, e.Capacity, 1e-9, "the median of the busy rates, not the configured guess")
	e = g.step(rates(3, 1100), true, 3)
	require.InDelta(t, 1000+0.2*100, e.Capacity, 1e-9, "an exponential average, weight 0.2")
}

// The SLO rule is the token-bucket condition: the least rate at which the
// work of every window ending now waits at most SLOWait. A steady load
// needs a little less than itself (a window may wait 2 s); a 15 s burst
// needs 15/17 of its rate.
func TestNeedIsTheTokenBucketCondition(t *testing.T) {
	f := newFleet(params())
	for range 4 {
		f.step(rates(1, 1000), false, 1)
	}
	e := f.step(rates(1, 1000), false, 1)
	// Windows of 15, 30, ... 75 s: the longest needs the most.
	require.InDelta(t, 1000*75.0/77, e.Need, 1e-6)

	e = f.step(rates(1, 4000), false, 1)
	// The burst's own window: 4000 × 15 / 17; longer windows average it
	// with the steady load: (4000 + 5 × 1000) × 15 / (90 + 2).
	require.InDelta(t, math.Max(4000*15.0/17, 9000*15.0/92), e.Need, 1e-6)
}

// The forecast is the peak need of the lookback; the headroom is the
// quantile of how far the need a start-up later exceeded the forecasts,
// once enough have matured (before that, the cold headroom).
func TestHeadroomIsTheQuantileOfMaturedErrors(t *testing.T) {
	p := params()
	p.ColdHeadroom = 1.5
	f := newFleet(p)
	e := f.step(rates(1, 1000), false, 1)
	require.InDelta(t, 1.5, e.Headroom, 1e-9)
	require.Zero(t, e.Errors)
	// A load growing 1 % per interval: each need a start-up (12
	// intervals) later exceeds its forecast by about 1.01^12.
	r := 1000.0
	for range 60 {
		r *= 1.01
		e = f.step(rates(1, r), false, 1)
	}
	require.GreaterOrEqual(t, e.Errors, minErrors)
	require.InDelta(t, math.Pow(1.01, 12), e.Headroom, 0.01)
	require.Equal(t, pods(e.Headroom*e.Forecast/e.Capacity), e.SLOPods)
}

// A pod is let go only when the forecast falls a tolerance below what the
// running pods serve, and not while the rules asked for it within the
// scale-down delay.
func TestScaleDownToleranceAndDelay(t *testing.T) {
	p := params()
	p.Capacity = 1000
	p.DownTolerance = 0.1
	p.Startup, p.Lookback = time.Second, time.Second
	f := newFleet(p)
	var e Estimate
	for range 45 {
		e = f.step(rates(4, 980), false, 4)
	}
	require.Equal(t, 4, e.Pods)
	// 3.05 pods of need (the rate of ten minutes' windows): 3.36 with the
	// tolerance, so 4 stay.
	for range 45 {
		e = f.step(rates(4, 3050.0/4*602/600), false, 4)
	}
	require.InDelta(t, 3050, e.Need, 1e-6)
	require.Equal(t, 4, e.Pods)
	// 2.5 pods: 2.75 with the tolerance: 3.
	for range 45 {
		e = f.step(rates(4, 2500.0/4*602/600), false, 4)
	}
	require.Equal(t, 3, e.Pods)

	p.ScaleDownDelay = time.Minute
	g := newFleet(p)
	for range 45 {
		g.step(rates(4, 980), false, 4)
	}
	// The ten minutes' windows forget the load over ten minutes; once the
	// rules ask for fewer, the pods are held for a minute (four
	// evaluations), then let go.
	held := 0
	for range 60 {
		e = g.step(rates(4, 100), false, 4)
		if e.Reason == ReasonHold {
			require.Equal(t, 4, e.Pods)
			held++
		}
		if e.Pods < 4 {
			break
		}
	}
	require.Equal(t, 4, held)
	require.Less(t, e.Pods, 4)
}

// The KV rule asks for the pods that keep the cache under its target,
// whatever the token rate says.
func TestKVCacheAsksForPods(t *testing.T) {
	p := params()
	p.Capacity = 1000
	p.KVTarget = 0.8
	e := New(p)
	pods := []Pod{
		{Name: "a", Tokens: 0, TokensStart: t0, At: at(15), HasTokens: true, KV: 0.95, HasKV: true},
		{Name: "b", Tokens: 0, TokensStart: t0, At: at(15), HasTokens: true, KV: 0.97, HasKV: true},
	}
	est := e.Observe(Observation{Now: at(15), Pods: pods, Current: 2})
	require.Equal(t, 3, est.KVPods)
	require.Equal(t, 3, est.Pods)
	require.Equal(t, ReasonKV, est.Reason)
}

// A counter that restarts (its start time changes) is read from its new
// start, never as a negative rate; a pod's first reading counts from its
// counter's start.
func TestCounterRestart(t *testing.T) {
	e := New(params())
	pod := Pod{Name: "a", Tokens: 15000, TokensStart: t0, At: at(15), HasTokens: true}
	est := e.Observe(Observation{Now: at(15), Pods: []Pod{pod}, Current: 1})
	require.InDelta(t, 1000, est.Served, 1e-9)
	pod = Pod{Name: "a", Tokens: 3000, TokensStart: at(27), At: at(30), HasTokens: true}
	est = e.Observe(Observation{Now: at(30), Pods: []Pod{pod}, Current: 1})
	require.InDelta(t, 1000, est.Served, 1e-9)
}

// Without a token rate, the estimator asks for what runs.
func TestNoTokensKeepsTheCount(t *testing.T) {
	e := New(params())
	est := e.Observe(Observation{Now: at(15), Pods: []Pod{{Name: "a"}}, Current: 3})
	require.Equal(t, 3, est.Pods)
	require.Equal(t, ReasonNoData, est.Reason)
}

// The start-up horizon is the longest observed, never below the
// configured one.
func TestObservedStartupWidensTheHorizon(t *testing.T) {
	e := New(params())
	e.ObserveStartup(time.Minute)
	e.ObserveStartup(10 * time.Minute)
	est := e.Observe(Observation{Now: at(15), Pods: []Pod{{Name: "a"}}, Current: 1})
	require.Equal(t, 10*time.Minute, est.Startup)
}

// Once a day has been seen, the daily profile raises the forecast ahead of
// a ramp the lookback has not seen yet, and never lowers it.
func TestDailyProfileRaisesAheadOfTheRamp(t *testing.T) {
	p := params()
	p.Capacity = 1000
	p.Seasonal = true
	p.Startup = 10 * time.Minute
	p.Lookback = 10 * time.Minute
	e := New(p)
	// 1,000 tokens/s all day, 3,000 from 09:00 to 10:00 UTC.
	rate := func(t time.Time) float64 {
		if h := t.UTC().Hour(); h == 9 {
			return 3000
		}
		return 1000
	}
	tokens := 0.0
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var before, quiet Estimate
	for s := 15; s <= 2*86400; s += 15 {
		now := start.Add(time.Duration(s) * time.Second)
		tokens += 15 * rate(now)
		est := e.Observe(Observation{Now: now, Current: 3, Pods: []Pod{{Name: "a", Tokens: tokens, TokensStart: start, At: now, HasTokens: true}}})
		switch now.Sub(start) {
		case 86400*time.Second + 8*time.Hour + 50*time.Minute:
			before = est
		case 86400*time.Second + 3*time.Hour:
			quiet = est
		}
	}
	require.InDelta(t, 3, before.Seasonal, 0.01, "10 minutes before the second day's ramp")
	require.InDelta(t, 1, quiet.Seasonal, 1e-9)
	require.Greater(t, before.Forecast, 2.5*1000*600/602.0)
}

// A pod that just became ready reports its share of the queue before its
// counter has a rate (it reads its start). Its queue is counted at the
// other pods' tokens per request, so the backlog does not dip while it
// starts and jump back an evaluation later: that jump, read as arrivals,
// once asked for three times the pods the demand needed (what-if,
// ServeGen M-small at a 600 s start-up).
func TestBacklogCountsAPodWithoutARateYet(t *testing.T) {
	p := params()
	p.RequestTime = 500 * time.Millisecond
	e := New(p)
	const rate, running = 1000.0, 10.0
	// 1000 tokens/s over 10 running requests finishing every 0.5 s: 50
	// tokens a request. The queue, 80 requests, is shared by the pods.
	const perRequest, queued = rate * 0.5 / running, 80.0
	obs := func(s, pods int, newAt int) Estimate {
		n := float64(pods)
		if newAt > 0 {
			n++
		}
		var ps []Pod
		for i := range pods {
			ps = append(ps, Pod{Name: "p" + string(rune('a'+i)), Tokens: rate * float64(s), TokensStart: t0, At: at(s),
				HasTokens: true, Waiting: queued / n, Running: running})
		}
		if newAt > 0 {
			ps = append(ps, Pod{Name: "new", Tokens: rate * float64(s-newAt), TokensStart: at(newAt), At: at(s),
				HasTokens: true, Waiting: queued / n, Running: running})
		}
		return e.Observe(Observation{Now: at(s), Pods: ps, Current: len(ps)})
	}
	obs(15, 4, 0)
	before := obs(30, 4, 0)
	require.InDelta(t, queued*perRequest, before.Backlog, 1e-9)
	starting := obs(45, 4, 45) // ready at this sample: its counter reads 0
	require.InDelta(t, queued*perRequest, starting.Backlog, 1e-9, "the new pod's queue counts before its rate")
	require.InDelta(t, before.Served*5/4, starting.Served, 1e-9, "a pod without a rate serves like the others")
	require.InDelta(t, starting.Served, starting.Arrival, 1e-9, "the queue did not shrink")
	rated := obs(60, 4, 45)
	require.InDelta(t, queued*perRequest, rated.Backlog, 1e-9)
	require.InDelta(t, rated.Served, rated.Arrival, 1e-9, "the queue did not grow")
}

// With the calibrated forecast, the queue rule asks for pods only when
// the queue would outlast a start-up at the ready pods' spare rate: pods
// asked for a queue gone before they are ready only pay their start-up.
// The peak forecast (the shipped mode) keeps the rule as it was.
func TestQueueRuleAsksOnlyForAQueueThatOutlastsAStartup(t *testing.T) {
	// Four busy pods serve 1000 tokens/s each; a request is 50 tokens
	// (10 running, finishing every 0.5 s). The queue falls from before to
	// after (requests) in 15 s.
	decide := func(attainment, before, after float64) Estimate {
		return queuedFleet(attainment, 4, []float64{before, after})
	}
	// 2700 → 2400 requests: arrivals 3000 tokens/s, 1000 spare, the
	// 120,000 tokens queued drain in 120 s, before a 180 s start-up.
	drains := decide(0.9, 2700, 2400)
	require.InDelta(t, 3000, drains.Arrival, 1e-6)
	require.Equal(t, 5, drains.BacklogPods, "the rule's own count: arrivals and the queue over DrainTime")
	require.Equal(t, 4, drains.Pods)
	require.Equal(t, ReasonForecast, drains.Reason)

	// 2430 → 2400: 3900 tokens/s, 100 spare: 1200 s to drain.
	outlasts := decide(0.9, 2430, 2400)
	require.Equal(t, 6, outlasts.Pods)
	require.Equal(t, ReasonBacklog, outlasts.Reason)

	shipped := decide(0, 2700, 2400)
	require.Equal(t, 5, shipped.Pods)
	require.Equal(t, ReasonBacklog, shipped.Reason)
}

// With the calibrated forecast, no ready pod is let go while the queue
// makes a request arriving now wait past the objective: it drains that
// queue, and the breach would last longer without it. The same falling
// queue, once short, lets the pod go, and the shipped mode lets it go
// either way.
func TestNoReadyPodLetGoWhileTheQueueBreaksTheObjective(t *testing.T) {
	// Six busy pods serve 1000 tokens/s each; a request is 50 tokens (10
	// running, finishing every 0.5 s). Arrivals are 4000 tokens/s, so the
	// queue falls by 600 requests every 15 s, to final requests.
	decide := func(attainment, final float64) Estimate {
		const steps = 16
		queued := make([]float64, steps)
		for i := range queued {
			queued[i] = final + 600*float64(steps-1-i)
		}
		return queuedFleet(attainment, 6, queued)
	}
	// 1200 requests, 60,000 tokens: a 10 s wait behind six pods.
	breach := decide(0.9, 1200)
	require.InDelta(t, 4000, breach.Arrival, 1e-6)
	require.InDelta(t, 60000, breach.Backlog, 1e-6)
	require.Equal(t, 5, breach.SLOPods, "the forecast alone would let one go")
	require.Equal(t, 6, breach.Pods)
	require.Equal(t, ReasonBacklog, breach.Reason)

	// 120 requests, 6,000 tokens: a 1 s wait, within the objective.
	short := decide(0.9, 120)
	require.Equal(t, 5, short.Pods)
	require.Equal(t, ReasonForecast, short.Reason)

	shipped := decide(0, 1200)
	require.Equal(t, 5, shipped.Pods)
}

// queuedFleet drives a calibrated (attainment > 0) or shipped estimator
// with n busy pods serving 1000 tokens/s each, a request 50 tokens (10
// running, finishing every 0.5 s), at 15 s steps; queued[i] is the
// requests waiting in all at step i. It returns the last estimate.
func queuedFleet(attainment float64, n int, queued []float64) Estimate {
	p := params()
	p.RequestTime, p.Attainment = 500*time.Millisecond, attainment
	e := New(p)
	var last Estimate
	for i, q := range queued {
		s := 15 * (i + 1)
		var ps []Pod
		for j := range n {
			ps = append(ps, Pod{Name: "p" + string(rune('a'+j)), Tokens: 1000 * float64(s), TokensStart: t0, At: at(s),
				HasTokens: true, Waiting: q / float64(n), Running: 10, Busy: []float64{1000}})
		}
		last = e.Observe(Observation{Now: at(s), Pods: ps, Current: n})
	}
	return last
}

// Until a pod has had a queue, the capacity is the most one pod served,
// a lower bound, so the need against it is an upper bound already: the
// calibrated mode puts no headroom on it, where a configured capacity (the
// same value, stated by the user) and the shipped mode keep their
// headroom.
func TestLowerBoundCapacityGetsNoHeadroom(t *testing.T) {
	decide := func(attainment, capacity float64) Estimate {
		p := params()
		p.Attainment, p.ColdHeadroom, p.Capacity = attainment, 1.5, capacity
		f := newFleet(p)
		var last Estimate
		for range 8 {
			last = f.step([]float64{600}, false, 1)
		}
		return last
	}
	lower := decide(0.9, 0)
	require.Equal(t, "observed", lower.CapacityFrom)
	require.InDelta(t, 600, lower.Capacity, 1e-6)
	require.Equal(t, 1, lower.SLOPods)
	require.Equal(t, 1, lower.Pods)

	configured := decide(0.9, 600)
	require.Equal(t, "configured", configured.CapacityFrom)
	require.Equal(t, 2, configured.SLOPods, "a capacity the user states gets the cold headroom")

	shipped := decide(0, 0)
	require.Equal(t, 2, shipped.SLOPods)
}

// The calibrated queue rule takes the lower of the last two intervals'
// arrivals: a burst in one interval is in the backlog already and does
// not ask for a pod that is ready only a start-up later; a rate that
// lasts two intervals does. The shipped mode asks either way.
func TestQueueRuleWaitsForAnArrivalThatLasts(t *testing.T) {
	outlasts := func(attainment float64, arrivals ...float64) bool {
		p := params()
		p.Attainment = attainment
		e := New(p)
		for i, a := range arrivals {
			e.history = append(e.history, interval{at: at(15 * (i + 1)), seconds: 15, arrival: a})
		}
		// Four pods of 1000 tokens/s, 85,000 tokens queued.
		return e.queueOutlasts(4, 1000, arrivals[len(arrivals)-1], 85000)
	}
	// 3000 tokens/s, then one interval at 7333: 1000 spare at the
	// earlier rate, 85 s to drain, within a 180 s start-up.
	require.False(t, outlasts(0.9, 3000, 7333))
	require.True(t, outlasts(0.9, 7333, 7333))
	// 3700 then 7333: 300 spare, 283 s to drain.
	require.True(t, outlasts(0.9, 3700, 7333))
	require.True(t, outlasts(0, 3000, 7333))
}
