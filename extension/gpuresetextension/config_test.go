package gpuresetextension

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension/internal/metadata"
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
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg, confmap.Validate(cfg)
}

// TestDefaults: the figures the README states, and that the defaults
// alone are valid once the node is named.
func TestDefaults(t *testing.T) {
	cfg, err := load(t, "")
	require.NoError(t, err)
	require.Equal(t, "gpu-node-1", cfg.Node)
	require.Equal(t, AuthConfig{Type: "in_cluster"}, cfg.Auth)
	require.Equal(t, "nvml", cfg.Backend)
	require.Equal(t, ResetConfig{Command: []string{"nvidia-smi", "--gpu-reset", "-i", "{uuid}"}, Timeout: 2 * time.Minute}, cfg.Reset)
	require.Equal(t, DCGMConfig{Endpoint: "localhost:5555", DiagLevel: 1}, cfg.DCGM)
	require.Equal(t, 30*time.Second, cfg.PollInterval)
	require.Equal(t, 10*time.Second, cfg.APITimeout)
}

func TestLoadConfig(t *testing.T) {
	cfg, err := load(t, "dcgm")
	require.NoError(t, err)
	require.Equal(t, AuthConfig{Type: "kubeconfig", Kubeconfig: "/etc/kubeconfig", Context: "admin"}, cfg.Auth)
	require.Equal(t, "dcgm", cfg.Backend)
	require.Equal(t, DCGMConfig{Endpoint: "unix:///run/nvidia/hostengine.socket", DiagLevel: 2}, cfg.DCGM)
	require.Equal(t, ResetConfig{Command: []string{"/host/usr/bin/nvidia-smi", "-r", "--id={uuid}"}, Timeout: 5 * time.Minute}, cfg.Reset)
	require.Equal(t, time.Minute, cfg.PollInterval)
	require.Equal(t, 5*time.Second, cfg.APITimeout)
}

// Each bad setting gets one error, and it names its key.
func TestBadSettingsNameTheKey(t *testing.T) {
	for name, want := range map[string]string{
		"no_node":                "node must be set to this node's name, e.g. ${env:K8S_NODE_NAME}",
		"bad_node":               `node "GPU_Node" is not a node name`,
		"auth_none":              "auth::type none is not allowed",
		"auth_unknown":           `auth::type: unknown type "token"; want in_cluster or kubeconfig`,
		"kubeconfig_missing":     "auth::kubeconfig must name a file when auth::type is kubeconfig",
		"no_placeholder":         "reset::command must pass the GPU as {uuid} in an argument",
		"placeholder_in_program": "reset::command: the program (the first element) must not contain {uuid}",
		"empty_command":          "reset::command must name a program",
		"zero_timeout":           "reset::timeout must be positive, got 0s",
		"unknown_backend":        `backend: unknown backend "nvsmi"; want nvml, dcgm or none`,
		"bad_endpoint":           `dcgm::endpoint "localhost" is not host:port or unix:///path`,
		"bad_diag_level":         "dcgm::diag_level must be 1 to 4 (dcgmi diag -r), got 5",
		"bad_poll_interval":      "poll_interval must be positive, got 0s",
		"bad_api_timeout":        "api_timeout must be positive, got -1s",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := load(t, name)
			require.Error(t, err)
			require.Contains(t, err.Error(), want)
			require.Len(t, strings.Split(strings.TrimSpace(err.Error()), "\n"), 1, "one error: %v", err)
		})
	}
}

// A DCGM setting is not checked unless the backend is dcgm: the default
// nvml backend never reads it.
func TestDCGMSettingsOnlyForDCGM(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Node = "n"
	cfg.DCGM = DCGMConfig{}
	require.NoError(t, cfg.Validate())
	cfg.Backend = "dcgm"
	require.ErrorContains(t, cfg.Validate(), "dcgm::endpoint is empty")
}

// TestExampleConfig: the agent configuration the README points to turns
// the actor on (it is in service::extensions) with valid settings.
func TestExampleConfig(t *testing.T) {
	raw, err := os.ReadFile("../../examples/agent/gpu-reset.yaml")
	require.NoError(t, err)
	// ${env:NAME:-default}, as the collector's env provider resolves it in
	// the DaemonSet.
	env := map[string]string{"K8S_NODE_NAME": "gpu-node-1", "HOST_IP": "10.0.0.7", "POD_IP": "10.1.0.9"}
	expanded := os.Expand(string(raw), func(v string) string {
		name, _, _ := strings.Cut(strings.TrimPrefix(v, "env:"), ":-")
		return env[name]
	})
	cm, err := confmaptest.LoadConf(writeTemp(t, expanded))
	require.NoError(t, err)
	sub, err := cm.Sub("extensions::gpu_reset")
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, cfg.Validate())
	require.Equal(t, "gpu-node-1", cfg.Node)
	require.Equal(t, "dcgm", cfg.Backend)
	require.Equal(t, "10.0.0.7:5555", cfg.DCGM.Endpoint)
	require.Contains(t, cm.Get("service::extensions"), "gpu_reset", "listed, so active")
}

func writeTemp(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}
