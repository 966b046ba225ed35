// Package badotlp builds the OTLP metrics that a component reading GPU
// metrics must survive: NaN and infinite values, negative counters, GPUs
// without hw.id, histograms and summaries where gauges are expected,
// absurd timestamps, empty resources. They seed the fuzz targets of the
// analyzer and the connectors, and their unit tests.
package badotlp

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// gpu is a GPU resource as the node agents send it: a serving pod's GPU
// (so the autoscaler's example target matches) on node n-0.
func gpu(md pmetric.Metrics, id string) pmetric.MetricSlice {
	rm := md.ResourceMetrics().AppendEmpty()
	a := rm.Resource().Attributes()
	if id != "" {
		a.PutStr("hw.id", id)
	}
	a.PutStr("host.name", "n-0")
	a.PutStr("k8s.node.name", "n-0")
	a.PutStr("k8s.namespace.name", "serving")
	a.PutStr("k8s.deployment.name", "llm-inference")
	a.PutStr("k8s.job.name", "train")
	a.PutStr("k8s.pod.name", "llm-inference-"+id)
	return rm.ScopeMetrics().AppendEmpty().Metrics()
}

func gauge(ms pmetric.MetricSlice, name string, ts pcommon.Timestamp, v float64) pmetric.NumberDataPoint {
	m := ms.AppendEmpty()
	m.SetName(name)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetDoubleValue(v)
	return dp
}

func counter(ms pmetric.MetricSlice, name string, start, ts pcommon.Timestamp, v float64) pmetric.NumberDataPoint {
	m := ms.AppendEmpty()
	m.SetName(name)
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dp := s.DataPoints().AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetDoubleValue(v)
	return dp
}

// readings adds one sample of every reading the analyzer and the
// connectors use, each with value v at ts.
func readings(ms pmetric.MetricSlice, ts pcommon.Timestamp, v float64) {
	start := ts - pcommon.Timestamp(time.Minute)
	for _, name := range []string{"nvidia.gpu.sm.active", "nvidia.gpu.dram.active", "hw.gpu.memory.utilization",
		"hw.gpu.memory.usage", "hw.gpu.memory.limit", "nvidia.gpu.sm.occupancy", "hw.temperature",
		"nvidia.gpu.clock.event_reasons", "nvidia.gpu.row_remap.failure", "training.step.compute.duration",
		"vllm:num_requests_waiting"} {
		gauge(ms, name, ts, v)
	}
	gauge(ms, "nvidia.gpu.pipe.active", ts, v).Attributes().PutStr("nvidia.gpu.pipe", "tensor")
	gauge(ms, "hw.gpu.utilization", ts, v).Attributes().PutStr("hw.gpu.task", "general")
	gauge(ms, "nvidia.gpu.clock.frequency", ts, v).Attributes().PutStr("nvidia.gpu.clock", "sm")
	counter(ms, "nvidia.gpu.nvlink.io", start, ts, v)
	counter(ms, "hw.gpu.io", start, ts, v).Attributes().PutStr("network.io.direction", "receive")
	counter(ms, "hw.errors", start, ts, v).Attributes().PutStr("error.type", "uncorrected")
	xid := counter(ms, "nvidia.gpu.xid.errors", start, ts, v)
	xid.Attributes().PutInt("nvidia.gpu.xid", 79)
	verdict := gauge(ms, "otelgpu.bottleneck.state", ts, v)
	verdict.Attributes().PutStr("otelgpu.bottleneck.class", "faulted")
}

// Cases returns the bad batches by name, stamped around now.
func Cases(now time.Time) map[string]pmetric.Metrics {
	ts := pcommon.NewTimestampFromTime(now)
	cases := map[string]pmetric.Metrics{}
	add := func(name string, build func(md pmetric.Metrics)) {
		md := pmetric.NewMetrics()
		build(md)
		cases[name] = md
	}
	add("good", func(md pmetric.Metrics) { readings(gpu(md, "GPU-good"), ts, 0.5) })
	add("nan", func(md pmetric.Metrics) { readings(gpu(md, "GPU-nan"), ts, math.NaN()) })
	add("inf", func(md pmetric.Metrics) { readings(gpu(md, "GPU-inf"), ts, math.Inf(1)) })
	add("-inf", func(md pmetric.Metrics) { readings(gpu(md, "GPU-ninf"), ts, math.Inf(-1)) })
	add("negative", func(md pmetric.Metrics) { readings(gpu(md, "GPU-neg"), ts, -3) })
	add("huge", func(md pmetric.Metrics) { readings(gpu(md, "GPU-huge"), ts, math.MaxFloat64) })
	add("no hw.id", func(md pmetric.Metrics) { readings(gpu(md, ""), ts, 0.5) })
	add("hw.id not a string", func(md pmetric.Metrics) {
		ms := gpu(md, "x")
		md.ResourceMetrics().At(0).Resource().Attributes().PutInt("hw.id", 7)
		readings(ms, ts, 0.5)
	})
	add("histogram for a gauge", func(md pmetric.Metrics) {
		ms := gpu(md, "GPU-hist")
		for _, name := range []string{"nvidia.gpu.sm.active", "hw.temperature", "nvidia.gpu.xid.errors", "otelgpu.bottleneck.state"} {
			m := ms.AppendEmpty()
			m.SetName(name)
			dp := m.SetEmptyHistogram().DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetCount(3)
			dp.SetSum(1.5)
			dp.BucketCounts().FromRaw([]uint64{1, 2})
			dp.ExplicitBounds().FromRaw([]float64{0.5})
		}
		m := ms.AppendEmpty()
		m.SetName("nvidia.gpu.dram.active")
		m.SetEmptySummary().DataPoints().AppendEmpty().SetTimestamp(ts)
		m = ms.AppendEmpty()
		m.SetName("hw.gpu.memory.usage")
		m.SetEmptyExponentialHistogram().DataPoints().AppendEmpty().SetTimestamp(ts)
		m = ms.AppendEmpty()
		m.SetName("nvidia.gpu.sm.occupancy") // no type at all
	})
	add("gauge for a counter", func(md pmetric.Metrics) {
		ms := gpu(md, "GPU-gauge")
		gauge(ms, "nvidia.gpu.xid.errors", ts, 3).Attributes().PutInt("nvidia.gpu.xid", 79)
		gauge(ms, "hw.errors", ts, 3).Attributes().PutStr("error.type", "uncorrected")
		gauge(ms, "hw.gpu.io", ts, 3).Attributes().PutStr("network.io.direction", "receive")
	})
	add("xid codes", func(md pmetric.Metrics) {
		ms := gpu(md, "GPU-xid")
		for _, code := range []int64{-1, 0, 256, math.MaxInt64, math.MinInt64} {
			counter(ms, "nvidia.gpu.xid.errors", ts-1, ts, 1).Attributes().PutInt("nvidia.gpu.xid", code)
		}
		counter(ms, "nvidia.gpu.xid.errors", ts-1, ts, 1).Attributes().PutStr("nvidia.gpu.xid", "79")
	})
	for name, at := range map[string]pcommon.Timestamp{
		"timestamp 0": 0, "timestamp 1 ns": 1, "timestamp year 2262": math.MaxInt64,
		"timestamp beyond int64": math.MaxUint64, "timestamp a century ahead": ts + pcommon.Timestamp(100*365*24*time.Hour),
	} {
		add(name, func(md pmetric.Metrics) {
			readings(gpu(md, "GPU-time"), at, 0.5)
			readings(gpu(md, "GPU-now"), ts, 0.5)
		})
	}
	add("start after the sample", func(md pmetric.Metrics) {
		ms := gpu(md, "GPU-start")
		counter(ms, "hw.errors", ts+1000, ts, 5).Attributes().PutStr("error.type", "uncorrected")
	})
	add("same GPU twice, out of order", func(md pmetric.Metrics) {
		readings(gpu(md, "GPU-twice"), ts, 0.5)
		readings(gpu(md, "GPU-twice"), ts-pcommon.Timestamp(time.Second), 0.5)
		readings(gpu(md, "GPU-twice"), ts, 0.5)
	})
	add("empty resources", func(md pmetric.Metrics) {
		md.ResourceMetrics().AppendEmpty()
		md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty()
		gpu(md, "GPU-empty").AppendEmpty()
		m := gpu(md, "GPU-nopoints").AppendEmpty()
		m.SetName("nvidia.gpu.sm.active")
		m.SetEmptyGauge()
	})
	add("empty", func(pmetric.Metrics) {})
	return cases
}
