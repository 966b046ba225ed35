package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// analyzerOutputs runs the default simulated fleet (class changes, stragglers,
// alerts), with a GPU that three pods share, through the analyzer with
// prices, and returns the analyzer's scopes of every batch.
func analyzerOutputs(t *testing.T) []pmetric.ScopeMetrics {
	fc := simulated.DefaultConfig()
	fc.Workloads = append(fc.Workloads, simulated.Workload{Name: "nb", Kind: simulated.TimeSliced, Namespace: "research", GPUs: "1/7", Pods: 3,
		Phases: []simulated.Phase{{Kind: simulated.InputBound, Duration: 20 * time.Second}, {Kind: simulated.Idle, Duration: 10 * time.Second}}})
	f := newFleet(t, fc)
	f.fl.EnableProcesses()
	cfg := everySample()
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 3.6}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	for range 75 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	var out []pmetric.ScopeMetrics
	shares := 0
	for _, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			sms := md.ResourceMetrics().At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				if sms.At(j).Scope().Name() == metadata.ScopeName {
					out = append(out, sms.At(j))
					if _, split := md.ResourceMetrics().At(i).Resource().Attributes().Get(metricnames.AttrOTelGPUProcessOwner); split {
						shares++
					}
				}
			}
		}
	}
	require.Positive(t, shares, "owners' parts of shared GPUs too")
	return out
}

// TestLegacyNames: while otelgpu.emitNvidiaNames is enabled (the default),
// every metric the analyzer adds is sent under its new name and again under
// its old one, with the old attribute names and the same values; disabled,
// under the new name only.
func TestLegacyNames(t *testing.T) {
	analyzerMetrics := []string{
		metricnames.OTelGPUAlerts, metricnames.OTelGPUBottleneckState, metricnames.OTelGPUBottleneckTime,
		metricnames.OTelGPUCost, metricnames.OTelGPUStragglerScore, metricnames.OTelGPUStragglerState, metricnames.OTelGPUTime,
	}
	t.Run("gate on", func(t *testing.T) {
		legacynamestest.SetGate(t, true)
		seen := map[string]bool{}
		for _, sm := range analyzerOutputs(t) {
			byName := map[string]pmetric.Metric{}
			for k := 0; k < sm.Metrics().Len(); k++ {
				m := sm.Metrics().At(k)
				require.NotContains(t, byName, m.Name())
				byName[m.Name()] = m
			}
			for name, m := range byName {
				old, renamed := legacynames.Metric(name)
				if !renamed {
					continue
				}
				seen[name] = true
				c, ok := byName[old]
				require.True(t, ok, "%s is sent as %s too", name, old)
				// Renamed back, the copy is the metric.
				back := pmetric.NewMetric()
				c.CopyTo(back)
				back.SetName(name)
				renameBack(back)
				require.Equal(t, m, back)
				require.NotEqual(t, m, c)
			}
		}
		for _, n := range analyzerMetrics {
			require.True(t, seen[n], "%s was sent", n)
		}
	})
	t.Run("gate off", func(t *testing.T) {
		legacynamestest.SetGate(t, false)
		old := legacynames.Renames()
		seen := map[string]bool{}
		for _, sm := range analyzerOutputs(t) {
			for k := 0; k < sm.Metrics().Len(); k++ {
				m := sm.Metrics().At(k)
				seen[m.Name()] = true
				require.NotContains(t, old, m.Name())
				forEachAttribute(m, func(key string) { require.NotContains(t, old, key) })
			}
		}
		for _, n := range analyzerMetrics {
			require.True(t, seen[n], "%s is sent", n)
		}
	})
}

// renameBack gives a copy's attributes their new names again.
func renameBack(m pmetric.Metric) {
	back := map[string]string{}
	for old, n := range legacynames.Renames() {
		back[old] = n
	}
	dps := pmetric.NewNumberDataPointSlice()
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	}
	for i := 0; i < dps.Len(); i++ {
		out := pcommon.NewMap()
		dps.At(i).Attributes().Range(func(k string, v pcommon.Value) bool {
			if n, ok := back[k]; ok {
				k = n
			}
			v.CopyTo(out.PutEmpty(k))
			return true
		})
		out.MoveTo(dps.At(i).Attributes())
	}
}

func forEachAttribute(m pmetric.Metric, f func(string)) {
	dps := pmetric.NewNumberDataPointSlice()
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	}
	for i := 0; i < dps.Len(); i++ {
		dps.At(i).Attributes().Range(func(k string, _ pcommon.Value) bool {
			f(k)
			return true
		})
	}
}

// TestLegacyMetricKeys: a configuration that turns a metric off by its old
// name still loads, with a warning.
func TestLegacyMetricKeys(t *testing.T) {
	old, _ := legacynames.Metric(metricnames.OTelGPUStragglerScore)
	cfg := createDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{"metrics": map[string]any{old: map[string]any{"enabled": false}}})
	require.NoError(t, conf.Unmarshal(cfg))
	require.False(t, cfg.Metrics.OtelgpuStragglerScore.Enabled)
	require.Len(t, cfg.deprecations(), 1)
	require.Contains(t, cfg.deprecations()[0], old)
}
