package hpa

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The cases of upstream's own tests (kubernetes/kubernetes,
// pkg/controller/podautoscaler, replica_calculator_test.go and
// horizontal_test.go, release 1.37) that apply to one per-pod metric with an
// AverageValue target and a behavior, restated against this package. Each
// names the upstream test and case it comes from; the expected counts are
// upstream's. They are here so that a misreading of upstream shared by this
// package and the differential test's transcription cannot pass both.
//
// Adapted, and said so where it matters:
//   - Resource metrics: a pod's value is its usage in milli-units and the
//     target is the utilization target times the request (1000m per pod
//     unless said), so that the arithmetic of calcPlainMetricReplicas gives
//     upstream's count.
//   - Pod readiness is consulted by groupPods for CPU only; for a Pods metric
//     a pod that is not Ready counts, which is what this package models (it
//     has no readiness).
//   - Controller tests without a behavior take upstream's legacy path
//     (normalizeDesiredReplicas); the connector always has a behavior, so
//     those cases are kept only where both paths give upstream's count.
//
// Not ported: object, external and CPU-initialisation cases (no such
// metrics or readiness here); "superfluous metrics counted" of
// TestReplicaCalcResourceMissingMetrics, since a metrics adapter answers
// for the pods the selector lists, as this package's values do (see
// TestPodsAndMissingMetrics); the scale-to-zero feature (HPAScaleToZero).

// podsOf lists pods pod-0, pod-1, ... of the kinds given, one letter each:
// R running, P pending, F failed, D running and being deleted, X pending
// and being deleted, S succeeded.
func podsOf(kinds string) []Pod {
	pods := make([]Pod, len(kinds))
	for i, k := range kinds {
		p := Pod{Name: fmt.Sprintf("pod-%d", i), Phase: Running}
		switch k {
		case 'P':
			p.Phase = Pending
		case 'F':
			p.Phase = Failed
		case 'D':
			p.Deleting = true
		case 'X':
			p.Phase, p.Deleting = Pending, true
		case 'S':
			p.Phase = Succeeded
		}
		pods[i] = p
	}
	return pods
}

// levels gives pods pod-0, pod-1, ... values in milli-units, as the tests
// upstream give them to the fake metrics clients.
func levels(ms ...int64) []map[string]float64 {
	m := map[string]float64{}
	for i, v := range ms {
		m[fmt.Sprintf("pod-%d", i)] = float64(v) / 1000
	}
	return []map[string]float64{m}
}

// calc is one calcPlainMetricReplicas: the metric's proposal, before
// stabilization, policies and bounds.
func calc(t *testing.T, targetMilli int64, up, down float64, current int32, pods []Pod, values []map[string]float64) Proposal {
	t.Helper()
	s := Spec{Metrics: []Metric{{"m", float64(targetMilli) / 1000}}, MinReplicas: 1, MaxReplicas: 1000, Behavior: DefaultBehavior()}
	s.Behavior.ScaleUp.Tolerance, s.Behavior.ScaleDown.Tolerance = up, down
	d := New(s).Evaluate(Observation{Now: t0, Current: current, Pods: pods, Values: values})
	require.Len(t, d.Proposals, 1)
	return d.Proposals[0]
}

func TestUpstreamReplicaCalc(t *testing.T) {
	const def = 0.1 // defaultTestingTolerance
	for _, tt := range []struct {
		upstream  string
		target    int64 // milli-units
		up, down  float64
		current   int32
		pods      string
		levels    []int64
		want      int32
		wantUsage int64 // milli-units
	}{
		// TestReplicaCalcPodMetric
		{"TestReplicaCalcPodMetric/scale up", 15000, def, def, 3, "RRR", []int64{20000, 10000, 30000}, 4, 20000},
		// Its pod 2 is not Ready: it still counts for a Pods metric.
		{"TestReplicaCalcPodMetric/scale up: unready hot-CPU pod scales less", 15000, def, def, 3, "RRR", []int64{50000, 10000, 30000}, 6, 30000},
		{"TestReplicaCalcPodMetric/scale up: unready hot-CPU pods avoid scale-down", 15000, def, def, 3, "RRR", []int64{50000, 15000, 30000}, 7, 31666},
		{"TestReplicaCalcPodMetric/scale down", 20000, def, def, 5, "RRRRR", []int64{12000, 12000, 12000, 12000, 12000}, 3, 12000},
		{"TestReplicaCalcPodMetric/within default tolerance", 20000, def, def, 3, "RRR", []int64{20000, 21000, 21000}, 3, 20666},
		{"TestReplicaCalcPodMetric/outside configurable 1% tolerance", 20000, 0.01, def, 3, "RRR", []int64{20000, 21000, 21000}, 4, 20666},
		// Two of five pods without a value; the three average exactly the
		// target: the missing pods are left out and the ratio is 1.
		{"TestReplicaCalcPodMetric/no change: missing metrics", 20000, def, def, 5, "RRRRR", []int64{20000, 19000, 21000}, 5, 20000},
		// A surge pod without a value counts as the target on a scale-down:
		// (10000 x 2 + 17000) / 3 = 12333 -> ceil(0.725 x 3) = 3, more than
		// the 2 current: the direction would reverse, hold.
		{"TestReplicaCalcPodMetric/rolling update with maxSurge: extra pod missing metric", 17000, def, def, 2, "RRR", []int64{10000, 10000}, 2, 10000},

		// TestReplicaCalcResourceScale, target 30% or 50% of 1000m.
		{"TestReplicaCalcResourceScale/scale up", 300, def, def, 3, "RRR", []int64{300, 500, 700}, 5, 500},
		{"TestReplicaCalcResourceScale/scale up: failed pods ignored", 300, def, def, 2, "RRFF", []int64{500, 700}, 4, 600},
		{"TestReplicaCalcResourceScale/scale up: pods being deleted are ignored", 300, def, def, 2, "RRDD", []int64{500, 700}, 4, 600},
		{"TestReplicaCalcResourceScale/scale down", 500, def, def, 5, "RRRRR", []int64{100, 300, 500, 250, 250}, 3, 280},
		{"TestReplicaCalcResourceScale/scale down: exclude unscheduled pods", 500, def, def, 5, "RPPPP", []int64{100}, 1, 100},
		{"TestReplicaCalcResourceScale/scale down: failed pods ignored", 500, def, def, 5, "RRRRRFF", []int64{100, 300, 500, 250, 250}, 3, 280},
		{"TestReplicaCalcResourceScale/scale down: pods being deleted are ignored", 500, def, def, 5, "RRRRRDD", []int64{100, 300, 500, 250, 250}, 3, 280},

		// TestReplicaCalcResourceTolerance, target 100% of 1000m. Upstream's
		// Tolerances{a, b} is {scaleDown: a, scaleUp: b}.
		{"TestReplicaCalcResourceTolerance/within default tolerance", 1000, def, def, 3, "RRR", []int64{1010, 1030, 1020}, 3, 1020},
		{"TestReplicaCalcResourceTolerance/outside 0% tolerance", 1000, 0, 0, 3, "RRR", []int64{909, 1010, 1111}, 4, 1010},
		{"TestReplicaCalcResourceTolerance/within 200% scale-up tolerance", 1000, 2, def, 3, "RRR", []int64{1890, 1910, 1900}, 3, 1900},
		{"TestReplicaCalcResourceTolerance/outside 8% scale-up tolerance (superfluous scale-down tolerance)", 1000, 0.08, 2, 3, "RRR", []int64{1100, 1080, 1090}, 4, 1090},
		{"TestReplicaCalcResourceTolerance/within 36% scale-down tolerance", 1000, def, 0.36, 3, "RRR", []int64{660, 640, 650}, 3, 650},
		{"TestReplicaCalcResourceTolerance/outside 34% scale-down tolerance", 1000, def, 0.34, 3, "RRR", []int64{660, 640, 650}, 2, 650},

		// TestReplicaCalcResourceMissingMetrics, target 100% or 50% of 1000m.
		// On a scale-down a missing pod counts as the target (for a
		// resource, max(100%, target) of its request: the same here).
		{"TestReplicaCalcResourceMissingMetrics/some pods missing metrics scales down", 1000, def, def, 4, "RRRR", []int64{400, 95}, 3, 247},
		{"TestReplicaCalcResourceMissingMetrics/no change: metric equal to target", 1000, def, def, 2, "RR", []int64{1000}, 2, 1000},
		{"TestReplicaCalcResourceMissingMetrics/no change: metric above target", 1000, def, def, 2, "RR", []int64{1900}, 2, 1900},
		{"TestReplicaCalcResourceMissingMetrics/no change: metric below target", 1000, def, def, 2, "RR", []int64{600}, 2, 600},
		{"TestReplicaCalcResourceMissingMetrics/rolling update with maxSurge: extra pod missing metric", 500, def, def, 2, "RRR", []int64{100, 100}, 2, 100},

		// TestReplicaCalcComputedToleranceAlgImplementation: usage at half
		// the request, the target just past the tolerance (0.5 / 0.56 =
		// 0.893 < 0.9) scales to ceil(8.93) = 9, just inside it
		// (0.5 / 0.55 = 0.909) holds.
		{"TestReplicaCalcComputedToleranceAlgImplementation/breach", 560, def, def, 10, "RRRRRRRRRR", []int64{500, 500, 500, 500, 500, 500, 500, 500, 500, 500}, 9, 500},
		{"TestReplicaCalcComputedToleranceAlgImplementation/within", 550, def, def, 10, "RRRRRRRRRR", []int64{500, 500, 500, 500, 500, 500, 500, 500, 500, 500}, 10, 500},

		// TestGroupPods, through the count: a Succeeded pod with a value is
		// ready ("count in a ready pod - memory"); a pending pod being
		// deleted is ignored, not unready ("ignore pods with deletion
		// timestamps": unready, it would count as 0 on this scale-up and
		// reverse it); a running pod without a value is missing ("a
		// missing pod": 0 on a scale-up, (900 + 0) / 2 = 450m reverses it).
		{"TestGroupPods/count in a ready pod - memory", 600, def, def, 1, "S", []int64{1200}, 2, 1200},
		{"TestGroupPods/ignore pods with deletion timestamps", 600, def, def, 1, "RX", []int64{900}, 2, 900},
		{"TestGroupPods/a missing pod", 600, def, def, 2, "RR", []int64{900}, 2, 900},
	} {
		t.Run(tt.upstream, func(t *testing.T) {
			p := calc(t, tt.target, tt.up, tt.down, tt.current, podsOf(tt.pods), levels(tt.levels...))
			require.NoError(t, p.Err)
			require.Equal(t, tt.want, p.Replicas)
			require.Equal(t, tt.wantUsage, Milli(p.Value))
		})
	}
}

// TestUpstreamReplicaCalcErrors: calcPlainMetricReplicas' two errors.
func TestUpstreamReplicaCalcErrors(t *testing.T) {
	// TestGroupPods/void, and the "no pods returned by selector" error.
	p := calc(t, 500, 0.1, 0.1, 3, nil, levels(100))
	require.ErrorIs(t, p.Err, errNoPods)
	// Only unready pods report: "did not receive metrics for targeted pods".
	p = calc(t, 500, 0.1, 0.1, 3, podsOf("PPP"), levels(100, 100, 100))
	require.ErrorIs(t, p.Err, errNoValues)
}

// rules is upstream's generateScalingRules: Pods and Percent policies
// (left out when 0) selected by Max, and a stabilization window, in seconds.
func rules(pods, podsPeriod, percent, percentPeriod, window int32) *Rules {
	r := &Rules{Select: SelectMax, StabilizationWindow: time.Duration(window) * time.Second, Tolerance: 0.1}
	if pods != 0 {
		r.Policies = append(r.Policies, Policy{Pods, pods, time.Duration(podsPeriod) * time.Second})
	}
	if percent != 0 {
		r.Policies = append(r.Policies, Policy{Percent, percent, time.Duration(percentPeriod) * time.Second})
	}
	return r
}

// spread is upstream's generateEventsUniformDistribution over the last 120 s
// (the period of every use upstream): the period cut into one segment per
// event, each event in the middle of its segment, the first the oldest; the
// offset is truncated to whole seconds.
func spread(now time.Time, changes []int32) []scaleEvent {
	const period = 120
	seg := float64(period) / float64(len(changes))
	out := make([]scaleEvent, len(changes))
	for i, c := range changes {
		ago := int64(float64(period) - seg*float64(i+1) + seg/2)
		out[i] = scaleEvent{change: c, at: now.Add(-time.Duration(ago) * time.Second)}
	}
	return out
}

// TestUpstreamScalingWithRules restates TestScalingWithRules:
// convertDesiredReplicasWithBehaviorRate with scale events in place. Rules
// left nil are the defaults (GenerateHPAScaleUpRules/ScaleDownRules).
func TestUpstreamScalingWithRules(t *testing.T) {
	now := t0
	for _, tt := range []struct {
		name             string
		ups, downs       []scaleEvent
		min, max         int32
		up, down         *Rules
		current, desired int32
		want             int32
		reason           Reason // "" is upstream's DesiredWithinRange
	}{
		{name: "prenormalized desired replicas within range", current: 5, desired: 7, min: 3, max: 8, want: 7},
		{name: "prenormalized desired replicas < minReplicas", current: 3, desired: 1, min: 2, max: 8, want: 2, reason: ReasonTooFewReplicas},
		{name: "prenormalized desired replicas within range when minReplicas is 0", current: 1, desired: 0, min: 0, max: 10, want: 0},
		{name: "maxReplicas is the limit because maxReplicas < scaleUpLimit", current: 20, desired: 1000, min: 1, max: 10, want: 10, reason: ReasonTooManyReplicas},
		{name: "desired replica count is more than the maximum replica count", current: 100, desired: 1000, min: 100, max: 150, want: 150, reason: ReasonTooManyReplicas},
		{name: "scaleUpLimit is the limit because scaleUpLimit < maxReplicas with user policies", current: 3, desired: 1000, min: 1, max: 2000, up: rules(0, 0, 1, 60, 0), want: 4, reason: ReasonScaleUpLimit},
		{name: "scaleUp with default behavior", current: 10, desired: 50, min: 1, max: 1000, want: 20, reason: ReasonScaleUpLimit},
		{name: "scaleUp with pods policy larger than percent policy", current: 10, desired: 500, min: 1, max: 1000, up: rules(100, 60, 100, 60, 0), want: 110, reason: ReasonScaleUpLimit},
		{name: "scaleUp with percent policy larger than pods policy", current: 10, desired: 500, min: 1, max: 1000, up: rules(2, 60, 100, 60, 0), want: 20, reason: ReasonScaleUpLimit},
		{name: "scaleUp with spec MaxReplicas limitation with large pod policy", current: 10, desired: 50, min: 1, max: 1000, up: rules(100, 60, 0, 0, 0), want: 50},
		{name: "scaleUp with spec MaxReplicas limitation with large percent policy", current: 10, desired: 50, min: 1, max: 1000, up: rules(10000, 60, 0, 0, 0), want: 50},
		{name: "scaleUp with pod policy limitation", current: 10, desired: 50, min: 1, max: 1000, up: rules(30, 60, 0, 0, 0), want: 40, reason: ReasonScaleUpLimit},
		{name: "scaleUp with percent policy limitation", current: 10, desired: 50, min: 1, max: 1000, up: rules(0, 0, 200, 60, 0), want: 30, reason: ReasonScaleUpLimit},
		{name: "scaleDown with percent policy larger than pod policy", current: 100, desired: 2, min: 1, max: 1000, down: rules(20, 60, 1, 60, 300), want: 80, reason: ReasonScaleDownLimit},
		{name: "scaleDown with pod policy larger than percent policy", current: 100, desired: 2, min: 1, max: 1000, down: rules(2, 60, 1, 60, 300), want: 98, reason: ReasonScaleDownLimit},
		{name: "scaleDown with spec MinReplicas limitation with large pod policy", current: 10, desired: 0, min: 1, max: 1000, down: rules(100, 60, 0, 0, 300), want: 1, reason: ReasonTooFewReplicas},
		{name: "scaleDown with spec MinReplicas limitation with large percent policy", current: 10, desired: 2, min: 5, max: 1000, down: rules(0, 0, 100, 60, 300), want: 5, reason: ReasonTooFewReplicas},
		{name: "scaleDown with pod policy limitation", current: 10, desired: 2, min: 1, max: 1000, down: rules(5, 60, 0, 0, 300), want: 5, reason: ReasonScaleDownLimit},
		{name: "scaleDown with percent policy limitation", current: 10, desired: 5, min: 1, max: 1000, down: rules(0, 0, 50, 60, 300), want: 5},
		{name: "scaleUp with spec MaxReplicas limitation with large pod policy and events", ups: spread(now, []int32{1, 5, 9}), current: 100, desired: 500, min: 1, max: 200, up: rules(300, 60, 0, 0, 0), want: 200, reason: ReasonTooManyReplicas},
		{name: "scaleUp with spec MaxReplicas limitation with large percent policy and events", ups: spread(now, []int32{1, 5, 9}), current: 100, desired: 500, min: 1, max: 200, up: rules(0, 0, 10000, 60, 0), want: 200, reason: ReasonTooManyReplicas},
		// 120 s ago there were 100 - 15 = 85; +5 allows 90, below the
		// current count: hold rather than scale down.
		{name: "scaleUp with currentReplicas limitation with rate.PeriodSeconds with a lot of recent scale up events", ups: spread(now, []int32{1, 5, 9}), current: 100, desired: 500, min: 1, max: 1000, up: rules(5, 120, 0, 0, 0), want: 100, reason: ReasonScaleUpLimit},
		{name: "scaleUp with pod policy and previous scale up events", ups: spread(now, []int32{1, 5, 9}), current: 100, desired: 500, min: 1, max: 1000, up: rules(150, 120, 0, 0, 0), want: 235, reason: ReasonScaleUpLimit},
		{name: "scaleUp with percent policy and previous scale up events", ups: spread(now, []int32{1, 5, 9}), current: 100, desired: 500, min: 1, max: 1000, up: rules(0, 0, 200, 120, 0), want: 255, reason: ReasonScaleUpLimit},
		// From 6 - 4 + 2 = 4 at the period's start, +300% = 16.
		{name: "scaleUp with percent policy and previous scale up and down events", ups: spread(now, []int32{4}), downs: spread(now, []int32{2}), current: 6, desired: 24, min: 1, max: 1000, up: rules(0, 0, 300, 300, 0), want: 16, reason: ReasonScaleUpLimit},
		{name: "scaleDown with default policy and previous events", downs: spread(now, []int32{1, 5, 9}), current: 10, desired: 5, min: 1, max: 1000, want: 5},
		{name: "scaleDown with spec MinReplicas=nil limitation with large pod policy and previous events", downs: spread(now, []int32{1, 5, 9}), current: 100, desired: 0, min: 1, max: 1000, down: rules(115, 120, 0, 0, 300), want: 1, reason: ReasonTooFewReplicas},
		{name: "scaleDown with spec MinReplicas limitation with large pod policy and previous events", downs: spread(now, []int32{1, 5, 9}), current: 100, desired: 0, min: 5, max: 1000, down: rules(130, 120, 0, 0, 300), want: 5, reason: ReasonTooFewReplicas},
		{name: "scaleDown with spec MinReplicas limitation with large percent policy and previous events", downs: spread(now, []int32{1, 5, 9}), current: 100, desired: 2, min: 5, max: 1000, down: rules(0, 0, 100, 120, 300), want: 5, reason: ReasonTooFewReplicas},
		{name: "scaleDown with pod policy limitation and previous events", downs: spread(now, []int32{1, 5, 9}), current: 100, desired: 2, min: 1, max: 1000, down: rules(5, 120, 0, 0, 300), want: 100, reason: ReasonScaleDownLimit},
		{name: "scaleDown with percent policy limitation and previous events", downs: spread(now, []int32{2, 4, 6}), current: 100, desired: 0, min: 1, max: 1000, down: rules(0, 0, 50, 120, 300), want: 56, reason: ReasonScaleDownLimit},
		// From 10 - 2 + 4 = 12 at the period's start, -50% = 6.
		{name: "scaleDown with percent policy and previous scale up and down events", ups: spread(now, []int32{2}), downs: spread(now, []int32{4}), current: 10, desired: 1, min: 1, max: 1000, down: rules(0, 0, 50, 180, 0), want: 6, reason: ReasonScaleDownLimit},
		{name: "scaleDown with previous events preventing further scale down", downs: spread(now, []int32{10, 10, 10}), current: 100, desired: 0, min: 1, max: 1000, down: rules(0, 0, 10, 120, 300), want: 100, reason: ReasonScaleDownLimit},
		{name: "scaleDown with with previous events still allowing more scale down", downs: spread(now, []int32{10, 10, 10}), current: 10, desired: 5, min: 1, max: 1000, down: rules(0, 0, 1000, 120, 300), want: 5},
		{name: "check 'outdated' flag for events for one behavior for up", ups: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 200, min: 1, max: 1000, up: rules(1000, 60, 0, 0, 0), want: 200},
		{name: "check that events were not marked 'outdated' for two different policies in the behavior for up", ups: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 200, min: 1, max: 1000, up: rules(1000, 120, 100, 60, 0), want: 200},
		{name: "check that events were marked 'outdated' for two different policies in the behavior for up", ups: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 200, min: 1, max: 1000, up: rules(1000, 30, 100, 60, 0), want: 200},
		{name: "check 'outdated' flag for events for one behavior for down", downs: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 5, min: 1, max: 1000, down: rules(1000, 60, 0, 0, 300), want: 5},
		{name: "check that events were not marked 'outdated' for two different policies in the behavior for down", downs: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 5, min: 1, max: 1000, down: rules(1000, 120, 100, 60, 300), want: 5},
		{name: "check that events were marked 'outdated' for two different policies in the behavior for down", downs: spread(now, []int32{8, 12, 9, 11}), current: 100, desired: 5, min: 1, max: 1000, down: rules(1000, 30, 100, 60, 300), want: 5},
	} {
		t.Run("TestScalingWithRules/"+tt.name, func(t *testing.T) {
			b := DefaultBehavior()
			if tt.up != nil {
				b.ScaleUp = *tt.up
			}
			if tt.down != nil {
				b.ScaleDown = *tt.down
			}
			a := New(Spec{MinReplicas: tt.min, MaxReplicas: tt.max, Behavior: b})
			a.ups, a.downs = tt.ups, tt.downs
			got, reason := a.limitRate(now, tt.current, tt.desired)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.reason, reason)
		})
	}
}

// TestUpstreamScaleLimits restates TestCalculateScaleUpLimitWithScalingRules
// and TestCalculateScaleDownLimitWithBehaviors: selectPolicy Min picks the
// smaller change, 2 pods or 50%, each way.
func TestUpstreamScaleLimits(t *testing.T) {
	r := Rules{Select: SelectMin, StabilizationWindow: 300 * time.Second, Policies: []Policy{{Pods, 2, time.Minute}, {Percent, 50, time.Minute}}}
	a := New(Spec{MinReplicas: 1, MaxReplicas: 100, Behavior: Behavior{ScaleUp: r, ScaleDown: r}})
	require.Equal(t, int32(2), a.scaleUpLimit(t0, 1), "min(1 + 2, ceil(1 x 1.5))")
	require.Equal(t, int32(3), a.scaleDownLimit(t0, 5), "max(5 - 2, int(5 x 0.5))")
}

// TestUpstreamStoreScaleEvents restates TestStoreScaleEvents' cases with a
// behavior (without one upstream stores nothing; the connector always has
// one): the change within the last 60 s before, then the events after a
// change of 5 is stored, up and down alike.
func TestUpstreamStoreScaleEvents(t *testing.T) {
	now := t0
	ago := func(s int) time.Time { return now.Add(-time.Duration(s) * time.Second) }
	type ev struct {
		change   int32
		outdated bool
	}
	for _, tt := range []struct {
		name    string
		rules   *Rules
		prev    []scaleEvent
		changed int32
		after   []ev
	}{
		{"empty entries with two-policy-behavior", rules(10, 60, 100, 60, 0), nil, 0, []ev{{5, false}}},
		{"one outdated entry to be replaced with behavior", rules(10, 60, 100, 60, 0), []scaleEvent{{change: 7, at: ago(61)}}, 0, []ev{{5, false}}},
		{"one actual entry to be not touched with behavior", rules(10, 60, 100, 60, 0), []scaleEvent{{change: 7, at: ago(58)}}, 7, []ev{{7, false}, {5, false}}},
		{"two entries, one of them to be replaced", rules(10, 60, 0, 0, 0), []scaleEvent{{change: 7, at: ago(61)}, {change: 6, at: ago(59)}}, 6, []ev{{5, false}, {6, false}}},
		// Both events older than the longest period (60 s) are marked; the
		// last of them is replaced, the other stays, marked.
		{"replace one entry, use policies with different periods", rules(10, 60, 100, 30, 0), []scaleEvent{{change: 8, at: ago(29)}, {change: 6, at: ago(59)}, {change: 7, at: ago(61)}, {change: 9, at: ago(61)}}, 14, []ev{{8, false}, {6, false}, {7, true}, {5, false}}},
		{"two entries, both actual", rules(10, 120, 100, 30, 0), []scaleEvent{{change: 7, at: ago(58)}, {change: 6, at: ago(59)}}, 13, []ev{{7, false}, {6, false}, {5, false}}},
	} {
		for _, up := range []bool{true, false} {
			t.Run(fmt.Sprintf("TestStoreScaleEvents/%s (up %v)", tt.name, up), func(t *testing.T) {
				b := DefaultBehavior()
				if up {
					b.ScaleUp = *tt.rules
				} else {
					b.ScaleDown = *tt.rules
				}
				a := New(Spec{MinReplicas: 1, MaxReplicas: 100, Behavior: b})
				events := &a.downs
				to := int32(10 - 5)
				if up {
					events, to = &a.ups, 10+5
				}
				*events = append([]scaleEvent(nil), tt.prev...)
				require.Equal(t, tt.changed, changed(now, time.Minute, *events))
				a.Record(now, 10, to)
				var got []ev
				for _, e := range *events {
					got = append(got, ev{e.change, e.outdated})
				}
				require.Equal(t, tt.after, got)
			})
		}
	}
}

// TestUpstreamStabilization restates TestNormalizeDesiredReplicasWithBehavior
// (stabilizeRecommendationWithBehaviors): the stabilized count and the
// recommendations kept afterwards. Windows left 0 are 0, as there.
func TestUpstreamStabilization(t *testing.T) {
	now := t0
	mins := func(m int) time.Time { return now.Add(-time.Duration(m) * time.Minute) }
	for _, tt := range []struct {
		name              string
		recs              []recommendation
		current, desired  int32
		want              int32
		kept              []int32 // nil: not checked upstream
		upWindow, downWin time.Duration
	}{
		{"empty recommendations for scaling down", []recommendation{}, 100, 5, 5, []int32{5}, 0, 0},
		{"simple scale down stabilization", []recommendation{{4, mins(2)}, {5, mins(1)}}, 100, 3, 5, []int32{4, 5, 3}, 0, 3 * time.Minute},
		{"simple scale up stabilization", []recommendation{{4, mins(2)}, {5, mins(1)}}, 1, 7, 4, []int32{4, 5, 7}, 5 * time.Minute, 0},
		{"no scale down stabilization", []recommendation{{1, mins(2)}, {2, mins(1)}}, 100, 3, 3, []int32{1, 2, 3}, 5 * time.Minute, 0},
		{"no scale up stabilization", []recommendation{{4, mins(2)}, {5, mins(1)}}, 1, 3, 3, []int32{4, 5, 3}, 0, 5 * time.Minute},
		{"no scale down stabilization, reuse recommendation element", []recommendation{{10, mins(10)}, {9, mins(9)}}, 100, 3, 3, []int32{10, 3}, 0, 0},
		{"no scale up stabilization, reuse recommendation element", []recommendation{{10, mins(10)}, {9, mins(9)}}, 1, 100, 100, []int32{10, 100}, 0, 0},
		{"scale down stabilization, reuse one of obsolete recommendation element", []recommendation{{10, mins(10)}, {4, mins(1)}, {5, mins(2)}, {9, mins(9)}}, 100, 3, 5, []int32{10, 4, 5, 3}, 0, 3 * time.Minute},
		// Upstream's case says the scale-down window is the default (300 s)
		// but leaves it 0 in the arguments; only the first recommendation
		// is outside the 300 s scale-up window either way.
		{"scale up stabilization, reuse one of obsolete recommendation element", []recommendation{{10, mins(100)}, {6, mins(1)}, {5, mins(2)}, {9, mins(3)}}, 1, 100, 5, []int32{100, 6, 5, 9}, 300 * time.Second, 0},
		{"scale up and down stabilization, do not scale up when prenormalized rec goes down", []recommendation{{2, mins(100)}, {3, mins(3)}}, 2, 1, 2, nil, 300 * time.Second, 300 * time.Second},
		{"scale up and down stabilization, do not scale down when prenormalized rec goes up", []recommendation{{2, mins(100)}, {1, mins(3)}}, 2, 3, 2, nil, 300 * time.Second, 300 * time.Second},
	} {
		t.Run("TestNormalizeDesiredReplicasWithBehavior/"+tt.name, func(t *testing.T) {
			b := DefaultBehavior()
			b.ScaleUp.StabilizationWindow, b.ScaleDown.StabilizationWindow = tt.upWindow, tt.downWin
			a := New(Spec{MinReplicas: 1, MaxReplicas: 1000, Behavior: b})
			a.recommendations = tt.recs
			require.Equal(t, tt.want, a.stabilize(now, tt.current, tt.desired))
			if tt.kept != nil {
				var kept []int32
				for _, r := range a.recommendations {
					kept = append(kept, r.replicas)
				}
				require.Equal(t, tt.kept, kept)
			}
		})
	}
}

// TestUpstreamReconcile restates the controller tests (horizontal_test.go)
// of one reconcile on a Pods metric: the count written, or none.
func TestUpstreamReconcile(t *testing.T) {
	type metric struct {
		target int64 // milli-units
		levels []int64
	}
	for _, tt := range []struct {
		upstream          string
		min, max, current int32
		pods              string
		metrics           []metric
		up, down          float64
		recs              []recommendation // nil: the first reconcile's, as upstream's nil
		want              int32
		reason            Reason
	}{
		{"TestScaleUpCM/scale up custom metric", 2, 6, 3, "RRR", []metric{{15000, []int64{20000, 10000, 30000}}}, 0.1, 0.1, nil, 4, ReasonScaled},
		{"TestScaleUpCM/unready and hot cpu pods do not reduce scale for custom metric", 2, 6, 3, "RRR", []metric{{15000, []int64{50000, 10000, 30000}}}, 0.1, 0.1, nil, 6, ReasonScaled},
		{"TestScaleUpCM/unready and hot cpu pods scale to max with scaling limited condition", 2, 6, 3, "RRR", []metric{{15000, []int64{50000, 15000, 30000}}}, 0.1, 0.1, nil, 6, ReasonTooManyReplicas},
		{"TestScaleDownCM/scale down pods metric", 2, 6, 5, "RRRRR", []metric{{20000, []int64{12000, 12000, 12000, 12000, 12000}}}, 0.1, 0.1, []recommendation{}, 3, ReasonScaled},
		{"TestTolerance/pods metric within tolerance", 1, 5, 3, "RRR", []metric{{20000, []int64{20000, 20001, 21000}}}, 0.1, 0.1, nil, 3, ReasonWithinTolerance},
		// TestConfigurableTolerance's CPU cases, as pod values against 1000m.
		{"TestConfigurableTolerance/scaling up because of a 1% configurable tolerance", 1, 5, 3, "RRR", []metric{{1000, []int64{1010, 1030, 1020}}}, 0.01, 0.1, nil, 4, ReasonScaled},
		{"TestConfigurableTolerance/no scale-down because of a 90% configurable tolerance", 1, 5, 3, "RRR", []metric{{1000, []int64{300, 300, 300}}}, 0.1, 0.9, nil, 3, ReasonWithinTolerance},
		{"TestConfigurableTolerance/no scaling because of the large default tolerance", 1, 5, 3, "RRR", []metric{{1000, []int64{1010, 1030, 1020}}}, 0.1, 0.1, nil, 3, ReasonWithinTolerance},
		// The first reconcile recorded 5 just now: the scale-down waits.
		{"TestScaleDownStabilizeInitialSize", 2, 6, 5, "RRRRR", []metric{{500, []int64{100, 300, 500, 250, 250}}}, 0.1, 0.1, nil, 5, ReasonStabilized},
		{"TestStabilizeDownscale", 1, 5, 4, "RRR", []metric{{100, []int64{50, 50, 50}}}, 0.1, 0.1, []recommendation{{10, t0.Add(-10 * time.Minute)}, {4, t0.Add(-time.Minute)}}, 4, ReasonStabilized},
		// A second metric without values: the valid one scales up alone,
		// but may not scale down.
		{"TestScaleUpOneMetricEmpty", 2, 6, 3, "RRR", []metric{{300, []int64{300, 400, 500}}, {100, nil}}, 0.1, 0.1, nil, 4, ReasonScaled},
		{"TestScaleWithOneInvalidMetric/scale up with one invalid metric", 2, 6, 3, "RRR", []metric{{300, []int64{300, 400, 500}}, {100, nil}}, 0.1, 0.1, nil, 4, ReasonScaled},
		{"TestNoScaleDownOneMetricInvalid", 2, 6, 5, "RRRRR", []metric{{500, []int64{100, 300, 500, 250, 250}}, {1000, nil}}, 0.1, 0.1, []recommendation{}, 5, ReasonInvalidMetrics},
		{"TestNoScaleDownOneMetricEmpty", 2, 6, 5, "RRRRR", []metric{{500, []int64{100, 300, 500, 250, 250}}, {1000, nil}}, 0.1, 0.1, []recommendation{}, 5, ReasonInvalidMetrics},
		// TestReplicaLimits, as pod values against 90% of 1000m.
		{"TestReplicaLimits/scale down clamped to min replicas", 2, 5, 3, "RRR", []metric{{900, []int64{10, 95, 10}}}, 0.1, 0.1, []recommendation{}, 2, ReasonTooFewReplicas},
		{"TestReplicaLimits/scale down to zero when min replicas is zero", 0, 5, 3, "RRR", []metric{{900, []int64{0, 0, 0}}}, 0.1, 0.1, []recommendation{}, 0, ReasonScaled},
		{"TestReplicaLimits/scale down clamped to min when desired is zero", 2, 5, 3, "RRR", []metric{{900, []int64{0, 0, 0}}}, 0.1, 0.1, []recommendation{}, 2, ReasonTooFewReplicas},
		{"TestReplicaLimits/no scaling when spec replicas is zero", 3, 5, 0, "", []metric{{900, nil}}, 0.1, 0.1, nil, 0, ReasonScalingDisabled},
		{"TestReplicaLimits/scale up to min when below min replicas", 3, 5, 2, "", []metric{{900, nil}}, 0.1, 0.1, nil, 3, ReasonTooFewReplicas},
		{"TestReplicaLimits/scale down to max when above max replicas", 3, 5, 10, "", []metric{{900, nil}}, 0.1, 0.1, nil, 5, ReasonTooManyReplicas},
		{"TestReplicaLimits/scale up clamped to max replicas", 2, 5, 3, "RRR", []metric{{900, []int64{8000, 9500, 1000}}}, 0.1, 0.1, nil, 5, ReasonTooManyReplicas},
	} {
		t.Run(tt.upstream, func(t *testing.T) {
			s := Spec{MinReplicas: tt.min, MaxReplicas: tt.max, Behavior: DefaultBehavior()}
			s.Behavior.ScaleUp.Tolerance, s.Behavior.ScaleDown.Tolerance = tt.up, tt.down
			var values []map[string]float64
			for i, m := range tt.metrics {
				s.Metrics = append(s.Metrics, Metric{Name: fmt.Sprintf("m%d", i), Target: float64(m.target) / 1000})
				values = append(values, levels(m.levels...)[0])
			}
			a := New(s)
			a.recommendations = tt.recs
			d := a.Evaluate(Observation{Now: t0, Current: tt.current, Pods: podsOf(tt.pods), Values: values})
			require.Equal(t, tt.want, d.Desired)
			require.Equal(t, tt.reason, d.Reason)
		})
	}
}
