package gpualertmanagerexporter

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap/confmaptest"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub(name)
	require.NoError(t, err)
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config)
}

func TestLoadConfig(t *testing.T) {
	cfg := loadConfig(t, "gpu_alertmanager")
	require.NoError(t, cfg.Validate())
	assert.Equal(t, time.Minute, cfg.ResendDelay)
	assert.Equal(t, 15*time.Minute, cfg.ResolveResend)
	assert.Equal(t, 10*time.Second, cfg.Client.Timeout)

	ha := loadConfig(t, "gpu_alertmanager/ha")
	require.NoError(t, ha.Validate())
	assert.Equal(t, []string{"http://alertmanager-0:9093", "https://alertmanager-1:9093/"}, ha.Endpoints)
	assert.Equal(t, 5*time.Second, ha.Client.Timeout)
	h, _ := ha.Client.Headers.Get("X-Scope-OrgID")
	assert.Equal(t, "gpu", string(h))
	id := component.MustNewIDWithName("file_storage", "alerts")
	assert.Equal(t, &id, ha.Storage)
	assert.Equal(t, map[string]string{"cluster": "prod-1"}, ha.ExternalLabels)
	assert.Equal(t, 2*time.Minute, newAlertSet(ha).validFor, "4 × max(5 s, 30 s)")
}

func TestValidateNamesEachProblem(t *testing.T) {
	err := loadConfig(t, "gpu_alertmanager/bad").Validate()
	require.Error(t, err)
	for _, want := range []string{
		`endpoints[0]: "ftp://am:21": the scheme must be http or https`,
		`endpoints[1]: "http://am:9093?x=1": a base URL takes no query or fragment`,
		`endpoints[2]: "http://am:9093?x=1" is listed twice`,
		"client::endpoint is not used",
		"client::timeout must be positive",
		"resend_delay must be positive",
		"evaluation_interval must be positive",
		"resolve_resend must not be negative",
		"queue_size must be at least 256",
		`external_labels: "bad-name" is not a label name`,
		`external_labels: "alertname" is set by the exporter`,
		`runbook_url: "runbooks" is not an absolute URL`,
	} {
		assert.ErrorContains(t, err, want)
	}
	assert.ErrorContains(t, createDefaultConfig().(*Config).Validate(), "endpoints must list at least one Alertmanager")
}
