package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
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
	p, sink := newProcessor(t, everySample(), set)
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
			dps := ms[metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
			if dps.Len() == 2 {
				require.Equal(t, -1, changedAt, "one change")
				changedAt = i
				require.Equal(t, map[string]any{metricnames.AttrOTelGPUBottleneckClass: "launch_bound", metricnames.AttrOTelGPUBottleneckHint: "use_cuda_graphs",
					metricnames.AttrOTelGPUBottleneckEvidence: metricnames.AttrOTelGPUBottleneckEvidenceSMActive}, dps.At(0).Attributes().AsRaw())
				require.Equal(t, int64(1), dps.At(0).IntValue())
				require.Equal(t, map[string]any{metricnames.AttrOTelGPUBottleneckClass: "compute_bound",
					metricnames.AttrOTelGPUBottleneckEvidence: metricnames.AttrOTelGPUBottleneckEvidenceSMActive}, dps.At(1).Attributes().AsRaw())
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
	require.Equal(t, "sm_active", fields["evidence"], "what the class rests on")
	require.Equal(t, "serving", fields["k8s.namespace.name"])
}

// TestDefaultFleetV2 runs the simulated default fleet for 26 minutes: the
// training job's collectives phase (from 20 min) is communication-bound,
// and GPU 0/7's steady leak fires GPUMemoryLeak when its fit has spanned
// 15 min and held for 10.
func TestDefaultFleetV2(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
	comm, leak := -1, -1
	for f.n <= 1560 {
		at := f.n
		sink.Reset()
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
		md := sink.AllMetrics()[0]
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			a := md.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
			id, name := a["hw.id"].(string), a["host.name"].(string)+"/"+a["hw.name"].(string)
			v := verdicts(md)[id]
			switch name {
			case "gpu-node-0/gpu0":
				if comm < 0 && classOf(v) == "communication_bound" {
					comm = at
					require.Equal(t, "overlap_communication", hintOf(v))
				}
			case "gpu-node-0/gpu7":
				if leak < 0 && alertState(v, "GPUMemoryLeak") == "firing" {
					leak = at
				}
			}
		}
	}
	require.GreaterOrEqual(t, comm, 1200)
	require.LessOrEqual(t, comm, 1230, "within the 30 s window of the phase change")
	require.GreaterOrEqual(t, leak, 1500, "15 min of samples (from 0 s), then 10 min of for")
	require.LessOrEqual(t, leak, 1560)
}

func alertState(ms map[string]pmetric.Metric, name string) string {
	m, ok := ms[metricnames.OTelGPUAlerts]
	if !ok {
		return ""
	}
	for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
		a := m.Gauge().DataPoints().At(i).Attributes()
		if n, _ := a.Get(metricnames.AttrAlertname); n.Str() == name {
			st, _ := a.Get(metricnames.AttrAlertstate)
			return st.Str()
		}
	}
	return ""
}
