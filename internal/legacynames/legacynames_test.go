package legacynames_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/featuregate"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestGate: one gate for the whole rename, beta (enabled by default), with a
// description that says the old names go.
func TestGate(t *testing.T) {
	var found bool
	featuregate.GlobalRegistry().VisitAll(func(g *featuregate.Gate) {
		if g.ID() != legacynames.GateID {
			return
		}
		found = true
		require.Equal(t, featuregate.StageBeta, g.Stage())
		require.True(t, g.IsEnabled(), "enabled by default in this release")
		require.Equal(t, "v0.1.0", g.FromVersion())
		require.Contains(t, g.Description(), "deprecated names")
		require.Contains(t, g.Description(), "will be removed")
	})
	require.True(t, found)
	require.Equal(t, "otelgpu.emitNvidiaNames", legacynames.GateID)
}

// TestTable: each new name is a name the components declare, each old one
// none, and no two names share an old name.
func TestTable(t *testing.T) {
	declared := map[string]bool{}
	for _, m := range metricnames.Metrics {
		declared[m.Name] = true
	}
	for _, a := range metricnames.Attributes {
		declared[a.Name] = true
	}
	renames := legacynames.Renames()
	require.Len(t, renames, 18, "11 metrics, amd.gpu.process.count, 5 attributes and the process owner")
	for old, n := range renames {
		require.True(t, declared[n], "%s → %s: the new name is declared", old, n)
		require.False(t, declared[old], "%s is no longer declared", old)
		require.Regexp(t, `^otelgpu\.`, n)
	}
	// The components of the rename had every otelgpu.* metric under an
	// old name; the gpu_node receiver came after it and never had one.
	for _, m := range metricnames.Metrics {
		if _, ok := legacynames.Metric(m.Name); !ok && m.Origin != "receiver/gpunodereceiver" {
			require.NotRegexp(t, `^otelgpu\.`, m.Name, "every otelgpu.* metric of %s had an old name", m.Origin)
		}
	}
}

func bottleneck(ms pmetric.MetricSlice) {
	m := ms.AppendEmpty()
	m.SetName(metricnames.OTelGPUBottleneckState)
	m.SetUnit(metricnames.OTelGPUBottleneckStateUnit)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetIntValue(1)
	dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckClass, metricnames.AttrOTelGPUBottleneckClassInputBound)
	dp.Attributes().PutStr("other", "kept")
	dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckHint, metricnames.AttrOTelGPUBottleneckHintFixDataLoading)
}

func TestAppendOld(t *testing.T) {
	newSlice := func() pmetric.MetricSlice {
		ms := pmetric.NewMetricSlice()
		ms.AppendEmpty().SetName(metricnames.HWGPUUtilization) // before from: not copied
		bottleneck(ms)
		ms.AppendEmpty().SetName(metricnames.HWPower) // not renamed
		return ms
	}
	t.Run("gate on", func(t *testing.T) {
		legacynamestest.SetGate(t, true)
		ms := newSlice()
		legacynames.AppendOld(ms, 1)
		require.Equal(t, 4, ms.Len(), "one copy, appended")
		oldName, _ := legacynames.Metric(metricnames.OTelGPUBottleneckState)
		c := ms.At(3)
		require.Equal(t, oldName, c.Name())
		require.Equal(t, metricnames.OTelGPUBottleneckStateUnit, c.Unit())
		oldClass, _ := legacynames.Attribute(metricnames.AttrOTelGPUBottleneckClass)
		oldHint, _ := legacynames.Attribute(metricnames.AttrOTelGPUBottleneckHint)
		var keys []string
		c.Gauge().DataPoints().At(0).Attributes().Range(func(k string, _ pcommon.Value) bool {
			keys = append(keys, k)
			return true
		})
		require.Equal(t, []string{oldClass, "other", oldHint}, keys, "renamed in place, in order")
		require.Equal(t, int64(1), c.Gauge().DataPoints().At(0).IntValue())
		n := ms.At(1)
		require.Equal(t, metricnames.OTelGPUBottleneckState, n.Name(), "the new metric is untouched")
		_, ok := n.Gauge().DataPoints().At(0).Attributes().Get(metricnames.AttrOTelGPUBottleneckClass)
		require.True(t, ok)
	})
	t.Run("gate off", func(t *testing.T) {
		legacynamestest.SetGate(t, false)
		ms := newSlice()
		legacynames.AppendOld(ms, 0)
		require.Equal(t, 3, ms.Len(), "the new names only")
	})
}

func count(rm pmetric.ResourceMetrics) {
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(metricnames.OTelGPUProcessCount)
	s := m.SetEmptySum()
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	s.DataPoints().AppendEmpty().SetIntValue(3)
}

func TestAppendOldResource(t *testing.T) {
	split := func() pmetric.ResourceMetrics {
		rm := pmetric.NewResourceMetrics()
		rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-1")
		rm.Resource().Attributes().PutStr(metricnames.AttrOTelGPUProcessOwner, "pod")
		count(rm)
		return rm
	}
	device := func() pmetric.ResourceMetrics {
		rm := pmetric.NewResourceMetrics()
		rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-1")
		count(rm)
		return rm
	}
	t.Run("gate on", func(t *testing.T) {
		legacynamestest.SetGate(t, true)
		rm := split()
		legacynames.AppendOldResource(rm)
		owner, ok := rm.Resource().Attributes().Get(legacynames.OldProcessOwner)
		require.True(t, ok)
		require.Equal(t, "pod", owner.Str())
		_, ok = rm.Resource().Attributes().Get(metricnames.AttrOTelGPUProcessOwner)
		require.True(t, ok, "both while the gate is on")
		ms := rm.ScopeMetrics().At(0).Metrics()
		require.Equal(t, 2, ms.Len())
		oldCount, _ := legacynames.Metric(metricnames.OTelGPUProcessCount)
		require.Equal(t, oldCount, ms.At(1).Name())
		require.Equal(t, pmetric.MetricTypeSum, ms.At(1).Type())

		rm = device()
		legacynames.AppendOldResource(rm)
		_, ok = rm.Resource().Attributes().Get(legacynames.OldProcessOwner)
		require.False(t, ok, "a device is no split")
		ms = rm.ScopeMetrics().At(0).Metrics()
		require.Equal(t, 2, ms.Len())
		require.Equal(t, legacynames.OldAMDProcessCount, ms.At(1).Name())
		require.Equal(t, pmetric.MetricTypeGauge, ms.At(1).Type(), "a gauge, as it was")
		require.Equal(t, int64(3), ms.At(1).Gauge().DataPoints().At(0).IntValue())
		require.Equal(t, pmetric.MetricTypeSum, ms.At(0).Type(), "the new metric is untouched")
	})
	t.Run("gate off", func(t *testing.T) {
		legacynamestest.SetGate(t, false)
		for _, rm := range []pmetric.ResourceMetrics{split(), device()} {
			legacynames.AppendOldResource(rm)
			_, ok := rm.Resource().Attributes().Get(legacynames.OldProcessOwner)
			require.False(t, ok)
			require.Equal(t, 1, rm.ScopeMetrics().At(0).Metrics().Len())
		}
	})
}

func TestConfigKeys(t *testing.T) {
	oldState, _ := legacynames.Metric(metricnames.OTelGPUBottleneckState)
	conf := confmap.NewFromStringMap(map[string]any{
		"verdict_interval": "30s",
		"metrics": map[string]any{
			oldState:                       map[string]any{"enabled": false},
			metricnames.OTelGPUCost:        map[string]any{"enabled": true},
			legacynames.OldAMDProcessCount: map[string]any{"enabled": false},
		},
		"resource_attributes": map[string]any{legacynames.OldProcessOwner: map[string]any{"enabled": false}},
	})
	got, warnings, err := legacynames.ConfigKeys(conf)
	require.NoError(t, err)
	require.Len(t, warnings, 3)
	require.Contains(t, warnings[0], "deprecated")
	require.Equal(t, map[string]any{
		"verdict_interval": "30s",
		"metrics": map[string]any{
			metricnames.OTelGPUBottleneckState: map[string]any{"enabled": false},
			metricnames.OTelGPUCost:            map[string]any{"enabled": true},
			metricnames.OTelGPUProcessCount:    map[string]any{"enabled": false},
		},
		"resource_attributes": map[string]any{metricnames.AttrOTelGPUProcessOwner: map[string]any{"enabled": false}},
	}, got.ToStringMap())

	// Nothing deprecated: the same configuration, no warning.
	plain := confmap.NewFromStringMap(map[string]any{"metrics": map[string]any{metricnames.OTelGPUCost: map[string]any{"enabled": true}}})
	got, warnings, err = legacynames.ConfigKeys(plain)
	require.NoError(t, err)
	require.Empty(t, warnings)
	require.Same(t, plain, got)

	// Both names of one metric: which one holds is not guessed.
	_, _, err = legacynames.ConfigKeys(confmap.NewFromStringMap(map[string]any{"metrics": map[string]any{
		oldState:                           map[string]any{"enabled": false},
		metricnames.OTelGPUBottleneckState: map[string]any{"enabled": true},
	}}))
	require.ErrorContains(t, err, "both set")
}
