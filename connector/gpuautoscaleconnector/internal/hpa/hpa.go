// Package hpa computes desired replica counts exactly as Kubernetes'
// HorizontalPodAutoscaler controller does for Pods metrics with an
// AverageValue target and a behavior (Kubernetes 1.33 and later, with
// per-direction tolerances, KEP-4951), from per-pod values handed in
// instead of read from the metrics API. On top of it, a predictive mode
// may raise the recommendation (predictive.go).
//
// The rules, and the upstream code they follow
// (kubernetes/kubernetes, pkg/controller/podautoscaler):
//
//   - horizontal.go, reconcileAutoscaler: the first reconcile records the
//     current count as a recommendation; a target scaled to 0 with a
//     non-zero minimum is left alone; a count outside [min, max] goes
//     straight to the bound, without metrics and without a recommendation.
//   - horizontal.go, computeReplicasForMetrics: each metric proposes a
//     count and the largest wins; when every metric is invalid, or some are
//     and the valid ones would scale down, nothing happens.
//   - replica_calculator.go, calcPlainMetricReplicas and groupPods: values
//     in whole milli-units, their average rounded down; the per-direction
//     tolerance, read as tolerancesForHpa (horizontal.go) reads its
//     quantity; pods being deleted or failed ignored, pending pods unready,
//     pods without a value missing, and the conservative fill-in of both.
//   - A pod's value from its series (PodValue): in milli-units, combined in
//     integers, as a metrics adapter hands them to the HPA.
//   - horizontal.go, stabilizeRecommendationWithBehaviors,
//     convertDesiredReplicasWithBehaviorRate, storeScaleEvent: the
//     stabilization windows and the scaling policies, with upstream's way of
//     keeping (and reusing) past recommendations and scale events.
//
// Time is passed in, so that recorded telemetry replays to the same
// decisions.
package hpa

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
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
	// Tolerance is how far the usage ratio may move from 1 in this
	// direction without a change (Kubernetes' default is 0.1).
	Tolerance float64
}

// Behavior holds the rules of both directions.
type Behavior struct {
	ScaleUp, ScaleDown Rules
}

// DefaultBehavior is Kubernetes' default behavior: scale up at most by 100%
// or 4 pods per 15 s, whichever is more, without stabilization; scale down by
// up to 100% per 15 s after a 300 s stabilization window; tolerance 0.1.
func DefaultBehavior() Behavior {
	return Behavior{
		ScaleUp: Rules{
			Policies:  []Policy{{Pods, 4, 15 * time.Second}, {Percent, 100, 15 * time.Second}},
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

// Metric is one metric to scale on: its target is the average value per pod.
type Metric struct {
	Name   string
	Target float64
}

// Spec is one scale target's settings.
type Spec struct {
	Metrics     []Metric
	MinReplicas int32
	MaxReplicas int32
	Behavior    Behavior
	// Predictive forecasts the load over LeadTime and scales ahead of it.
	Predictive bool
	LeadTime   time.Duration
	// Alpha and Beta smooth the level and trend of the forecast.
	Alpha, Beta float64
}

// Phase is a pod's phase, as in its status.
type Phase string

// Pod phases.
const (
	Pending   Phase = "Pending"
	Running   Phase = "Running"
	Succeeded Phase = "Succeeded"
	Failed    Phase = "Failed"
	Unknown   Phase = "Unknown"
)

// Pod is one of the target's pods, as its selector lists them.
type Pod struct {
	Name  string
	Phase Phase
	// Deleting is true once the pod has a deletion timestamp.
	Deleting bool
}

// Reason says what decided or limited a recommendation.
type Reason string

// Reasons.
const (
	ReasonScaled          Reason = "Scaled"          // the metric asked for it
	ReasonPredicted       Reason = "Predicted"       // the forecast asked for more than the metrics
	ReasonWithinTolerance Reason = "WithinTolerance" // the ratio is within the tolerance
	ReasonMissingMetrics  Reason = "MissingMetrics"  // pods without metrics made the change unsafe
	ReasonNoMetrics       Reason = "NoMetrics"       // no metric could propose a count: hold
	ReasonInvalidMetrics  Reason = "InvalidMetrics"  // some metrics could not, and the others would scale down: hold
	ReasonStabilized      Reason = "Stabilized"      // held back by a stabilization window
	ReasonScaleUpLimit    Reason = "ScaleUpLimit"    // capped by a scale-up policy
	ReasonScaleDownLimit  Reason = "ScaleDownLimit"  // capped by a scale-down policy
	ReasonTooManyReplicas Reason = "TooManyReplicas" // capped at max_replicas
	ReasonTooFewReplicas  Reason = "TooFewReplicas"  // raised to min_replicas
	ReasonScalingDisabled Reason = "ScalingDisabled" // scaled to 0 by someone else, or the direction's select policy is Disabled
)

// Observation is one evaluation's input.
type Observation struct {
	Now time.Time
	// Current is the target's replica count (the scale subresource's spec).
	Current int32
	// Pods are the pods the target's selector lists now.
	Pods []Pod
	// Values holds, for each metric of the spec in order, the latest fresh
	// value of each pod that has one, by pod name. Values of pods that are
	// not in Pods are not used: a pod removed by a scale-down is gone.
	Values []map[string]float64
}

// Proposal is what one metric asks for.
type Proposal struct {
	Metric   string
	Replicas int32
	// Value is the pods' average as the HPA computes it: whole milli-units,
	// rounded down.
	Value float64
	// Reason is Scaled, WithinTolerance or MissingMetrics.
	Reason Reason
	// Err says why the metric could not propose a count (no pods, or no
	// value from any ready pod); Replicas is then meaningless.
	Err error
}

// Decision is one evaluation's result.
type Decision struct {
	Desired int32
	Reason  Reason
	// Metric names the metric whose proposal won, and Value is its average
	// per pod; empty and 0 when no metric was consulted.
	Metric string
	Value  float64
	// Proposals holds every metric's proposal, in the spec's order; nil when
	// the metrics were not consulted (current count 0 or outside the bounds).
	Proposals []Proposal
	// Recommendation is the replica count before stabilization and policies.
	Recommendation int32
	// Forecast is the predicted average per current replica at Now+LeadTime
	// (predictive mode only).
	Forecast float64
}

type recommendation struct {
	replicas int32
	at       time.Time
}

type scaleEvent struct {
	change   int32 // absolute, non-negative
	at       time.Time
	outdated bool
}

// Autoscaler keeps one target's history: past recommendations for
// stabilization, past scale events for the policies, and the forecast.
type Autoscaler struct {
	spec            Spec
	recommendations []recommendation
	ups, downs      []scaleEvent
	holt            holt
}

// New returns an autoscaler for a target. Its tolerances are taken as the
// controller reads them (Tolerance).
func New(spec Spec) *Autoscaler {
	spec.Behavior.ScaleUp.Tolerance = Tolerance(spec.Behavior.ScaleUp.Tolerance)
	spec.Behavior.ScaleDown.Tolerance = Tolerance(spec.Behavior.ScaleDown.Tolerance)
	if spec.Alpha == 0 {
		spec.Alpha = 0.5
	}
	if spec.Beta == 0 {
		spec.Beta = 0.3
	}
	return &Autoscaler{spec: spec}
}

// Evaluate computes the desired replica count, as one reconcile of the HPA
// controller does. When the caller applies a change it calls Record, so
// that the policies count it.
func (a *Autoscaler) Evaluate(o Observation) Decision {
	s := &a.spec
	current := o.Current
	// reconcileAutoscaler -> recordInitialRecommendation: before anything
	// else, so a restart never scales down at once.
	if a.recommendations == nil {
		a.recommendations = []recommendation{{current, o.Now}}
	}
	switch {
	case current == 0 && s.MinReplicas != 0:
		// "scaling is disabled since the replica count of the target is zero"
		return Decision{Desired: 0, Reason: ReasonScalingDisabled}
	case current > s.MaxReplicas:
		return Decision{Desired: s.MaxReplicas, Reason: ReasonTooManyReplicas, Recommendation: s.MaxReplicas}
	case current < s.MinReplicas:
		return Decision{Desired: s.MinReplicas, Reason: ReasonTooFewReplicas, Recommendation: s.MinReplicas}
	}

	d := Decision{Desired: current}
	d.Proposals = make([]Proposal, len(s.Metrics))
	invalid := 0
	var replicas int32
	winner := -1
	for i, m := range s.Metrics {
		var values map[string]float64
		if i < len(o.Values) {
			values = o.Values[i]
		}
		p := a.propose(current, o.Pods, values, m)
		d.Proposals[i] = p
		if p.Err != nil {
			invalid++
			continue
		}
		// computeReplicasForMetrics: the largest proposal wins.
		if replicas == 0 || p.Replicas > replicas {
			replicas, winner = p.Replicas, i
		}
	}
	if invalid >= len(s.Metrics) {
		d.Reason = ReasonNoMetrics
		return d
	}
	if invalid > 0 && replicas < current {
		d.Reason = ReasonInvalidMetrics
		return d
	}
	w := d.Proposals[winner]
	d.Metric, d.Value = w.Metric, w.Value
	reason := w.Reason
	desired := max(replicas, 0)
	if s.Predictive {
		desired, reason = a.predict(o, &d, desired, reason)
	}
	d.Recommendation = desired
	d.Desired, d.Reason = a.normalize(o.Now, current, desired, reason)
	return d
}

// errNoPods and errNoValues are upstream's two reasons for which a Pods
// metric cannot propose a count.
var (
	errNoPods   = errors.New("no pods returned by selector while calculating replica count")
	errNoValues = errors.New("did not receive metrics for targeted pods (pods might be unready)")
)

// propose is calcPlainMetricReplicas with groupPods, for one metric.
func (a *Autoscaler) propose(current int32, pods []Pod, values map[string]float64, m Metric) Proposal {
	p := Proposal{Metric: m.Name}
	if len(pods) == 0 {
		p.Err = errNoPods
		return p
	}
	target := Milli(m.Target)
	metrics := make(map[string]int64, len(pods))
	var ready int
	var unready, missing []string
	for _, pod := range pods {
		switch {
		case pod.Deleting || pod.Phase == Failed:
			continue // ignored
		case pod.Phase == Pending:
			unready = append(unready, pod.Name)
			continue
		}
		v, ok := values[pod.Name]
		if !ok {
			missing = append(missing, pod.Name)
			continue
		}
		metrics[pod.Name] = Milli(v)
		ready++
	}
	if len(metrics) == 0 {
		p.Err = errNoValues
		return p
	}
	ratio, usage := usageRatio(metrics, target)
	p.Value = float64(usage) / 1000
	tol := a.tolerances()
	scaleUpWithUnready := len(unready) > 0 && ratio > 1.0
	if !scaleUpWithUnready && len(missing) == 0 {
		if tol.within(ratio) {
			p.Replicas, p.Reason = current, ReasonWithinTolerance
			return p
		}
		p.Replicas, p.Reason = int32(math.Ceil(ratio*float64(ready))), ReasonScaled
		return p
	}
	if len(missing) > 0 {
		// Missing pods use exactly the target on a scale-down, nothing on a
		// scale-up; at a ratio of exactly 1 they are left out.
		for _, name := range missing {
			if ratio < 1.0 {
				metrics[name] = target
			} else if ratio > 1.0 {
				metrics[name] = 0
			}
		}
	}
	if scaleUpWithUnready {
		for _, name := range unready {
			metrics[name] = 0
		}
	}
	newRatio, _ := usageRatio(metrics, target)
	if tol.within(newRatio) || (ratio < 1.0 && newRatio > 1.0) || (ratio > 1.0 && newRatio < 1.0) {
		p.Replicas, p.Reason = current, ReasonMissingMetrics
		return p
	}
	n := int32(math.Ceil(newRatio * float64(len(metrics))))
	if n == current || (newRatio < 1.0 && n > current) || (newRatio > 1.0 && n < current) {
		p.Replicas, p.Reason = current, ReasonMissingMetrics
		return p
	}
	p.Replicas, p.Reason = n, ReasonScaled
	return p
}

// usageRatio is GetMetricUsageRatio: the average in milli-units, rounded
// down by integer division, over the target.
func usageRatio(metrics map[string]int64, target int64) (float64, int64) {
	var total int64
	for _, v := range metrics {
		total += v
	}
	usage := total / int64(len(metrics))
	return float64(usage) / float64(target), usage
}

// PodValue combines one pod's samples of a metric (its GPUs, or its
// series) into the value the HPA reads for the pod, as a metrics adapter
// hands it over: each sample a quantity in whole milli-units (Milli), then
// combined in integers: "sum", "max", or the mean ("avg", the default)
// truncated by integer division, as GetMetricUsageRatio
// (metrics/utilization.go, called by calcPlainMetricReplicas) truncates the
// mean of the pods. It returns units, and
// Milli reads the result back as exactly that many milli-units.
//
// Float arithmetic would not do: three GPUs at 0.792 average to
// 0.7920000000000001 in float64, which a quantity reads as 793m.
//
// A single sample is returned as it is: the HPA reads it the same way, and
// the predictive and serving modes, which use the values as loads, keep its
// precision.
func PodValue(aggregation string, samples []float64) float64 {
	switch len(samples) {
	case 0:
		return 0
	case 1:
		return samples[0]
	}
	var sum, top int64
	for i, v := range samples {
		m := Milli(v)
		sum += m
		if i == 0 || m > top {
			top = m
		}
	}
	var m int64
	switch aggregation {
	case "max":
		m = top
	case "sum":
		m = sum
	default:
		m = sum / int64(len(samples))
	}
	return float64(m) / 1000
}

// Milli converts a value to whole milli-units as a Kubernetes quantity
// does: the value's shortest decimal form, rounded up (away from zero) to a
// milli-unit, as resource.Quantity.MilliValue rounds. 0.54 is exactly 540,
// not the 540.0000000000001 of float arithmetic.
func Milli(v float64) int64 {
	switch {
	case math.IsNaN(v):
		return 0
	case v >= math.MaxInt64/1000:
		return math.MaxInt64
	case v <= math.MinInt64/1000:
		return math.MinInt64
	}
	s := strconv.FormatFloat(math.Abs(v), 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	w, _ := strconv.ParseInt(whole, 10, 64)
	f, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
	n := w*1000 + f
	if len(frac) > 3 && strings.Trim(frac[3:], "0") != "" {
		n++
	}
	if v < 0 {
		return -n
	}
	return n
}

// Tolerance is a tolerance as the HPA controller uses it. An HPA's
// behavior.scaleUp/scaleDown.tolerance is a resource.Quantity: the API
// server stores it in canonical form (0.41 as "410m"), and tolerancesForHpa
// (horizontal.go) reads it with AsApproximateFloat64, mantissa x 10^exponent,
// 410 x 0.001 = 0.41000000000000003 in float64. The difference decides at
// the bound: 590m against 1 is a ratio of 0.59, within 1 - 0.41000000000000003
// (0.59) but not within 1 - 0.41 (0.5900000000000001). The controller's
// default, the --horizontal-pod-autoscaler-tolerance flag, is a float64,
// 0.1, which this reads unchanged.
func Tolerance(v float64) float64 {
	q, err := resource.ParseQuantity(strconv.FormatFloat(v, 'f', -1, 64))
	if err != nil {
		return v // not finite: configuration validation rejects it first
	}
	stored, err := resource.ParseQuantity(q.String())
	if err != nil {
		return v
	}
	return stored.AsApproximateFloat64()
}

// tolerances are the per-HPA, per-direction tolerances of KEP-4951.
type tolerances struct{ up, down float64 }

func (a *Autoscaler) tolerances() tolerances {
	return tolerances{up: a.spec.Behavior.ScaleUp.Tolerance, down: a.spec.Behavior.ScaleDown.Tolerance}
}

// within is Tolerances.isWithin: both bounds inclusive, so a ratio of
// exactly 1 + up (1.1 by default) does not scale.
func (t tolerances) within(ratio float64) bool {
	return (1.0-t.down) <= ratio && ratio <= (1.0+t.up)
}
