package gpuanalyzerprocessor

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// fleetBatches maps a simulated fleet at 1 s intervals with the receiver's
// own mapping, so that the processor sees exactly what the receiver emits.
type fleetBatches struct {
	fl  *simulated.Fleet
	rcv offline.Receiver
	t0  time.Time
	n   int
}

func newFleet(tb testing.TB, cfg simulated.Config) *fleetBatches {
	fl, err := simulated.New(cfg)
	require.NoError(tb, err)
	f := dcgmreceiver.NewFactory()
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(tb, err)
	rcv, ok := r.(offline.Receiver)
	require.True(tb, ok, "the dcgm receiver maps samples for replay")
	return &fleetBatches{fl: fl, rcv: rcv, t0: time.Unix(1767225600, 0)}
}

func (f *fleetBatches) next(tb testing.TB) pmetric.Metrics {
	samples, err := f.fl.Collect(context.Background(), f.t0.Add(time.Duration(f.n)*time.Second), time.Second)
	require.NoError(tb, err)
	f.n++
	return f.rcv.Map(samples)
}

func newProcessor(tb testing.TB, cfg *Config, set processor.Settings) (processor.Metrics, *consumertest.MetricsSink) {
	sink := new(consumertest.MetricsSink)
	p, err := NewFactory().CreateMetrics(context.Background(), set, cfg, sink)
	require.NoError(tb, err)
	require.NoError(tb, p.Start(context.Background(), componenttest.NewNopHost()))
	tb.Cleanup(func() { require.NoError(tb, p.Shutdown(context.Background())) })
	return p, sink
}

// verdicts reads the analyzer's verdict metrics by hw.id.
func verdicts(md pmetric.Metrics) map[string]map[string]pmetric.Metric {
	out := map[string]map[string]pmetric.Metric{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, _ := rm.Resource().Attributes().Get("hw.id")
		if _, split := rm.Resource().Attributes().Get(metricnames.AttrOTelGPUProcessOwner); split {
			continue // an owner's part of a shared GPU, not a GPU
		}
		for j := 0; j < rm.ScopeMetrics().Len(); j++ {
			sm := rm.ScopeMetrics().At(j)
			if sm.Scope().Name() != metadata.ScopeName {
				continue
			}
			out[id.Str()] = map[string]pmetric.Metric{}
			for k := 0; k < sm.Metrics().Len(); k++ {
				out[id.Str()][sm.Metrics().At(k).Name()] = sm.Metrics().At(k)
			}
		}
	}
	return out
}

func classOf(m map[string]pmetric.Metric) string {
	dps := m[metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		if dps.At(i).IntValue() == 1 {
			c, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUBottleneckClass)
			return c.Str()
		}
	}
	return ""
}

func hintOf(m map[string]pmetric.Metric) string {
	dps := m[metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		if dps.At(i).IntValue() == 1 {
			h, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUBottleneckHint)
			return h.Str()
		}
	}
	return ""
}

func TestPassThroughAndVerdicts(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
	var in pmetric.Metrics
	for range 90 {
		in = f.next(t)
		require.NoError(t, p.ConsumeMetrics(context.Background(), in))
	}
	// Everything that came in goes out unchanged, with one scope added.
	out := sink.AllMetrics()[len(sink.AllMetrics())-1]
	last := f.next(t)
	require.Equal(t, 16, out.ResourceMetrics().Len())
	for i := 0; i < out.ResourceMetrics().Len(); i++ {
		rm := out.ResourceMetrics().At(i)
		require.Equal(t, 2, rm.ScopeMetrics().Len(), "the receiver's scope and the analyzer's")
		require.Equal(t, last.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics().Len(), rm.ScopeMetrics().At(0).Metrics().Len())
	}

	byName := map[string]string{} // host/gpuN -> hw.id
	for i := 0; i < out.ResourceMetrics().Len(); i++ {
		a := out.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		byName[a["host.name"].(string)+"/"+a["hw.name"].(string)] = a["hw.id"].(string)
	}
	v := verdicts(out)
	require.Len(t, v, 16)
	// The default fleet at 90 s: a slow rank (0/5, from 20 s) and a
	// throttled GPU (0/2, from 30 s) in the training job, idle spares.
	require.Equal(t, "compute_bound", classOf(v[byName["gpu-node-0/gpu0"]]))
	require.Equal(t, "throttled", classOf(v[byName["gpu-node-0/gpu2"]]))
	require.Equal(t, int64(1), v[byName["gpu-node-0/gpu5"]][metricnames.OTelGPUStragglerState].Gauge().DataPoints().At(0).IntValue())
	require.Equal(t, int64(0), v[byName["gpu-node-0/gpu0"]][metricnames.OTelGPUStragglerState].Gauge().DataPoints().At(0).IntValue())
	require.Equal(t, "idle", classOf(v[byName["gpu-node-1/gpu7"]]))
	require.Equal(t, "faulted", classOf(v[byName["gpu-node-1/gpu3"]]), "XID 79 at 45 s")

	alerts := v[byName["gpu-node-1/gpu3"]][metricnames.OTelGPUAlerts].Gauge().DataPoints()
	require.Equal(t, 1, alerts.Len())
	require.Equal(t, map[string]any{"alertname": "GPUFaulted", "alertstate": "firing", "severity": "critical"}, alerts.At(0).Attributes().AsRaw())

	// Each class's next step is an attribute of its state; idle has none.
	require.Equal(t, "check_cooling_or_power", hintOf(v[byName["gpu-node-0/gpu2"]]))
	require.Equal(t, "replace_or_drain", hintOf(v[byName["gpu-node-1/gpu3"]]))
	require.Empty(t, hintOf(v[byName["gpu-node-1/gpu7"]]))

	spent := v[byName["gpu-node-0/gpu0"]][metricnames.OTelGPUBottleneckTime].Sum()
	require.True(t, spent.IsMonotonic())
	require.Equal(t, pmetric.AggregationTemporalityCumulative, spent.AggregationTemporality())
}

func TestUnanalysedAndIgnored(t *testing.T) {
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	p, sink := newProcessor(t, everySample(), metadatatest.NewSettings(tel))

	md := pmetric.NewMetrics()
	// A resource without hw.id: 2 data points pass through unanalysed.
	other := md.ResourceMetrics().AppendEmpty()
	other.Resource().Attributes().PutStr("host.name", "db-1")
	om := other.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	om.SetName("system.cpu.utilization")
	om.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(0.5)
	om.Gauge().DataPoints().AppendEmpty().SetDoubleValue(0.7)
	// A GPU whose SM activity is NaN and temperature negative.
	g := md.ResourceMetrics().AppendEmpty()
	g.Resource().Attributes().PutStr("hw.id", "GPU-x")
	ms := g.ScopeMetrics().AppendEmpty().Metrics()
	gauge := func(name string, v float64) {
		m := ms.AppendEmpty()
		m.SetName(name)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.Timestamp(1e18))
		dp.SetDoubleValue(v)
	}
	gauge("nvidia.gpu.sm.active", math.NaN())
	gauge("hw.temperature", -5)
	gauge("nvidia.gpu.dram.active", 0.2)
	want := pmetric.NewMetrics()
	md.CopyTo(want)

	require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	out := sink.AllMetrics()[0]
	require.Equal(t, want.ResourceMetrics().At(0), out.ResourceMetrics().At(0), "the other resource is untouched")
	require.Equal(t, "unknown", classOf(verdicts(out)["GPU-x"]), "invalid readings are not analysed")

	metadatatest.AssertEqualProcessorGpuAnalyzerUnanalyzedDataPoints(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatestIgnoreTime()...)
	metadatatest.AssertEqualProcessorGpuAnalyzerValuesIgnored(t, tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatestIgnoreTime()...)
	metadatatest.AssertEqualProcessorGpuAnalyzerTrackedGpus(t, tel, []metricdata.DataPoint[int64]{{Value: 1}}, metricdatatestIgnoreTime()...)
}

// TestConcurrentBatches runs batches from several goroutines (with -race,
// as `make test` does): ConsumeMetrics must be safe to call concurrently.
func TestConcurrentBatches(t *testing.T) {
	p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
	var wg sync.WaitGroup
	for w := range 4 {
		cfg := simulated.DefaultConfig()
		cfg.Seed = int64(w + 10) // different GPUs per goroutine
		f := newFleet(t, cfg)
		// Built here: require may stop only the test's own goroutine.
		batches := make([]pmetric.Metrics, 50)
		for i := range batches {
			batches[i] = f.next(t)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, md := range batches {
				assert.NoError(t, p.ConsumeMetrics(context.Background(), md))
			}
		}()
	}
	wg.Wait()
	require.Len(t, sink.AllMetrics(), 200)
	for _, md := range sink.AllMetrics() {
		require.Len(t, verdicts(md), 16)
	}
}

// everySample is the default configuration with a verdict sent with every
// sample (verdict_interval 0), for the tests that read each batch's
// verdicts: the golden file holds every verdict, as gpureplay prints them.
func everySample() *Config {
	cfg := createDefaultConfig().(*Config)
	cfg.VerdictInterval = 0
	return cfg
}
