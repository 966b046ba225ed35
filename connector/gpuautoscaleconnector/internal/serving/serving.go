// Package serving sizes an inference service for its latency objective
// from what its pods report: the tokens they serve, the requests they
// queue and run, and their KV cache.
//
// Each evaluation it
//
//  1. measures the work arriving, in tokens per second: the tokens the pods
//     generated since the last evaluation (vLLM's generation_tokens_total),
//     plus the growth of their queues when a request's size is known;
//  2. learns a pod's capacity in tokens per second from what busy pods (a
//     queue behind them) actually serve, instead of a configured throughput:
//     NVIDIA Dynamo's planner and TokenScale size by token rate over a pod's
//     token velocity the same way, from offline profiles;
//  3. finds the least capacity that would have kept every queued token's
//     wait under the objective over each recent stretch: work arriving in
//     any window of length w must be served within w plus the allowed
//     wait (the token-bucket condition of a fluid queue; Erlang C and
//     square-root staffing size for random arrivals from a formula, this
//     is measured on the traffic, so it follows the traffic's own bursts);
//  4. forecasts that need over the start-up horizon (the pods asked for now
//     serve only a start-up from now): the peak need over a lookback window,
//     raised by the daily profile once a day of history exists, times an
//     upper quantile of how far the need a start-up later has exceeded such
//     forecasts (Dynamo's planner forecasts one interval ahead with no
//     error term; SageServe takes the peak of a 20 to 60 minute forecast);
//  5. keeps a pod while the forecast says it is needed again before a new
//     one could serve (the ski-rental rule: rent while it costs less than
//     buying back), and never below what the queue and the KV cache ask now;
//     with the calibrated forecast, no ready pod is let go while the queue
//     makes a new request wait past the objective.
//
// References: NVIDIA Dynamo's SLA planner (components/planner, "planner
// design"), Knative's KPA windows (knative.dev/docs/serving/autoscaling),
// SageServe (arXiv 2502.14617), TokenScale (arXiv 2512.03416).
// Time is passed in, so a replay gives the same decisions.
package serving

import (
	"math"
	"slices"
	"time"
)

// Params are the estimator's settings.
type Params struct {
	// SLOWait is the longest a newly arriving request may wait for a pod.
	SLOWait time.Duration
	// Startup is how long a pod takes from being asked for to serving; the
	// estimator raises it to the longest start-up it observes.
	Startup time.Duration
	// Lookback is how far back the peak need is taken; at least Startup.
	Lookback time.Duration
	// Peak is the quantile of the needs over the lookback that forecasts
	// the need (1: their maximum).
	Peak float64
	// BurstCap caps the forecast with its headroom at this multiple of
	// the mean arrival over the lookback (0: no cap). A burst many times
	// the mean is over long before a pod asked for now serves; paying for
	// its peak all the time buys little, so it waits in the queue.
	BurstCap float64
	// Quantile of the forecast's relative error that the headroom covers.
	Quantile float64
	// ErrorHistory is how long matured forecast errors are kept.
	ErrorHistory time.Duration
	// ColdHeadroom multiplies the forecast until enough errors matured.
	ColdHeadroom float64
	// Capacity is a first guess of one pod's tokens per second, used until
	// a busy pod shows what it serves (0: the most any pod served so far).
	Capacity float64
	// RequestTime is how long a request runs once scheduled (vLLM's
	// request_inference_time_seconds, mean): with the running gauge it
	// turns queued requests into tokens (Little's law). 0: queued
	// requests only mark a pod busy.
	RequestTime time.Duration
	// DrainTime is the time in which a backlog is to be served.
	DrainTime time.Duration
	// DownTolerance: the rules must ask for this fraction fewer pods than
	// run before one is let go.
	DownTolerance float64
	// ScaleDownDelay is how long a pod is kept after the rules last asked
	// for it.
	ScaleDownDelay time.Duration
	// KVTarget is the KV cache use per pod to stay under (0: not used).
	KVTarget float64
	// Seasonal turns the daily profile on.
	Seasonal bool
	// Attainment, when above 0, sizes by the calibrated forecast
	// (forecast.go): the share of evaluations whose need a start-up later
	// the provision is to cover. Peak and Quantile are then unused;
	// BurstCap still caps, at a multiple of the lookback's mean.
	Attainment float64
}

// Pod is one ready pod's latest values.
type Pod struct {
	Name string
	// Tokens is the pod's token counter, counting since TokensStart, read
	// at At; HasTokens is false when it reported none.
	Tokens      float64
	TokensStart time.Time
	At          time.Time
	HasTokens   bool
	// Waiting and Running are its queued and running requests.
	Waiting, Running float64
	// KV is its KV cache use (0 to 1), HasKV when reported.
	KV    float64
	HasKV bool
	// Busy are the pod's token rates between consecutive samples that both
	// had requests waiting, since the last evaluation: all it can serve.
	Busy []float64
}

// Observation is what the pods reported at one evaluation.
type Observation struct {
	Now time.Time
	// Pods are the ready pods; Current the pods asked for.
	Pods    []Pod
	Current int
}

// Reasons say which rule decided.
const (
	ReasonForecast = "Forecast" // the SLO rule on the forecast need
	ReasonBacklog  = "Backlog"  // the queue now: drained in DrainTime, or breaking the SLO
	ReasonKV       = "KVCache"  // the KV cache use now
	ReasonHold     = "Hold"     // a pod kept: needed again within a start-up
	ReasonNoData   = "NoData"   // no token rate yet: the pods asked for
)

// Estimate is one evaluation's result, every figure it rests on, for the
// log and gpureplay's lines.
type Estimate struct {
	// Pods is the replicas wanted.
	Pods int
	// Reason names the rule that decided (Reason* constants).
	Reason string
	// Served is the tokens per second the pods served since the last
	// evaluation; Arrival that plus the queue's growth; Backlog the
	// queued tokens (0 without RequestTime).
	Served, Arrival, Backlog float64
	// Capacity is one pod's tokens per second; CapacityFrom says how it is
	// known: CapacityBusy, CapacityObserved (a lower bound) or
	// CapacityConfigured.
	Capacity     float64
	CapacityFrom string
	// Need is the capacity, in tokens per second, that kept every wait of
	// the recent past under the objective; Forecast the need expected a
	// start-up from now (peak over the lookback, daily profile), Headroom
	// the error quantile it is multiplied by.
	Need, Forecast, Headroom float64
	// Seasonal is the daily profile's factor (1 without one).
	Seasonal float64
	// SLOPods, BacklogPods and KVPods are each rule's replicas; Keep the
	// replicas the hold rule keeps.
	SLOPods, BacklogPods, KVPods, Keep int
	// Startup is the start-up horizon in use; Errors how many forecast
	// errors have matured.
	Startup time.Duration
	Errors  int
	// Forecaster names the calibrated forecaster in use (Forecast*).
	Forecaster string
	// Wait is how long a request arriving now would wait for a pod, in
	// seconds: the backlog over the ready pods' capacity. HasWait says it
	// is measured: the backlog is known only with RequestTime.
	Wait    float64
	HasWait bool
}

// interval is one evaluation's measured work.
type interval struct {
	at      time.Time
	seconds float64 // since the previous evaluation
	arrival float64 // tokens per second
	need    float64 // the SLO need of the windows ending here
}

// forecastAt is a forecast made at a time, to be compared with the need
// that came a start-up later.
type forecastAt struct {
	at       time.Time
	forecast float64
}

type counter struct {
	value float64
	start time.Time
	at    time.Time
	rate  float64
}

// Estimator keeps the history of one target.
type Estimator struct {
	p          Params
	counters   map[string]counter
	history    []interval   // within Lookback plus the longest window
	pending    []forecastAt // forecasts not yet matured
	errors     []ratioAt    // matured forecast errors, within ErrorHistory
	sorted     []float64
	capacity   float64 // from busy pods; 0 until one was busy
	observed   float64 // the most one pod served
	backlog    float64 // queued tokens at the last evaluation
	last       time.Time
	first      time.Time
	startup    time.Duration
	day        *profile
	wants      []wantAt // the rules' replicas within the scale-down delay
	cal        *calibrated
	provisions []provisionAt // the calibrated provisions of the last start-up
}

type wantAt struct {
	at time.Time
	n  int
}

type ratioAt struct {
	at    time.Time
	ratio float64
}

// New returns an estimator.
func New(p Params) *Estimator {
	e := &Estimator{p: p, counters: map[string]counter{}, startup: p.Startup}
	if p.Seasonal {
		e.day = &profile{}
	}
	if p.Attainment > 0 {
		e.cal = newCalibrated()
	}
	return e
}

// ObserveStartup reports one pod's start-up as observed: the horizon is
// the longest seen, never below the configured one.
func (e *Estimator) ObserveStartup(d time.Duration) {
	e.startup = max(e.startup, d)
}

// windowMax is the longest window of the token-bucket rule: beyond a few
// minutes, a window's mean is what sizes, and the lookback covers it.
const windowMax = 10 * time.Minute

// Observe adds an observation and returns the replicas wanted.
func (e *Estimator) Observe(o Observation) Estimate {
	p := &e.p
	est := Estimate{Startup: e.startup, Headroom: 1, Seasonal: 1}
	served, rated, busyRates, backlog := e.measure(o)
	if rated == 0 {
		est.Pods, est.Reason = max(o.Current, 1), ReasonNoData
		return est
	}
	// Pods without a rate yet (just ready) serve like the others.
	served *= float64(len(o.Pods)) / float64(rated)
	e.learnCapacity(busyRates)
	est.Capacity, est.CapacityFrom = e.podCapacity()

	seconds := 0.0
	if !e.last.IsZero() {
		seconds = o.Now.Sub(e.last).Seconds()
	}
	arrival := served
	if seconds > 0 && p.RequestTime > 0 {
		arrival = max(0, served+(backlog-e.backlog)/seconds)
	}
	e.last, e.backlog = o.Now, backlog
	est.Served, est.Arrival, est.Backlog = served, arrival, backlog
	if seconds <= 0 {
		// The first evaluation: its rate covers an unknown span.
		seconds = 15
	}
	e.history = append(e.history, interval{at: o.Now, seconds: seconds, arrival: arrival})
	need := e.need()
	e.history[len(e.history)-1].need = need
	e.forget(o.Now)
	if e.day != nil {
		e.day.add(o.Now, arrival, seconds)
	}

	var sized float64
	if e.cal != nil {
		sized = e.calibratedForecast(o.Now, need, &est)
	} else {
		sized = e.peakForecast(o.Now, need, &est)
	}
	c := est.Capacity
	// Without RequestTime the backlog is 0: no wait, and none measured.
	wait := waitBehind(len(o.Pods), c, backlog)
	est.Wait, est.HasWait = wait, p.RequestTime > 0
	if e.cal != nil && est.CapacityFrom == CapacityObserved {
		// No pod had a queue yet, so a pod can serve at least the most
		// one served: the need against that is already an upper bound,
		// and the pods ready now kept up with it. Headroom on it asks for
		// pods only the lower bound needs; a queue, when one forms, shows
		// the real capacity and the backlog rule asks for pods.
		sized = min(sized, need)
	}
	est.SLOPods = pods(sized / c)
	// The queue now: the arrival plus the backlog served within DrainTime.
	est.BacklogPods = pods((arrival + backlog/max(p.DrainTime.Seconds(), 1)) / c)
	if p.KVTarget > 0 {
		kv, n := 0.0, 0
		for _, pod := range o.Pods {
			if pod.HasKV {
				kv += pod.KV
				n++
			}
		}
		if n > 0 {
			// Pods without a value hold as much as the average.
			est.KVPods = pods(kv * float64(len(o.Pods)) / float64(n) / p.KVTarget)
		}
	}
	want, reason := est.SLOPods, ReasonForecast
	if want < o.Current {
		// Scale down only past a tolerance, so that a forecast or a
		// capacity estimate that hovers at a pod's edge does not let a pod
		// go and ask for it again, a start-up later, over and over.
		want = min(o.Current, pods(sized*(1+p.DownTolerance)/c))
		// Two cases in which the calibrated mode lets no ready pod go.
		// A fresh estimator: the hold keeps the largest provision of the
		// last start-up, and one that began within it knows none; the pods
		// it found were asked for in it as far as it can tell, and nothing
		// measured says one let go now, which cannot be back before a
		// start-up, will not be missed. A queue past the objective: a ready
		// pod drains it, letting one go only makes the breach last longer,
		// and a pod asked back pays a start-up.
		if ready := min(o.Current, len(o.Pods)); e.cal != nil && ready > want {
			switch {
			case o.Now.Sub(e.first) < e.startup:
				want, reason = ready, ReasonHold
			case wait > p.SLOWait.Seconds():
				want, reason = ready, ReasonBacklog
			}
		}
	}
	if est.BacklogPods > want && e.queueOutlasts(rated, c, arrival, backlog) {
		want, reason = est.BacklogPods, ReasonBacklog
	}
	if est.KVPods > want {
		want, reason = est.KVPods, ReasonKV
	}
	want = max(want, 1)
	// The hold: a pod is let go only when no rule asked for it within
	// the scale-down delay (Knative's scale-down-delay, a maximum over a
	// trailing window): a pod let go and asked for again pays a whole
	// start-up. The forecast is already the lookback's peak.
	e.wants = append(e.wants, wantAt{o.Now, want})
	for len(e.wants) > 1 && o.Now.Sub(e.wants[0].at) > p.ScaleDownDelay {
		e.wants = e.wants[1:]
	}
	est.Keep = want
	for _, w := range e.wants {
		est.Keep = max(est.Keep, w.n)
	}
	if est.Keep > want && o.Current > want {
		want, reason = min(est.Keep, o.Current), ReasonHold
	}
	est.Pods, est.Reason = want, reason
	return est
}

// pods is the replicas that serve x pods of work: x rounded up, with float
// noise from the sums ignored.
func pods(x float64) int {
	if !(x > 0) || math.IsInf(x, 0) {
		return 0
	}
	return int(math.Ceil(x * (1 - 1e-9)))
}

// measure reads the pods' token counters: the tokens per second served
// since each pod's previous reading, summed; the rates of the busy pods
// (a queue behind them); and the queued tokens.
func (e *Estimator) measure(o Observation) (served float64, rated int, busy []float64, backlog float64) {
	seen := make(map[string]bool, len(o.Pods))
	var unratedWaiting, requestTokens, running float64
	for _, pod := range o.Pods {
		seen[pod.Name] = true
		if !pod.HasTokens {
			continue
		}
		prev, ok := e.counters[pod.Name]
		c := counter{value: pod.Tokens, start: pod.TokensStart, at: pod.At, rate: -1}
		switch {
		case ok && prev.start.Equal(pod.TokensStart) && pod.At.After(prev.at) && pod.Tokens >= prev.value:
			c.rate = (pod.Tokens - prev.value) / pod.At.Sub(prev.at).Seconds()
		case ok && pod.At.Equal(prev.at):
			// No new sample: the previous rate stands.
			c = prev
		case !pod.TokensStart.IsZero() && pod.At.After(pod.TokensStart) && (!ok || !prev.start.Equal(pod.TokensStart)):
			// A new pod, or a restarted counter: its rate since its start.
			c.rate = pod.Tokens / pod.At.Sub(pod.TokensStart).Seconds()
		}
		e.counters[pod.Name] = c
		if c.rate < 0 {
			unratedWaiting += pod.Waiting
			continue
		}
		served += c.rate
		rated++
		e.observed = max(e.observed, c.rate)
		busy = append(busy, pod.Busy...)
		if e.p.RequestTime > 0 && pod.Running > 0 {
			// Little's law: running requests finish every RequestTime, so
			// one is rate × RequestTime / running tokens.
			perRequest := c.rate * e.p.RequestTime.Seconds() / pod.Running
			backlog += pod.Waiting * perRequest
			requestTokens += perRequest * pod.Running
			running += pod.Running
		}
	}
	if unratedWaiting > 0 && running > 0 {
		// A pod without a rate yet (just ready, its counter at its start)
		// still reports its queue; its requests are the size of the
		// others'. Leaving its queue out would make the backlog dip while
		// it starts and jump back an evaluation later, which reads as a
		// burst of arrivals that never came.
		backlog += unratedWaiting * requestTokens / running
	}
	for name := range e.counters {
		if !seen[name] {
			delete(e.counters, name)
		}
	}
	return served, rated, busy, backlog
}

// learnCapacity moves the capacity towards the median rate of the busy
// pods: a pod with a queue serves all it can.
func (e *Estimator) learnCapacity(busy []float64) {
	if len(busy) == 0 {
		return
	}
	slices.Sort(busy)
	m := busy[len(busy)/2]
	if len(busy)%2 == 0 {
		m = (busy[len(busy)/2-1] + m) / 2
	}
	if e.capacity == 0 {
		e.capacity = m
		return
	}
	const alpha = 0.2
	e.capacity += alpha * (m - e.capacity)
}

// Where a pod's capacity comes from, as Estimate.CapacityFrom says.
const (
	CapacityBusy       = "busy"       // learnt from pods with a queue
	CapacityConfigured = "configured" // the user's pod_capacity
	CapacityObserved   = "observed"   // the most one pod served: a lower bound
)

// podCapacity is one pod's tokens per second and where it comes from.
func (e *Estimator) podCapacity() (float64, string) {
	switch {
	case e.capacity > 0:
		// Only busy pods say what a pod can serve: a pod without a queue
		// that served more is a faster one, not the typical one.
		return e.capacity, CapacityBusy
	case e.p.Capacity > 0 && e.p.Capacity >= e.observed:
		return e.p.Capacity, CapacityConfigured
	}
	return max(e.observed, 1e-9), CapacityObserved
}

// need is the token-bucket rule over the windows ending at the latest
// interval: the least rate r with work(w) ≤ r × (w + SLOWait) for every
// window w up to windowMax.
func (e *Estimator) need() float64 {
	slo := e.p.SLOWait.Seconds()
	work, span, need := 0.0, 0.0, 0.0
	for i := len(e.history) - 1; i >= 0 && span < windowMax.Seconds(); i-- {
		h := e.history[i]
		work += h.arrival * h.seconds
		span += h.seconds
		need = max(need, work/(span+slo))
	}
	return need
}

// mean is the mean arrival over the lookback.
func (e *Estimator) mean(now time.Time) float64 {
	work, secs := 0.0, 0.0
	for _, h := range e.history {
		if now.Sub(h.at) <= e.lookback() {
			work += h.arrival * h.seconds
			secs += h.seconds
		}
	}
	if secs == 0 {
		return 0
	}
	return work / secs
}

// peak is the Peak quantile of the needs over the lookback.
func (e *Estimator) peak(now time.Time) float64 {
	e.sorted = e.sorted[:0]
	for _, h := range e.history {
		if now.Sub(h.at) <= e.lookback() {
			e.sorted = append(e.sorted, h.need)
		}
	}
	return quantile(e.sorted, e.p.Peak)
}

// quantile sorts xs and returns its q quantile (nearest rank), 0 if empty.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

func (e *Estimator) lookback() time.Duration { return max(e.p.Lookback, e.startup) }

// forget drops what no rule reads any more.
func (e *Estimator) forget(now time.Time) {
	keep := e.lookback() + windowMax
	i := 0
	for i < len(e.history)-1 && now.Sub(e.history[i].at) > keep {
		i++
	}
	e.history = e.history[i:]
	j := 0
	for j < len(e.errors) && now.Sub(e.errors[j].at) > e.p.ErrorHistory {
		j++
	}
	e.errors = e.errors[j:]
}

// mature compares the forecasts made a start-up ago with the need now.
func (e *Estimator) mature(now time.Time, need float64) {
	i := 0
	for i < len(e.pending) && now.Sub(e.pending[i].at) >= e.startup {
		f := e.pending[i]
		i++
		if f.forecast <= 0 {
			continue
		}
		e.errors = append(e.errors, ratioAt{now, need / f.forecast})
	}
	e.pending = e.pending[i:]
}

// minErrors is how many matured errors the quantile needs.
const minErrors = 20

// headroom is the Quantile of the matured errors' ratios, at least 1, or
// ColdHeadroom before there are enough.
func (e *Estimator) headroom() float64 {
	if len(e.errors) < minErrors {
		return max(1, e.p.ColdHeadroom)
	}
	e.sorted = e.sorted[:0]
	for _, r := range e.errors {
		e.sorted = append(e.sorted, r.ratio)
	}
	return max(1, quantile(e.sorted, e.p.Quantile))
}

// peakForecast is the lookback's peak need, shaped by the day, times the
// quantile of its matured errors, capped by BurstCap.
func (e *Estimator) peakForecast(now time.Time, need float64, est *Estimate) float64 {
	p := &e.p
	// The forecast: the peak need of the lookback, shaped by the day.
	forecast := e.peak(now)
	if e.day != nil {
		est.Seasonal = e.day.factor(now, e.lookback(), e.startup+e.lookback())
		forecast *= est.Seasonal
	}
	e.mature(now, need)
	if !e.first.IsZero() && now.Sub(e.first) >= e.lookback() {
		// A forecast from less than a lookback of history says nothing of
		// the forecasts to come.
		e.pending = append(e.pending, forecastAt{now, forecast})
	}
	if e.first.IsZero() {
		e.first = now
	}
	est.Need, est.Forecast, est.Errors = need, forecast, len(e.errors)
	est.Headroom = e.headroom()
	sized := est.Headroom * forecast
	if p.BurstCap > 0 {
		sized = min(sized, p.BurstCap*e.mean(now)*est.Seasonal)
	}
	return sized
}
