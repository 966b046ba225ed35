package gpuanalyzerprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
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

	v2 := loadConfig(t, "v2")
	require.NoError(t, confmap.Validate(v2))
	require.Equal(t, component.MustNewIDWithName("file_storage", "analyzer"), *v2.Storage)
	require.Equal(t, 5*time.Minute, v2.CheckpointInterval)
	ac = v2.analysisConfig()
	require.Equal(t, 50e9, ac.Rules.CommunicationNVLink)
	require.Equal(t, 2e9, ac.Hints.DataLoadingPCIeRx)
	require.Equal(t, time.Hour, ac.Leak.Window)
	require.Equal(t, time.Hour, ac.Leak.FullIn)
	require.Equal(t, 15*time.Minute, ac.Alerts[analysis.GPUMemoryLeak].For)
	require.Nil(t, loadConfig(t, "").Storage, "no storage unless configured")
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
		"bad_leak":       "memory_leak: want 0 <= resolve_r_squared <= min_r_squared <= 1, got 0.5 and 0.4",
		"bad_hint":       "hints::increase_batch_size_occupancy must be between 0 and 1, got 2",
		"bad_nvlink":     "bottleneck::communication_bound_nvlink_bytes must be positive, got 0",

		"bad_verdict_interval": "verdict_interval must not be negative, got -1s",
		"bad_first_summary":    "first_summary_after must be between 0 and summary_interval (30s), got 1m0s",
		"bad_power_order":      "want idle_power_ratio (0.15) <= waiting_power_ratio (0.6) <= working_power_ratio (0.45)",
		"bad_board_power":      "bottleneck::board_power::H100 must be a positive number of watts, got 0",
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, confmap.Validate(loadConfig(t, name)), want)
		})
	}
	require.ErrorContains(t, confmap.Validate(loadConfig(t, "bad_straggler")), "straggler::step_ratio must be greater than 1, got 0.9")
	require.ErrorContains(t, confmap.Validate(loadConfig(t, "bad_straggler")), "straggler::min_power_deviation must be above 0 and at most 1, got 0")
	require.ErrorContains(t, confmap.Validate(loadConfig(t, "bad_leak")), "memory_leak: want 0 < full_within <= resolve_full_after, got 5h0m0s and 4h0m0s")
	inferred := confmap.Validate(loadConfig(t, "bad_inferred"))
	for _, want := range []string{
		"bottleneck: want launch_bound_power_ratio (0.5) <= compute_bound_power_ratio (0.4)",
		"bottleneck::communication_bound_pcie_bytes must be a positive rate in bytes per second, got 0",
		"bottleneck::thermal_temperature must be between 0 and 200 °C, got 300",
		"bottleneck::throttle_clock_ratio must be above 0 and at most 1, got 0",
	} {
		require.ErrorContains(t, inferred, want)
	}
}

// TestUtilizationRatios: the GPU utilization thresholds are ratios, as the
// receiver reports hw.gpu.utilization; the percent keys of earlier releases
// still work, converted once at load, with a warning at start.
func TestUtilizationRatios(t *testing.T) {
	def := createDefaultConfig().(*Config).analysisConfig().Rules
	require.Equal(t, 0.05, def.IdleGPUUtil, "the contract's GPU_UTIL < 5 %")
	require.Equal(t, 0.8, def.LaunchBoundUtil, "the contract's GPU_UTIL >= 80 %")

	ratios := loadConfig(t, "ratios")
	require.NoError(t, confmap.Validate(ratios))
	require.Empty(t, ratios.deprecations())

	old := loadConfig(t, "deprecated_percent")
	require.NoError(t, confmap.Validate(old))
	require.Equal(t, ratios.analysisConfig().Rules, old.analysisConfig().Rules, "10 and 90 percent are 0.1 and 0.9")

	core, logs := observer.New(zap.WarnLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, err := NewFactory().CreateMetrics(t.Context(), set, old, consumertest.NewNop())
	require.NoError(t, err)
	require.NoError(t, p.Shutdown(t.Context()))
	var warnings []string
	for _, e := range logs.All() {
		warnings = append(warnings, e.Message)
	}
	require.Equal(t, []string{
		"bottleneck::idle_gpu_utilization is deprecated and will be removed in the next release: use bottleneck::idle_gpu_utilization_ratio, a ratio (10 % is 0.1)",
		"bottleneck::launch_bound_gpu_utilization is deprecated and will be removed in the next release: use bottleneck::launch_bound_gpu_utilization_ratio, a ratio (90 % is 0.9)",
	}, warnings)

	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, "percent_and_ratio").String())
	require.NoError(t, err)
	require.ErrorContains(t, sub.Unmarshal(NewFactory().CreateDefaultConfig()),
		"bottleneck::idle_gpu_utilization (deprecated, percent) and bottleneck::idle_gpu_utilization_ratio are both set; keep idle_gpu_utilization_ratio, a ratio (10 % is 0.1)")

	require.ErrorContains(t, confmap.Validate(loadConfig(t, "bad_percent")),
		"bottleneck::launch_bound_gpu_utilization must be a percentage between 0 and 100, got 120")
	err = confmap.Validate(loadConfig(t, "percent_as_ratio"))
	require.ErrorContains(t, err, "bottleneck::idle_gpu_utilization_ratio must be between 0 and 1, got 5")
}
