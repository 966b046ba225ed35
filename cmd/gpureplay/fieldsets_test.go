package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/score"
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// What the analyzer's defaults name critical, and how long a fault keeps a
// GPU faulted: a faulted label is decidable from the default counters only
// where its fault shows in a field they carry.
var (
	criticalXIDs  = []float64{48, 64, 74, 79, 95, 119, 120, 140}
	faultLookback = 300.0
)

// gpuRows reads a trace's rows per GPU.
func gpuRows(t *testing.T, path string) map[string][]trace.Row {
	t.Helper()
	out := map[string][]trace.Row{}
	eachRow(t, path, func(r *trace.Row) { out[r.UUID] = append(out[r.UUID], *r) })
	return out
}

// decidableWithDefaults says whether a label can be told from
// dcgm-exporter's default counters, by the processor README's table: a fault
// only by a critical XID or a failed row remapping (no ECC counts); a
// collective only where its traffic crosses PCIe to the NIC (no NVLink bytes);
// a throttle only where it holds the SM clock to at most 0.75 of the model's
// maximum (no clock event reasons). Everything else is decidable.
func decidableWithDefaults(l score.Label, rows []trace.Row) bool {
	in := func(r *trace.Row, from float64) bool { return r.Time >= from && r.Time < l.End }
	switch l.Value {
	case "faulted", "GPUFaulted":
		for i := range rows {
			r := &rows[i]
			if !in(r, l.Start-faultLookback) {
				continue
			}
			if x, ok := r.Values.Get(f.XIDErrors); ok && slices.Contains(criticalXIDs, x) {
				return true
			}
			if v, ok := r.Values.Get(f.RowRemapFailure); ok && v > 0 {
				return true
			}
		}
		return false
	case "communication_bound":
		var mins []float64
		for i := range rows {
			if r := &rows[i]; in(r, l.Start) {
				rx, _ := r.Values.Get(f.PCIeRxBytes)
				tx, _ := r.Values.Get(f.PCIeTxBytes)
				mins = append(mins, min(rx, tx))
			}
		}
		return len(mins) > 0 && median(mins) >= 4e9
	case "throttled", "GPUThrottled":
		var clocks []float64
		for i := range rows {
			if r := &rows[i]; in(r, l.Start) {
				if c, ok := r.Values.Get(f.SMClock); ok {
					clocks = append(clocks, c)
				}
			}
		}
		// The traces' throttled GPUs are H100s (1,980 MHz at most).
		return len(clocks) > 0 && median(clocks) <= 0.75*1980
	}
	return true
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestScoreDefaultCounters replays every shared trace as dcgm-exporter's
// default counters would have recorded it (-fields defaults: no SM activity,
// occupancy, NVLink bytes, clock event reasons or ECC counts), at the
// trace's own rate and as scraped every 15, 30 and 60 s, and scores the
// labels the processor README's table calls decidable there: bottleneck
// accuracy at least 0.95, every alert that needs no missing field, no false
// alert. The figures are the README's table.
func TestScoreDefaultCounters(t *testing.T) {
	for _, name := range traces {
		rows := gpuRows(t, tracePath(name))
		for _, every := range []int{0, 15, 30, 60} {
			t.Run(fmt.Sprintf("%s/%ds", name, every), func(t *testing.T) {
				t.Parallel()
				args := []string{"-fields", "defaults"}
				if every > 0 {
					args = append(args, "-resample", fmt.Sprintf("%ds", every))
				}
				scoreDecidable(t, filepath.Join("testdata", "traces", name), float64(every), rows, args...)
			})
		}
	}
}

// scoreDecidable replays TRACE.csv with args, scores it against the labels
// of TRACE.labels.csv that the default counters decide, logs the figures
// and holds them to the bar.
func scoreDecidable(t *testing.T, base string, every float64, rows map[string][]trace.Row, args ...string) {
	t.Helper()
	labels, verdicts := replayLabelled(t, base, args...)
	var keep []score.Label
	dropped := map[string]int{}
	for _, l := range labels {
		if decidableWithDefaults(l, rows[l.UUID]) {
			keep = append(keep, l)
			continue
		}
		dropped[l.Value]++
		if l.Value == "communication_bound" {
			// Undecidable is no licence to misname: a collective whose
			// traffic the counters miss is never launch or input bound.
			for _, v := range verdicts[l.UUID] {
				if v.Time >= l.Start+40+every && v.Time < l.End {
					require.NotContains(t, []string{"launch_bound", "input_bound"}, v.Bottleneck, "%s at %v, in a collective", l.UUID, v.Time)
				}
			}
		}
	}
	r := score.ScoreAt(keep, verdicts, every)
	t.Logf("| %s | %.0f s | %.4f | %s | %s | %d/%d | %d | %v |", filepath.Base(base), every, r.BottleneckAccuracy,
		orNA(r.StragglerPrecision), orNA(r.StragglerRecall), r.AlertsDetected, r.AlertsExpected, r.AlertsFalse, dropped)
	require.Positive(t, r.BottleneckSamples)
	require.GreaterOrEqual(t, r.BottleneckAccuracy, 0.95, "bottleneck accuracy on the decidable classes")
	require.Equal(t, r.AlertsExpected, r.AlertsDetected, "every alert that needs no missing field")
	require.Zero(t, r.AlertsFalse, "no false alerts")
	checkHints(t, verdicts)
}

// TestDefaultCountersTrace: on exactly dcgm-exporter's default counters (4
// H100s scraped every 15 s, testdata/fieldsets/gen.py), a compute-bound,
// a memory-bound and an input-bound GPU are named, and the idle one idle;
// each verdict says it rests on the graphics engine or DRAM activity.
func TestDefaultCountersTrace(t *testing.T) {
	base := filepath.Join("testdata", "fieldsets", "default-counters-15s")
	scoreDecidable(t, base, 15, gpuRows(t, base+".csv"))
	out, stderr, code := runReplay(t, base+".csv")
	require.Equal(t, 0, code, stderr)
	verdicts, err := score.ReadVerdicts(strings.NewReader(out))
	require.NoError(t, err)
	evidence := map[string]map[string]int{}
	for _, vs := range verdicts {
		for _, v := range vs {
			if evidence[v.Bottleneck] == nil {
				evidence[v.Bottleneck] = map[string]int{}
			}
			evidence[v.Bottleneck][v.Evidence]++
		}
	}
	t.Logf("evidence per class: %v", evidence)
	require.Positive(t, evidence["compute_bound"]["gr_engine"])
	require.Positive(t, evidence["input_bound"]["gr_engine"])
	require.Positive(t, evidence["memory_bound"]["dram_active"])
	require.Positive(t, evidence["idle"]["utilization"]+evidence["idle"]["gr_engine"])
}

// TestAllReduceAcrossNodes: the collective phase of an all-reduce across two
// nodes (PCIe 11 GB/s each way to the NIC; NVLink 20 GB/s on the H100s, none
// on the L40S) is communication_bound with scope network on both models,
// with every field and with the default counters alike: never launch_bound,
// which its SM activity (0.12) at 100 % utilization alone would say.
func TestAllReduceAcrossNodes(t *testing.T) {
	base := filepath.Join("testdata", "fieldsets", "allreduce-internode-5s")
	rows := gpuRows(t, base+".csv")
	for _, fields := range []string{"all", "defaults"} {
		t.Run(fields, func(t *testing.T) {
			scoreDecidable(t, base, 0, rows, "-fields", fields)
			out, stderr, code := runReplay(t, "-fields", fields, base+".csv")
			require.Equal(t, 0, code, stderr)
			verdicts, err := score.ReadVerdicts(strings.NewReader(out))
			require.NoError(t, err)
			models := map[string]string{}
			for u, rs := range rows {
				models[u] = rs[0].Model
			}
			network := map[string]int{}
			for u, vs := range verdicts {
				for _, v := range vs {
					// The collective's minutes, past the window's first 30 s.
					if v.Time >= 1767225900+30 && v.Time < 1767226200 {
						require.Equal(t, "communication_bound", v.Bottleneck, "%s at %v", u, v.Time)
						require.Equal(t, "network", v.Scope, "%s at %v", u, v.Time)
						require.Equal(t, "pcie", v.Evidence, "%s at %v", u, v.Time)
						network[models[u]]++
					}
				}
			}
			require.Len(t, network, 2, "H100 and L40S")
		})
	}
}
