package gpuremediationconnector

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
)

func load(t *testing.T, name string) (*Config, error) {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	id := component.NewID(metadata.Type)
	if name != "" {
		id = component.NewIDWithName(metadata.Type, name)
	}
	sub, err := cm.Sub(id.String())
	require.NoError(t, err)
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

func TestDefaultsAreSafe(t *testing.T) {
	cfg, err := load(t, "")
	require.NoError(t, err)
	require.True(t, cfg.DryRun, "dry run by default")
	require.Equal(t, 1, cfg.Drain.MaxConcurrent)
	require.True(t, cfg.Breaker.MaxShare > 0 && cfg.Breaker.MaxShare < 1)
	require.True(t, cfg.LeaderElection.Enabled)
	require.Equal(t, RecoveryConfig{Timeout: time.Hour, HealthyFor: 10 * time.Minute, Uncordon: true}, cfg.Recovery)
	require.Equal(t, 30*time.Second, cfg.Policy.IncidentWindow)
	// The figures the README states.
	require.Negative(t, cfg.Drain.GracePeriod, "each pod's own grace period")
	require.Equal(t, 10*time.Minute, cfg.Drain.Timeout)
	require.Equal(t, BreakerConfig{MaxShare: 0.25, MaxNodes: 10, Window: time.Hour}, cfg.Breaker)
	require.Equal(t, EscalationConfig{Count: 3, Window: 10 * time.Minute, To: "reset_gpu"}, cfg.Policy.Escalation)
	require.Equal(t, 10*time.Second, cfg.Interval)
	require.Equal(t, ActionsConfig{Event: true, Condition: true, Taint: true, Cordon: true, Drain: true, Request: true}, cfg.Actions)
	require.Equal(t, "gpu-remediation.otelcol-gpu.io/opt-out", cfg.OptOutLabel)
	require.Equal(t, DRAConfig{Driver: "gpu.nvidia.com"}, cfg.DRA, "NVIDIA's DRA driver; device taints off")
}

// DRA device taints: on only when asked, and checked.
func TestDeviceTaintSettings(t *testing.T) {
	cfg, err := load(t, "device_taints")
	require.NoError(t, err)
	require.True(t, cfg.Actions.DeviceTaint)
	require.True(t, cfg.Actions.Cordon, "the other actions keep their defaults")
	require.Equal(t, DRAConfig{Driver: "gpu.example.com", InsteadOfNodeTaint: true}, cfg.DRA)
	require.Equal(t, []string{stepEvent, stepCondition, stepDeviceTaint, stepTaint, stepDrain, stepRequest, stepAwait, stepVerify, stepUncordon},
		withSteps(t, cfg).steps(policy.ResetGPU), "the node taint goes only once the device's is written")
	require.Equal(t, []string{stepEvent, stepCondition, stepDeviceTaint, stepTaint, stepCordon, stepDrain, stepRequest, stepAwait, stepVerify, stepUncordon},
		withSteps(t, cfg).steps(policy.Drain))
	require.Equal(t, []string{stepEvent}, withSteps(t, cfg).steps(policy.RestartApp), "no device taint for the application's own error")
}

// Fabric faults: off by default, with the README's thresholds; every key
// read from YAML.
func TestFabricSettings(t *testing.T) {
	cfg, err := load(t, "")
	require.NoError(t, err)
	require.Equal(t, FabricConfig{Action: "taint", FlapCount: 3, FlapWindow: 10 * time.Minute, ErrorRate: 10, ErrorWindow: 5 * time.Minute, ErrorTypes: defaultLinkErrors()}, cfg.Fabric)
	cfg, err = load(t, "fabric")
	require.NoError(t, err)
	require.Equal(t, FabricConfig{Enabled: true, Action: "cordon", FlapCount: 5, FlapWindow: 30 * time.Minute, ErrorRate: 2.5, ErrorWindow: 10 * time.Minute,
		ErrorTypes: []string{"symbol_error", "port_rcv_errors"}}, cfg.Fabric)
}

func TestLoadConfig(t *testing.T) {
	cfg, err := load(t, "live")
	require.NoError(t, err)
	require.False(t, cfg.DryRun)
	require.False(t, cfg.Metrics.GpuRemediationNodes.Enabled)
	require.True(t, cfg.Metrics.GpuRemediationActions.Enabled)
	require.Equal(t, 30*time.Second, cfg.Drain.GracePeriod)
	require.True(t, cfg.Drain.OnlyGPUPods)
	p, err := cfg.policy()
	require.NoError(t, err)
	require.Equal(t, policy.None, p.XIDs[13])
	require.Equal(t, policy.ResetGPU, p.XIDs[31])
	require.Equal(t, policy.Drain, p.XIDs[79], "the rest of the default map stays")
	require.Equal(t, 5, p.Count)
	require.Equal(t, policy.Drain, p.EscalateTo)
}

// Each bad setting gets one error that names its key.
func TestBadSettingsNameTheKey(t *testing.T) {
	for name, want := range map[string]string{
		"unknown_action":               `policy::xid::79: unknown action "reboot"; want none, restart_app, reset_gpu, drain or replace`,
		"xid_out_of_range":             "policy::xid::300: an XID must be a number from 1 to 255",
		"share_out_of_range":           "circuit_breaker::max_share must be between 0 and 1, got 1.5",
		"unknown_ecc_action":           `policy::ecc_uncorrectable: unknown action "cordon"`,
		"unknown_recovery_action":      "policy::recovery_action::bus_reset: unknown recovery action; want gpu_reset, node_reboot, drain_p2p, drain_and_reset or recover_imex_domain",
		"zero_incident_window":         "policy::incident_window must be positive, got 0s",
		"zero_recovery_timeout":        "recovery::timeout must be positive, got 0s",
		"negative_healthy_for":         "recovery::healthy_for must be positive, got -1m0s",
		"bad_dra_driver":               `dra::driver must name a DRA driver (a DNS subdomain, e.g. gpu.nvidia.com), got "GPU NVIDIA"`,
		"instead_without_device_taint": "dra::instead_of_node_taint needs actions::device_taint",
		"fabric_drain":                 `fabric::action: unknown action "drain"; want none, taint or cordon`,
		"slurm_with_kubernetes":        `slurm::enabled needs auth::type none: remediation acts on Slurm or on Kubernetes, not both (got auth::type "in_cluster")`,
		"slurm_zero_timeout":           "slurm::timeout must be positive, got 0s",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, name)
			require.Error(t, err)
			require.Contains(t, err.Error(), want)
			require.Len(t, strings.Split(strings.TrimSpace(err.Error()), "\n"), 1, "one error: %v", err)
		})
	}
}

func TestLiveNeedsAnAPI(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Auth.Type = "none"
	cfg.LeaderElection.Enabled = false
	cfg.DryRun = false
	require.EqualError(t, cfg.Validate(), "dry_run must be true when auth::type is none: there is no API to write to (unless slurm::enabled)")
}
