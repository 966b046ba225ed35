package gpuanalyzerprocessor

import (
	"context"
	"fmt"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.opentelemetry.io/collector/processor/processorhelper"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

const (
	benchGPUs   = 4096
	benchFields = 20
)

// benchFieldSet is the field set a benchmark batch carries.
type benchFieldSet int

const (
	benchAllFields benchFieldSet = iota
	benchDefaultCounters
	benchNoProfiling
)

// benchBatch builds one batch of GPUs with 20 data points each: the readings
// the analyzer uses and others it passes by, as the receiver names them.
// Without profiling, as nvidia-smi or an AMD GPU give it: no SM, DRAM,
// occupancy or pipe activity, and the power limit, so that power judges the
// GPUs (16 data points each); the slow rank of each job draws 650 W, its
// peers 450 W. With dcgm-exporter's default counters: the graphics engine,
// DRAM and tensor activity but no SM activity, occupancy or clock event
// reasons, so that the engine, tensor pipes, power and clocks judge them.
func benchBatch(fields benchFieldSet) pmetric.Metrics {
	const gpus = benchGPUs
	profiling := fields == benchAllFields
	md := pmetric.NewMetrics()
	for g := range gpus {
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr("hw.id", fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", g, g))
		a.PutStr("host.name", fmt.Sprintf("node-%d", g/8))
		a.PutStr("k8s.namespace.name", "ml")
		a.PutStr("k8s.job.name", fmt.Sprintf("job-%d", g/64))
		a.PutStr("k8s.pod.name", fmt.Sprintf("job-%d-worker-%d", g/64, g/8))
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		gauge := func(name string, v float64, attrs ...string) {
			m := ms.AppendEmpty()
			m.SetName(name)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetDoubleValue(v)
			for i := 0; i+1 < len(attrs); i += 2 {
				dp.Attributes().PutStr(attrs[i], attrs[i+1])
			}
		}
		sum := func(name string, v int64, attrs ...string) {
			m := ms.AppendEmpty()
			m.SetName(name)
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dp := s.DataPoints().AppendEmpty()
			dp.SetIntValue(v)
			for i := 0; i+1 < len(attrs); i += 2 {
				dp.Attributes().PutStr(attrs[i], attrs[i+1])
			}
		}
		sm, watts := 0.9, 650.0
		if g%64 == 5 {
			sm = 0.5 // one slow rank per job
		} else if !profiling {
			watts = 450 // waiting for it part of each step
		}
		switch fields {
		case benchAllFields:
			gauge("nvidia.gpu.sm.active", sm)
			gauge("nvidia.gpu.dram.active", 0.35)
			gauge("nvidia.gpu.sm.occupancy", 0.5)
			gauge("nvidia.gpu.pipe.active", 0.6, "nvidia.gpu.pipe", "tensor")
		case benchDefaultCounters:
			gauge("nvidia.gpu.dram.active", 0.35)
			gauge("nvidia.gpu.pipe.active", 0.6, "nvidia.gpu.pipe", "tensor")
		default:
			gauge("nvidia.gpu.power.limit", 700)
		}
		gauge("hw.gpu.utilization", 0.99, "hw.gpu.task", "general")
		gauge("nvidia.gpu.clock.frequency", 1.98e9, "nvidia.gpu.clock", "sm")
		gauge("nvidia.gpu.clock.frequency", 2.6e9, "nvidia.gpu.clock", "memory")
		gauge("hw.temperature", 65)
		gauge("hw.gpu.memory.utilization", 0.6)
		if fields != benchDefaultCounters {
			gauge("nvidia.gpu.clock.event_reasons", 0)
		}
		gauge("nvidia.gpu.row_remap.failure", 0)
		gauge("hw.power", watts)
		if fields == benchDefaultCounters {
			gauge("nvidia.gpu.graphics_engine.active", 0.92)
		} else {
			gauge("nvidia.gpu.graphics_engine.active", 0.99)
		}
		gauge("nvidia.gpu.memory_copy.utilization", 0.3)
		gauge("nvidia.gpu.memory.temperature", 70)
		sum("hw.errors", 0, "error.type", "uncorrected")
		sum("hw.errors", 0, "error.type", "corrected")
		sum("hw.energy", 123456)
		sum("hw.gpu.io", 1<<30, "network.io.direction", "receive")
		sum("hw.gpu.io", 1<<29, "network.io.direction", "transmit")
	}
	return md
}

// restamp moves every data point to time t and drops the verdicts the
// analyzer added in the previous round, so each round is a fresh scrape.
func restamp(md pmetric.Metrics, t pcommon.Timestamp) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		rm.ScopeMetrics().RemoveIf(func(sm pmetric.ScopeMetrics) bool { return sm.Scope().Name() == metadata.ScopeName })
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeGauge {
				dps = m.Gauge().DataPoints()
			} else {
				dps = m.Sum().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				dps.At(k).SetTimestamp(t)
			}
		}
	}
}

// passThrough is the baseline: a processor that visits every data point.
func passThrough(next consumer.Metrics) (processor.Metrics, error) {
	var sink float64
	return processorhelper.NewMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), next,
		func(_ context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
			rms := md.ResourceMetrics()
			for i := 0; i < rms.Len(); i++ {
				sms := rms.At(i).ScopeMetrics()
				for j := 0; j < sms.Len(); j++ {
					ms := sms.At(j).Metrics()
					for k := 0; k < ms.Len(); k++ {
						m := ms.At(k)
						var dps pmetric.NumberDataPointSlice
						if m.Type() == pmetric.MetricTypeGauge {
							dps = m.Gauge().DataPoints()
						} else {
							dps = m.Sum().DataPoints()
						}
						for l := 0; l < dps.Len(); l++ {
							sink += dps.At(l).DoubleValue() + float64(dps.At(l).Timestamp())
						}
					}
				}
			}
			_ = sink
			return md, nil
		})
}

// benchConsume feeds p the benchmark's batch of 4,096 GPUs, restamped one
// second later each time, and reports the time per data point: wall time,
// and the CPU time the process spent in ConsumeMetrics, garbage collection
// included, which other load on a shared machine does not inflate.
func benchConsume(b *testing.B, p processor.Metrics) {
	md := benchBatch(benchAllFields)
	points := md.DataPointCount()
	t0 := time.Unix(1767225600, 0)
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		restamp(md, pcommon.NewTimestampFromTime(t0.Add(time.Duration(i)*time.Second)))
		c0, _ := processCPU()
		b.StartTimer()
		if err := p.ConsumeMetrics(context.Background(), md); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		c1, _ := processCPU()
		cpu += c1 - c0
		b.StartTimer()
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(points), "ns/datapoint")
	b.ReportMetric(float64(points)/perOp*1e9, "datapoints/s")
	if _, ok := processCPU(); ok {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(points), "cpu-ns/datapoint")
	}
}

// BenchmarkAnalyzer processes batches of 4,096 GPUs x 20 data points, once
// through the analyzer as shipped (the default configuration) and once
// through a pass-through processor that visits every data point, in the
// same run; compare their ns/datapoint.
func BenchmarkAnalyzer(b *testing.B) {
	b.Run("passthrough", func(b *testing.B) {
		p, err := passThrough(consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		benchConsume(b, p)
	})
	b.Run("analyzer", func(b *testing.B) {
		p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), createDefaultConfig(), consumertest.NewNop())
		if err != nil {
			b.Fatal(err)
		}
		benchConsume(b, p)
	})
}

// BenchmarkAnalyzerEverySample is BenchmarkAnalyzer's batch with
// verdict_interval 0: every GPU's verdict with every batch, not on change
// and every 30 batches (seconds) as by default.
func BenchmarkAnalyzerEverySample(b *testing.B) {
	cfg := everySample()
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	benchConsume(b, p)
}

// BenchmarkAnalyzerRatio measures the analyzer against the pass-through on
// a shared machine, where a run of one and a run of the other, seconds
// apart, see different load: it alternates them batch by batch (in turn
// first), on the benchmark's thread, and counts that thread's CPU time in
// each turn. The pass-through allocates nothing, so the garbage collector's
// background work (runtime/metrics: dedicated and fractional marking,
// pauses) all goes to the analyzer; its assists run on the thread, in its
// turns. Marking on otherwise idle cores is not counted: it takes no CPU
// from anything else. It reports both per data point and x-passthrough,
// the ratio.
func BenchmarkAnalyzerRatio(b *testing.B) {
	if _, ok := threadCPU(); !ok {
		b.Skip("needs per-thread CPU time (Linux)")
	}
	// As shipped: verdicts on change and every 30 s (the default), and
	// with every sample (verdict_interval: 0).
	b.Run("default", func(b *testing.B) { benchRatio(b, createDefaultConfig().(*Config), benchAllFields) })
	b.Run("every_sample", func(b *testing.B) { benchRatio(b, everySample(), benchAllFields) })
	// dcgm-exporter's default counters: the graphics engine, tensor pipes,
	// power and clocks judge the GPUs.
	b.Run("default_counters", func(b *testing.B) { benchRatio(b, createDefaultConfig().(*Config), benchDefaultCounters) })
	// Judged by power: the rules without profiling and the power
	// straggler comparison.
	b.Run("without_profiling", func(b *testing.B) { benchRatio(b, createDefaultConfig().(*Config), benchNoProfiling) })
	// With the node evidence the chart sends by default: each GPU's pod
	// and rail, and per host its pod's cgroup, pressure and 8 NICs
	// (withNodeEvidence), through the analyzer and the pass-through alike,
	// in one batch of three, as the chart's agent reads the node every
	// 30 s and the GPUs every 10 s.
	b.Run("node_evidence", func(b *testing.B) {
		benchRatioOf(b, createDefaultConfig().(*Config),
			func() pmetric.Metrics { return benchBatch(benchAllFields) },
			func() pmetric.Metrics { return withNodeEvidence(benchBatch(benchAllFields)) }, 3)
	})
	// The same with the chart's perProcess on: each GPU's per-process
	// resource besides.
	b.Run("node_evidence_per_process", func(b *testing.B) {
		benchRatioOf(b, createDefaultConfig().(*Config),
			func() pmetric.Metrics { return benchBatch(benchAllFields) },
			func() pmetric.Metrics { return withNodeEvidencePerProcess(benchBatch(benchAllFields)) }, 3)
	})
}

func benchRatio(b *testing.B, cfg *Config, fields benchFieldSet) {
	batch := func() pmetric.Metrics { return benchBatch(fields) }
	benchRatioOf(b, cfg, batch, batch, 1)
}

// benchStart is the start time of the batches' cumulative counters.
var benchStart = time.Unix(1767225600-3600, 0)

// benchRatioOf alternates the analyzer and the pass-through on one thread,
// batch after batch; every every-th batch is made by other instead of
// batch (1: always other).
func benchRatioOf(b *testing.B, cfg *Config, batch, other func() pmetric.Metrics, every int) {
	pt, err := passThrough(consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	an, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	plainP, plainA := batch(), batch()
	otherP, otherA := other(), other()
	var points float64
	t0 := time.Unix(1767225600, 0)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	turn := func(p processor.Metrics, md pmetric.Metrics) time.Duration {
		c0, _ := threadCPU()
		if err := p.ConsumeMetrics(context.Background(), md); err != nil {
			b.Fatal(err)
		}
		c1, _ := threadCPU()
		return c1 - c0
	}
	var cpuP, cpuA time.Duration
	step := func(i int) {
		ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
		mdP, mdA := plainP, plainA
		if i%every == 0 {
			mdP, mdA = otherP, otherA
		}
		restamp(mdP, ts)
		restamp(mdA, ts)
		points += float64(mdP.DataPointCount())
		if i%2 == 0 {
			cpuP += turn(pt, mdP)
			cpuA += turn(an, mdA)
		} else {
			cpuA += turn(an, mdA)
			cpuP += turn(pt, mdP)
		}
	}
	// Warm up to the steady state a collector that has run for a while is
	// in: every GPU known, its window full and its first verdicts (first
	// sample, first change, first periodic one) sent. Without this the
	// one-off cost of meeting 4,096 GPUs at once lands in a run of some
	// fifty batches and weighs as if it recurred.
	warm := benchWarmBatches(cfg)
	for i := 0; i < warm; i++ {
		step(i)
	}
	cpuP, cpuA, points = 0, 0, 0
	runtime.GC()
	gc0 := gcBackgroundCPU()
	for i := warm; b.Loop(); i++ {
		step(i)
	}
	cpuA += gcBackgroundCPU() - gc0
	n := points
	b.ReportMetric(float64(cpuP.Nanoseconds())/n, "passthrough-cpu-ns/datapoint")
	b.ReportMetric(float64(cpuA.Nanoseconds())/n, "analyzer-cpu-ns/datapoint")
	b.ReportMetric(float64(cpuA)/float64(cpuP), "x-passthrough")
}

// benchWarmBatches is how many one-second batches fill the analyzer's
// window and pass its first periodic verdict, plus a margin.
func benchWarmBatches(cfg *Config) int {
	d := max(cfg.Window, cfg.VerdictInterval) + 5*time.Second
	return int(d / time.Second)
}

// gcBackgroundCPU is the CPU time the garbage collector has spent outside
// the assists of allocating goroutines and idle cores.
func gcBackgroundCPU() time.Duration {
	samples := []metrics.Sample{
		{Name: "/cpu/classes/gc/mark/dedicated:cpu-seconds"},
		{Name: "/cpu/classes/gc/pause:cpu-seconds"},
	}
	metrics.Read(samples)
	var s float64
	for _, x := range samples {
		if x.Value.Kind() == metrics.KindFloat64 {
			s += x.Value.Float64()
		}
	}
	return time.Duration(s * 1e9)
}

// BenchmarkStateBytesPerGPU measures the heap the analyzer keeps per tracked
// GPU at 100,000 GPUs, each with a full 30 s window of 1 s samples and a
// memory leak fit.
func BenchmarkStateBytesPerGPU(b *testing.B) {
	const gpus = 100_000
	ids := make([]string, gpus)
	for i := range ids {
		ids[i] = fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", i, i)
	}
	groups := make([]string, (gpus+63)/64)
	for i := range groups {
		groups[i] = fmt.Sprintf("ml\x00job-%d", i)
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		a := analysis.New(createDefaultConfig().(*Config).analysisConfig())
		for t := range 31 {
			for i, id := range ids {
				s := analysis.Sample{
					Time: int64(t) * 1e9, Group: groups[i/64], PodAttributed: true,
					Has:      analysis.HasSMActive | analysis.HasDRAMActive | analysis.HasGPUUtil | analysis.HasSMClock | analysis.HasTemp | analysis.HasMemRatio | analysis.HasReasons | analysis.HasDBE | analysis.HasFB,
					SMActive: 0.9, DRAMActive: 0.3, GPUUtil: 0.99, SMClock: 1980e6, Temp: 65, MemRatio: 0.6,
					FBUsed: 48 << 30, FBFree: 32 << 30, // the leak fit is allocated too
				}
				a.Ingest(id, &s)
			}
			a.Evaluate(func(*analysis.Verdict) {})
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/gpus, "bytes/gpu")
		runtime.KeepAlive(a)
		runtime.KeepAlive(ids)
	}
}
