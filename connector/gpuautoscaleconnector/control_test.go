package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedcomponent"
)

// consumeWithin runs a pipeline's fan-out as the collector does, one
// consumer after the other: the connector, then another exporter. It fails
// the test if the connector does not return: its lock is held elsewhere.
func consumeWithin(t *testing.T, h *harness, other *consumertest.MetricsSink, md pmetric.Metrics) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		err := h.in.ConsumeMetrics(context.Background(), md)
		if err == nil {
			err = other.ConsumeMetrics(context.Background(), md)
		}
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("ConsumeMetrics is stuck behind the evaluation: the pipeline's other exporters starve")
	}
}

// TestSlowAPIServerDoesNotStallThePipeline: while an evaluation waits on a
// Kubernetes API server that does not answer, the pipeline keeps
// delivering metrics, to the connector and to the exporters after it.
func TestSlowAPIServerDoesNotStallThePipeline(t *testing.T) {
	release := make(chan struct{})
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		http.Error(w, "slow", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: slow, cluster: {server: %q}}]
users: [{name: slow, user: {token: t}}]
contexts: [{name: slow, context: {cluster: slow, user: slow}}]
current-context: slow
`, srv.URL)), 0o600))
	cfg := createDefaultConfig()
	cfg.Interval = time.Hour
	cfg.APITimeout = 10 * time.Minute // slow, not failing
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: kc}
	cfg.LeaderElection.Enabled = false
	cfg.Targets = []TargetConfig{deploymentTarget("ml", "inference")}
	require.NoError(t, cfg.Validate())
	h := start(t, "slow", cfg)
	other := new(consumertest.MetricsSink)
	workload := map[string]string{"k8s.deployment.name": "inference"}
	now := time.Now()
	consumeWithin(t, h, other, gpuMetrics("ml", workload, 2, 1.0, now))

	evaluated := make(chan struct{})
	go func() {
		h.a.evaluate(context.Background(), now)
		close(evaluated)
	}()
	<-arrived // the evaluation waits on the API server
	for i := range 5 {
		consumeWithin(t, h, other, gpuMetrics("ml", workload, 2, 1.0, now.Add(time.Duration(i)*time.Second)))
	}
	require.Len(t, other.AllMetrics(), 6, "the exporter after the connector got every batch")
	select {
	case <-evaluated:
		t.Fatal("the evaluation should still be waiting on the API server")
	default:
	}
	close(release)
	<-evaluated
	ev := h.host.last.Load()
	require.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
}

// blockingSink is a downstream consumer that blocks until released.
type blockingSink struct {
	consumertest.MetricsSink
	entered chan struct{}
	release chan struct{}
}

func (b *blockingSink) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	b.entered <- struct{}{}
	<-b.release
	return b.MetricsSink.ConsumeMetrics(ctx, md)
}

// TestSlowDownstreamDoesNotStallThePipeline: while the connector's own
// output (its decisions) is stuck downstream, metrics still flow in.
func TestSlowDownstreamDoesNotStallThePipeline(t *testing.T) {
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	out := &blockingSink{entered: make(chan struct{}, 1), release: make(chan struct{})}
	a.metricsOut = out
	h := &harness{a: a, in: &instance{&sharedcomponent.Shared[*autoscaler]{Value: a}}}
	other := new(consumertest.MetricsSink)
	now := time.Now()
	workload := map[string]string{"k8s.deployment.name": "inference"}
	consumeWithin(t, h, other, gpuMetrics("ml", workload, 2, 1.0, now))
	evaluated := make(chan struct{})
	go func() {
		a.evaluate(context.Background(), now)
		close(evaluated)
	}()
	<-out.entered // the decisions are stuck downstream
	consumeWithin(t, h, other, gpuMetrics("ml", workload, 2, 1.0, now.Add(time.Second)))
	close(out.release)
	<-evaluated
	require.Equal(t, []int32{4}, api.writes)
	require.Len(t, out.AllMetrics(), 1)
}

// TestClientBuildFailureIsReportedAndRetried: a client that cannot be
// built is not "no cluster". The component reports it, writes nothing,
// logs no dry-run decision for a target that is not dry run, and rebuilds
// the client with back-off until it builds; then it scales.
func TestClientBuildFailureIsReportedAndRetried(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster: in_cluster fails
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	host := &statusHost{}
	a.host = host
	logs := new(consumertest.LogsSink)
	a.logsOut = logs
	var builds atomic.Int32
	a.newAPI = func() (cluster, *kube.Leases, error) {
		if builds.Add(1) <= 2 {
			return a.kubernetesAPI() // the real builder, auth in_cluster: fails here
		}
		return api, nil, nil
	}
	ctx := context.Background()
	t0 := time.Now()
	workload := map[string]string{"k8s.deployment.name": "inference"}
	evaluate := func(at time.Duration) {
		now := t0.Add(at)
		require.NoError(t, a.consume(ctx, gpuMetrics("ml", workload, int(api.replicas), 1.0, now)))
		a.evaluate(ctx, now)
	}
	evaluate(0)
	require.Equal(t, int32(1), builds.Load())
	ev := host.last.Load()
	require.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	require.ErrorContains(t, ev.Err(), "Kubernetes API client (retrying in 15s)")
	require.ErrorContains(t, ev.Err(), "in-cluster Kubernetes config")
	evaluate(5 * time.Second)
	require.Equal(t, int32(1), builds.Load(), "not before the back-off")
	evaluate(15 * time.Second)
	require.Equal(t, int32(2), builds.Load())
	require.ErrorContains(t, host.last.Load().Err(), "retrying in 30s", "the back-off doubles")
	require.Empty(t, api.writes)
	require.Zero(t, logs.LogRecordCount(), "no \"would scale (dry run)\" for a target that is not dry run")
	evaluate(45 * time.Second)
	require.Equal(t, int32(3), builds.Load())
	require.Equal(t, componentstatus.StatusOK, host.last.Load().Status())
	require.Equal(t, []int32{4}, api.writes)
	for _, ld := range logs.AllLogs() {
		require.NotContains(t, ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().Str(), "dry run")
	}
}
