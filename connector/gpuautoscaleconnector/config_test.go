package gpuautoscaleconnector

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
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
	c := loadConfig(t, "full")
	require.NoError(t, confmap.Validate(c))
	require.Equal(t, 10*time.Second, c.Interval)
	require.Equal(t, "obs", c.LeaderElection.LeaseNamespace)
	require.False(t, c.Metrics.GpuAutoscaleMetricForecast.Enabled)
	require.True(t, c.Metrics.GpuAutoscaleMetricValue.Enabled)
	tc := c.Targets[0]
	require.Equal(t, map[string]string{"k8s.namespace.name": "serving", "k8s.deployment.name": "infer"}, tc.match())
	spec := tc.spec()
	require.True(t, spec.Predictive)
	require.Equal(t, 2*time.Minute, spec.LeadTime)
	require.Equal(t, []hpa.Policy{{Type: hpa.Pods, Value: 2, Period: 30 * time.Second}}, spec.Behavior.ScaleUp.Policies)
	require.Equal(t, hpa.SelectMin, spec.Behavior.ScaleUp.Select)
	require.Equal(t, 0.1, spec.Behavior.ScaleUp.Tolerance, "unset: the HPA default")
	require.Equal(t, 10*time.Minute, spec.Behavior.ScaleDown.StabilizationWindow)
	require.Equal(t, 0.05, spec.Behavior.ScaleDown.Tolerance)
	require.Equal(t, hpa.DefaultBehavior().ScaleDown.Policies, spec.Behavior.ScaleDown.Policies)
}

// TestConfigErrors goes through confmap.Validate, as the collector does:
// it walks the nested structs and puts each one's key before its error.
// Each problem is reported once, under the key of the struct it is in.
func TestConfigErrors(t *testing.T) {
	for name, want := range map[string][]string{
		"no_targets": {"targets must list at least one scale target"},
		"bad_target": {
			`targets::1::dry_run must be true when auth::type is none: there is no API to write to`,
			"targets::0: match must list the resource attributes of ns/Pool/p's GPUs (no default for kind Pool); " +
				"target_value must be positive, got 0; max_replicas (2) must not be less than min_replicas (4); " +
				`mode: unknown mode "eager"; want reactive, predictive or serving`,
			"targets::1: lead_time must be positive in predictive mode (the pods' start-up time)",
			`targets::1::behavior::scale_up: select_policy: unknown policy "Fastest"; want Max, Min or Disabled`,
			`targets::1::behavior::scale_up::policies::0: type: unknown type "Replicas"; want Pods or Percent; ` +
				"value must be positive, got 0; period must be between 1s and 30m, got 0s",
		},
		"bad_auth":  {`auth: type: unknown type "token"; want in_cluster, kubeconfig or none`},
		"bad_lease": {"leader_election: want lease_duration > renew_deadline > retry_period > 0, got 5s, 10s, 2s"},
		"bad_refs_and_metrics": {
			"targets::1: example/Deployment/d is also targets::0; two autoscalers on one object fight",
			"targets::0: metrics::1: the same metric as metrics::0",
			"targets::0::scale_target_ref: api_version: unexpected GroupVersion string: a/b/c",
			"targets::0::metrics::0: target_value must be positive, got 0",
			`targets::0::metrics::1: target_value must be positive, got -1; aggregation: unknown aggregation "median"; want avg, max or sum`,
			"targets::1::scale_target_ref: needs api_version, kind, name and namespace",
		},
	} {
		t.Run(name, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, name))
			require.Error(t, err)
			require.ElementsMatch(t, want, strings.Split(err.Error(), "\n"))
		})
	}
}

// TestConfigValidationReportsEachErrorOnce: a problem is reported by the
// one Validate of the struct it is in, never again by its parent, and a
// block the settings do not use (serving outside mode serving, the Lease
// settings with leader election off) is not checked.
func TestConfigValidationReportsEachErrorOnce(t *testing.T) {
	t.Run("no duplicates", func(t *testing.T) {
		err := confmap.Validate(loadConfig(t, "zero_interval_bad_policy"))
		require.Error(t, err)
		require.Equal(t, []string{
			"interval must be positive, got 0s",
			"targets::0::behavior::scale_down::policies::0: value must be positive, got 0",
		}, strings.Split(err.Error(), "\n"))
	})
	t.Run("unused blocks", func(t *testing.T) {
		require.NoError(t, confmap.Validate(loadConfig(t, "unused_blocks")),
			"serving is read in mode serving only, the Lease settings with leader election only")
	})
}
