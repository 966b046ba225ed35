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
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
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

// TestServingHeadroomMetric: a serving target reports the headroom its
// replicas were sized with, by the forecast it rests on: the peak forecast
// without attainment, the calibrated forecaster in use with it. Two pods
// with a queue behind them serve 900 and 1,100 tokens a second for 15
// minutes.
// servingTestAutoscaler is a serving target of two pods (dry run) with the
// given serving settings, its metrics and logs caught by sinks.
func servingTestAutoscaler(t *testing.T, serving map[string]any) (*autoscaler, *consumertest.MetricsSink, *consumertest.LogsSink) {
	t.Helper()
	cfg, err := servingConfig(t, serving, nil)
	require.NoError(t, err)
	a := newTestAutoscaler(t, cfg.Targets[0], &fakeAPI{replicas: 2})
	sink, logs := new(consumertest.MetricsSink), new(consumertest.LogsSink)
	a.metricsOut, a.logsOut = sink, logs
	return a, sink, logs
}

func TestServingHeadroomMetric(t *testing.T) {
	for name, tc := range map[string]struct {
		serving    map[string]any
		forecaster string
	}{
		"peak":       {map[string]any{}, lookbackPeak},
		"calibrated": {map[string]any{"attainment": 0.9}, ""},
	} {
		t.Run(name, func(t *testing.T) {
			a, sink, logs := servingTestAutoscaler(t, tc.serving)
			ctx := context.Background()
			now := time.Unix(1767225600, 0)
			tokens := map[string]float64{"llm-0": 0, "llm-1": 0}
			for range 60 {
				now = now.Add(15 * time.Second)
				tokens["llm-0"] += 15 * 900
				tokens["llm-1"] += 15 * 1100
				require.NoError(t, a.consume(ctx, vllmBatch(now, tokens)))
				a.evaluate(ctx, now)
			}
			last := a.targets[0].serving.last
			require.NotNil(t, last)
			want := tc.forecaster
			if want == "" {
				// The calibrated mode names the forecaster it chose.
				require.NotEmpty(t, last.Forecaster)
				want = last.Forecaster
			}
			all := sink.AllMetrics()
			ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
			var found bool
			for i := 0; i < ms.Len(); i++ {
				m := ms.At(i)
				if m.Name() != metricnames.GPUAutoscaleServingForecastHeadroom {
					continue
				}
				found = true
				require.Equal(t, 1, m.Gauge().DataPoints().Len())
				dp := m.Gauge().DataPoints().At(0)
				require.InDelta(t, last.Headroom, dp.DoubleValue(), 1e-12)
				require.Positive(t, dp.DoubleValue())
				v, ok := dp.Attributes().Get(metricnames.AttrGPUAutoscaleServingForecaster)
				require.True(t, ok)
				require.Equal(t, want, v.Str())
			}
			require.True(t, found, "the serving target reports its headroom")
			// Each action's log record names the forecast the same way.
			require.NotEmpty(t, logs.AllLogs(), "the target scaled (dry run) at least once")
			for _, ld := range logs.AllLogs() {
				at := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
				v, ok := at.Get(metricnames.AttrGPUAutoscaleServingForecaster)
				require.True(t, ok)
				require.NotEmpty(t, v.Str())
				if tc.forecaster != "" {
					require.Equal(t, tc.forecaster, v.Str())
				}
			}
		})
	}
}

// TestServingQueueWaitMetric: with request_time, a serving target reports
// how long a request arriving now would wait, and the log record of each
// action carries it; without request_time the queue's work is unknown and
// neither does. Two pods each serve 1,000 tokens per second with 5
// requests running and 10 waiting: by Little's law a request is
// 1,000 × 0.5 s / 5 = 100 tokens, so each pod has 1,000 tokens queued, a
// second of its work.
func TestServingQueueWaitMetric(t *testing.T) {
	for name, tc := range map[string]struct {
		serving map[string]any
		want    float64 // -1: no wait reported
	}{
		"request_time":    {map[string]any{"request_time": "500ms"}, 1},
		"no request_time": {map[string]any{}, -1},
		"calibrated":      {map[string]any{"request_time": "500ms", "attainment": 0.9}, 1},
	} {
		t.Run(name, func(t *testing.T) {
			a, sink, logs := servingTestAutoscaler(t, tc.serving)
			ctx := context.Background()
			now := time.Unix(1767225600, 0)
			tokens := map[string]float64{"llm-0": 0, "llm-1": 0}
			for range 20 {
				now = now.Add(15 * time.Second)
				for pod := range tokens {
					tokens[pod] += 15 * 1000
				}
				md := vllmBatch(now, tokens)
				for i := 0; i < md.ResourceMetrics().Len(); i++ {
					ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
					for j := 0; j < ms.Len(); j++ {
						if ms.At(j).Name() == "vllm:num_requests_waiting" {
							ms.At(j).Gauge().DataPoints().At(0).SetDoubleValue(10)
						}
					}
					r := ms.AppendEmpty()
					r.SetName("vllm:num_requests_running")
					dp := r.SetEmptyGauge().DataPoints().AppendEmpty()
					dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
					dp.SetDoubleValue(5)
				}
				require.NoError(t, a.consume(ctx, md))
				a.evaluate(ctx, now)
			}
			all := sink.AllMetrics()
			ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
			var got []float64
			for i := 0; i < ms.Len(); i++ {
				if m := ms.At(i); m.Name() == metricnames.GPUAutoscaleServingQueueWait {
					require.Equal(t, metricnames.GPUAutoscaleServingQueueWaitUnit, m.Unit())
					for k := 0; k < m.Gauge().DataPoints().Len(); k++ {
						got = append(got, m.Gauge().DataPoints().At(k).DoubleValue())
					}
				}
			}
			require.NotEmpty(t, logs.AllLogs(), "the queue asked for pods (dry run) at least once")
			at := logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Attributes()
			logged, onLog := at.Get(metricnames.GPUAutoscaleServingQueueWait)
			if tc.want < 0 {
				require.Empty(t, got, "without request_time the queue's work is unknown")
				require.False(t, onLog)
				return
			}
			require.Len(t, got, 1)
			require.InDelta(t, tc.want, got[0], 1e-9)
			require.True(t, onLog, "the action's log record carries the wait")
			require.InDelta(t, tc.want, logged.Double(), 1e-9)
		})
	}
}
