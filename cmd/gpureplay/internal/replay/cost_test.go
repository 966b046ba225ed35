package replay

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
)

const servingMixed = "../../testdata/traces/serving-mixed-5s"

// labelled sums, per GPU, the seconds of its labelled intervals of one
// bottleneck class.
func labelled(t *testing.T, path, class string) map[string]float64 {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, r := range rows[1:] {
		if r[1] != "bottleneck" || r[2] != class {
			continue
		}
		start, err := strconv.ParseFloat(r[3], 64)
		require.NoError(t, err)
		end, err := strconv.ParseFloat(r[4], 64)
		require.NoError(t, err)
		out[r[0]] += end - start
	}
	return out
}

// TestServingMixedCost replays serving-mixed-5s with prices and checks the
// usage states against the trace's labels: the zombie allocation (a serving
// pod's GPU idle for 20 minutes, the one GPUIdle alert) spent its labelled
// idle time workload_idle, the GPU without a pod spent it cluster_idle, and
// every GPU's states add up to its wall time exactly.
func TestServingMixedCost(t *testing.T) {
	cfg, err := LoadConfig("")
	require.NoError(t, err)
	cfg.(*gpuanalyzerprocessor.Config).Cost.PerGPUHour = map[string]float64{"H100": 6.88}
	in, err := os.Open(servingMixed + ".csv")
	require.NoError(t, err)
	defer in.Close()
	tally := NewCostTally(cfg)
	var out bytes.Buffer
	require.NoError(t, RunCost(context.Background(), cfg, Options{Cost: tally}, in, "serving-mixed-5s.csv", &out))

	idle := labelled(t, servingMixed+".labels.csv", "idle")
	const zombie, unallocated = "GPU-3b05e392-aa8b-25ac-de85-a41539a44721", "GPU-2155a41c-1221-8804-d885-bea436c2a4c7"
	const window = 30.0 // seconds: the analyzer's window

	state := func(name string) int { return slices.Index(usageStates[:], name) }
	used, waiting, workloadIdle, clusterIdle, unknown := state("used"), state("waiting"), state("workload_idle"), state("cluster_idle"), state("unknown")

	u, wall, ok := tally.GPU(zombie)
	require.True(t, ok)
	t.Logf("zombie: workload_idle %.0f s, labelled idle %.0f s", u.Seconds[workloadIdle], idle[zombie])
	require.InDelta(t, idle[zombie], u.Seconds[workloadIdle], window)
	require.Zero(t, u.Seconds[clusterIdle], "a pod holds it throughout")
	require.Zero(t, u.Seconds[waiting], "profiling: SM activity decides")
	require.Equal(t, wall, u.Nanos[used]+u.Nanos[waiting]+u.Nanos[workloadIdle]+u.Nanos[clusterIdle]+u.Nanos[unknown])

	u, wall, ok = tally.GPU(unallocated)
	require.True(t, ok)
	t.Logf("unallocated: cluster_idle %.0f s, labelled idle %.0f s", u.Seconds[clusterIdle], idle[unallocated])
	require.InDelta(t, idle[unallocated], u.Seconds[clusterIdle], window)
	require.Equal(t, wall, u.Nanos[clusterIdle], "idle and without a pod from its first sample to its last")
	require.InDelta(t, u.Seconds[clusterIdle]/3600*6.88, u.Cost[clusterIdle], 1e-9)

	// Every GPU: the states add up to the time from its first to its last
	// row in the trace, to the nanosecond.
	walls := wallTimes(t, servingMixed+".csv")
	require.Len(t, tally.gpus, len(walls))
	var total int64
	for id, want := range walls {
		u, wall, ok := tally.GPU(id)
		require.True(t, ok, id)
		require.Equal(t, want, wall, id)
		var sum int64
		for _, n := range u.Nanos {
			sum += n
		}
		require.Equal(t, want, sum, id)
		total += want
	}

	// The same in the summary: the namespaces' GPU-hours add up.
	var hours float64
	for _, u := range tally.namespaces {
		for _, s := range u.Seconds {
			hours += s / 3600
		}
	}
	require.InDelta(t, float64(total)/3.6e12, hours, 1e-9)
}

// wallTimes reads each GPU's first and last row time from a trace.
func wallTimes(t *testing.T, path string) map[string]int64 {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := trace.NewReader(f, path)
	require.NoError(t, err)
	first, last := map[string]int64{}, map[string]int64{}
	for {
		batch, err := r.NextBatch()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		for _, row := range batch {
			ns := int64(math.Round(row.Time*1e6)) * 1000
			if _, ok := first[row.UUID]; !ok {
				first[row.UUID] = ns
			}
			last[row.UUID] = ns
		}
	}
	out := map[string]int64{}
	for id := range first {
		out[id] = last[id] - first[id]
	}
	return out
}

func TestApplyCostErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("cost:\n  currency: dollars\n"), 0o644))
	cfg, err := LoadConfig("")
	require.NoError(t, err)
	require.ErrorContains(t, ApplyCost(cfg, bad), bad+`: cost: currency must be an ISO 4217 code of three capital letters such as USD, got "dollars"`)
	require.NoError(t, os.WriteFile(bad, []byte("cost:\n  per_gpu_hour: [1]\n"), 0o644))
	require.ErrorContains(t, ApplyCost(cfg, bad), bad+": ")
}
