package gpuanalyzerprocessor

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestFleetSummary runs the default simulated fleet plus a notebook pod that
// holds gpu-node-1/gpu6 and leaves it idle, at 1 s for 150 s, with a summary
// every 30 s, and reads the log.
func TestFleetSummary(t *testing.T) {
	fc := simulated.DefaultConfig()
	fc.Workloads = append(fc.Workloads, simulated.Workload{Name: "notebook", Kind: "serving", Namespace: "research", GPUs: "1/6",
		Phases: []simulated.Phase{{Kind: simulated.Idle}}})
	f := newFleet(t, fc)
	cfg := everySample()
	cfg.SummaryInterval = 30 * time.Second
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 6.88}
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, cfg, set)
	for range 151 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}

	var summaries []string
	changes := map[string][]string{}
	hints, evidence := map[string]string{}, map[string]string{}
	health := map[string]string{}
	for _, e := range logs.All() {
		switch e.Message {
		case "GPU health changed":
			m := e.ContextMap()
			health[m["gpu"].(string)] += fmt.Sprintf("%s>%s(%v) ", m["from"], m["to"], m["reason"])
		case "GPU bottleneck changed":
			m := e.ContextMap()
			require.NotContains(t, m, "was", "with a summary, a change is logged once, at the summary")
			gpu := m["gpu"].(string)
			changes[gpu] = append(changes[gpu], m["from"].(string)+">"+m["to"].(string))
			if h, ok := m["hint"].(string); ok {
				hints[gpu] = h
			}
			if ev, ok := m["evidence"].(string); ok {
				evidence[gpu] = ev
			}
		case "GPU is a straggler", "GPU alert firing", "GPU alert resolved", "GPU is no longer a straggler":
		default:
			summaries = append(summaries, e.Message)
		}
	}
	// Summaries at 30, 60, 90, 120 and 150 s of data time (the first
	// sample opens the first interval).
	require.Len(t, summaries, 5, "%q", summaries)
	// At 90 s: the serving GPUs are in their phases, the throttled GPU's
	// low clock makes it a straggler too, 1/3 (XID) and 1/5 (ECC) faulted.
	require.Equal(t, "16 GPUs: 8 compute_bound, 2 memory_bound, 1 input_bound, 2 idle (1 held by a pod: $6.88/h wasted), "+
		"2 stragglers: gpu-node-0/gpu2 in ml/llm-pretrain, gpu-node-0/gpu5 in ml/llm-pretrain, 1 throttled, 2 faulted, "+
		"health: 2 failed, 1 degraded", summaries[2])
	// Health changes are logged as they happen, with what they rest on:
	// the XIDs by NVIDIA's catalogue (79 off the bus, 48 a double-bit ECC
	// error), the thermal slowdown.
	require.Equal(t, map[string]string{
		"gpu-node-1/gpu3": "ok>failed(xid_79) ",
		"gpu-node-1/gpu5": "ok>failed(xid_48) ", // the double-bit error, as the driver logs it
		"gpu-node-0/gpu2": "ok>degraded(throttled) ",
	}, health)
	// Changes are logged once, at the summary after they happen.
	require.Equal(t, []string{"compute_bound>throttled"}, changes["gpu-node-0/gpu2"])
	require.Equal(t, []string{"memory_bound>faulted"}, changes["gpu-node-1/gpu3"], "XID 79 at 45 s")
	require.Equal(t, "replace_or_drain", hints["gpu-node-1/gpu3"], "the change carries its hint")
	require.Equal(t, "check_cooling_or_power", hints["gpu-node-0/gpu2"])
	require.Equal(t, "errors", evidence["gpu-node-1/gpu3"], "the change says what it rests on")
	require.Equal(t, "clock_reasons", evidence["gpu-node-0/gpu2"])
	require.NotContains(t, changes, "gpu-node-1/gpu6", "the idle notebook never changed")
}

// TestFirstSummaryEarly: with first_summary_after, the first summary comes
// that long after the first sample, and the later ones stay on the
// summary_interval grid from the first sample (30, 60 s), as without it.
func TestFirstSummaryEarly(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	cfg := everySample()
	cfg.SummaryInterval = 30 * time.Second
	cfg.FirstSummaryAfter = 5 * time.Second
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, cfg, set)
	var at []int
	for i := range 61 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
		for _, e := range logs.TakeAll() {
			if strings.HasPrefix(e.Message, "16 GPUs: ") {
				at = append(at, i)
			}
		}
	}
	require.Equal(t, []int{5, 30, 60}, at, "samples (1 s apart) after which a summary came")
}

func TestSummaryLine(t *testing.T) {
	f := &fleetSummary{currency: "EUR", gpus: map[string]*gpuLine{}}
	ids := []string{}
	add := func(id string, g gpuLine) { f.gpus[id] = &g; ids = append(ids, id) }
	require.Equal(t, "0 GPUs", f.line(ids))
	add("a", gpuLine{name: "n/0", class: analysis.ComputeBound, price: 2})
	require.Equal(t, "1 GPU: 1 compute_bound", f.line(ids))
	for i, w := range []string{"ml/a", "ml/b", "ml/c", "ml/d"} {
		add(w, gpuLine{name: "n/" + string(rune('1'+i)), workload: w, class: analysis.MemoryBound, straggler: true})
	}
	add("i1", gpuLine{name: "n/8", class: analysis.Idle, held: true, price: 3.5})
	add("i2", gpuLine{name: "n/9", class: analysis.Idle, price: 3.5})
	require.Equal(t, "7 GPUs: 4 memory_bound, 1 compute_bound, 2 idle (1 held by a pod: 3.50 EUR/h wasted), 4 stragglers: n/1 in ml/a, n/2 in ml/b, n/3 in ml/c and 1 more", f.line(ids))
}

// A sample stamped centuries after the first moves the next summary to the
// boundary after it (stepping there a second at a time took minutes).
func TestSummaryAfterATimeJump(t *testing.T) {
	f := &fleetSummary{logger: zap.NewNop(), interval: int64(time.Second), ttl: int64(time.Minute), gpus: map[string]*gpuLine{}}
	f.now = 1
	f.flush()
	f.now = time.Date(2262, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano()
	f.flush()
	require.Greater(t, f.next, f.now)
	require.LessOrEqual(t, f.next-f.now, int64(time.Second))
	require.Zero(t, (f.next-1-int64(time.Second))%int64(time.Second), "on the first sample's interval grid")
}

// TestFleetSummaryWaiting: GPUs that wait at low power are counted, with
// what they cost, after the busy classes; the GPU they wait on is the
// straggler named.
func TestFleetSummaryWaiting(t *testing.T) {
	f := newFleetSummary(zap.NewNop(), everySample())
	f.currency = "USD"
	f.gpus = map[string]*gpuLine{
		"a": {name: "node/gpu0", workload: "ml/llm", class: analysis.Idle, held: true, straggler: true, price: 6.88},
		"b": {name: "node/gpu1", workload: "ml/llm", class: analysis.CommunicationBound, held: true, waiting: true, price: 6.88},
		"c": {name: "node/gpu2", workload: "ml/llm", class: analysis.CommunicationBound, held: true, waiting: true, price: 6.88},
		"d": {name: "node/gpu3", workload: "ml/llm", class: analysis.ComputeBound, held: true, price: 6.88},
	}
	require.Equal(t, "4 GPUs: 2 communication_bound, 1 compute_bound, 2 waiting at low power ($13.76/h), 1 idle (1 held by a pod: $6.88/h wasted), 1 straggler node/gpu0 in ml/llm",
		f.line([]string{"a", "b", "c", "d"}))
}
