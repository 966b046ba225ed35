package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/realtraces"
)

// jobCases are the traces' jobs whose reports are golden
// (testdata/job/NAME.txt; -update rewrites them), each with the advice it
// must give and what it must not: the rules fire on these traces exactly
// where their labels say the job had that trouble.
var jobCases = []struct {
	name, trace, job string
	args             []string
	// want are lines (or parts) the report must have; not, parts it
	// must not.
	want, not []string
}{
	{
		name: "training-h100-1s", trace: tracePath("training-h100-1s"), job: "llm-pretrain",
		args: []string{"-cost", filepath.Join("testdata", "cost.yaml")},
		// The trace's throttled GPU (gpu-node-00/gpu3 from 5 to 9 min) is
		// degraded and the straggler then; the second straggler has no
		// cause the trace could show.
		want: []string{"GPUs: 16 (gpu-node-00: 8, gpu-node-01: 8)", "gpu-node-00/gpu3 became degraded", "gpu-node-00/gpu3 held the job back for 4 min", "it was degraded then",
			"gpu-node-01/gpu3 held the job back", "  total            4.00 GPU-h         7.99 EUR"},
		not: []string{"did not use", "data loader", "collectives", "(no price configured"},
	},
	{
		name: "finetune-step-straggler-2s", trace: tracePath("finetune-step-straggler-2s"), job: "ml/finetune",
		want: []string{"gpu-node-01/gpu2 held the job back for 5 min", "GPUStraggler on gpu-node-01/gpu2: pending"},
		not:  []string{"became degraded", "collectives", "data loader"},
	},
	{
		name: "llm-collectives-2s", trace: tracePath("llm-collectives-2s"), job: "llm-sft",
		want: []string{"communication_bound    39 %", "The GPUs waited on collectives 39 % of their time"},
		not:  []string{"held the job back", "data loader"},
	},
	{
		name: "loader-throttled-5s", trace: filepath.Join("testdata", "nodeevidence", "loader-throttled-5s.csv"), job: "cv/resnet-train",
		args: []string{"-time-limit", "2h"},
		want: []string{"CPU efficiency    [", "cpu_throttled: 50 % of GPU time", "The data loader starves 2 GPUs", "its CPU limit throttles it",
			"Time Limit: 2 h 00 min (8.3 % used)"},
		// Still running at the trace's end: no advice on its time limit.
		not: []string{"ask for less time", "collectives"},
	},
	{
		name: "degraded-rail-5s", trace: filepath.Join("testdata", "nodeevidence", "degraded-rail-5s.csv"), job: "llm-finetune",
		want: []string{"cause fabric_errors", "its rail counts link errors"},
		not:  []string{"data loader"},
	},
	{
		name: "multinode-ib-5s", trace: filepath.Join("testdata", "nodeevidence", "multinode-ib-5s.csv"), job: "llm-pretrain",
		want: []string{"network_saturated", "The GPUs waited on collectives 59 % of their time: the network ran near its"},
	},
}

func TestJobReportGolden(t *testing.T) {
	for _, tc := range jobCases {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{"-job", tc.job}, tc.args...), tc.trace)
			out, stderr, code := runReplay(t, args...)
			require.Equal(t, 0, code, stderr)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
			for _, n := range tc.not {
				assert.NotContains(t, out, n)
			}
			golden := filepath.Join("testdata", "job", tc.name+".txt")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o750))
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			assert.Equal(t, string(want), out, "the report differs from %s (go test -run TestJobReportGolden -update rewrites it)", golden)
		})
	}
}

// TestJobVerdictsToFile: with -job the report is on standard output and
// the verdicts in -o, the same as a replay without -job writes.
func TestJobVerdictsToFile(t *testing.T) {
	plain, _, code := runReplay(t, tracePath("finetune-step-straggler-2s"))
	require.Equal(t, 0, code)
	o := filepath.Join(t.TempDir(), "v.jsonl")
	out, stderr, code := runReplay(t, "-job", "finetune", "-o", o, tracePath("finetune-step-straggler-2s"))
	require.Equal(t, 0, code, stderr)
	require.True(t, strings.HasPrefix(out, "                                   Job Report\n"), out)
	got, err := os.ReadFile(o)
	require.NoError(t, err)
	require.Equal(t, plain, string(got))
}

func TestJobErrors(t *testing.T) {
	_, stderr, code := runReplay(t, "-job", "nope", tracePath("llm-collectives-2s"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `no job "nope" in the trace; its jobs: ml/llm-sft`)

	_, stderr, code = runReplay(t, "-job", "chat", tracePath("serving-mixed-5s"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "the trace names no job")

	_, stderr, code = runReplay(t, "-job", "x", "-labels", "l.csv", "-o", "v", tracePath("llm-collectives-2s"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-job and -labels")

	_, stderr, code = runReplay(t, "-time-limit", "1h", tracePath("llm-collectives-2s"))
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr, "-time-limit")
}

// TestJobReportReal: the report of 37 h of a real OLMo run on 8 H100s
// whose recording has power alone (testdata/real/README.md): no
// utilization or memory to report (jobstats' figures say "not reported",
// no advice rests on them), and every GPU-hour accounted, used or
// unknown as power tells them.
func TestJobReportReal(t *testing.T) {
	path := realtraces.Path(t, "olmo_amberish7_wandb_power")
	out, stderr, code := runReplay(t, "-job", "amberish7", path)
	require.Equal(t, 0, code, stderr)
	t.Log(out)
	for _, w := range []string{"Job: amberish7", "GPUs: 8 (amberish7-s22: 8)", "Run Time: 37 h", "GPU utilization   [not reported",
		"amberish7-s22/gpu0: not reported",
		// Power alone classes nothing, but tells used from unknown time:
		// 271 of the 299 GPU-hours used.
		"unknown               100 %  298.6 GPU-h", "used            271.1 GPU-h   91 %"} {
		assert.Contains(t, out, w)
	}
	for _, n := range []string{"did not use", "GPU utilization was"} {
		assert.NotContains(t, out, n)
	}
}

// TestJobWithReport: -job with -report prints the job's report and puts
// that job's section in the page, the same facts in both.
func TestJobWithReport(t *testing.T) {
	page := filepath.Join(t.TempDir(), "r.html")
	out, stderr, code := runReplay(t, "-job", "ml/llm-sft", "-report", page, tracePath("llm-collectives-2s"))
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "Job: ml/llm-sft")
	jobs, ok := pageData(t, page)["jobs"].([]any)
	require.True(t, ok, "the page has the job")
	require.Len(t, jobs, 1)
	j := jobs[0].(map[string]any)
	require.Equal(t, "llm-sft", j["job"].(map[string]any)["id"])
	adv := j["advice"].([]any)
	require.Len(t, adv, 1)
	require.Contains(t, strings.Join(strings.Fields(out), " "), adv[0].(map[string]any)["text"].(string), "the page's advice is the text's")
}
