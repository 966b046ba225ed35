package fromdcgmexporterprocessor

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadata"
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
	require.False(t, loadConfig(t, "").KeepOriginals, "the translated originals are dropped by default")

	c := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(c))
	require.True(t, c.KeepOriginals)
	require.Equal(t, 512, c.MaxGPUs)
	require.Equal(t, 2*time.Minute, c.GPUTTL)

	err := confmap.Validate(loadConfig(t, "bad"))
	require.ErrorContains(t, err, "max_gpus must be positive, got 0")
	require.ErrorContains(t, err, "gpu_ttl must be positive, got -1s")
}

func TestUnknownKeyRefused(t *testing.T) {
	cfg := NewFactory().CreateDefaultConfig()
	err := confmap.NewFromStringMap(map[string]any{"keep_original": true}).Unmarshal(cfg)
	require.ErrorContains(t, err, "keep_original")
}
