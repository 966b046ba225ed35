package gpuanalyzerprocessor

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenVerdicts pins the metrics the analyzer adds, exactly: names,
// order, descriptions, units, start times, values and attributes. The
// default simulated fleet over 75 s has class changes with their hints,
// stragglers, pending and firing alerts, and usage counters with their cost
// in a currency other than the default. Only the analyzer's own scopes are
// kept, on a resource of the GPU's hw.id and the batch's index: what passes
// through is not its output. To keep the file small, of the scopes that
// repeat the previous batch's shape only every 15th batch's are kept.
func TestGoldenVerdicts(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	cfg := createDefaultConfig().(*Config)
	cfg.Cost.Currency = "EUR"
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 3.6}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	for range 75 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), withoutGaugeStarts(f.next(t))))
	}
	got := pmetric.NewMetrics()
	for n, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				if sm.Scope().Name() != metadata.ScopeName || !eventful(sm) && n%15 != 0 {
					continue
				}
				out := got.ResourceMetrics().AppendEmpty()
				id, _ := rm.Resource().Attributes().Get("hw.id")
				out.Resource().Attributes().PutStr("hw.id", id.Str())
				out.Resource().Attributes().PutInt("batch", int64(n))
				sm.CopyTo(out.ScopeMetrics().AppendEmpty())
			}
		}
	}
	path := filepath.Join("testdata", "golden", "verdicts.yaml")
	if *update {
		require.NoError(t, golden.WriteMetrics(t, path, got, golden.SkipMetricTimestampNormalization()))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	// The golden file sorts resources and data points; the digest below
	// pins their order.
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))

	// The whole output, pass-through included, byte for byte: the SHA-256
	// of each batch's OTLP encoding in turn.
	h := sha256.New()
	var enc pmetric.ProtoMarshaler
	for _, md := range sink.AllMetrics() {
		b, err := enc.MarshalMetrics(md)
		require.NoError(t, err)
		h.Write(b)
	}
	digest := hex.EncodeToString(h.Sum(nil)) + "\n"
	path = filepath.Join("testdata", "golden", "output.sha256")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(digest), 0o600))
	}
	wantDigest, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(wantDigest), digest, "the output's bytes changed; if on purpose, rerun with -update")
}

// eventful says whether a verdict scope has more than the steady state: a
// transition (a state with a final 0), usage counters, or alerts.
func eventful(sm pmetric.ScopeMetrics) bool {
	ms := sm.Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		switch m.Name() {
		case MetricBottleneckState:
			if m.Gauge().DataPoints().Len() > 1 {
				return true
			}
		case MetricAlerts, MetricUsageTime:
			return true
		}
	}
	return false
}

// withoutGaugeStarts clears the start times the receiver puts on gauges: the
// collector's start, from the wall clock, which the analyzer does not read.
func withoutGaugeStarts(md pmetric.Metrics) pmetric.Metrics {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Type() != pmetric.MetricTypeGauge {
					continue
				}
				dps := ms.At(k).Gauge().DataPoints()
				for l := 0; l < dps.Len(); l++ {
					dps.At(l).SetStartTimestamp(0)
				}
			}
		}
	}
	return md
}
