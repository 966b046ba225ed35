package fromdcgmexporterprocessor

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestGoldenPages pins the whole output of the five captured pages, 15 s
// apart: what passes through (the scrape's up and scrape_* series) and the
// translation, every name, unit, value, start time and attribute. Each
// resource is marked with its page's number. Gauges' start times are the
// receiver's builder's wall clock and are cleared.
func TestGoldenPages(t *testing.T) {
	p, _ := newTestTranslator(t, defaultConfig())
	got := pmetric.NewMetrics()
	for n := 1; n <= 5; n++ {
		out := zeroGaugeStarts(consume(t, p, scrape(t, capturedPage(t, n), t0.Add(time.Duration(n-1)*15*time.Second), t0)))
		rms := out.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rms.At(i).Resource().Attributes().PutInt("page", int64(n))
		}
		rms.MoveAndAppendTo(got.ResourceMetrics())
	}
	path := filepath.Join("testdata", "golden", "pages.yaml")
	if *update {
		require.NoError(t, golden.WriteMetrics(t, path, got, golden.SkipMetricTimestampNormalization()))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricDataPointsOrder()))
}
