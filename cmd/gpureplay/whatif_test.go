package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	llmServing = "../../examples/autoscaling/llm-serving.yaml"
	convDemand = "internal/whatif/testdata/azure-llm-2023-conv.csv"
)

// TestWhatIfCommand runs `gpureplay -whatif` as a user does: one line per
// evaluation, the summary last, the same bytes twice.
func TestWhatIfCommand(t *testing.T) {
	args := []string{"-whatif", llmServing, "-startup", "600s", "-scale", "5", convDemand}
	out, stderr, code := runReplay(t, args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// 234 rows of 15 s (0 to 3495 s, ending at 3510 s): an evaluation every
	// 15 s after the start, then the summary.
	require.Len(t, lines, 3495/15+1)
	var first struct {
		Time             int64
		Current, Desired int32
		Reason, Metric   string
	}
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &first))
	require.Equal(t, int64(15), first.Time)
	require.Equal(t, "nvidia.gpu.sm.active", first.Metric)
	var sum map[string]float64
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum))
	for _, k := range []string{"gpu_hours", "slo_violation_minutes", "backlog_pod_hours", "peak_replicas", "scale_ups", "scale_downs", "ideal_gpu_hours"} {
		require.Contains(t, sum, k)
	}
	require.Greater(t, sum["gpu_hours"], sum["ideal_gpu_hours"])

	again, _, code := runReplay(t, args...)
	require.Equal(t, 0, code)
	require.Equal(t, out, again, "deterministic")

	file := filepath.Join(t.TempDir(), "out.jsonl")
	_, _, code = runReplay(t, append([]string{"-o", file}, args...)...)
	require.Equal(t, 0, code)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, out, string(written))
}

// Bad input: exit 1 and one line naming the file, line and column, or the
// settings key.
func TestWhatIfBadInput(t *testing.T) {
	dir := t.TempDir()
	demand := filepath.Join(dir, "demand.csv")
	require.NoError(t, os.WriteFile(demand, []byte("t_seconds,demand_pods\n0,1\n15,1\n15,2\n"), 0o600))
	_, stderr, code := runReplay(t, "-whatif", llmServing, demand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+demand+":4:1: t_seconds: 15 does not increase (previous row 15)\n", stderr)

	settings := filepath.Join(dir, "settings.yaml")
	require.NoError(t, os.WriteFile(settings, []byte("targets:\n  - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm, namespace: serving}\n    target_value: 0.8\n    min_replicas: 1\n    max_replicas: 4\n    mode: serving\n    serving: {pod_troughput: 20}\n"), 0o600))
	_, stderr, code = runReplay(t, "-whatif", settings, convDemand)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "pod_troughput")
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
}

// TestWhatIfTable runs the README's table command on one series and scale.
func TestWhatIfTable(t *testing.T) {
	out, stderr, code := runReplay(t, "-whatif", llmServing, "-table", "-scales", "5", convDemand)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2+2+1+2) // header, two rows, blank, two means
	require.Contains(t, lines[2], "| azure-llm-2023-conv.csv | 5 | 180 s |")
	require.Contains(t, lines[3], "| azure-llm-2023-conv.csv | 5 | 600 s |")
	require.Contains(t, out, "- all: mean saving")
	require.Contains(t, out, "; linear reading ")

	_, stderr, code = runReplay(t, "-whatif", llmServing, "-table", "-scales", "five", convDemand)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "-scales wants positive numbers")
}
