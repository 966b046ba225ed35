package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	llmServing = "../../examples/autoscaling/llm-serving.yaml"
	convDemand = "internal/whatif/testdata/azure-llm-2023-conv.csv"
)

// summary reads a what-if's last line.
func summary(t *testing.T, out string) map[string]any {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[len(lines)-1]), &sum))
	return sum
}

// TestWhatIfCommand runs `gpureplay -whatif` as a user does: one line per
// evaluation, the summary last (spec section 4), the same bytes twice.
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
	require.Equal(t, "vllm:generation_tokens_total", first.Metric, "serving mode: the token counter decides")
	sum := summary(t, out)
	for _, k := range []string{"gpu_hours", "slo_violation_minutes", "backlog_pod_hours", "peak_replicas", "scale_ups", "scale_downs", "ideal_gpu_hours", "gpu_hours_over_ideal", "initial_replicas"} {
		require.IsType(t, 0.0, sum[k], k)
	}
	require.Greater(t, sum["gpu_hours"], sum["ideal_gpu_hours"])
	require.InDelta(t, sum["gpu_hours"].(float64)/sum["ideal_gpu_hours"].(float64), sum["gpu_hours_over_ideal"], 1e-5)
	// Warm (section 2): ceil(0.2297 × 5 / 0.8) = 2 ready at t = 0.
	require.Equal(t, "warm", sum["start"])
	require.Equal(t, 2.0, sum["initial_replicas"])

	again, _, code := runReplay(t, args...)
	require.Equal(t, 0, code)
	require.Equal(t, out, again, "deterministic")

	file := filepath.Join(t.TempDir(), "out.jsonl")
	_, _, code = runReplay(t, append([]string{"-o", file}, args...)...)
	require.Equal(t, 0, code)
	written, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Equal(t, out, string(written))

	// -cold: min_replicas (1), none ready at t = 0, reported as such.
	cold, stderr, code := runReplay(t, append([]string{"-cold"}, args...)...)
	require.Equal(t, 0, code, stderr)
	coldSum := summary(t, cold)
	require.Equal(t, "cold", coldSum["start"])
	require.Equal(t, 1.0, coldSum["initial_replicas"])
	require.Greater(t, coldSum["slo_violation_minutes"], sum["slo_violation_minutes"])
}

// Bad input: exit 1 and one line naming the file, line and column, or the
// settings key or flag.
func TestWhatIfBadInput(t *testing.T) {
	dir := t.TempDir()
	demand := filepath.Join(dir, "demand.csv")
	require.NoError(t, os.WriteFile(demand, []byte("t_seconds,demand_pods\n0,1\n15,1\n15,2\n"), 0o600))
	_, stderr, code := runReplay(t, "-whatif", llmServing, demand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+demand+":4:1: t_seconds: 15 does not increase (previous row 15)\n", stderr)
	// -table reads every series first, with the same error.
	_, stderr, code = runReplay(t, "-whatif", llmServing, "-table", "-scales", "1", convDemand, demand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+demand+":4:1: t_seconds: 15 does not increase (previous row 15)\n", stderr)

	require.NoError(t, os.WriteFile(demand, []byte("t_seconds,demand_pods\n0,1\n15,one\n"), 0o600))
	_, stderr, code = runReplay(t, "-whatif", llmServing, "-cold", demand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+demand+":3:4: demand_pods: want a non-negative number, got \"one\"\n", stderr)

	settings := filepath.Join(dir, "settings.yaml")
	require.NoError(t, os.WriteFile(settings, []byte("targets:\n  - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm, namespace: serving}\n    target_value: 0.8\n    min_replicas: 1\n    max_replicas: 4\n    mode: serving\n    serving: {pod_troughput: 20}\n"), 0o600))
	for _, extra := range [][]string{nil, {"-table", "-scales", "1"}} {
		_, stderr, code = runReplay(t, append(append([]string{"-whatif", settings}, extra...), convDemand)...)
		require.Equal(t, 1, code, extra)
		require.Contains(t, stderr, "pod_troughput")
		require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	}

	_, stderr, code = runReplay(t, "-whatif", llmServing, "-table", "-sample", "1500ms", convDemand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: -sample must be a whole number of seconds, got 1.5s\n", stderr)
}

// tableRow matches a table row: demand, scale, startup, GPU-hours, SLO minutes.
var tableRow = regexp.MustCompile(`(?m)^\| (\S+) \| (\S+) \| (\d+) s \| ([0-9.]+) \| ([0-9.]+) \| .*\| (-?[0-9.]+) % \| ([0-9.]+) \| .* \|$`)

// TestWhatIfTable runs the README's table command on one series and scale:
// every row and a mean over all of them, the same bytes twice, and
// -sample, -slo-wait and -cold honoured.
func TestWhatIfTable(t *testing.T) {
	args := []string{"-whatif", llmServing, "-table", "-scales", "1", convDemand}
	out, stderr, code := runReplay(t, args...)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// what was run, blank, header, rule, two rows, blank, two means
	require.Len(t, lines, 1+1+2+2+1+2, out)
	require.Equal(t, "warm start, -sample 5s, -slo-wait 2s; frontier: the 20 reactive settings of the contract's section 5", lines[0])
	require.Contains(t, lines[4], "| azure-llm-2023-conv.csv | 1 | 180 s |")
	require.Contains(t, lines[5], "| azure-llm-2023-conv.csv | 1 | 600 s |")
	require.Contains(t, lines[2], "| saving | GPU-hours / ideal |")
	require.Len(t, tableRow.FindAllStringSubmatch(out, -1), 2)
	require.Contains(t, out, "- all: mean saving ")
	require.Contains(t, out, " over all 2 rows; mean GPU-hours / ideal ")

	again, _, code := runReplay(t, args...)
	require.Equal(t, 0, code)
	require.Equal(t, out, again, "deterministic")

	// With -cache: the first run writes each row's points, the second
	// reads them; neither changes a byte.
	cache := t.TempDir()
	cached := []string{"-whatif", llmServing, "-table", "-scales", "1", "-cache", cache, convDemand}
	for range 2 {
		c, stderr, code := runReplay(t, cached...)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, out, c, "-cache changes no figure")
	}
	files, err := filepath.Glob(filepath.Join(cache, "*.json"))
	require.NoError(t, err)
	require.Len(t, files, 2, "one file per row")

	figures := func(out string) [][]string {
		var rows [][]string
		for _, m := range tableRow.FindAllStringSubmatch(out, -1) {
			rows = append(rows, m[4:6]) // GPU-hours, SLO minutes
		}
		return rows
	}
	base := figures(out)
	variant := func(flags ...string) (string, [][]string) {
		out, stderr, code := runReplay(t, append(append([]string{"-whatif", llmServing, "-table", "-scales", "1"}, flags...), convDemand)...)
		require.Equal(t, 0, code, stderr)
		return out, figures(out)
	}
	out, slo := variant("-slo-wait", "10s")
	require.Contains(t, out, "warm start, -sample 5s, -slo-wait 10s;")
	for i := range base {
		require.Equal(t, base[i][0], slo[i][0], "the SLO wait changes no decision")
		require.NotEqual(t, base[i][1], slo[i][1], "but the minutes over it")
	}
	out, sample := variant("-sample", "30s")
	require.Contains(t, out, "warm start, -sample 30s, -slo-wait 2s;")
	require.NotEqual(t, base, sample, "pods reporting every 30 s")
	out, cold := variant("-cold")
	require.Contains(t, out, "cold start (-cold: min_replicas, none ready), -sample 5s, -slo-wait 2s;")
	require.NotEqual(t, base, cold)

	_, stderr, code = runReplay(t, "-whatif", llmServing, "-table", "-scales", "five", convDemand)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "-scales wants positive numbers")
}

// The held-out protocol's flags: -holdout goes with -table, several
// settings only with -holdout, and a series in both sets is refused with
// one line naming it.
func TestWhatIfHoldoutFlags(t *testing.T) {
	_, stderr, code := runReplay(t, "-whatif", llmServing, "-holdout", convDemand, convDemand+".other")
	require.Equal(t, 2, code)
	require.Equal(t, "gpureplay: -holdout goes with -table\n", stderr)
	_, stderr, code = runReplay(t, "-whatif", llmServing, "-cache", t.TempDir(), convDemand)
	require.Equal(t, 2, code)
	require.Equal(t, "gpureplay: -cache goes with -table\n", stderr)
	_, stderr, code = runReplay(t, "-whatif", llmServing+","+llmServing, "-table", convDemand)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, "several -whatif settings are candidates of -holdout")
	_, stderr, code = runReplay(t, "-whatif", llmServing, "-table", "-scales", "1", "-holdout", convDemand, convDemand)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: -holdout: "+convDemand+" is in the choosing set ("+convDemand+") and in the reported set: a held-out series is one the choice never saw\n", stderr)
}
