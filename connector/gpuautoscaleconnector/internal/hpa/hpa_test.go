package hpa

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1767225600, 0)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func spec() Spec {
	return Spec{Target: 0.6, MinReplicas: 1, MaxReplicas: 20, Behavior: DefaultBehavior()}
}

func values(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// TestReplicaRatio covers the core rule, the tolerance and missing metrics,
// one evaluation each, without stabilization or policies in the way.
func TestReplicaRatio(t *testing.T) {
	open := spec()
	open.Behavior.ScaleDown.StabilizationWindow = 0
	open.Behavior.ScaleUp.Policies = []Policy{{Pods, 100, time.Second}}
	open.Behavior.ScaleDown.Policies = []Policy{{Pods, 100, time.Second}}
	for _, tt := range []struct {
		name    string
		current int32
		values  []float64
		want    int32
		reason  Reason
	}{
		{"ceil(current x metric / target)", 4, values(4, 0.9), 6, ReasonScaled},
		{"rounds up", 3, values(3, 0.7), 4, ReasonScaled},
		{"scale down", 10, values(10, 0.3), 5, ReasonScaled},
		{"within the 0.1 tolerance up", 4, values(4, 0.65), 4, ReasonWithinTolerance},
		{"within the 0.1 tolerance down", 4, values(4, 0.55), 4, ReasonWithinTolerance},
		{"just outside the tolerance", 4, values(4, 0.67), 5, ReasonScaled},
		// 2 of 4 pods report 0.9: missing count as 0 for scale up:
		// (1.8 + 0) / 4 / 0.6 = 0.75 -> scale up would become down: hold.
		{"missing pods flip scale up: hold", 4, values(2, 0.9), 4, ReasonMissingMetrics},
		// 3 of 4 report 1.2: (3.6 + 0) / 4 / 0.6 = 1.5 -> ceil(6) = 6.
		{"missing pods count as 0 when scaling up", 4, values(3, 1.2), 6, ReasonScaled},
		// 2 of 4 report 0.1: missing count as on target for scale down:
		// (0.2 + 1.2) / 4 / 0.6 = 0.583 -> ceil(2.33) = 3.
		{"missing pods count as on target when scaling down", 4, values(2, 0.1), 3, ReasonScaled},
		// 3 of 4 report 0.5: (1.5 + 0.6) / 4 / 0.6 = 0.875 -> still down, 4 -> ceil(3.5)=4: hold.
		{"missing pods keep a scale down from happening", 4, values(3, 0.5), 4, ReasonMissingMetrics},
		{"no metrics: hold", 4, nil, 4, ReasonNoMetrics},
		{"max replicas", 10, values(10, 3.0), 20, ReasonTooManyReplicas},
		{"down to min replicas", 3, values(3, 0.01), 1, ReasonScaled},
		{"below min with no metrics is raised", 0 + 1, nil, 1, ReasonNoMetrics},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := New(open).Evaluate(Observation{Now: t0, Current: tt.current, Values: tt.values})
			require.Equal(t, tt.want, d.Desired)
			require.Equal(t, tt.reason, d.Reason)
		})
	}
	s := open
	s.MinReplicas = 2
	d := New(s).Evaluate(Observation{Now: t0, Current: 3, Values: values(3, 0.01)})
	require.Equal(t, int32(2), d.Desired)
	require.Equal(t, ReasonTooFewReplicas, d.Reason)
	s.MinReplicas = 5
	d = New(s).Evaluate(Observation{Now: t0, Current: 2, Values: nil})
	require.Equal(t, int32(5), d.Desired, "min holds even without metrics")
	require.Equal(t, ReasonTooFewReplicas, d.Reason)
}

func TestScaleDownStabilization(t *testing.T) {
	a := New(spec())
	cur := int32(10)
	step := func(s int, v float64) Decision {
		d := a.Evaluate(Observation{Now: at(s), Current: cur, Values: values(int(cur), v)})
		a.Record(at(s), cur, d.Desired)
		cur = d.Desired
		return d
	}
	step(0, 0.6)
	// Load drops: the recommendation is 5, but the 300 s window holds the
	// highest recommendation of the last 5 minutes.
	for s := 15; s < 300; s += 15 {
		d := step(s, 0.3)
		require.Equal(t, int32(10), d.Desired, "at %d s", s)
		require.Equal(t, ReasonStabilized, d.Reason)
	}
	d := step(300, 0.3)
	require.Equal(t, int32(5), d.Desired, "the window passed")
}

func TestScaleUpPolicies(t *testing.T) {
	a := New(spec())
	// Demand for 40 replicas from 2: Max(100% -> 4, +4 pods -> 6) per 15 s.
	d := a.Evaluate(Observation{Now: at(0), Current: 2, Values: values(2, 12)})
	require.Equal(t, int32(6), d.Desired)
	require.Equal(t, ReasonScaleUpLimit, d.Reason)
	a.Record(at(0), 2, 6)
	// Within the same period the budget is spent.
	d = a.Evaluate(Observation{Now: at(5), Current: 6, Values: values(6, 4)})
	require.Equal(t, int32(6), d.Desired)
	require.Equal(t, ReasonScaleUpLimit, d.Reason)
	// Next period: from 6, 100% -> 12.
	d = a.Evaluate(Observation{Now: at(15), Current: 6, Values: values(6, 4)})
	require.Equal(t, int32(12), d.Desired)

	// Select Min picks the smaller of the two.
	s := spec()
	s.Behavior.ScaleUp.Select = SelectMin
	d = New(s).Evaluate(Observation{Now: t0, Current: 10, Values: values(10, 6)})
	require.Equal(t, int32(14), d.Desired, "min(20, 14)")

	s.Behavior.ScaleUp.Select = SelectDisabled
	d = New(s).Evaluate(Observation{Now: t0, Current: 10, Values: values(10, 6)})
	require.Equal(t, int32(10), d.Desired)
	require.Equal(t, ReasonScalingDisabled, d.Reason)
}

func TestScaleDownPolicies(t *testing.T) {
	s := spec()
	s.Behavior.ScaleDown = Rules{Policies: []Policy{{Pods, 2, time.Minute}, {Percent, 10, time.Minute}}, Select: SelectMax, Tolerance: 0.1}
	a := New(s)
	// Max picks the policy that allows the largest change: -2 pods beats -10%.
	d := a.Evaluate(Observation{Now: at(0), Current: 10, Values: values(10, 0.1)})
	require.Equal(t, int32(8), d.Desired)
	require.Equal(t, ReasonScaleDownLimit, d.Reason)
	a.Record(at(0), 10, 8)
	d = a.Evaluate(Observation{Now: at(30), Current: 8, Values: values(8, 0.1)})
	require.Equal(t, int32(8), d.Desired, "the period's budget is spent")
	d = a.Evaluate(Observation{Now: at(60), Current: 8, Values: values(8, 0.1)})
	require.Equal(t, int32(6), d.Desired)
}

// TestNoFlapping drives an oscillating load: the default behavior must not
// follow every swing down.
func TestNoFlapping(t *testing.T) {
	a := New(spec())
	cur := int32(4)
	changes := 0
	for s := 0; s <= 1800; s += 15 {
		v := 0.75 // a swing above target
		if (s/60)%2 == 1 {
			v = 0.35 // and below it, every other minute
		}
		d := a.Evaluate(Observation{Now: at(s), Current: cur, Values: values(int(cur), v*4/float64(cur))})
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
	// Load rises steadily: +0.4 pods of work every 15 s.
	var firstUp = map[*Autoscaler]int{}
	for s := 0; s <= 300; s += 15 {
		load := 2.0 + 0.4*float64(s)/15
		for _, a := range []*Autoscaler{pred, react} {
			c := cur[a]
			d := a.Evaluate(Observation{Now: at(s), Current: c, Values: values(int(c), load*0.6/float64(c))})
			if d.Desired > c {
				if _, ok := firstUp[a]; !ok {
					firstUp[a] = s
				}
			}
			// Predictive never asks for less than reactive would.
			if a == pred {
				r := New(spec()).Evaluate(Observation{Now: at(s), Current: c, Values: values(int(c), load*0.6/float64(c))})
				require.GreaterOrEqual(t, d.Recommendation, r.Recommendation, "at %d s", s)
			}
			a.Record(at(s), c, d.Desired)
			cur[a] = d.Desired
		}
	}
	require.Less(t, firstUp[pred], firstUp[react], "predictive scales ahead of the rise")

	// Its scale-down still honours stabilization.
	a := New(s)
	c := int32(10)
	for s := 0; s <= 120; s += 15 {
		d := a.Evaluate(Observation{Now: at(s), Current: c, Values: values(int(c), 0.6*(1-float64(s)/240))})
		require.Equal(t, int32(10), d.Desired, "at %d s", s)
	}
}
