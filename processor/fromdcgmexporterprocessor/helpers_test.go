package fromdcgmexporterprocessor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadatatest"
)

// t0 is when the tests' first scrape happens; the clock the processor
// checks timestamps against is an hour later.
var t0 = time.Unix(1767225600, 0).UTC()

// receiverScope is the scope the dcgm receiver emits its metrics in.
const receiverScope = "github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"

func newTestTranslator(tb testing.TB, cfg *Config) (*translator, *componenttest.Telemetry) {
	tb.Helper()
	tel := componenttest.NewTelemetry()
	tb.Cleanup(func() { require.NoError(tb, tel.Shutdown(context.Background())) })
	p, err := newTranslator(cfg, metadatatest.NewSettings(tel))
	require.NoError(tb, err)
	p.now = func() time.Time { return t0.Add(time.Hour) }
	tb.Cleanup(func() { require.NoError(tb, p.shutdown(context.Background())) })
	return p, tel
}

// consume runs one batch through the processor.
func consume(tb testing.TB, p *translator, md pmetric.Metrics) pmetric.Metrics {
	tb.Helper()
	out, err := p.processMetrics(context.Background(), md)
	require.NoError(tb, err)
	return out
}

// capturedPage reads scrape-N.prom, captured from dcgm-exporter 4.8.2.
func capturedPage(tb testing.TB, n int) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "dcgm-exporter", fmt.Sprintf("scrape-%d.prom", n)))
	require.NoError(tb, err)
	return b
}

// page scrapes a page given as text at t0 + at.
func page(tb testing.TB, at time.Duration, text string) pmetric.Metrics {
	tb.Helper()
	return scrape(tb, []byte(text), t0.Add(at), t0)
}

// devices returns the translated resources (the dcgm receiver's) by hw.id,
// each id's resources in order.
func devices(md pmetric.Metrics) map[string][]pmetric.ResourceMetrics {
	out := map[string][]pmetric.ResourceMetrics{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		if rm.ScopeMetrics().Len() == 0 || rm.ScopeMetrics().At(0).Scope().Name() != receiverScope {
			continue
		}
		id, _ := rm.Resource().Attributes().Get(metricnames.AttrHWID)
		out[id.Str()] = append(out[id.Str()], rm)
	}
	return out
}

// point finds the data point of metric name whose attributes include want.
func point(rm pmetric.ResourceMetrics, name string, want map[string]any) (pmetric.NumberDataPoint, bool) {
	var found pmetric.NumberDataPoint
	ok := false
	forEachPoint(rm, func(n string, dp pmetric.NumberDataPoint) {
		if !ok && n == name && matches(dp.Attributes(), want) {
			found, ok = dp, true
		}
	})
	return found, ok
}

// forEachPoint calls fn with every gauge and sum data point of the
// resource, and its metric's name.
func forEachPoint(rm pmetric.ResourceMetrics, fn func(string, pmetric.NumberDataPoint)) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				dps = m.Gauge().DataPoints()
			case pmetric.MetricTypeSum:
				dps = m.Sum().DataPoints()
			default:
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				fn(m.Name(), dps.At(k))
			}
		}
	}
}

func matches(attrs pcommon.Map, want map[string]any) bool {
	for k, v := range want {
		got, ok := attrs.Get(k)
		if !ok || got.AsRaw() != v {
			return false
		}
	}
	return true
}

func value(tb testing.TB, rm pmetric.ResourceMetrics, name string, want map[string]any) float64 {
	tb.Helper()
	dp, ok := point(rm, name, want)
	require.True(tb, ok, "no %s %v", name, want)
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// names lists the metric names of a batch, in order, once each.
func names(md pmetric.Metrics) []string {
	var out []string
	seen := map[string]bool{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if n := ms.At(k).Name(); !seen[n] {
					seen[n] = true
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// counts reads an int64 sum of the processor's telemetry by the value of
// one attribute ("" for points without it).
func counts(tb testing.TB, tel *componenttest.Telemetry, metric, attr string) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	m, err := tel.GetMetric(metric)
	if err != nil {
		return out
	}
	for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
		v, _ := dp.Attributes.Value(attribute.Key(attr))
		out[v.AsString()] += dp.Value
	}
	return out
}

func attrSet(k, v string) attribute.Set { return attribute.NewSet(attribute.String(k, v)) }

// zeroGaugeStarts clears the start time of every gauge point: the dcgm
// receiver's metrics builder stamps its gauges with the wall-clock time it
// was made, which differs between two builders; its sums' start times are
// its counters' own and are compared.
func zeroGaugeStarts(md pmetric.Metrics) pmetric.Metrics {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if m := ms.At(k); m.Type() == pmetric.MetricTypeGauge {
					dps := m.Gauge().DataPoints()
					for l := 0; l < dps.Len(); l++ {
						dps.At(l).SetStartTimestamp(0)
					}
				}
			}
		}
	}
	return md
}
