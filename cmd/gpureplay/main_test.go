package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/score"
)

var traces = []string{"training-h100-1s", "finetune-step-straggler-2s", "serving-mixed-5s", "p100-no-profiling-15s",
	"llm-collectives-2s", "memory-leak-15s"}

func tracePath(name string) string { return filepath.Join("testdata", "traces", name+".csv") }

func runReplay(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return out.String(), errOut.String(), code
}

// bar is the figures a replay must reach.
type bar struct {
	accuracy, precision, recall float64
	// noFalseStragglers: no straggler verdict outside a labelled interval
	// (none near an edge either: the native rate's stricter count).
	noFalseStragglers bool
}

// scoreReplay replays a sample trace with args, scores it against its
// labels with graces widened by every seconds, logs the README's table row
// and holds it to b.
func scoreReplay(t *testing.T, name string, every float64, b bar, args ...string) {
	t.Helper()
	labels, verdicts := replayLabelled(t, filepath.Join("testdata", "traces", name), args...)
	r := score.ScoreAt(labels, verdicts, every)
	t.Logf("| %s | %.0f s | %.4f | %s | %s | %d/%d | %d |", name, every, r.BottleneckAccuracy,
		orNA(r.StragglerPrecision), orNA(r.StragglerRecall), r.AlertsDetected, r.AlertsExpected, r.AlertsFalse)

	require.Positive(t, r.BottleneckSamples)
	require.GreaterOrEqual(t, r.BottleneckAccuracy, b.accuracy, "bottleneck accuracy")
	if !math.IsNaN(r.StragglerPrecision) {
		require.GreaterOrEqual(t, r.StragglerPrecision, b.precision, "straggler precision")
	}
	if !math.IsNaN(r.StragglerRecall) {
		require.GreaterOrEqual(t, r.StragglerRecall, b.recall, "straggler recall")
	}
	require.Equal(t, r.AlertsExpected, r.AlertsDetected, "every labelled alert")
	require.Zero(t, r.AlertsFalse, "no false alerts")
	if b.noFalseStragglers {
		require.Zero(t, r.StragglerFalse, "no straggler verdict outside a labelled interval")
	}
	checkHints(t, verdicts)
}

// replayLabelled replays BASE.csv with args and reads BASE.labels.csv.
func replayLabelled(t *testing.T, base string, args ...string) ([]score.Label, map[string][]score.Verdict) {
	t.Helper()
	out, stderr, code := runReplay(t, append(args, base+".csv")...)
	require.Equal(t, 0, code, stderr)
	lf, err := os.Open(base + ".labels.csv")
	require.NoError(t, err)
	defer lf.Close()
	labels, err := score.ReadLabels(lf)
	require.NoError(t, err)
	verdicts, err := score.ReadVerdicts(strings.NewReader(out))
	require.NoError(t, err)
	return labels, verdicts
}

// TestScoreSampleTraces replays each sample trace and scores the verdicts
// against its labels with the acceptance thresholds of the analyzer
// contract; the figures are the processor README's table.
func TestScoreSampleTraces(t *testing.T) {
	for _, name := range traces {
		t.Run(name, func(t *testing.T) {
			scoreReplay(t, name, 0, bar{accuracy: 0.99, precision: 0.99, recall: 0.95, noFalseStragglers: true})
		})
	}
}

// TestScoreResampled replays every sample trace as a collector sampling
// DCGM every 15, 30 and 60 s would have recorded it (-resample), and scores
// it with every grace widened by that interval (score.py --interval): the
// analyzer on dcgm-exporter scraped at the intervals clusters use. The
// native rate is TestScoreSampleTraces.
func TestScoreResampled(t *testing.T) {
	for _, name := range traces {
		for _, every := range []int{15, 30, 60} {
			t.Run(fmt.Sprintf("%s/%ds", name, every), func(t *testing.T) {
				t.Parallel()
				scoreReplay(t, name, float64(every), bar{accuracy: 0.98, precision: 0.99, recall: 0.90},
					"-resample", fmt.Sprintf("%ds", every))
			})
		}
	}
}

// hintsOf lists the hints each class may carry.
var hintsOf = map[string][]string{
	"faulted":             {"replace_or_drain"},
	"throttled":           {"check_cooling_or_power"},
	"idle":                {""},
	"memory_bound":        {"reduce_memory_traffic"},
	"communication_bound": {"overlap_communication"},
	"launch_bound":        {"use_cuda_graphs"},
	"input_bound":         {"fix_data_loading", "fix_host_preprocessing"},
	"compute_bound":       {"", "increase_batch_size", "enable_mixed_precision"},
	"unknown":             {""},
}

// checkHints: every verdict carries a hint of its class.
func checkHints(t *testing.T, verdicts map[string][]score.Verdict) {
	t.Helper()
	for _, vs := range verdicts {
		for _, v := range vs {
			require.Containsf(t, hintsOf[v.Bottleneck], v.Hint, "%s at %v: hint %q for %s", v.UUID, v.Time, v.Hint, v.Bottleneck)
		}
	}
}

func orNA(x float64) string {
	if math.IsNaN(x) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", x)
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	_, stderr, code := runReplay(t, "-o", a, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	_, stderr, code = runReplay(t, "-o", b, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	x, err := os.ReadFile(a)
	require.NoError(t, err)
	y, err := os.ReadFile(b)
	require.NoError(t, err)
	require.NotEmpty(t, x)
	require.True(t, bytes.Equal(x, y), "two replays of one trace must be byte-identical")
	require.Equal(t, 15360, bytes.Count(x, []byte("\n")), "one line per trace row")
}

func TestOutputFormat(t *testing.T) {
	out, stderr, code := runReplay(t, tracePath("p100-no-profiling-15s"))
	require.Equal(t, 0, code, stderr)
	first := strings.SplitN(out, "\n", 2)[0]
	require.Regexp(t, `^\{"time":1767225600,"uuid":"GPU-[0-9a-f-]+","bottleneck":"(idle|unknown)","straggler":false,"alerts":\[\],"score":0,"hint":"","usage":"(used|waiting|workload_idle|cluster_idle|unknown)","evidence":"(|utilization|power)","health":"ok"\}$`, first)
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "analyzer.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("alerts:\n  gpu_idle:\n    enabled: false\n"), 0o644))
	out, stderr, code := runReplay(t, "-config", cfg, tracePath("p100-no-profiling-15s"))
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, out, "GPUIdle")
	defaults, _, _ := runReplay(t, tracePath("p100-no-profiling-15s"))
	require.Contains(t, defaults, "GPUIdle", "the trace has idle alerts by default")

	require.NoError(t, os.WriteFile(cfg, []byte("window: -1s\n"), 0o644))
	_, stderr, code = runReplay(t, "-config", cfg, tracePath("p100-no-profiling-15s"))
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+cfg+": window must be positive, got -1s\n", stderr)

	require.NoError(t, os.WriteFile(cfg, []byte("windw: 10s\n"), 0o644))
	_, stderr, _ = runReplay(t, "-config", cfg, tracePath("p100-no-profiling-15s"))
	require.Contains(t, stderr, "windw")
}

// TestBadTrace: a bad row stops the replay with one line naming the file,
// line and column; the verdicts of the rows before it are kept.
func TestBadTrace(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(
		"timestamp,uuid,DCGM_FI_PROF_SM_ACTIVE\n"+
			"1,GPU-a,0.9\n"+
			"2,GPU-a,0.9\n"+
			"3,GPU-a,0.9x\n"), 0o644))
	outFile := filepath.Join(dir, "out.jsonl")
	_, stderr, code := runReplay(t, "-o", outFile, bad)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+bad+":4:9: DCGM_FI_PROF_SM_ACTIVE: malformed number \"0.9x\"\n", stderr)
	out, err := os.ReadFile(outFile)
	require.NoError(t, err)
	require.Equal(t, 2, bytes.Count(out, []byte("\n")), "the rows before the error are written")

	_, stderr, code = runReplay(t, filepath.Join(dir, "absent.csv"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "absent.csv")

	_, stderr, code = runReplay(t)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "usage: gpureplay")
}

// TestAutoscaleReplay replays a trace through the autoscale connector's
// algorithm: one line per evaluation, every 15 s of trace time, the current
// count from the pods in the batch, deterministic.
func TestAutoscaleReplay(t *testing.T) {
	cfg := filepath.Join("testdata", "autoscale-serving.yaml")
	out, stderr, code := runReplay(t, "-autoscale", cfg, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 160, "2,400 s of trace / 15 s")
	require.Regexp(t, `^\{"time":1767225600,"target":"serving/Deployment/llm-serving","current":31,"desired":31,"reason":"Stabilized"\}$`, lines[0])
	require.Regexp(t, `^\{"time":1767225615,`, lines[1])
	again, _, _ := runReplay(t, "-autoscale", cfg, tracePath("serving-mixed-5s"))
	require.Equal(t, out, again, "deterministic")

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("targets: []\n"), 0o644))
	_, stderr, code = runReplay(t, "-autoscale", bad, tracePath("serving-mixed-5s"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, bad+": targets must list at least one scale target")
}

// TestCostSummary replays a trace with -cost and reads the summary lines:
// one per namespace, after the verdicts, with the keys in the documented
// order, the same bytes every time.
func TestCostSummary(t *testing.T) {
	prices := filepath.Join("testdata", "cost.yaml")
	out, stderr, code := runReplay(t, "-cost", prices, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	again, _, _ := runReplay(t, "-cost", prices, tracePath("serving-mixed-5s"))
	require.Equal(t, out, again, "deterministic")

	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	verdicts, _, _ := runReplay(t, tracePath("serving-mixed-5s"))
	n := strings.Count(verdicts, "\n")
	require.Equal(t, verdicts, strings.Join(lines[:n], "\n")+"\n", "the verdicts come first, unchanged")
	summary := lines[n:]
	require.Len(t, summary, 2, "the GPU without a namespace, and serving")
	keyOrder := regexp.MustCompile(`^\{"summary": "cost", "namespace": "[a-z]*", "currency": "EUR", "gpu_hours": \{"used": [0-9.]+, "waiting": [0-9.]+, "workload_idle": [0-9.]+, "cluster_idle": [0-9.]+, "unknown": [0-9.]+\}, "cost": \{"used": [0-9.]+, "waiting": [0-9.]+, "workload_idle": [0-9.]+, "cluster_idle": [0-9.]+, "unknown": [0-9.]+\}, "class_hours": \{("[a-z_]+": [0-9.]+(, )?)+\}\}$`)
	for _, l := range summary {
		require.Regexp(t, keyOrder, l)
	}
	var none, serving struct {
		Namespace  string
		GPUHours   map[string]float64 `json:"gpu_hours"`
		Cost       map[string]float64
		ClassHours map[string]float64 `json:"class_hours"`
	}
	require.NoError(t, json.Unmarshal([]byte(summary[0]), &none))
	require.NoError(t, json.Unmarshal([]byte(summary[1]), &serving))
	require.Empty(t, none.Namespace)
	require.Equal(t, "serving", serving.Namespace)
	// One GPU without a pod, idle for the trace's 2395 s at 2 EUR/h.
	require.Equal(t, map[string]float64{"used": 0, "waiting": 0, "workload_idle": 0, "cluster_idle": 0.665278, "unknown": 0}, none.GPUHours)
	require.InDelta(t, 2395.0/3600*2, none.Cost["cluster_idle"], 1e-4)
	// 31 serving GPUs over 2395 s; idle time is workload_idle; per class
	// time adds up to the same total.
	var states, classes float64
	for _, h := range serving.GPUHours {
		states += h
	}
	for _, h := range serving.ClassHours {
		classes += h
	}
	require.InDelta(t, 31*2395/3600.0, states, 1e-5)
	require.InDelta(t, states, classes, 1e-5)
	require.Equal(t, serving.ClassHours["idle"], serving.GPUHours["workload_idle"])
	require.InDelta(t, serving.GPUHours["used"]*2, serving.Cost["used"], 1e-3)

	// An empty file means the defaults: USD, no prices.
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	out, stderr, code = runReplay(t, "-cost", empty, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `"currency": "USD", "gpu_hours": {"used": 17.225, "waiting": 0, "workload_idle": 3.398611, "cluster_idle": 0, "unknown": 0}, "cost": {"used": 0, "waiting": 0, "workload_idle": 0, "cluster_idle": 0, "unknown": 0}`)

	// The example price table: the figures of the processor README.
	out, stderr, code = runReplay(t, "-cost", filepath.Join("..", "..", "examples", "cost", "prices.yaml"), tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, `{"summary": "cost", "namespace": "", "currency": "USD", "gpu_hours": {"used": 0, "waiting": 0, "workload_idle": 0, "cluster_idle": 0.665278, "unknown": 0}, "cost": {"used": 0, "waiting": 0, "workload_idle": 0, "cluster_idle": 4.5771, "unknown": 0}`)
	require.Contains(t, out, `{"summary": "cost", "namespace": "serving", "currency": "USD", "gpu_hours": {"used": 17.225, "waiting": 0, "workload_idle": 3.398611, "cluster_idle": 0, "unknown": 0}, "cost": {"used": 118.508, "waiting": 0, "workload_idle": 23.3824, "cluster_idle": 0, "unknown": 0}`)
}

func TestCostErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("cost:\n  overrides:\n    - {attribute: host.type, value: x}\n"), 0o644))
	_, stderr, code := runReplay(t, "-cost", bad, tracePath("serving-mixed-5s"))
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+bad+": cost::overrides::0: set exactly one of per_gpu_hour and factor\n", stderr)
	_, stderr, code = runReplay(t, "-cost", bad, "-autoscale", filepath.Join("testdata", "autoscale-serving.yaml"), tracePath("serving-mixed-5s"))
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: -cost goes with neither -autoscale nor -remediate\n", stderr)
}
