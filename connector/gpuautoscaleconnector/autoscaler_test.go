package gpuautoscaleconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadatatest"
)

// fakeAPI is a scale subresource in memory, for the rules that do not need
// a real API server (those are in integration_test.go).
type fakeAPI struct {
	replicas int32
	writes   []int32
}

func (f *fakeAPI) Current(context.Context, kube.Ref) (int32, error) { return f.replicas, nil }
func (f *fakeAPI) Set(_ context.Context, _ kube.Ref, n int32) (int32, error) {
	before := f.replicas
	f.replicas = n
	f.writes = append(f.writes, n)
	return before, nil
}

func newTestAutoscaler(t *testing.T, target TargetConfig, api *fakeAPI, set ...connector.Settings) *autoscaler {
	cfg := createDefaultConfig()
	cfg.LeaderElection.Enabled = false
	cfg.Targets = []TargetConfig{target}
	require.NoError(t, cfg.Validate())
	settings := connectortest.NewNopSettings(metadata.Type)
	if len(set) > 0 {
		settings = set[0]
	}
	a, err := newAutoscaler(cfg, settings)
	require.NoError(t, err)
	a.api = api
	return a
}

func decisionReason(t *testing.T, md pmetric.Metrics) string {
	t.Helper()
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == "gpu.autoscale.decision" {
			r, _ := ms.At(i).Gauge().DataPoints().At(0).Attributes().Get("gpu.autoscale.reason")
			return r.Str()
		}
	}
	t.Fatal("no decision metric")
	return ""
}

func TestNeverScalesDownOnStaleOrMissingMetrics(t *testing.T) {
	api := &fakeAPI{replicas: 6}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	ctx := context.Background()
	t0 := time.Now()
	// Idle GPUs, but their values are 5 minutes old: no data, no action.
	require.NoError(t, a.consume(ctx, gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 6, 0.01, t0.Add(-5*time.Minute))))
	for i := range 40 {
		a.evaluate(ctx, t0.Add(time.Duration(i)*15*time.Second))
	}
	require.Empty(t, api.writes, "stale metrics never scale anything down")

	// 1 of 6 pods reports, idle: the 5 missing count as on target, so the
	// average stays near target and nothing goes down.
	for i := range 40 {
		now := t0.Add(10*time.Minute + time.Duration(i)*15*time.Second)
		require.NoError(t, a.consume(ctx, gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 1, 0.01, now)))
		a.evaluate(ctx, now)
	}
	require.Empty(t, api.writes, "missing metrics never scale anything down")
}

func TestStaysWithinMinAndMax(t *testing.T) {
	target := deploymentTarget("ml", "inference")
	target.MinReplicas, target.MaxReplicas = 2, 5
	api := &fakeAPI{replicas: 1} // below min, set by someone else
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	a := newTestAutoscaler(t, target, api, metadatatest.NewSettings(tel))
	ctx := context.Background()
	t0 := time.Now()
	for i := range 20 {
		now := t0.Add(time.Duration(i) * 15 * time.Second)
		require.NoError(t, a.consume(ctx, gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, int(api.replicas), 5.0, now)))
		a.evaluate(ctx, now)
	}
	require.NotEmpty(t, api.writes)
	for _, w := range api.writes {
		require.GreaterOrEqual(t, w, int32(2))
		require.LessOrEqual(t, w, int32(5))
	}
	require.Equal(t, int32(5), api.replicas)
	metadatatest.AssertEqualConnectorGpuAutoscaleScaleActions(t, tel, []metricdata.DataPoint[int64]{{Value: int64(len(api.writes))}}, metricdatatest.IgnoreTimestamp())
	metadatatest.AssertEqualConnectorGpuAutoscaleEvaluations(t, tel, []metricdata.DataPoint[int64]{{Value: 20}}, metricdatatest.IgnoreTimestamp())
}

func TestNonLeaderDoesNotWrite(t *testing.T) {
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	a.leading = false
	sink := new(consumertest.MetricsSink)
	a.metricsOut = sink
	now := time.Now()
	require.NoError(t, a.consume(context.Background(), gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	a.evaluate(context.Background(), now)
	require.Empty(t, api.writes)
	require.Equal(t, "Scaled", decisionReason(t, sink.AllMetrics()[0]), "it still reports what it would decide")
}
