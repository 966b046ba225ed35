package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/realtraces"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// realCoarse are public recordings of real GPUs sampled coarsely without
// profiling fields, converted at test time from the shared recordings
// (testdata/real/README.md says where each comes from).
var realCoarse = []string{"alibaba_gentd26_pods"}

// TestMain removes the real recordings converted for this run
// (realtraces.Path converts each once per test binary).
func TestMain(m *testing.M) {
	code := m.Run()
	realtraces.Cleanup()
	os.Exit(code)
}

// eachRow calls fn with every row of a trace.
func eachRow(t *testing.T, path string, fn func(*trace.Row)) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	r, err := trace.NewReader(f, path)
	require.NoError(t, err)
	for {
		batch, err := r.NextBatch()
		if errors.Is(err, io.EOF) {
			return
		}
		require.NoError(t, err)
		for i := range batch {
			fn(&batch[i])
		}
	}
}

// busyShare is the share of a trace's rows with GPU utilization whose
// utilization is at least 5 %: what the GPUs did, by the only reading the
// recording has.
func busyShare(t *testing.T, path string) float64 {
	t.Helper()
	var busy, total int
	eachRow(t, path, func(r *trace.Row) {
		if u, ok := r.Values.Get(dcgmfield.GPUUtil); ok {
			total++
			busy += b2i(u >= 5)
		}
	})
	require.Positive(t, total)
	return float64(busy) / float64(total)
}

// costShares replays a trace with -cost and returns each usage state's
// share of all GPU-hours, summed over namespaces.
func costShares(t *testing.T, args ...string) map[string]float64 {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "cost.yaml")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	out, stderr, code := runReplay(t, append([]string{"-cost", empty}, args...)...)
	require.Equal(t, 0, code, stderr)
	hours := map[string]float64{}
	var total float64
	for _, line := range strings.Split(out, "\n") {
		if !strings.Contains(line, `"summary": "cost"`) {
			continue
		}
		var s struct {
			GPUHours map[string]float64 `json:"gpu_hours"`
		}
		require.NoError(t, json.Unmarshal([]byte(line), &s))
		for k, h := range s.GPUHours {
			hours[k] += h
			total += h
		}
	}
	require.Positive(t, total, "a cost summary accounts for the GPU-hours")
	for k := range hours {
		hours[k] /= total
	}
	return hours
}

// TestRealCoarseUsage: on real fleets scraped every minute without
// profiling fields, the usage split follows what the GPUs did: used within
// 4 points of the share of busy samples, and at most 5 % unknown. (Before
// the interval was learnt per GPU, every 57 s interval was longer than the
// 30 s window and 100 % of the GPU-hours were unknown.)
func TestRealCoarseUsage(t *testing.T) {
	for _, name := range realCoarse {
		t.Run(name, func(t *testing.T) {
			path := realtraces.Path(t, name)
			busy := busyShare(t, path)
			shares := costShares(t, path)
			t.Logf("%s: busy %.1f %% of samples; used %.1f %%, workload_idle %.1f %%, cluster_idle %.1f %%, unknown %.1f %% of GPU-hours",
				name, 100*busy, 100*shares["used"], 100*shares["workload_idle"], 100*shares["cluster_idle"], 100*shares["unknown"])
			require.InDelta(t, busy, shares["used"], 0.04, "used follows the busy share")
			require.LessOrEqual(t, shares["unknown"], 0.05, "unknown only where no sample covers the time")
		})
	}
}
