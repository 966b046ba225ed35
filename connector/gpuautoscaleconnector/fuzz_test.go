package gpuautoscaleconnector

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/badotlp"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
)

// FuzzConfig: any YAML under gpu_autoscale unmarshals and validates or is
// refused with a message.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_autoscale", "testdata/config.yaml", "../../examples/*/*.yaml") < 4 {
		f.Fatal("too few seed configurations")
	}
	serving, err := os.ReadFile("../../examples/autoscaling/llm-serving.yaml")
	require.NoError(f, err)
	f.Add(serving)
	f.Add([]byte("interval: -1s\ntargets: [{scale_target_ref: {kind: Deployment}, target_value: .nan, min_replicas: -1, max_replicas: 2147483647, metrics: [{name: '', target_value: .inf}]}]"))
	f.Add([]byte("targets: [{mode: serving, serving: {pod_capacity: -1, headroom_quantile: 2, burst_cap: -1, token_metrics: [{name: '', weight: 0}]}, behavior: {scale_up: {policies: [{type: Percent, value: 0, period: 0s}]}}}]"))
	configfuzz.Fuzz(f, func() component.Config { return createDefaultConfig() }, nil)
}

// fuzzAutoscaler is the gateway example's predictive target and the
// serving example's target, both on serving/llm-inference, without a
// cluster (the fake scale subresource).
func fuzzAutoscaler(tb testing.TB, tel *componenttest.Telemetry) *autoscaler {
	cfg := createDefaultConfig()
	for _, file := range []string{"../../examples/kubernetes/gateway-autoscale.yaml", "../../examples/autoscaling/llm-serving.yaml"} {
		raw, err := os.ReadFile(file)
		require.NoError(tb, err)
		var doc map[string]any
		require.NoError(tb, yaml.Unmarshal(raw, &doc))
		if c, ok := doc["connectors"].(map[string]any); ok {
			doc = c["gpu_autoscale"].(map[string]any)
		}
		one := createDefaultConfig()
		require.NoError(tb, confmap.NewFromStringMap(doc).Unmarshal(one))
		cfg.Targets = append(cfg.Targets, one.Targets...)
	}
	// One object per target: the serving target scales a twin, on the
	// same pods' metrics.
	cfg.Targets[1].ScaleTargetRef.Name = "llm-inference-twin"
	cfg.Targets[1].Match = map[string]string{"k8s.namespace.name": "serving", "k8s.deployment.name": "llm-inference"}
	cfg.LeaderElection.Enabled = false
	require.NoError(tb, cfg.Validate())
	require.Len(tb, cfg.Targets, 2)
	set := connectortest.NewNopSettings(metadata.Type)
	if tel != nil {
		set = metadatatest.NewSettings(tel)
	}
	a, err := newAutoscaler(cfg, set)
	require.NoError(tb, err)
	api := &fakeAPI{replicas: 2, prefix: "llm-inference"}
	a.newAPI = func() (cluster, *kube.Leases, error) { return api, nil, nil }
	return a
}

// FuzzConsume: any OTLP batch is read without a panic and without being
// changed (the connector declares it does not mutate data), and the
// evaluation that follows decides without a panic.
func FuzzConsume(f *testing.F) {
	now := time.Now()
	a := fuzzAutoscaler(f, nil)
	badotlp.FuzzUnchanged(f, now, a.consume, func(ctx context.Context) { a.evaluate(ctx, now) })
}

// TestBadInputCounted: the bad points of a target's metrics are counted by
// reason; no series from a clock far ahead is kept.
func TestBadInputCounted(t *testing.T) {
	now := time.Now()
	cases := badotlp.Cases(now)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	// Two targets read nvidia.gpu.sm.active, the serving one also the
	// queue: each bad point counts once per target that reads it.
	want := map[string]map[string]int64{
		"nan":                       {"not_finite": 3},
		"inf":                       {"not_finite": 3},
		"-inf":                      {"not_finite": 3},
		"histogram for a gauge":     {"wrong_type": 2},
		"timestamp a century ahead": {"future_timestamp": 3},
		"timestamp year 2262":       {"future_timestamp": 3},
		// Beyond int64 nanoseconds, the timestamp reads as a time far in
		// the past: too old to be a value, dropped as any stale series.
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			a := fuzzAutoscaler(t, tel)
			a.now = func() time.Time { return now }
			require.NoError(t, a.consume(context.Background(), cases[name]))
			got := map[string]int64{}
			if rm, err := tel.GetMetric("otelcol_connector_gpu_autoscale_rejected_data_points"); err == nil {
				for _, dp := range rm.Data.(metricdata.Sum[int64]).DataPoints {
					r, _ := dp.Attributes.Value(attribute.Key("reason"))
					got[r.AsString()] += dp.Value
				}
			}
			w := want[name]
			if w == nil {
				w = map[string]int64{}
			}
			require.Equal(t, w, got)
			for _, tg := range a.targets {
				for _, series := range tg.series {
					for _, s := range series {
						require.False(t, s.at.After(now.Add(time.Hour)), "a series from a clock far ahead is kept")
					}
				}
			}
		})
	}
}
