package gpunodereceiver

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
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
	def := loadConfig(t, "")
	require.NoError(t, confmap.Validate(def))
	require.Equal(t, createDefaultConfig(), def)
	require.Equal(t, 15*time.Second, def.CollectionInterval)
	require.Equal(t, "/", def.RootPath)
	require.True(t, def.Cgroup.Enabled)
	require.True(t, def.Pressure.Enabled)
	require.True(t, def.Network.Enabled)
	require.False(t, def.NCCL.Enabled)
	require.Empty(t, def.HostName, "os.Hostname() at start")

	c := loadConfig(t, "hostfs")
	require.NoError(t, confmap.Validate(c))
	require.Equal(t, 30*time.Second, c.CollectionInterval)
	require.Equal(t, "/hostfs", c.RootPath)
	require.Equal(t, "gpu-node-7", c.HostName)
	require.False(t, c.Pressure.Enabled)
	require.Equal(t, NCCLConfig{Enabled: true, Paths: []string{"/var/lib/nccl-inspector/*.prom"}}, c.NCCL)
}

func TestValidate(t *testing.T) {
	for name, want := range map[string]string{
		"relative_root": `root_path "hostfs": want an absolute path`,
		"nothing":       "nothing to read",
		"bad_nccl":      `nccl: paths: "/var/lib/[nccl": syntax error in pattern`,
		"nccl_no_paths": "nccl: enabled with no paths",
	} {
		t.Run(name, func(t *testing.T) {
			require.ErrorContains(t, confmap.Validate(loadConfig(t, name)), want)
		})
	}
}
