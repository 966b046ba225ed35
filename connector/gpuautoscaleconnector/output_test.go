package gpuautoscaleconnector

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestMetricsOutput checks the connector's own metrics against a golden
// file: a Deployment in predictive mode that scales up, and a StatefulSet
// with two metrics, one of which no pod reports. The file was written by
// the hand-built metrics before mdatagen's builder replaced them.
func TestMetricsOutput(t *testing.T) {
	t0 := time.Unix(1767225600, 0)
	ctx := context.Background()
	out := pmetric.NewMetrics()

	dep := deploymentTarget("ml", "inference")
	dep.Mode, dep.LeadTime = "predictive", time.Minute
	sts := TargetConfig{
		ScaleTargetRef: kube.Ref{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kv-cache", Namespace: "serving"},
		Metrics: []MetricConfig{
			{Name: "nvidia.gpu.sm.active", TargetValue: 0.5},
			{Name: "vllm:num_requests_waiting", TargetValue: 4, Aggregation: "max"},
		},
		MinReplicas: 1, MaxReplicas: 4,
	}
	for _, tc := range []struct {
		target   TargetConfig
		workload map[string]string
		sm       float64
	}{
		{dep, map[string]string{"k8s.deployment.name": "inference"}, 0.9},
		{sts, map[string]string{"k8s.statefulset.name": "kv-cache"}, 0.2},
	} {
		api := &fakeAPI{replicas: 2}
		a := newTestAutoscaler(t, tc.target, api)
		sink := new(consumertest.MetricsSink)
		a.metricsOut = sink
		ns := tc.target.ScaleTargetRef.Namespace
		for i := range 3 {
			now := t0.Add(time.Duration(i) * 15 * time.Second)
			require.NoError(t, a.consume(ctx, gpuMetrics(ns, tc.workload, int(api.replicas), tc.sm, now)))
			a.evaluate(ctx, now)
		}
		all := sink.AllMetrics()
		require.Len(t, all, 3)
		all[2].ResourceMetrics().MoveAndAppendTo(out.ResourceMetrics())
	}

	path := filepath.Join("testdata", "output.yaml")
	if *update {
		require.NoError(t, golden.WriteMetrics(t, path, out))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	// golden.WriteMetrics normalizes timestamps and sorts data points.
	require.NoError(t, pmetrictest.CompareMetrics(want, out, pmetrictest.IgnoreMetricsOrder(),
		pmetrictest.IgnoreMetricDataPointsOrder(), pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreScopeVersion()))
}

// TestMetricsCanBeDisabled: a metric turned off under metrics: is not
// emitted; the others are.
func TestMetricsCanBeDisabled(t *testing.T) {
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, deploymentTarget("ml", "inference"), api)
	cfg := *a.cfg
	cfg.Metrics.GpuAutoscaleMetricTarget.Enabled = false
	a, err := newAutoscaler(&cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	a.newAPI = func() (cluster, *kube.Leases, error) { return api, nil, nil }
	sink := new(consumertest.MetricsSink)
	a.metricsOut = sink
	now := time.Unix(1767225600, 0)
	require.NoError(t, a.consume(context.Background(), gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 2, 0.5, now)))
	a.evaluate(context.Background(), now)
	require.Len(t, sink.AllMetrics(), 1)
	names := map[string]bool{}
	ms := sink.AllMetrics()[0].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		names[ms.At(i).Name()] = true
	}
	require.False(t, names["gpu.autoscale.metric.target"])
	require.True(t, names["gpu.autoscale.metric.value"])
	require.True(t, names["gpu.autoscale.replicas.desired"])
}
