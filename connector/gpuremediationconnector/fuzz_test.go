package gpuremediationconnector

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/badotlp"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
)

// FuzzConfig: any YAML under gpu_remediation unmarshals and validates or
// is refused with a message; one that validates builds a remediator.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_remediation", "testdata/config.yaml", "../../examples/*/*.yaml") < 5 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("policy: {xid: {'0': drain, '-1': none, x: reboot}, escalation: {count: -1, window: 0s, to: none}}\ncircuit_breaker: {max_share: .nan, max_nodes: -1}"))
	f.Add([]byte("dry_run: false\nauth: {type: none}\ngpu_ttl: -1s\nrecovery: {timeout: 0s, healthy_for: 0s}\ndrain: {max_concurrent: 0, grace_period: -5s}"))
	configfuzz.Fuzz(f, func() component.Config { return createDefaultConfig() }, func(t *testing.T, cfg component.Config) {
		_, err := newRemediator(cfg.(*Config), settingsFor(nil))
		require.NoError(t, err, "a configuration that validates builds")
	})
}

func settingsFor(tel *componenttest.Telemetry) connector.Settings {
	if tel == nil {
		tel = componenttest.NewTelemetry()
	}
	return metadatatest.NewSettings(tel)
}

// FuzzConsume: any OTLP batch is read without a panic and without being
// changed; the decisions that follow are taken without a panic.
func FuzzConsume(f *testing.F) {
	now := time.Now()
	r := shadow(f)
	badotlp.FuzzUnchanged(f, now, r.consume, func(ctx context.Context) { r.tick(ctx, now) })
}

// TestBadInputCounted: the bad points of fault evidence are counted by
// reason.
func TestBadInputCounted(t *testing.T) {
	now := time.Now()
	cases := badotlp.Cases(now)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	want := map[string]map[string]int64{
		"nan":                   {"invalid_value": 3}, // XID and ECC counters, the row-remap level
		"inf":                   {"invalid_value": 3},
		"-inf":                  {"invalid_value": 3},
		"negative":              {"invalid_value": 2}, // the counters; a negative level is 0
		"no hw.id":              {"no_gpu": 3},
		"hw.id not a string":    {}, // 7 is read as the GPU "7"
		"histogram for a gauge": {"wrong_type": 2},
		"gauge for a counter":   {"wrong_type": 2},
		"xid codes":             {"invalid_xid": 6},
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			cfg := createDefaultConfig()
			cfg.Auth.Type = "none"
			cfg.LeaderElection.Enabled = false
			r, err := newRemediator(cfg, settingsFor(tel))
			require.NoError(t, err)
			require.NoError(t, r.consume(context.Background(), cases[name]))
			r.tick(context.Background(), now)
			got := map[string]int64{}
			if rm, err := tel.GetMetric("otelcol_connector_gpu_remediation_rejected_data_points"); err == nil {
				for _, dp := range rm.Data.(metricdata.Sum[int64]).DataPoints {
					r, _ := dp.Attributes.Value(attribute.Key("reason"))
					got[r.AsString()] += dp.Value
				}
			}
			w := want[name]
			if w == nil {
				w = map[string]int64{}
			}
			require.Equal(t, w, got)
		})
	}
}
