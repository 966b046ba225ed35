package gpuautoscaleconnector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
)

func servingConfig(t *testing.T, serving map[string]any, extra map[string]any) (*Config, error) {
	t.Helper()
	target := map[string]any{
		"scale_target_ref": map[string]any{"api_version": "apps/v1", "kind": "Deployment", "name": "llm", "namespace": "serving"},
		"target_value":     0.8,
		"min_replicas":     1,
		"max_replicas":     10,
		"mode":             "serving",
		"serving":          serving,
		"dry_run":          true,
	}
	for k, v := range extra {
		target[k] = v
	}
	cfg := createDefaultConfig()
	require.NoError(t, confmap.NewFromStringMap(map[string]any{
		"auth": map[string]any{"type": "none"}, "leader_election": map[string]any{"enabled": false},
		"targets": []any{target},
	}).Unmarshal(cfg))
	err := cfg.Validate()
	return cfg, err
}

func TestServingConfigDefaults(t *testing.T) {
	cfg, err := servingConfig(t, map[string]any{"pod_throughput": 20}, nil)
	require.NoError(t, err)
	s := cfg.Targets[0].Serving.withDefaults()
	require.Equal(t, ServingConfig{
		QueueMetric: "vllm:num_requests_waiting", PodThroughput: 20,
		StableWindow: time.Minute, PanicWindow: 6 * time.Second, PanicThreshold: 2, DrainTime: time.Minute,
	}, s)
}

func TestServingConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		serving, extra map[string]any
		want           string
	}{
		{map[string]any{}, nil, "targets[0]::serving::pod_throughput must be positive"},
		{map[string]any{"pod_throughput": 20, "stable_window": "2h"}, nil, "targets[0]::serving::stable_window must be between 1s and 1h"},
		{map[string]any{"pod_throughput": 20, "panic_window": "2m"}, nil, "targets[0]::serving::panic_window must be positive and at most stable_window"},
		{map[string]any{"pod_throughput": 20, "panic_threshold": 0.5}, nil, "targets[0]::serving::panic_threshold must be at least 1"},
		{map[string]any{"pod_throughput": 20, "drain_time": "-1s"}, nil, "targets[0]::serving::drain_time must be between 1s and 1h"},
		{map[string]any{"pod_throughput": 20, "headroom_quantile": 1.5}, nil, "targets[0]::serving::headroom_quantile must be in [0, 1]"},
		{map[string]any{"pod_throughput": 20, "headroom_window": "-1m"}, nil, "targets[0]::serving::headroom_window must be between 0 and 24h"},
		{map[string]any{"pod_throughput": 20, "headroom_window": "10m", "headroom_max_ratio": 0.5}, nil, "targets[0]::serving::headroom_max_ratio must be 0 (no cap) or at least 1"},
		{map[string]any{"pod_throughput": 20, "headroom_max_ratio": 2}, nil, "targets[0]::serving::headroom_max_ratio needs headroom_window"},
		{map[string]any{"pod_throughput": 20}, map[string]any{"target_value": 0, "metrics": []any{
			map[string]any{"name": "nvidia.gpu.sm.active", "target_value": 0.8},
			map[string]any{"name": "vllm:kv_cache_usage_perc", "target_value": 0.8},
		}}, "targets[0]: mode serving sizes on one load metric"},
	} {
		_, err := servingConfig(t, tc.serving, tc.extra)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := servingConfig(t, map[string]any{"pod_throughput": 20}, map[string]any{"mode": "serve"})
	require.ErrorContains(t, err, `targets[0]::mode: unknown mode "serve"; want reactive, predictive or serving`)
}
