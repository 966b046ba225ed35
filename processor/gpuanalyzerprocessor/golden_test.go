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

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
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
// through is not its output. To keep the file small, scopes with nothing
// but the steady state (no transition, alert or usage counters) are kept
// only every 15th batch; the digest covers them all.
func TestGoldenVerdicts(t *testing.T) {
	legacynamestest.SetGate(t, false) // the golden file shows the new names only
	f := newFleet(t, simulated.DefaultConfig())
	cfg := everySample()
	cfg.Cost.Currency = "EUR"
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 3.6}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	for range 75 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
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

	// The verdicts byte for byte, in the order they went out: the SHA-256 of
	// the OTLP encoding of every verdict scope of every batch, each on a
	// resource of its batch and position. What passes through is the
	// input's bytes, whichever receiver made them.
	all := pmetric.NewMetrics()
	for n, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				if sm := rm.ScopeMetrics().At(j); sm.Scope().Name() == metadata.ScopeName {
					out := all.ResourceMetrics().AppendEmpty()
					out.Resource().Attributes().PutInt("batch", int64(n))
					out.Resource().Attributes().PutInt("resource", int64(i))
					sm.CopyTo(out.ScopeMetrics().AppendEmpty())
				}
			}
		}
	}
	var enc pmetric.ProtoMarshaler
	b, err := enc.MarshalMetrics(all)
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	digest := hex.EncodeToString(sum[:]) + "\n"
	path = filepath.Join("testdata", "golden", "verdicts.sha256")
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(digest), 0o600))
	}
	wantDigest, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(wantDigest), digest, "the verdicts' bytes changed; if on purpose, rerun with -update")
}

// eventful says whether a verdict scope has more than the steady state: a
// transition (a state with a final 0), usage counters, or alerts.
func eventful(sm pmetric.ScopeMetrics) bool {
	ms := sm.Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		switch m.Name() {
		case metricnames.OTelGPUBottleneckState:
			if m.Gauge().DataPoints().Len() > 1 {
				return true
			}
		case metricnames.OTelGPUAlerts, metricnames.OTelGPUTime:
			return true
		}
	}
	return false
}
