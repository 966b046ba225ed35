package gpuanalyzerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestAttributeEnums checks that metadata.yaml's enums hold every class,
// hint, alert and usage state of the analyzer under the same name: an
// unknown name would map to the enums' empty zero value.
func TestAttributeEnums(t *testing.T) {
	for _, c := range analysis.Classes() {
		require.Equal(t, c.String(), classAttrs[c].String())
	}
	for h := analysis.NoHint + 1; h < analysis.NumHints; h++ {
		require.Contains(t, metadata.MapAttributeOtelgpuBottleneckHint, h.String())
		require.NotNil(t, hintOpts[h])
	}
	require.Len(t, metadata.MapAttributeOtelgpuBottleneckHint, int(analysis.NumHints)-1, "every hint but none")
	for e := analysis.NoEvidence + 1; e < analysis.NumEvidence; e++ {
		require.Contains(t, metadata.MapAttributeOtelgpuBottleneckEvidence, e.String())
	}
	require.Len(t, metadata.MapAttributeOtelgpuBottleneckEvidence, int(analysis.NumEvidence)-1, "every evidence but none")
	for sc := analysis.NoScope + 1; sc < analysis.NumScopes; sc++ {
		require.Contains(t, metadata.MapAttributeOtelgpuBottleneckScope, sc.String())
	}
	require.Len(t, metadata.MapAttributeOtelgpuBottleneckScope, int(analysis.NumScopes)-1, "every scope but none")
	for a := range analysis.NumAlerts {
		require.Equal(t, a.String(), alertAttrs[a].String())
	}
	for _, s := range analysis.UsageStates() {
		require.Equal(t, s.String(), usageStateAttrs[s].String())
	}
	require.Equal(t, "pending", alertStateAttrs[analysis.Pending].String())
	require.Equal(t, "firing", alertStateAttrs[analysis.Firing].String())

	// The names the replay tools and tests use are metadata.yaml's.
	for name, want := range map[string]string{
		metricnames.OTelGPUBottleneckState: metadata.MetricsInfo.OtelgpuBottleneckState.Name,
		metricnames.OTelGPUBottleneckTime:  metadata.MetricsInfo.OtelgpuBottleneckTime.Name,
		metricnames.OTelGPUStragglerState:  metadata.MetricsInfo.OtelgpuStragglerState.Name,
		metricnames.OTelGPUStragglerScore:  metadata.MetricsInfo.OtelgpuStragglerScore.Name,
		metricnames.OTelGPUAlerts:          metadata.MetricsInfo.OtelgpuAlerts.Name,
		metricnames.OTelGPUTime:            metadata.MetricsInfo.OtelgpuTime.Name,
		metricnames.OTelGPUCost:            metadata.MetricsInfo.OtelgpuCost.Name,
	} {
		require.Equal(t, want, name)
	}
}

// TestDisabledMetric turns one of the analyzer's metrics off: it is not
// sent, the others are.
func TestDisabledMetric(t *testing.T) {
	cfg := loadConfig(t, "custom")
	require.False(t, cfg.Metrics.OtelgpuStragglerScore.Enabled)
	require.True(t, cfg.Metrics.OtelgpuStragglerState.Enabled)
	f := newFleet(t, simulated.DefaultConfig())
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	v := verdicts(sink.AllMetrics()[0])
	require.NotEmpty(t, v)
	peers := 0
	for _, m := range v {
		require.Contains(t, m, metricnames.OTelGPUBottleneckState)
		require.NotContains(t, m, metricnames.OTelGPUStragglerScore)
		if _, ok := m[metricnames.OTelGPUStragglerState]; ok {
			peers++
		}
	}
	require.Positive(t, peers, "GPUs with peers still send their straggler state")
}
