package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
)

// multiGPUMetrics is one batch of nvidia.gpu.sm.active from the pods of
// Deployment ml/inference, which have several GPUs each: pod inference-i
// reports gpus[i], one series per GPU.
func multiGPUMetrics(gpus [][]float64, at time.Time) pmetric.Metrics {
	const ns, deployment = "ml", "inference"
	md := pmetric.NewMetrics()
	for p, values := range gpus {
		for g, v := range values {
			rm := md.ResourceMetrics().AppendEmpty()
			a := rm.Resource().Attributes()
			a.PutStr("k8s.namespace.name", ns)
			a.PutStr("k8s.deployment.name", deployment)
			a.PutStr("k8s.pod.name", fmt.Sprintf("%s-%d", deployment, p))
			a.PutStr("hw.id", fmt.Sprintf("GPU-%d-%d", p, g))
			m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("nvidia.gpu.sm.active")
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
			dp.SetDoubleValue(v)
		}
	}
	return md
}

// pods lists n pods with the same GPU values.
func pods(n int, gpus ...float64) [][]float64 {
	out := make([][]float64, n)
	for i := range out {
		out[i] = gpus
	}
	return out
}

// exactTarget is a target on nvidia.gpu.sm.active with per-direction
// tolerances (KEP-4951) and otherwise the HPA's default behavior.
func exactTarget(target, up, down float64) TargetConfig {
	tc := deploymentTarget("ml", "inference")
	tc.TargetValue, tc.MaxReplicas = target, 40
	tc.Behavior = BehaviorConfig{ScaleUp: &RulesConfig{Tolerance: &up}, ScaleDown: &RulesConfig{Tolerance: &down}}
	return tc
}

// decide feeds one batch and evaluates once; it returns the desired count
// and the decision's reason.
func decide(t *testing.T, a *autoscaler, sink *consumertest.MetricsSink, md pmetric.Metrics, now time.Time) (int32, string) {
	t.Helper()
	require.NoError(t, a.consume(context.Background(), md))
	a.evaluate(context.Background(), now)
	all := sink.AllMetrics()
	out := all[len(all)-1]
	ms := out.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == "gpu.autoscale.replicas.desired" {
			return int32(ms.At(i).Gauge().DataPoints().At(0).IntValue()), decisionReason(t, out)
		}
	}
	t.Fatal("no desired replicas metric")
	return 0, ""
}

// The four disagreements an independent implementation of the upstream HPA
// found in closed-loop runs with pods of several GPUs (kubernetes,
// pkg/controller/podautoscaler, release 1.33 and later). Each expectation is
// worked out from upstream's code in the comments; all four came from the
// pod's value: its GPUs were averaged in float64 and the average read as a
// quantity, rounded up to a milli-unit.
func TestPodValuesAsTheHPAReadsThem(t *testing.T) {
	start := time.Unix(1767225600, 0)
	setup := func(tc TargetConfig, replicas int32) (*autoscaler, *fakeAPI, *consumertest.MetricsSink) {
		api := &fakeAPI{replicas: replicas}
		a := newTestAutoscaler(t, tc, api)
		sink := new(consumertest.MetricsSink)
		a.metricsOut = sink
		return a, api, sink
	}

	t.Run("three GPUs at 0.792 are 792m, not 793m", func(t *testing.T) {
		// calcPlainMetricReplicas: 792m / 660m = 1.2 > 1 + 0.02, so
		// ceil(1.2 x 5) = 6. In float64 (0.792 x 3) / 3 = 0.7920000000000001,
		// 793m: ceil(1.2015 x 5) = 7.
		a, api, sink := setup(exactTarget(0.66, 0.02, 0.1), 5)
		n, reason := decide(t, a, sink, multiGPUMetrics(pods(5, 0.792, 0.792, 0.792), start), start)
		require.Equal(t, "Scaled", reason)
		require.Equal(t, int32(6), n)
		require.Equal(t, []int32{6}, api.writes)
		require.InDelta(t, 0.792, metricValues(t, sink.AllMetrics()[0], "gpu.autoscale.metric.value")["nvidia.gpu.sm.active"], 0)
	})

	t.Run("a pod's mean is truncated to a milli-unit", func(t *testing.T) {
		// (673 + 673 + 674) / 3 = 673.33 -> 673m, as GetMetricUsageRatio
		// truncates a mean; 673 / 660 = 1.0197 <= 1 + 0.02: within the
		// tolerance. The float mean 0.67333 read as a quantity is 674m:
		// 1.0212, and ceil(1.0212 x 4) = 5. Found by a search over GPU
		// triples between 0.650 and 0.700 for a pod whose float mean reads
		// one milli-unit above its truncated mean and crosses the tolerance.
		a, api, sink := setup(exactTarget(0.66, 0.02, 0.1), 4)
		n, reason := decide(t, a, sink, multiGPUMetrics(pods(4, 0.673, 0.673, 0.674), start), start)
		require.Equal(t, "WithinTolerance", reason)
		require.Equal(t, int32(4), n)
		require.Empty(t, api.writes)
	})

	t.Run("ten pods at 352m against 0.32: exactly 1 + tolerance holds", func(t *testing.T) {
		// 352m / 320m is the float64 nearest 1.1, the same as 1.0 + 0.1:
		// Tolerances.isWithin (both bounds inclusive) holds at 10. Three GPUs
		// at 0.352 average to 0.35200000000000004 in float64, 353m: 1.103,
		// and ceil(1.103 x 10) = 12.
		a, api, sink := setup(exactTarget(0.32, 0.1, 0.1), 10)
		n, reason := decide(t, a, sink, multiGPUMetrics(pods(10, 0.352, 0.352, 0.352), start), start)
		require.Equal(t, "WithinTolerance", reason)
		require.Equal(t, int32(10), n)
		require.Empty(t, api.writes)
	})

	t.Run("a recommendation misread earlier is not held by the window", func(t *testing.T) {
		// The settings: scale-up policies Pods 8/120 s, Pods 5/15 s
		// and Percent 10/30 s with selectPolicy Min; scale-down tolerance
		// 0.02, the default 300 s scale-down window.
		tc := exactTarget(0.805, 0.1, 0.02)
		tc.Behavior.ScaleUp.Policies = []PolicyConfig{{Type: "Pods", Value: 8, Period: 120 * time.Second}, {Type: "Pods", Value: 5, Period: 15 * time.Second}, {Type: "Percent", Value: 10, Period: 30 * time.Second}}
		tc.Behavior.ScaleUp.SelectPolicy = "Min"
		a, api, sink := setup(tc, 4)
		// 0 s: on target; recordInitialRecommendation and this reconcile
		// both record 4.
		n, _ := decide(t, a, sink, multiGPUMetrics(pods(4, 0.805, 0.805, 0.805), start), start)
		require.Equal(t, int32(4), n)
		// 15 s: (402 + 402 + 403) / 3 -> 402m; ceil(402/805 x 4) =
		// ceil(1.9975) = 2 is recorded, and the window's 4 holds. Read as
		// 403m it would record ceil(2.0025) = 3.
		n, reason := decide(t, a, sink, multiGPUMetrics(pods(4, 0.402, 0.402, 0.403), start.Add(15*time.Second)), start.Add(15*time.Second))
		require.Equal(t, int32(4), n)
		require.Equal(t, "Stabilized", reason)
		// 300 s: the recommendations of 0 s are exactly a window old, out
		// of it (stabilizeRecommendationWithBehaviors keeps timestamps After
		// the cutoff). Four pods at 211m ask for ceil(211/805 x 4) = 2; the
		// window holds the 2 of 15 s, so upstream goes to 2. No scale event
		// was stored before this one: the policies play no part.
		now := start.Add(300 * time.Second)
		n, reason = decide(t, a, sink, multiGPUMetrics(pods(4, 0.211, 0.211, 0.211), now), now)
		require.Equal(t, int32(2), n, reason)
		require.Equal(t, []int32{2}, api.writes)
	})
}

// TestPodValueIndependentOfSeriesOrder: the series of a pod come out of a
// map; combined in integers their order cannot change the pod's value.
func TestPodValueIndependentOfSeriesOrder(t *testing.T) {
	// In float64, 0.1 + 0.2 + 0.3 is 0.6000000000000001 and 0.3 + 0.2 + 0.1
	// is 0.6: a third of either read as a quantity is 201m or 200m.
	gpus := []float64{0.1, 0.2, 0.3}
	want := hpa.PodValue("avg", gpus)
	for range 200 {
		a, _, sink := func() (*autoscaler, *fakeAPI, *consumertest.MetricsSink) {
			api := &fakeAPI{replicas: 1}
			a := newTestAutoscaler(t, exactTarget(0.5, 0.1, 0.1), api)
			sink := new(consumertest.MetricsSink)
			a.metricsOut = sink
			return a, api, sink
		}()
		now := time.Unix(1767225600, 0)
		decide(t, a, sink, multiGPUMetrics([][]float64{gpus}, now), now)
		got := metricValues(t, sink.AllMetrics()[0], "gpu.autoscale.metric.value")["nvidia.gpu.sm.active"]
		require.InDelta(t, want, got, 0)
	}
	require.InDelta(t, 0.2, want, 0, "600m / 3")
}
