// Package serving sizes an inference service from what its pods report:
// the work they serve and the requests waiting in their queues. It
// estimates the arrival rate as served work plus the queue's growth, the
// way Knative's autoscaler counts queued requests as demand, over a stable
// window, and reacts to bursts through a short panic window with Knative's
// panic threshold. The backlog adds the pods that drain it within a set
// time.
//
// Knative's Pod Autoscaler, whose windows and threshold this follows:
// https://knative.dev/docs/serving/autoscaling/kpa-specific/
// Time is passed in, so a replay gives the same decisions.
package serving

import (
	"math"
	"slices"
	"time"
)

// Params are the estimator's settings.
type Params struct {
	// Target is the load metric's value per pod to size for (SM activity
	// of 0.8, say); the metric reads about 1.0 for a pod at full load.
	Target float64
	// PodThroughput is the requests per second one pod serves at full
	// load: it turns queued requests into pod-seconds of work.
	PodThroughput float64
	// StableWindow averages the arrival rate for ordinary decisions
	// (Knative: 60 s).
	StableWindow time.Duration
	// PanicWindow is the short window that sees a burst (Knative: 6 s,
	// 10 % of the stable window); at least one evaluation interval here.
	PanicWindow time.Duration
	// PanicThreshold: when the panic window asks for this multiple of the
	// ready pods or more, its estimate is used (Knative: 2.0, 200 %).
	PanicThreshold float64
	// DrainTime is the time in which the backlog is to be served: the
	// backlog adds backlog / DrainTime pods of work.
	DrainTime time.Duration
	// HeadroomWindow and HeadroomQuantile size the headroom: the capacity
	// covers this quantile of the arrival rates measured over each
	// interval of the window. Set the window to at least the pods'
	// start-up time: demand can vary that much before new pods serve.
	HeadroomWindow   time.Duration
	HeadroomQuantile float64
	// HeadroomMaxRatio caps the headroom and the panic window's estimate
	// at this multiple of the mean interval arrival rate of the headroom
	// window (0: no cap). A burst far above the mean is over before a pod
	// that takes minutes to start serves it: paying for its peak all the
	// time buys little service, so the queue absorbs it and the drain
	// term serves it. The stable window's rate is never capped.
	HeadroomMaxRatio float64
}

// Observation is what the pods reported at one evaluation.
type Observation struct {
	Now time.Time
	// Ready is how many pods reported fresh values.
	Ready int
	// Load is the sum of the load metric over the pods (about 1.0 per pod
	// at full load).
	Load float64
	// Waiting is the sum of the requests waiting over the pods.
	Waiting float64
}

// Estimate is one evaluation's result.
type Estimate struct {
	// Pods is the capacity wanted, in pods at the target (not rounded).
	Pods float64
	// Arrival is the estimated work arriving per second, in pods at full
	// load; Backlog the work waiting, in pod-seconds.
	Arrival, Backlog float64
	// Panic says the panic window asked for at least the threshold times
	// the ready pods (Knative's panic mode).
	Panic bool
}

type point struct {
	at            time.Time
	load, backlog float64
}

type rate struct {
	at      time.Time
	arrival float64
}

// Estimator keeps the history of one target.
type Estimator struct {
	p       Params
	history []point
	rates   []rate // the arrival rate over each interval, for the headroom
	sorted  []float64
}

// New returns an estimator.
func New(p Params) *Estimator { return &Estimator{p: p} }

// Observe adds an observation and returns the capacity wanted.
func (e *Estimator) Observe(o Observation) Estimate {
	p := &e.p
	backlog := o.Waiting / p.PodThroughput
	e.history = append(e.history, point{o.Now, o.Load, backlog})
	// Keep the windows and the observation just before them, from which
	// the growth is measured.
	keep := 0
	for i, h := range e.history {
		if o.Now.Sub(h.at) <= max(p.StableWindow, p.PanicWindow) {
			keep = max(i-1, 0)
			break
		}
	}
	e.history = e.history[keep:]

	// The stable window's rate, or the headroom's when higher.
	arrival := e.arrival(o.Now, p.StableWindow)
	panicking := e.arrival(o.Now, p.PanicWindow)
	if len(e.history) > 1 {
		e.rates = append(e.rates, rate{o.Now, e.arrival(o.Now, 0)})
	}
	for len(e.rates) > 0 && o.Now.Sub(e.rates[0].at) > p.HeadroomWindow {
		e.rates = e.rates[1:]
	}
	headroom, limit := e.quantile(), e.limit()
	arrival = max(arrival, min(headroom, limit))
	panicking = min(panicking, max(arrival, limit))
	drain := backlog / max(p.DrainTime.Seconds(), 1)
	est := Estimate{Arrival: arrival, Backlog: backlog}
	est.Pods = (arrival + drain) / p.Target
	// Knative panics when the panic window asks for the threshold times
	// the ready pods, and then provisions for the larger of the two.
	if panicPods := (panicking + drain) / p.Target; o.Ready > 0 && panicPods >= p.PanicThreshold*float64(o.Ready) {
		est.Panic = true
		if panicPods > est.Pods {
			est.Pods, est.Arrival = panicPods, panicking
		}
	}
	return est
}

// arrival estimates the work arriving per second over the window before
// now: the average load served plus the backlog's growth (Little's
// balance: what arrives is served or waits).
func (e *Estimator) arrival(now time.Time, window time.Duration) float64 {
	last := e.history[len(e.history)-1]
	first := len(e.history) - 1
	for i := len(e.history) - 2; i >= 0; i-- {
		if now.Sub(e.history[i].at) > window {
			break
		}
		first = i
	}
	// The served load, averaged over the window's observations; the
	// growth, since the observation just before the window.
	sum := 0.0
	for _, h := range e.history[first:] {
		sum += h.load
	}
	served := sum / float64(len(e.history)-first)
	from := max(first-1, 0)
	growth := 0.0
	if dt := last.at.Sub(e.history[from].at).Seconds(); dt > 0 {
		growth = (last.backlog - e.history[from].backlog) / dt
	}
	return math.Max(0, served+growth)
}

// limit is HeadroomMaxRatio times the mean interval arrival rate of the
// headroom window, +Inf without a cap or a rate.
func (e *Estimator) limit() float64 {
	if e.p.HeadroomMaxRatio <= 0 || len(e.rates) == 0 {
		return math.Inf(1)
	}
	sum := 0.0
	for _, r := range e.rates {
		sum += r.arrival
	}
	return e.p.HeadroomMaxRatio * sum / float64(len(e.rates))
}

// quantile is the headroom quantile of the interval arrival rates of the
// headroom window (nearest rank), 0 without any.
func (e *Estimator) quantile() float64 {
	if len(e.rates) == 0 || e.p.HeadroomQuantile <= 0 {
		return 0
	}
	e.sorted = e.sorted[:0]
	for _, r := range e.rates {
		e.sorted = append(e.sorted, r.arrival)
	}
	slices.Sort(e.sorted)
	i := int(math.Ceil(e.p.HeadroomQuantile*float64(len(e.sorted)))) - 1
	return e.sorted[min(max(i, 0), len(e.sorted)-1)]
}
