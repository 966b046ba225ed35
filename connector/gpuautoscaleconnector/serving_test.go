package gpuautoscaleconnector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
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
	return cfg, confmap.Validate(cfg)
}

func TestServingConfigDefaults(t *testing.T) {
	cfg, err := servingConfig(t, map[string]any{}, nil)
	require.NoError(t, err)
	s := cfg.Targets[0].Serving.withDefaults()
	on := true
	require.Equal(t, ServingConfig{
		TokenMetrics:  []TokenMetricConfig{{Name: "vllm:generation_tokens_total", Weight: 1}},
		QueueMetric:   "vllm:num_requests_waiting",
		RunningMetric: "vllm:num_requests_running",
		KVMetric:      "vllm:kv_cache_usage_perc",
		SLOWait:       2 * time.Second, Startup: 3 * time.Minute,
		PeakQuantile: 1, HeadroomQuantile: 0.9, ErrorHistory: 24 * time.Hour, ColdHeadroom: 1.1,
		DrainTime: time.Minute, Seasonal: &on,
	}, s)
}

func TestServingConfigErrorsNameTheKey(t *testing.T) {
	for _, tc := range []struct {
		serving, extra map[string]any
		want           string
	}{
		{map[string]any{"token_metrics": []any{map[string]any{"name": "", "weight": -1}}}, nil, "targets::0: serving::token_metrics::0::name must name a token counter"},
		{map[string]any{"token_metrics": []any{map[string]any{"name": "t", "weight": -1}}}, nil, "targets::0: serving::token_metrics::0::weight must be positive"},
		{map[string]any{"slo_wait": "2h"}, nil, "targets::0: serving::slo_wait must be between 1ms and 1h"},
		{map[string]any{"startup": "-1s"}, nil, "targets::0: serving::startup must be between 1s and 2h"},
		{map[string]any{"lookback": "25h"}, nil, "targets::0: serving::lookback must be between 0 (the start-up) and 24h"},
		{map[string]any{"peak_quantile": 1.5}, nil, "targets::0: serving::peak_quantile must be in (0, 1]"},
		{map[string]any{"burst_cap": 0.5}, nil, "targets::0: serving::burst_cap must be 0 (no cap) or at least 1"},
		{map[string]any{"headroom_quantile": 1.5}, nil, "targets::0: serving::headroom_quantile must be in (0, 1]"},
		{map[string]any{"error_history": "1s"}, nil, "targets::0: serving::error_history must be between 1m and 720h"},
		{map[string]any{"cold_headroom": 0.5}, nil, "targets::0: serving::cold_headroom must be between 1 and 10"},
		{map[string]any{"pod_capacity": -1}, nil, "targets::0: serving::pod_capacity must be 0 (learned) or positive"},
		{map[string]any{"request_time": "-1s"}, nil, "targets::0: serving::request_time must be between 0 and 1h"},
		{map[string]any{"drain_time": "-1s"}, nil, "targets::0: serving::drain_time must be between 1s and 1h"},
		{map[string]any{"scale_down_tolerance": 2}, nil, "targets::0: serving::scale_down_tolerance must be in [0, 1]"},
		{map[string]any{"scale_down_delay": "2h"}, nil, "targets::0: serving::scale_down_delay must be between 0 and 1h"},
		{map[string]any{"kv_target": 1.5}, nil, "targets::0: serving::kv_target must be in [0, 1] (0: off)"},
		{map[string]any{"attainment": 1.0}, nil, "targets::0: serving::attainment must be in [0, 1) (0: the peak forecast)"},
		{map[string]any{}, map[string]any{"target_value": 0, "metrics": []any{
			map[string]any{"name": "nvidia.gpu.sm.active", "target_value": 0.8},
			map[string]any{"name": "vllm:kv_cache_usage_perc", "target_value": 0.8},
		}}, "targets::0: mode serving falls back to the HPA on one load metric"},
	} {
		_, err := servingConfig(t, tc.serving, tc.extra)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := servingConfig(t, map[string]any{}, map[string]any{"mode": "serve"})
	require.ErrorContains(t, err, `targets::0: mode: unknown mode "serve"; want reactive, predictive or serving`)
}

// A pod that reports only a queue (no token counter) is forgotten once it
// falls silent, like one with tokens: the state stays as large as the
// Deployment under pod churn.
func TestServingForgetsSilentPods(t *testing.T) {
	cfg, err := servingConfig(t, map[string]any{}, nil)
	require.NoError(t, err)
	s := newServingTarget(&cfg.Targets[0])
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	g := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("vllm:num_requests_waiting")
	now := time.Unix(1767225600, 0)
	dp := g.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
	dp.SetDoubleValue(3)
	var bad rejected
	s.ingest(rm, "llm-0", now, time.Minute, &bad)
	s.snapshot(now, time.Minute)
	require.Contains(t, s.fresh, "llm-0")
	require.InDelta(t, 3, s.fresh["llm-0"].Waiting, 0)
	require.False(t, s.fresh["llm-0"].HasTokens)
	s.snapshot(now.Add(11*time.Minute), time.Minute)
	require.Empty(t, s.pods)
	require.Empty(t, s.fresh)
}
