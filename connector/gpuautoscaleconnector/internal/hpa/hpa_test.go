package hpa

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Each test names the upstream function (kubernetes/kubernetes,
// pkg/controller/podautoscaler, release 1.33 and later) whose behaviour it
// pins.

var t0 = time.Unix(1767225600, 0)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func spec() Spec {
	return Spec{Metrics: []Metric{{"m", 0.6}}, MinReplicas: 1, MaxReplicas: 20, Behavior: DefaultBehavior()}
}

// open is spec() without stabilization or policies in the way.
func open() Spec {
	s := spec()
	s.Behavior.ScaleDown.StabilizationWindow = 0
	s.Behavior.ScaleUp.Policies = []Policy{{Pods, 100, time.Second}}
	s.Behavior.ScaleDown.Policies = []Policy{{Pods, 100, time.Second}}
	return s
}

// running lists n running pods, pod-0 .. pod-(n-1).
func running(n int) []Pod {
	pods := make([]Pod, n)
	for i := range pods {
		pods[i] = Pod{Name: fmt.Sprintf("pod-%d", i), Phase: Running}
	}
	return pods
}

// vals gives pods pod-0 .. pod-(len-1) the values, for one metric.
func vals(vs ...float64) []map[string]float64 {
	m := map[string]float64{}
	for i, v := range vs {
		m[fmt.Sprintf("pod-%d", i)] = v
	}
	return []map[string]float64{m}
}

func same(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func obs(s int, current int32, pods []Pod, values []map[string]float64) Observation {
	return Observation{Now: at(s), Current: current, Pods: pods, Values: values}
}

// TestUsageRatio pins calcPlainMetricReplicas and GetMetricUsageRatio: the
// average in whole milli-units rounded down, ceil(ratio x ready pods), and
// Tolerances.isWithin with inclusive, per-direction bounds (KEP-4951).
func TestUsageRatio(t *testing.T) {
	for _, tt := range []struct {
		name     string
		target   float64
		up, down float64
		current  int32
		values   []float64
		want     int32
		reason   Reason
	}{
		{"ceil(ready x usage / target)", 0.6, 0.1, 0.1, 4, same(4, 0.9), 6, ReasonScaled},
		{"rounds up", 0.6, 0.1, 0.1, 3, same(3, 0.7), 4, ReasonScaled},
		{"scale down", 0.6, 0.1, 0.1, 10, same(10, 0.3), 5, ReasonScaled},
		// Float arithmetic gives 0.54/0.18 = 3.0000000000000004 and 4 replicas;
		// 540m/180m is exactly 3.
		{"milli-units: 0.54 / 0.18 is exactly 3", 0.18, 0.1, 0.1, 1, same(1, 0.54), 3, ReasonScaled},
		// (551+551+550)/3 = 550.67 -> 550 (rounded down); 550/500 = 1.1: within.
		{"average rounded down to a milli-unit", 0.5, 0.1, 0.1, 3, []float64{0.551, 0.551, 0.550}, 3, ReasonWithinTolerance},
		{"exactly +10% is within (upper bound inclusive)", 0.6, 0.1, 0.1, 4, same(4, 0.66), 4, ReasonWithinTolerance},
		{"exactly -10% is within (lower bound inclusive)", 0.6, 0.1, 0.1, 4, same(4, 0.54), 4, ReasonWithinTolerance},
		{"one milli-unit past +10% scales", 0.6, 0.1, 0.1, 4, same(4, 0.661), 5, ReasonScaled},
		{"one milli-unit past -10% scales", 0.6, 0.1, 0.1, 10, same(10, 0.539), 9, ReasonScaled},
		{"per-direction: a small scale-up tolerance", 0.6, 0.05, 0.2, 4, same(4, 0.64), 5, ReasonScaled},
		{"per-direction: a large scale-down tolerance", 0.6, 0.05, 0.2, 4, same(4, 0.5), 4, ReasonWithinTolerance},
		{"tolerance 0: any change scales", 0.6, 0, 0, 4, same(4, 0.601), 5, ReasonScaled},
		// The tolerance is a quantity, stored as 410m and read as 410 x 0.001
		// = 0.41000000000000003: 1 - that is 0.59, and a ratio of exactly
		// 0.59 is within. With the float64 0.41 the bound would be
		// 0.5900000000000001 and ceil(0.59 x 10) = 6.
		{"a tolerance is read as a quantity (410m -> 0.41000000000000003)", 1, 0.1, 0.41, 10, same(10, 0.59), 10, ReasonWithinTolerance},
		{"and so is the scale-up one (570m -> 0.5700000000000001)", 1, 0.57, 0.1, 10, same(10, 1.57), 10, ReasonWithinTolerance},
		{"values are rounded up to a milli-unit, as Quantity.MilliValue", 0.6, 0, 0, 1, same(1, 0.6001), 2, ReasonScaled},
		{"all pods at 0 propose 0 (then min_replicas)", 0.6, 0.1, 0.1, 4, same(4, 0), 1, ReasonTooFewReplicas},
		{"max replicas", 0.6, 0.1, 0.1, 10, same(10, 3.0), 20, ReasonTooManyReplicas},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := open()
			s.Metrics[0].Target = tt.target
			s.Behavior.ScaleUp.Tolerance, s.Behavior.ScaleDown.Tolerance = tt.up, tt.down
			d := New(s).Evaluate(obs(0, tt.current, running(int(tt.current)), vals(tt.values...)))
			require.Equal(t, tt.want, d.Desired)
			require.Equal(t, tt.reason, d.Reason)
		})
	}
}

// TestTolerance pins tolerancesForHpa's AsApproximateFloat64 of the stored
// (canonical) quantity, against the apimachinery code itself.
func TestTolerance(t *testing.T) {
	for v, want := range map[float64]float64{0.1: 0.1, 0.02: 0.02, 0: 0, 0.41: 0.41000000000000003, 0.35: 0.35000000000000003, 0.018: 0.018000000000000002, 0.0001: 9.999999999999999e-05} {
		require.InDelta(t, want, Tolerance(v), 0, "%v", v)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 20000 {
		v := float64(rng.IntN(100000)) / math.Pow10(1+rng.IntN(5))
		if v >= 1 {
			continue
		}
		// What a client sends, what the API server stores, what the
		// controller reads back.
		sent := resource.MustParse(strconv.FormatFloat(v, 'f', -1, 64))
		var stored resource.Quantity
		raw, err := sent.Marshal()
		require.NoError(t, err)
		require.NoError(t, stored.Unmarshal(raw))
		require.InDelta(t, stored.AsApproximateFloat64(), Tolerance(v), 0, "%v", v)
	}
}

func TestMilli(t *testing.T) {
	for v, want := range map[float64]int64{0.54: 540, 0.18: 180, 0.6: 600, 1.1: 1100, 0.0001: 1, 0.5999: 600, 37: 37000, 0: 0, -0.0001: -1, 1e-9: 1, 123456.789: 123456789} {
		require.Equal(t, want, Milli(v), "%v", v)
	}
}

// TestPodValue pins the pod's value as the HPA reads it from a metrics
// adapter: each sample a quantity (MilliValue), combined in integers, the
// mean truncated as GetMetricUsageRatio truncates the mean of the pods.
func TestPodValue(t *testing.T) {
	for _, tt := range []struct {
		agg     string
		samples []float64
		want    int64 // milli-units
	}{
		{"avg", []float64{0.792, 0.792, 0.792}, 792}, // float64: 0.7920000000000001
		{"avg", []float64{0.352, 0.352, 0.352}, 352}, // float64: 0.35200000000000004
		{"avg", []float64{0.792, 0.792, 0.792, 0.792, 0.792, 0.792}, 792},
		{"avg", []float64{0.673, 0.673, 0.674}, 673},    // 673.33, truncated
		{"avg", []float64{0.1, 0.2, 0.3}, 200},          // whatever the order
		{"avg", []float64{0.0001, 0, 0}, 0},             // 1m / 3
		{"avg", []float64{0.5999, 0.5999}, 600},         // each sample rounded up, as MilliValue
		{"", []float64{0.4, 0.5}, 450},                  // avg is the default
		{"max", []float64{0.2, 0.7, 0.6999}, 700},       //
		{"sum", []float64{0.1, 0.2, 0.3}, 600},          // float64: 0.6000000000000001
		{"sum", []float64{0.0001, 0.0001, 0.0001}, 3},   // the sum of the samples' quantities
		{"avg", []float64{12, 13}, 12500},               //
		{"avg", []float64{-0.001, -0.002}, -1},          // truncated toward 0, as Go's division
		{"avg", nil, 0},                                 //
		{"max", []float64{123456.789, 1}, 123456789},    //
		{"sum", []float64{1e6, 2e6, 0.001}, 3000000001}, //
	} {
		got := PodValue(tt.agg, tt.samples)
		require.Equal(t, tt.want, Milli(got), "%s %v", tt.agg, tt.samples)
		require.InDelta(t, float64(tt.want)/1000, got, 0, "%s %v", tt.agg, tt.samples)
	}
	// One sample is kept as it is; the HPA reads it as its quantity.
	require.InDelta(t, 0.43721, PodValue("avg", []float64{0.43721}), 0)
	require.Equal(t, int64(438), Milli(PodValue("sum", []float64{0.43721})))
	// Its result reads back as the same milli-units, up to a trillion.
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		m := rng.Int64N(1 << 40)
		require.Equal(t, m, Milli(PodValue("sum", []float64{float64(m) / 1000, 0})), "%d", m)
	}
}

// TestPodsAndMissingMetrics pins groupPods and the fill-in of
// calcPlainMetricReplicas: pods being deleted or failed are ignored, pending
// pods are unready (0 on a scale-up, left out otherwise), running pods
// without a value are missing (0 on a scale-up, exactly the target on a
// scale-down), and a fill-in that reverses the direction or lands within the
// tolerance holds.
func TestPodsAndMissingMetrics(t *testing.T) {
	pending := func(name string) Pod { return Pod{Name: name, Phase: Pending} }
	for _, tt := range []struct {
		name    string
		current int32
		pods    []Pod
		values  []map[string]float64
		want    int32
		reason  Reason
	}{
		// 3 of 4 report 1.2: (3600 + 0) / 4 = 900m -> 1.5 -> ceil(1.5 x 4) = 6.
		{"missing pods count as 0 when scaling up", 4, running(4), vals(1.2, 1.2, 1.2), 6, ReasonScaled},
		// 2 of 4 report 0.9: 1800 / 4 = 450m -> 0.75: the direction reverses.
		{"missing pods reversing a scale up: hold", 4, running(4), vals(0.9, 0.9), 4, ReasonMissingMetrics},
		// 2 of 4 report 0.1: (200 + 2 x 600) / 4 = 350m -> ceil(0.583 x 4) = 3.
		{"missing pods count as the target when scaling down", 4, running(4), vals(0.1, 0.1), 3, ReasonScaled},
		// 3 of 4 report 0.55: (1650 + 600) / 4 = 562m -> 0.937: within.
		{"missing pods bringing a scale down within tolerance: hold", 4, running(4), vals(0.55, 0.55, 0.55), 4, ReasonMissingMetrics},
		// 3 of 4 report 0.5: (1500 + 600) / 4 = 525m -> ceil(0.875 x 4) = 4.
		{"missing pods rounding a scale down back to the current count", 4, running(4), vals(0.5, 0.5, 0.5), 4, ReasonMissingMetrics},
		// 2 running at 1.2 and 2 pending: (2400 + 0) / 4 = 600m -> 1.0: within.
		{"pending pods count as 0 when scaling up", 4, append(running(2), pending("pod-2"), pending("pod-3")), vals(1.2, 1.2), 4, ReasonMissingMetrics},
		{"pending pods count as 0 when scaling up (and it still scales)", 4, append(running(3), pending("pod-3")), vals(1.2, 1.2, 1.2), 6, ReasonScaled},
		// 2 running at 0.15, 2 pending: 150m -> 0.25 -> ceil(0.25 x 2 ready) = 1.
		{"pending pods are left out when scaling down", 4, append(running(2), pending("pod-2"), pending("pod-3")), vals(0.15, 0.15), 1, ReasonScaled},
		// A pending pod's value is not used either.
		{"a pending pod's value is dropped", 2, []Pod{{Name: "pod-0", Phase: Running}, pending("pod-1")}, vals(0.6, 5.0), 2, ReasonWithinTolerance},
		// 2 running at 0.3; a deleting pod at 0.9 and a failed one: ignored.
		{"deleting and failed pods are ignored", 4, append(running(2), Pod{Name: "pod-2", Phase: Running, Deleting: true}, Pod{Name: "pod-3", Phase: Failed}), vals(0.3, 0.3, 0.9, 0.9), 1, ReasonScaled},
		// Pods 2 and 3 were removed by a scale-down; their last values linger.
		{"values of pods no longer listed are not used", 2, running(2), vals(0.6, 0.6, 0, 0), 2, ReasonWithinTolerance},
		{"no pods listed: no proposal, hold", 4, nil, vals(0.9), 4, ReasonNoMetrics},
		{"no value from any ready pod: no proposal, hold", 4, running(4), nil, 4, ReasonNoMetrics},
		{"only pending pods report: no proposal, hold", 2, []Pod{pending("pod-0"), pending("pod-1")}, vals(2, 2), 2, ReasonNoMetrics},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(open()).Evaluate(obs(0, tt.current, tt.pods, tt.values))
			require.Equal(t, tt.want, d.Desired)
			require.Equal(t, tt.reason, d.Reason)
		})
	}
}

// TestReconcile pins reconcileAutoscaler: recordInitialRecommendation at the
// first reconcile, metrics or not; a target at 0 with a non-zero minimum is
// left alone; a count outside [min, max] goes to the bound without metrics
// and without a recommendation.
func TestReconcile(t *testing.T) {
	t.Run("0 replicas with a non-zero minimum: no scaling", func(t *testing.T) {
		d := New(open()).Evaluate(obs(0, 0, running(2), vals(5, 5)))
		require.Equal(t, int32(0), d.Desired)
		require.Equal(t, ReasonScalingDisabled, d.Reason)
	})
	t.Run("above max: straight to max, metrics not consulted", func(t *testing.T) {
		d := New(open()).Evaluate(obs(0, 25, nil, nil))
		require.Equal(t, int32(20), d.Desired)
		require.Equal(t, ReasonTooManyReplicas, d.Reason)
		require.Nil(t, d.Proposals)
	})
	t.Run("below min: straight to min, metrics not consulted", func(t *testing.T) {
		s := open()
		s.MinReplicas = 3
		d := New(s).Evaluate(obs(0, 2, running(2), vals(0.01, 0.01)))
		require.Equal(t, int32(3), d.Desired)
		require.Equal(t, ReasonTooFewReplicas, d.Reason)
		require.Nil(t, d.Proposals)
	})
	t.Run("out of bounds records no recommendation", func(t *testing.T) {
		s := spec()
		s.MaxReplicas = 10
		a := New(s)
		a.Evaluate(obs(0, 5, running(5), vals(same(5, 0.6)...))) // records 5 (initial) and 5
		d := a.Evaluate(obs(15, 15, running(15), vals(same(15, 0.6)...)))
		require.Equal(t, int32(10), d.Desired)
		a.Record(at(15), 15, 10)
		// Load drops: the 300 s window holds the highest recommendation, 5.
		// Had the 10 been recorded, it would hold 10.
		d = a.Evaluate(obs(30, 10, running(10), vals(same(10, 0.18)...)))
		require.Equal(t, int32(5), d.Desired)
		require.Equal(t, ReasonStabilized, d.Reason)
	})
	t.Run("the first reconcile records the current count even without metrics", func(t *testing.T) {
		a := New(spec())
		d := a.Evaluate(obs(0, 10, running(10), nil))
		require.Equal(t, ReasonNoMetrics, d.Reason)
		// 290 s later the load is low: the first reconcile's 10 holds.
		d = a.Evaluate(obs(290, 10, running(10), vals(same(10, 0.06)...)))
		require.Equal(t, int32(10), d.Desired)
		require.Equal(t, ReasonStabilized, d.Reason)
		// 301 s after the first reconcile its 10 has left the window.
		d = a.Evaluate(obs(301, 10, running(10), vals(same(10, 0.06)...)))
		require.Equal(t, int32(1), d.Desired)
	})
}

// TestMultipleMetrics pins computeReplicasForMetrics: the largest proposal
// wins; when every metric is invalid, or some are and the valid ones would
// scale down, nothing happens (and no recommendation is recorded).
func TestMultipleMetrics(t *testing.T) {
	s := open()
	s.Metrics = []Metric{{"sm", 0.6}, {"queue", 5}}
	two := func(sm, queue map[string]float64) []map[string]float64 { return []map[string]float64{sm, queue} }
	pods := running(4)
	for _, tt := range []struct {
		name   string
		values []map[string]float64
		want   int32
		reason Reason
		metric string
	}{
		{"the largest proposal wins (queue)", two(vals(same(4, 0.6)...)[0], vals(same(4, 15)...)[0]), 12, ReasonScaled, "queue"},
		{"the largest proposal wins (sm)", two(vals(same(4, 1.2)...)[0], vals(same(4, 1)...)[0]), 8, ReasonScaled, "sm"},
		{"one metric missing, the other scales up: up", two(vals(same(4, 0.9)...)[0], nil), 6, ReasonScaled, "sm"},
		{"one metric missing, the other within tolerance: hold", two(vals(same(4, 0.6)...)[0], nil), 4, ReasonWithinTolerance, "sm"},
		{"one metric missing, the other scales down: hold", two(vals(same(4, 0.1)...)[0], nil), 4, ReasonInvalidMetrics, ""},
		{"all metrics missing: hold", two(nil, nil), 4, ReasonNoMetrics, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(s).Evaluate(obs(0, 4, pods, tt.values))
			require.Equal(t, tt.want, d.Desired)
			require.Equal(t, tt.reason, d.Reason)
			require.Equal(t, tt.metric, d.Metric)
			require.Len(t, d.Proposals, 2)
		})
	}
	t.Run("an invalid metric's hold records no recommendation", func(t *testing.T) {
		s := spec()
		s.Metrics = []Metric{{"sm", 0.6}, {"queue", 5}}
		s.Behavior.ScaleDown.StabilizationWindow = 60 * time.Second
		a := New(s)
		a.Evaluate(obs(0, 4, pods, two(vals(same(4, 0.6)...)[0], vals(same(4, 5)...)[0]))) // initial 4, and 4
		a.Evaluate(obs(61, 4, pods, two(vals(same(4, 0.15)...)[0], nil)))                  // would go to 1: held, not recorded
		d := a.Evaluate(obs(70, 4, pods, two(vals(same(4, 0.15)...)[0], vals(same(4, 1.25)...)[0])))
		// Both ask for 1; the window (60 s) holds nothing older: had the hold
		// at 61 s recorded 4, it would still be 4.
		require.Equal(t, int32(1), d.Desired)
	})
}

// TestStabilization pins stabilizeRecommendationWithBehaviors: down to the
// highest, up to the lowest recommendation within the window; a
// recommendation exactly a window old is outside it (timestamp.After).
func TestStabilization(t *testing.T) {
	a := New(spec())
	cur := int32(10)
	step := func(s int, v float64) Decision {
		d := a.Evaluate(obs(s, cur, running(int(cur)), vals(same(int(cur), v)...)))
		a.Record(at(s), cur, d.Desired)
		cur = d.Desired
		return d
	}
	step(0, 0.6)
	for s := 15; s < 300; s += 15 {
		d := step(s, 0.3)
		require.Equal(t, int32(10), d.Desired, "at %d s", s)
		require.Equal(t, ReasonStabilized, d.Reason)
	}
	d := step(300, 0.3)
	require.Equal(t, int32(5), d.Desired, "the recommendations of 0 s are exactly 300 s old: out")

	up := spec()
	up.Behavior.ScaleUp.StabilizationWindow = 60 * time.Second
	a = New(up)
	d = a.Evaluate(obs(0, 4, running(4), vals(same(4, 0.6)...)))
	require.Equal(t, int32(4), d.Desired)
	d = a.Evaluate(obs(30, 4, running(4), vals(same(4, 1.2)...)))
	require.Equal(t, int32(4), d.Desired, "the lowest recommendation of the last 60 s is 4")
	require.Equal(t, ReasonStabilized, d.Reason)
	d = a.Evaluate(obs(60, 4, running(4), vals(same(4, 1.2)...)))
	require.Equal(t, int32(8), d.Desired, "0 s is out of the window; 30 s asked for 8")
}

// TestPolicies pins convertDesiredReplicasWithBehaviorRate and
// calculateScaleUpLimitWithScalingRules / calculateScaleDownLimitWithBehaviors.
func TestPolicies(t *testing.T) {
	a := New(spec())
	// Demand for 40 replicas from 2: Max(100% -> 4, +4 pods -> 6) per 15 s.
	d := a.Evaluate(obs(0, 2, running(2), vals(12, 12)))
	require.Equal(t, int32(6), d.Desired)
	require.Equal(t, ReasonScaleUpLimit, d.Reason)
	a.Record(at(0), 2, 6)
	d = a.Evaluate(obs(5, 6, running(6), vals(same(6, 4)...)))
	require.Equal(t, int32(6), d.Desired, "the period's budget is spent")
	require.Equal(t, ReasonScaleUpLimit, d.Reason)
	d = a.Evaluate(obs(15, 6, running(6), vals(same(6, 4)...)))
	require.Equal(t, int32(12), d.Desired, "next period: from 6, +100%")

	s := spec()
	s.Behavior.ScaleUp.Select = SelectMin
	d = New(s).Evaluate(obs(0, 10, running(10), vals(same(10, 6)...)))
	require.Equal(t, int32(14), d.Desired, "Min picks min(20, 14)")

	s.Behavior.ScaleUp.Select = SelectDisabled
	d = New(s).Evaluate(obs(0, 10, running(10), vals(same(10, 6)...)))
	require.Equal(t, int32(10), d.Desired)
	require.Equal(t, ReasonScalingDisabled, d.Reason)

	s = spec()
	s.Behavior.ScaleDown = Rules{Policies: []Policy{{Pods, 2, time.Minute}, {Percent, 10, time.Minute}}, Select: SelectMax, Tolerance: 0.1}
	a = New(s)
	d = a.Evaluate(obs(0, 10, running(10), vals(same(10, 0.1)...)))
	require.Equal(t, int32(8), d.Desired, "Max: -2 pods beats -10%")
	require.Equal(t, ReasonScaleDownLimit, d.Reason)
	a.Record(at(0), 10, 8)
	d = a.Evaluate(obs(30, 8, running(8), vals(same(8, 0.1)...)))
	require.Equal(t, int32(8), d.Desired, "the period's budget is spent")
	d = a.Evaluate(obs(60, 8, running(8), vals(same(8, 0.1)...)))
	require.Equal(t, int32(6), d.Desired, "an event exactly one period old no longer counts")

	s.Behavior.ScaleDown.Policies = []Policy{{Percent, 10, time.Minute}}
	d = New(s).Evaluate(obs(0, 15, running(15), vals(same(15, 0.1)...)))
	require.Equal(t, int32(13), d.Desired, "a Percent scale-down truncates what stays: int32(15 x 0.9) = 13")

	s = spec()
	s.MinReplicas = 4
	s.Behavior.ScaleDown.StabilizationWindow = 0
	d = New(s).Evaluate(obs(0, 10, running(10), vals(same(10, 0.01)...)))
	require.Equal(t, int32(4), d.Desired)
	require.Equal(t, ReasonTooFewReplicas, d.Reason, "the bound, not the policy, limits")
}

// TestScaleEventsPrunedAsUpstream pins storeScaleEvent and
// markScaleEventsOutdated: scale-up events are marked outdated by the
// longest scale-up period only, and a new event replaces only the last
// outdated one; events not replaced still count for a longer scale-down
// period (getReplicasChangePerPeriod does not look at the mark).
func TestScaleEventsPrunedAsUpstream(t *testing.T) {
	s := spec()
	s.MaxReplicas = 40
	s.Behavior.ScaleUp.Policies = []Policy{{Pods, 4, 15 * time.Second}}
	s.Behavior.ScaleDown = Rules{Policies: []Policy{{Pods, 1, 10 * time.Minute}}, Select: SelectMax, Tolerance: 0.1}
	a := New(s)
	a.Record(at(0), 8, 9)
	a.Record(at(5), 9, 10)
	// At 30 s both are older than 15 s: marked outdated; the new event takes
	// the place of the last one (5 s). The event of 0 s stays.
	a.Record(at(30), 10, 11)
	// At 100 s the scale-down policy (1 pod per 10 min) starts from
	// 11 - (1 + 1) = 9, so it allows 8. Pruning every outdated event would
	// give 9; keeping all three would give 7.
	d := a.Evaluate(obs(100, 11, running(11), vals(same(11, 0.01)...)))
	require.Equal(t, int32(8), d.Desired)
	require.Equal(t, ReasonScaleDownLimit, d.Reason)
}

// TestNoFlapping drives an oscillating load: the default behavior must not
// follow every swing down.
func TestNoFlapping(t *testing.T) {
	a := New(spec())
	cur := int32(4)
	changes := 0
	for s := 0; s <= 1800; s += 15 {
		v := 0.75
		if (s/60)%2 == 1 {
			v = 0.35
		}
		d := a.Evaluate(obs(s, cur, running(int(cur)), vals(same(int(cur), v*4/float64(cur))...)))
		if d.Desired != cur {
			changes++
		}
		a.Record(at(s), cur, d.Desired)
		cur = d.Desired
	}
	require.LessOrEqual(t, changes, 1, "one scale up to the peak, then held by the scale-down window")
	require.Equal(t, int32(5), cur)
}

func TestPredictive(t *testing.T) {
	s := spec()
	s.Predictive, s.LeadTime = true, 60*time.Second
	pred, react := New(s), New(spec())
	cur := map[*Autoscaler]int32{pred: 4, react: 4}
	firstUp := map[*Autoscaler]int{}
	for sec := 0; sec <= 300; sec += 15 {
		load := 2.0 + 0.4*float64(sec)/15
		for _, a := range []*Autoscaler{pred, react} {
			c := cur[a]
			o := obs(sec, c, running(int(c)), vals(same(int(c), load*0.6/float64(c))...))
			d := a.Evaluate(o)
			if d.Desired > c {
				if _, ok := firstUp[a]; !ok {
					firstUp[a] = sec
				}
			}
			if a == pred {
				r := New(spec()).Evaluate(o)
				require.GreaterOrEqual(t, d.Recommendation, r.Recommendation, "at %d s", sec)
			}
			a.Record(at(sec), c, d.Desired)
			cur[a] = d.Desired
		}
	}
	require.Less(t, firstUp[pred], firstUp[react], "predictive scales ahead of the rise")

	a := New(s)
	c := int32(10)
	for sec := 0; sec <= 120; sec += 15 {
		d := a.Evaluate(obs(sec, c, running(int(c)), vals(same(int(c), 0.6*(1-float64(sec)/240))...)))
		require.Equal(t, int32(10), d.Desired, "its scale-down honours stabilization, at %d s", sec)
	}
}
