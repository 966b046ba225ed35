package gpuanalyzerprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig()
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config)
}

func TestLoadConfig(t *testing.T) {
	require.Equal(t, createDefaultConfig(), loadConfig(t, ""))
	require.NoError(t, confmap.Validate(loadConfig(t, "")))

	c := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(c))
	require.Equal(t, time.Minute, c.Window)
	require.Equal(t, []string{"host.name"}, c.GroupBy)
	require.Equal(t, []uint32{79}, c.Bottleneck.CriticalXIDs)
	require.Equal(t, 8, c.Straggler.MinGroupSize)
	require.Equal(t, AlertConfig{Enabled: true, For: 2 * time.Minute, Threshold: 90, Resolve: 85, Severity: "warning"}, c.Alerts.Overheating)
	require.False(t, c.Alerts.Idle.Enabled)
	ac := c.analysisConfig()
	require.Equal(t, uint64(0x40|0x4), ac.Rules.ThrottleMask)
	require.Equal(t, 2*time.Minute, ac.Alerts[1].For)
}

func TestConfigErrors(t *testing.T) {
	for name, want := range map[string]string{
		"zero_window":    "window must be positive, got 0s",
		"bad_reason":     `bottleneck::throttle_reasons[0]: unknown reason "too_hot"`,
		"bad_ratio":      "bottleneck::memory_bound_dram_active must be between 0 and 1, got 1.5",
		"bad_hysteresis": "alerts::gpu_overheating::resolve (85) must not be above threshold (80)",
		"bad_severity":   `alerts::gpu_throttled::severity: unknown severity "page"; want critical, warning or info`,
		"bad_straggler":  "straggler::min_group_size must be at least 2, got 1",
		"bad_ttl":        "gpu_ttl (30s) must not be shorter than window (1m0s)",
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, confmap.Validate(loadConfig(t, name)), want)
		})
	}
	require.ErrorContains(t, confmap.Validate(loadConfig(t, "bad_straggler")), "straggler::step_ratio must be greater than 1, got 0.9")
}
