package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"sync"
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
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadatatest"
)

// fakeAPI is a scale subresource and its pods in memory, for the rules that
// do not need a real API server (those are in integration_test.go). Like a
// Deployment's controller at once, it has pods PREFIX-0 .. PREFIX-(n-1),
// running, for n replicas.
type fakeAPI struct {
	mu       sync.Mutex
	replicas int32
	prefix   string
	writes   []int32
}

func (f *fakeAPI) Scale(context.Context, kube.Ref) (kube.Scale, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return kube.Scale{Replicas: f.replicas, Selector: "app=" + f.prefix}, nil
}

func (f *fakeAPI) Pods(context.Context, string, string) ([]hpa.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var pods []hpa.Pod
	for i := range f.replicas {
		pods = append(pods, hpa.Pod{Name: fmt.Sprintf("%s-%d", f.prefix, i), Phase: hpa.Running})
	}
	return pods, nil
}

func (f *fakeAPI) Set(_ context.Context, _ kube.Ref, n int32) (int32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
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
	if api.prefix == "" {
		api.prefix = target.ScaleTargetRef.Name
	}
	a.newAPI = func() (cluster, *kube.Leases, error) { return api, nil, nil }
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

// TestStaleNonLeaderDoesNotWrite: a replica whose values went stale gives
// up the target; it never writes on what it no longer sees.
func TestNonLeaderDoesNotWrite(t *testing.T) {
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	a.connect(time.Now())
	a.leases = notLeading(t)
	sink := new(consumertest.MetricsSink)
	a.metricsOut = sink
	now := time.Now()
	require.NoError(t, a.consume(context.Background(), gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	a.evaluate(context.Background(), now)
	require.Empty(t, api.writes)
	require.Equal(t, "Scaled", decisionReason(t, sink.AllMetrics()[0]), "it still reports what it would decide")
}

// notLeading returns Leases where another replica holds every target's
// Lease for an hour.
func notLeading(t *testing.T) *kube.Leases {
	lc := kube.LeaseConfig{Prefix: "gpu", Namespace: "obs", Identity: "me",
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second}
	holder, hour, now := "other", int32(3600), metav1.NewMicroTime(time.Now())
	cs := fake.NewClientset(&coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: kube.LeaseName("gpu", kube.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "ml", Name: "inference"}), Namespace: "obs"},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &hour, AcquireTime: &now, RenewTime: &now},
	})
	l := kube.NewLeasesForClient(cs, lc, nil)
	t.Cleanup(l.Stop)
	return l
}
