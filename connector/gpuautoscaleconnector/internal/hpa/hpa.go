// Package hpa computes desired replica counts the way Kubernetes'
// HorizontalPodAutoscaler does, from per-pod metric values instead of the
// metrics API: the replica ratio with its tolerance, the conservative
// treatment of pods without metrics, stabilization windows, scaling
// policies, and min/max. It also has a predictive mode that forecasts the
// load over a lead time with Holt's linear trend.
//
// The algorithm follows the documented one:
// https://kubernetes.io/docs/concepts/workloads/autoscaling/horizontal-pod-autoscale/#algorithm-details
// Time is passed in, so recorded telemetry replays to the same decisions.
package hpa

import (
	"math"
	"time"
)

// PolicyType is a scaling policy's unit.
type PolicyType string

// Policy types.
const (
	Pods    PolicyType = "Pods"
	Percent PolicyType = "Percent"
)

// Policy limits the change within a period.
type Policy struct {
	Type   PolicyType
	Value  int32
	Period time.Duration
}

// Select picks among policies.
type Select string

// Policy selection.
const (
	SelectMax      Select = "Max"
	SelectMin      Select = "Min"
	SelectDisabled Select = "Disabled"
)

// Rules govern one direction.
type Rules struct {
	StabilizationWindow time.Duration
	Policies            []Policy
	Select              Select
	// Tolerance is the relative change of the usage ratio below which
	// nothing happens (Kubernetes' default is 0.1).
	Tolerance float64
}

// Behavior holds the rules of both directions.
type Behavior struct {
	ScaleUp, ScaleDown Rules
}

// DefaultBehavior is Kubernetes' default: scale up at most by 100% or 4
// pods per 15 s, whichever is more, without stabilization; scale down by up
// to 100% per 15 s after a 300 s stabilization window.
func DefaultBehavior() Behavior {
	return Behavior{
		ScaleUp: Rules{
			Policies:  []Policy{{Percent, 100, 15 * time.Second}, {Pods, 4, 15 * time.Second}},
			Select:    SelectMax,
			Tolerance: 0.1,
		},
		ScaleDown: Rules{
			StabilizationWindow: 300 * time.Second,
			Policies:            []Policy{{Percent, 100, 15 * time.Second}},
			Select:              SelectMax,
			Tolerance:           0.1,
		},
	}
}

// Spec is one scale target's settings.
type Spec struct {
	Target      float64 // the metric's target value per pod
	MinReplicas int32
	MaxReplicas int32
	Behavior    Behavior
	// Predictive forecasts the load over LeadTime and scales ahead of it.
	Predictive bool
	LeadTime   time.Duration
	// Alpha and Beta smooth the level and trend of the forecast.
	Alpha, Beta float64
}

// Reason says what decided or limited a recommendation.
type Reason string

// Reasons.
const (
	ReasonScaled          Reason = "Scaled"          // the metric asked for it
	ReasonPredicted       Reason = "Predicted"       // the forecast asked for more than the metric
	ReasonWithinTolerance Reason = "WithinTolerance" // the ratio is within the tolerance
	ReasonMissingMetrics  Reason = "MissingMetrics"  // pods without metrics made the change unsafe
	ReasonNoMetrics       Reason = "NoMetrics"       // no fresh metric at all: hold
	ReasonStabilized      Reason = "Stabilized"      // held back by a stabilization window
	ReasonScaleUpLimit    Reason = "ScaleUpLimit"    // capped by a scale-up policy
	ReasonScaleDownLimit  Reason = "ScaleDownLimit"  // capped by a scale-down policy
	ReasonTooManyReplicas Reason = "TooManyReplicas" // capped at max_replicas
	ReasonTooFewReplicas  Reason = "TooFewReplicas"  // raised to min_replicas
	ReasonScalingDisabled Reason = "ScalingDisabled" // the direction's select policy is Disabled
)

// Observation is one evaluation's input.
type Observation struct {
	Now time.Time
	// Current is the target's replica count (the scale subresource's spec).
	Current int32
	// Values holds one metric value per pod that reported a fresh one.
	Values []float64
}

// Decision is one evaluation's result.
type Decision struct {
	Desired int32
	Reason  Reason
	// Metric is the pods' average value, missing pods excluded.
	Metric float64
	// Forecast is the predicted average per current replica at Now+LeadTime
	// (predictive mode only).
	Forecast float64
	// Recommendation is the replica count before stabilization and policies.
	Recommendation int32
}

type timestamped struct {
	at       time.Time
	replicas int32
}

type scaleEvent struct {
	at     time.Time
	change int32
}

// Autoscaler keeps one target's history: past recommendations for
// stabilization, past scale events for the policies, and the forecast.
type Autoscaler struct {
	spec            Spec
	seeded          bool
	recommendations []timestamped
	ups, downs      []scaleEvent
	holt            holt
}

// New returns an autoscaler for a target.
func New(spec Spec) *Autoscaler {
	if spec.Alpha == 0 {
		spec.Alpha = 0.5
	}
	if spec.Beta == 0 {
		spec.Beta = 0.3
	}
	return &Autoscaler{spec: spec}
}

// Evaluate computes the desired replica count. Call Record after the
// count was applied, so the policies count the change.
func (a *Autoscaler) Evaluate(o Observation) Decision {
	s := &a.spec
	d := Decision{Desired: o.Current}
	current := o.Current
	if len(o.Values) == 0 {
		// Nothing fresh: never act on no data. Still enforce min and max.
		d.Reason = ReasonNoMetrics
		d.Desired = clamp(current, s.MinReplicas, s.MaxReplicas, &d.Reason)
		return d
	}
	sum := 0.0
	for _, v := range o.Values {
		sum += v
	}
	reporting := int32(len(o.Values))
	d.Metric = sum / float64(reporting)

	rec, reason := a.replicaRatio(current, reporting, sum)
	// The forecast follows the load (the metric summed over pods, in pod
	// units of the target) so that it does not jump when replicas change.
	if s.Predictive {
		load := sum / s.Target
		a.holt.observe(o.Now, load, s.Alpha, s.Beta)
		if f, ok := a.holt.forecast(o.Now.Add(s.LeadTime), s.LeadTime); ok {
			if current > 0 {
				d.Forecast = f * s.Target / float64(current)
			}
			if pred := int32(math.Ceil(f - 1e-9)); pred > rec && pred > current {
				rec, reason = pred, ReasonPredicted
			}
		}
	}
	d.Recommendation = rec
	d.Desired, d.Reason = a.normalize(o.Now, current, rec, reason)
	return d
}

// replicaRatio is the HPA's core: desired = ceil(current × usage ratio),
// with the tolerance and the missing-metric rule. Pods without a metric
// count as 0 when scaling up and as exactly on target when scaling down;
// if that flips the direction, or brings the ratio within the tolerance,
// nothing changes.
func (a *Autoscaler) replicaRatio(current, reporting int32, sum float64) (int32, Reason) {
	s := &a.spec
	if current == 0 {
		// Scaled to zero by someone else: the HPA does not act either.
		return 0, ReasonScalingDisabled
	}
	ratio := sum / float64(reporting) / s.Target
	missing := current - reporting
	if missing <= 0 {
		if a.within(ratio) {
			return current, ReasonWithinTolerance
		}
		return int32(math.Ceil(ratio * float64(reporting))), ReasonScaled
	}
	scaleUp := ratio > 1
	if a.within(ratio) {
		return current, ReasonWithinTolerance
	}
	fill := 0.0
	if !scaleUp {
		fill = s.Target
	}
	newRatio := (sum + fill*float64(missing)) / float64(current) / s.Target
	if a.within(newRatio) || (newRatio > 1) != scaleUp {
		return current, ReasonMissingMetrics
	}
	desired := int32(math.Ceil(newRatio * float64(current)))
	if (scaleUp && desired <= current) || (!scaleUp && desired >= current) {
		return current, ReasonMissingMetrics
	}
	return desired, ReasonScaled
}

func (a *Autoscaler) within(ratio float64) bool {
	if ratio >= 1 {
		return ratio-1 <= a.spec.Behavior.ScaleUp.Tolerance
	}
	return 1-ratio <= a.spec.Behavior.ScaleDown.Tolerance
}

// normalize applies the stabilization windows, the scaling policies and the
// min/max bounds, as the HPA does with behaviors.
func (a *Autoscaler) normalize(now time.Time, current, rec int32, reason Reason) (int32, Reason) {
	s := &a.spec
	b := &s.Behavior
	if !a.seeded {
		// Like the HPA controller, start the history with the current count:
		// a restart must not scale down at once.
		a.recommendations = append(a.recommendations, timestamped{now, current})
		a.seeded = true
	}

	// Stabilization: scale up to the lowest recommendation of the up
	// window, down to the highest of the down window.
	up, down := rec, rec
	keep := a.recommendations[:0]
	longest := max(b.ScaleUp.StabilizationWindow, b.ScaleDown.StabilizationWindow)
	for _, r := range a.recommendations {
		age := now.Sub(r.at)
		if age < b.ScaleUp.StabilizationWindow {
			up = min(up, r.replicas)
		}
		if age < b.ScaleDown.StabilizationWindow {
			down = max(down, r.replicas)
		}
		if age < longest {
			keep = append(keep, r)
		}
	}
	a.recommendations = append(keep, timestamped{now, rec})
	desired := current
	if desired < up {
		desired = up
	}
	if desired > down {
		desired = down
	}
	if desired != rec {
		reason = ReasonStabilized
	}

	// Policies and bounds.
	switch {
	case desired > current:
		if b.ScaleUp.Select == SelectDisabled {
			return clamp(current, s.MinReplicas, s.MaxReplicas, ptr(ReasonScalingDisabled)), ReasonScalingDisabled
		}
		limit := max(a.scaleUpLimit(now, current), current)
		if limit < s.MaxReplicas && desired > limit {
			desired, reason = limit, ReasonScaleUpLimit
		}
	case desired < current:
		if b.ScaleDown.Select == SelectDisabled {
			return clamp(current, s.MinReplicas, s.MaxReplicas, ptr(ReasonScalingDisabled)), ReasonScalingDisabled
		}
		limit := min(a.scaleDownLimit(now, current), current)
		if limit > s.MinReplicas && desired < limit {
			desired, reason = limit, ReasonScaleDownLimit
		}
	}
	return clamp(desired, s.MinReplicas, s.MaxReplicas, &reason), reason
}

func ptr(r Reason) *Reason { return &r }

func clamp(n, lo, hi int32, reason *Reason) int32 {
	switch {
	case n > hi:
		*reason = ReasonTooManyReplicas
		return hi
	case n < lo:
		*reason = ReasonTooFewReplicas
		return lo
	}
	return n
}

// changed sums the changes of events within the period before now.
func changed(now time.Time, period time.Duration, events []scaleEvent) int32 {
	var n int32
	for _, e := range events {
		if now.Sub(e.at) < period {
			n += e.change
		}
	}
	return n
}

func (a *Autoscaler) scaleUpLimit(now time.Time, current int32) int32 {
	r := &a.spec.Behavior.ScaleUp
	result := int32(math.MinInt32)
	pick := func(x, y int32) int32 { return max(x, y) }
	if r.Select == SelectMin {
		result, pick = math.MaxInt32, func(x, y int32) int32 { return min(x, y) }
	}
	for _, p := range r.Policies {
		start := current - changed(now, p.Period, a.ups) + changed(now, p.Period, a.downs)
		var proposed int32
		if p.Type == Pods {
			proposed = start + p.Value
		} else {
			// Round up, or a small target could never grow.
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

func (a *Autoscaler) scaleDownLimit(now time.Time, current int32) int32 {
	r := &a.spec.Behavior.ScaleDown
	result := int32(math.MaxInt32)
	pick := func(x, y int32) int32 { return min(x, y) }
	if r.Select == SelectMin {
		result, pick = math.MinInt32, func(x, y int32) int32 { return max(x, y) }
	}
	for _, p := range r.Policies {
		start := current - changed(now, p.Period, a.ups) + changed(now, p.Period, a.downs)
		var proposed int32
		if p.Type == Pods {
			proposed = start - p.Value
		} else {
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// Record notes that the target was scaled from one count to another at
// now, for the policies' periods.
func (a *Autoscaler) Record(now time.Time, from, to int32) {
	longest := time.Duration(0)
	for _, p := range append(append([]Policy(nil), a.spec.Behavior.ScaleUp.Policies...), a.spec.Behavior.ScaleDown.Policies...) {
		longest = max(longest, p.Period)
	}
	prune := func(es []scaleEvent) []scaleEvent {
		keep := es[:0]
		for _, e := range es {
			if now.Sub(e.at) < longest {
				keep = append(keep, e)
			}
		}
		return keep
	}
	a.ups, a.downs = prune(a.ups), prune(a.downs)
	switch {
	case to > from:
		a.ups = append(a.ups, scaleEvent{now, to - from})
	case to < from:
		a.downs = append(a.downs, scaleEvent{now, from - to})
	}
}

// holt is Holt's linear trend method over irregularly spaced observations.
type holt struct {
	level, trend float64 // trend per second
	last         time.Time
	n            int
}

func (h *holt) observe(at time.Time, x, alpha, beta float64) {
	switch h.n {
	case 0:
		h.level = x
	default:
		dt := at.Sub(h.last).Seconds()
		if dt <= 0 {
			return
		}
		prev := h.level
		h.level = alpha*x + (1-alpha)*(h.level+h.trend*dt)
		slope := (h.level - prev) / dt
		if h.n == 1 {
			h.trend = slope
		} else {
			h.trend = beta*slope + (1-beta)*h.trend
		}
	}
	h.last = at
	h.n++
}

// forecast extrapolates the load to a time, once there is a trend. The
// trend is damped (Gardner's damped trend, in continuous time with a time
// constant of tau): a ramp is followed, but a plateau after it is not
// overshot by the full lead time's worth of slope.
func (h *holt) forecast(at time.Time, tau time.Duration) (float64, bool) {
	if h.n < 2 {
		return 0, false
	}
	dt := at.Sub(h.last).Seconds()
	if t := tau.Seconds(); t > 0 {
		dt = t * (1 - math.Exp(-dt/t))
	}
	return max(0, h.level+h.trend*dt), true
}
