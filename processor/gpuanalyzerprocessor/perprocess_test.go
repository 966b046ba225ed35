package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// TestPerProcessSeriesAreNotGPUs feeds the analyzer what the dcgm receiver
// emits with per_process on: beside each GPU's resource, one resource per
// pod using it, with the GPU's hw.id. A fleet of 4 GPUs, one time-sliced
// between three pods, has 4 GPUs: the analyzer tracks 4, gives 4 verdicts,
// each on the GPU's own resource, counts none of the per-process data
// points as unanalysed, and passes the per-process resources through
// unchanged; the time-sliced GPU's pods get their part of its usage
// (share_test.go), and nothing else.
func TestPerProcessSeriesAreNotGPUs(t *testing.T) {
	legacynamestest.SetGate(t, false) // the deprecated names are TestLegacyNames's
	fl, err := simulated.New(simulated.Config{
		Seed: 5, Hosts: 1, GPUsPerHost: 4, HostPrefix: "n", Models: []string{"h100"},
		Workloads: []simulated.Workload{
			{Name: "svc", Kind: simulated.Serving, Namespace: "serving", GPUs: "0/0-1", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			{Name: "nb", Kind: simulated.TimeSliced, Namespace: "research", GPUs: "0/2", Phases: []simulated.Phase{{Kind: simulated.InputBound}}},
		},
	})
	require.NoError(t, err)
	fl.EnableProcesses()
	f := dcgmreceiver.NewFactory()
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	rcv := r.(offline.Receiver)

	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink := newProcessor(t, everySample(), metadatatest.NewSettings(tel))
	t0 := time.Unix(1767225600, 0)
	var in pmetric.Metrics
	for k := range 40 {
		samples, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*time.Second), time.Second)
		require.NoError(t, err)
		in = rcv.Map(samples)
		want := pmetric.NewMetrics()
		in.CopyTo(want)
		require.NoError(t, p.ConsumeMetrics(context.Background(), in))
		in = want
	}
	// 4 GPUs, and 2 + 3 pods' parts of 3 of them.
	require.Equal(t, 4+5, in.ResourceMetrics().Len())

	out := sink.AllMetrics()[len(sink.AllMetrics())-1]
	splits := 0
	for i := 0; i < out.ResourceMetrics().Len(); i++ {
		rm := out.ResourceMetrics().At(i)
		if _, split := rm.Resource().Attributes().Get(metricnames.AttrOTelGPUProcessOwner); split {
			splits++
			require.Equal(t, in.ResourceMetrics().At(i).ScopeMetrics().At(0), rm.ScopeMetrics().At(0), "passed through unchanged")
			if ns, _ := rm.Resource().Attributes().Get(metricnames.AttrK8sNamespaceName); ns.Str() == "serving" {
				require.Equal(t, 1, rm.ScopeMetrics().Len(), "an exclusive GPU's pod: nothing added")
				continue
			}
			require.Equal(t, 2, rm.ScopeMetrics().Len(), "a time-sliced GPU's pod: its part of the GPU's usage")
			for j := 0; j < rm.ScopeMetrics().At(1).Metrics().Len(); j++ {
				require.Contains(t, []string{metricnames.OTelGPUTime, metricnames.OTelGPUCost}, rm.ScopeMetrics().At(1).Metrics().At(j).Name(), "no verdict on a per-process resource")
			}
			continue
		}
		require.Equal(t, 2, rm.ScopeMetrics().Len(), "the GPU's resource has its verdicts")
	}
	require.Equal(t, 5, splits)
	require.Len(t, verdicts(out), 4)

	metadatatest.AssertEqualProcessorGpuAnalyzerTrackedGpus(t, tel, []metricdata.DataPoint[int64]{{Value: 4}}, metricdatatestIgnoreTime()...)
	_, err = tel.GetMetric("otelcol_processor_gpu_analyzer_unanalyzed_data_points")
	require.Error(t, err, "no data point counted as unanalysed")

	// The mark, not the metric names, is what keeps a split from being a
	// GPU: one that carried readings the analyzer reads (a GPU's own
	// utilization and SM activity) is passed by all the same.
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-split")
	rm.Resource().Attributes().PutStr(metricnames.AttrOTelGPUProcessOwner, "pod")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	for _, name := range []string{metricnames.NvidiaGPUSMActive, metricnames.HWTemperature} {
		m := ms.AppendEmpty()
		m.SetName(name)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(t0.Add(41 * time.Second)))
		dp.SetDoubleValue(0.5)
	}
	require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	metadatatest.AssertEqualProcessorGpuAnalyzerTrackedGpus(t, tel, []metricdata.DataPoint[int64]{{Value: 4}}, metricdatatestIgnoreTime()...)
	require.Equal(t, 1, sink.AllMetrics()[len(sink.AllMetrics())-1].ResourceMetrics().At(0).ScopeMetrics().Len())
}
