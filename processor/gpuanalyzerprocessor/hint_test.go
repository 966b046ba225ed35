package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestClassChange: when a GPU's class changes, the state of the class it
// left (with its hint) ends at 0, the new one carries its hint, and one log
// line says what changed and what to do.
func TestClassChange(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, sink := newProcessor(t, createDefaultConfig().(*Config), set)
	f := newFleet(t, simulated.Config{
		Seed: 5, Hosts: 1, GPUsPerHost: 1, HostPrefix: "gpu-node-", Models: []string{"h100"},
		Workloads: []simulated.Workload{{Name: "chat", Kind: "serving", Namespace: "serving", GPUs: "0/0",
			Phases: []simulated.Phase{{Kind: simulated.ComputeBound, Duration: time.Minute}, {Kind: simulated.LaunchBound, Duration: time.Minute}}}},
	})
	changedAt := -1
	for i := range 110 {
		sink.Reset()
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
		for _, ms := range verdicts(sink.AllMetrics()[0]) {
			dps := ms[MetricBottleneckState].Gauge().DataPoints()
			if dps.Len() == 2 {
				require.Equal(t, -1, changedAt, "one change")
				changedAt = i
				require.Equal(t, map[string]any{AttrBottleneckClass: "launch_bound", AttrBottleneckHint: "use_cuda_graphs"}, dps.At(0).Attributes().AsRaw())
				require.Equal(t, int64(1), dps.At(0).IntValue())
				require.Equal(t, map[string]any{AttrBottleneckClass: "compute_bound"}, dps.At(1).Attributes().AsRaw())
				require.Equal(t, int64(0), dps.At(1).IntValue())
			}
		}
	}
	require.Greater(t, changedAt, 60, "after the launch-bound phase began and the window's mean moved")
	changes := logs.FilterMessage("GPU bottleneck changed").All()
	require.Len(t, changes, 1)
	fields := changes[0].ContextMap()
	require.Equal(t, "launch_bound", fields["bottleneck"])
	require.Equal(t, "compute_bound", fields["was"])
	require.Equal(t, "use_cuda_graphs", fields["hint"])
	require.Equal(t, "serving", fields["k8s.namespace.name"])
}
