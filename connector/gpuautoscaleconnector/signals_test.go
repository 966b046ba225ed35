package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.yaml.in/yaml/v3"
)

// exampleConnectorConfig reads the gpu_autoscale settings of a shipped
// collector configuration.
func exampleConnectorConfig(t *testing.T, path string) *Config {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		Connectors map[string]map[string]any `yaml:"connectors"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &doc), path)
	m, ok := doc.Connectors["gpu_autoscale"]
	require.True(t, ok, "%s has no gpu_autoscale connector", path)
	cfg := createDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(m).Unmarshal(cfg), path)
	require.NoError(t, cfg.Validate(), path)
	return cfg
}

// TestExampleConnectorSettingsValidate checks the connector's part of every
// shipped configuration that uses it (the e2e tests validate the whole
// configurations against the built distribution).
func TestExampleConnectorSettingsValidate(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/*.yaml")
	require.NoError(t, err)
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var doc map[string]any
		if yaml.Unmarshal(raw, &doc) != nil {
			continue
		}
		if c, ok := doc["connectors"].(map[string]any); ok && c["gpu_autoscale"] != nil {
			exampleConnectorConfig(t, f)
			checked++
		}
	}
	require.GreaterOrEqual(t, checked, 2)
	shippedGatewayConfig(t) // parsed there, validated by the topology test
}

// serverMetrics is one scrape of an inference pod's server, as the
// prometheus receiver (pod discovery) and k8s_attributes of
// examples/kubernetes/vllm-signals.yaml deliver it: the pod and Deployment on
// the resource, one series per model.
func serverMetrics(ns, deployment, pod string, at time.Time, gauges map[string][]float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	r := rm.Resource().Attributes()
	r.PutStr("service.name", "inference-servers")
	r.PutStr("service.instance.id", pod+":8000")
	r.PutStr("k8s.pod.name", pod)
	r.PutStr("k8s.namespace.name", ns)
	r.PutStr("k8s.deployment.name", deployment)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	for name, series := range gauges {
		m := ms.AppendEmpty()
		m.SetName(name)
		dps := m.SetEmptyGauge().DataPoints()
		for i, v := range series {
			dp := dps.AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
			dp.SetDoubleValue(v)
			dp.Attributes().PutStr("model_name", fmt.Sprintf("model-%d", i))
		}
	}
	return md
}

// TestServiceSignals scales on the example's three metrics: the largest
// proposal wins, whichever metric makes it.
func TestServiceSignals(t *testing.T) {
	cfg := exampleConnectorConfig(t, "../../examples/kubernetes/vllm-signals.yaml")
	cfg.LeaderElection.Enabled = false
	api := &fakeAPI{replicas: 2}
	a := newTestAutoscaler(t, cfg.Targets[0], api)
	sink := new(consumertest.MetricsSink)
	a.metricsOut = sink
	ctx := context.Background()
	now := time.Now()
	feed := func(queue []float64, kv, sm float64) {
		for i := range int(api.replicas) {
			pod := fmt.Sprintf("llm-inference-%d", i)
			require.NoError(t, a.consume(ctx, serverMetrics("serving", "llm-inference", pod, now, map[string][]float64{
				"vllm:num_requests_waiting": queue, "vllm:kv_cache_usage_perc": {kv}, "vllm:num_requests_running": {7},
			})))
		}
		require.NoError(t, a.consume(ctx, gpuMetrics("serving", map[string]string{"k8s.deployment.name": "llm-inference"}, int(api.replicas), sm, now)))
	}
	// A queue of 6 + 6 per pod (two models, summed) against 4: 2 x 3 = 6.
	// The KV cache (0.5 / 0.8) and SM activity (0.3 / 0.6) would scale down.
	feed([]float64{6, 6}, 0.5, 0.3)
	a.evaluate(ctx, now)
	require.Equal(t, []int32{6}, api.writes)
	require.Equal(t, "Scaled", decisionReason(t, sink.AllMetrics()[0]))
	values := metricValues(t, sink.AllMetrics()[0], "gpu.autoscale.metric.value")
	require.Equal(t, map[string]float64{"vllm:num_requests_waiting": 12, "vllm:kv_cache_usage_perc": 0.5, "nvidia.gpu.sm.active": 0.3}, values)

	// Now the cache fills and the queue is empty: 6 x 1.2 / 0.8 = 9 from
	// the KV cache, the largest proposal.
	now = now.Add(15 * time.Second)
	feed([]float64{0, 0}, 1.2, 0.3)
	a.evaluate(ctx, now)
	require.Equal(t, []int32{6, 9}, api.writes)

	// The inference servers stop reporting (scrape failing) and the GPUs
	// are idle: the missing metrics hold the scale-down.
	now = now.Add(2 * time.Minute)
	require.NoError(t, a.consume(ctx, gpuMetrics("serving", map[string]string{"k8s.deployment.name": "llm-inference"}, int(api.replicas), 0.05, now)))
	a.evaluate(ctx, now)
	require.Equal(t, []int32{6, 9}, api.writes)
	all := sink.AllMetrics()
	require.Equal(t, "InvalidMetrics", decisionReason(t, all[len(all)-1]), "the metrics without values hold the scale-down")
}

func metricValues(t *testing.T, md pmetric.Metrics, name string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() != name {
			continue
		}
		dps := ms.At(i).Gauge().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			m, _ := dps.At(j).Attributes().Get("gpu.autoscale.metric")
			out[m.Str()] = dps.At(j).DoubleValue()
		}
	}
	return out
}
