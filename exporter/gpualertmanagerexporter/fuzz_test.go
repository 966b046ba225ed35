package gpualertmanagerexporter

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/badotlp"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// FuzzConfig: any YAML under gpu_alertmanager unmarshals and validates or
// is refused with a message; one that validates builds an exporter.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_alertmanager", "testdata/config.yaml", "../../examples/*/*.yaml") < 2 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("endpoints: ['http://[::1', '']\nresend_delay: -1s\nresolve_resend: 0s\nevaluation_interval: 1e9h\ntimeout: .nan"))
	f.Add([]byte("endpoints: [http://am:9093]\nexternal_labels: {'': x, alertname: y}\nresource_labels: [7, ~]\nqueue_size: -3"))
	configfuzz.Fuzz(f, createDefaultConfig, func(t *testing.T, cfg component.Config) {
		_, err := newAlertExporter(cfg.(*Config), exportertestSettings())
		require.NoError(t, err, "a configuration that validates builds")
	})
}

// FuzzConsume: any OTLP batch is read without a panic and without being
// changed, and the resends that fall due after it are worked out without
// one. Not started: no Alertmanager is asked.
func FuzzConsume(f *testing.F) {
	now := time.Now()
	e, err := newAlertExporter(testConfig("http://127.0.0.1:9"), exportertestSettings())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(alertSeed(f, now))
	badotlp.FuzzUnchanged(f, now, e.consumeMetrics, func(context.Context) { e.set.due(now.Add(time.Hour)) })
}

// alertSeed is a batch shaped as the analyzer's and the remediation's
// alerts arrive, for the fuzzer to start from.
func alertSeed(f *testing.F, now time.Time) []byte {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-1")
	rm.Resource().Attributes().PutStr(metricnames.AttrHostName, "node-1")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	m := ms.AppendEmpty()
	m.SetName(metricnames.OTelGPUAlerts)
	dps := m.SetEmptyGauge().DataPoints()
	for i, st := range []string{"firing", "pending", "resolved", ""} {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
		dp.SetIntValue(int64(i % 2))
		dp.Attributes().PutStr(metricnames.AttrAlertname, "GPUFaulted")
		dp.Attributes().PutStr(metricnames.AttrAlertstate, st)
		dp.Attributes().PutStr("severity", "critical")
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
