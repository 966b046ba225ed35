package main

import (
	"math"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/score"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// The node evidence family (testdata/nodeevidence, gen.py): traces with the
// node evidence columns, labelled with the class and the cause of each
// wait.

func nodeTrace(name string) string { return filepath.Join("testdata", "nodeevidence", name) }

// causeHints are the hints that follow a cause, in place of the class's.
var causeHints = map[string]string{
	"cpu_throttled": "raise_cpu_limit", "network_saturated": "add_network_bandwidth", "fabric_errors": "check_fabric",
}

// TestScoreNodeEvidence replays each trace of the family and holds its
// figures to the floors: bottleneck and cause accuracy at least
// 0.9 (from 40 s into each label), every cause found, every straggler
// found and none false, every labelled alert and none false.
func TestScoreNodeEvidence(t *testing.T) {
	t.Logf("| trace | bottleneck | cause | cause latency mean / max | straggler precision / recall | alerts |")
	for _, name := range []string{"multinode-ib-5s", "multinode-ib-nonic-5s", "degraded-rail-5s", "loader-throttled-5s", "dataset-read-5s"} {
		t.Run(name, func(t *testing.T) {
			labels, verdicts := replayLabelled(t, nodeTrace(name))
			r := score.Score(labels, verdicts)
			t.Logf("| %s | %.4f (%d) | %s (%d) | %s / %s s | %s / %s | %d/%d, %d false |", name, r.BottleneckAccuracy, r.BottleneckSamples,
				orNA(r.CauseAccuracy), r.CauseSamples, orNA(r.CauseLatencyMean), orNA(r.CauseLatencyMax),
				orNA(r.StragglerPrecision), orNA(r.StragglerRecall), r.AlertsDetected, r.AlertsExpected, r.AlertsFalse)
			require.Positive(t, r.BottleneckSamples)
			require.GreaterOrEqual(t, r.BottleneckAccuracy, 0.9, "bottleneck accuracy")
			if !math.IsNaN(r.CauseAccuracy) {
				require.GreaterOrEqual(t, r.CauseAccuracy, 0.9, "cause accuracy")
			}
			require.Zero(t, r.CauseMissed, "every labelled cause found")
			if !math.IsNaN(r.StragglerRecall) {
				require.Equal(t, 1.0, r.StragglerRecall, "straggler recall")
			}
			require.Zero(t, r.StragglerFalse, "no straggler outside a labelled interval")
			require.Equal(t, r.AlertsExpected, r.AlertsDetected, "every labelled alert")
			require.Zero(t, r.AlertsFalse, "no false alert")
			for _, vs := range verdicts {
				for _, v := range vs {
					want := hintsOf[v.Bottleneck]
					if h, ok := causeHints[v.Cause]; ok {
						want = append(want[:len(want):len(want)], h)
					}
					require.Containsf(t, want, v.Hint, "%s at %v: hint %q for %s, cause %q", v.UUID, v.Time, v.Hint, v.Bottleneck, v.Cause)
				}
			}
		})
	}
}

// railLoad is the analyzer's evidence for a rail's load: "mlx5_0:1 at
// 92 % of 400 Gb/s".
var railLoad = regexp.MustCompile(`^mlx5_\d:1 at \d+ % of 400 Gb/s`)

// inLabel calls fn with each verdict from 40 s into each label of kind and
// value.
func inLabel(labels []score.Label, verdicts map[string][]score.Verdict, kind, value string, fn func(v score.Verdict)) {
	for _, l := range labels {
		if l.Kind != kind || l.Value != value {
			continue
		}
		for _, v := range verdicts[l.UUID] {
			if v.Time >= l.Start+40 && v.Time < l.End {
				fn(v)
			}
		}
	}
}

// TestCollectiveOnTheRail: with NIC counters, a multi-node job's
// collectives read communication_bound, scope network, on the evidence of
// the rail's NIC, and the cause names the rail's load; without them (the
// same rows, multinode-ib-nonic-5s), the PCIe rule of the processor README
// decides: communication_bound, scope network, evidence pcie, no cause.
func TestCollectiveOnTheRail(t *testing.T) {
	labels, verdicts := replayLabelled(t, nodeTrace("multinode-ib-5s"))
	n, nic, named := 0, 0, 0
	inLabel(labels, verdicts, "bottleneck", "communication_bound", func(v score.Verdict) {
		n++
		if v.Bottleneck == "communication_bound" && v.Scope == "network" && v.Evidence == "nic" {
			nic++
		}
		if railLoad.MatchString(v.CauseEvidence) {
			named++
		}
	})
	t.Logf("collectives with NIC counters: %d verdicts, %d on evidence nic, %d with the rail's load in the cause", n, nic, named)
	require.Positive(t, n)
	require.GreaterOrEqual(t, float64(nic)/float64(n), 0.9, "evidence nic")
	require.GreaterOrEqual(t, float64(named)/float64(n), 0.9, "the rail's load named")
	for _, vs := range verdicts {
		for _, v := range vs {
			if v.Bottleneck == "communication_bound" {
				require.Equal(t, "nic", v.Evidence, "%s at %v", v.UUID, v.Time)
				require.Regexp(t, railLoad, v.CauseEvidence, "%s at %v", v.UUID, v.Time)
			}
		}
	}

	labels, verdicts = replayLabelled(t, nodeTrace("multinode-ib-nonic-5s"))
	n, pcie := 0, 0
	inLabel(labels, verdicts, "bottleneck", "communication_bound", func(v score.Verdict) {
		n++
		if v.Bottleneck == "communication_bound" && v.Scope == "network" && v.Evidence == "pcie" {
			pcie++
		}
	})
	t.Logf("collectives without NIC counters: %d verdicts, %d on evidence pcie", n, pcie)
	require.GreaterOrEqual(t, float64(pcie)/float64(n), 0.9, "evidence pcie")
	for _, vs := range verdicts {
		for _, v := range vs {
			require.Empty(t, v.Cause, "no NIC counters: a network wait has no cause (%s at %v)", v.UUID, v.Time)
		}
	}
}

// TestNoNICRowsAreTheSame: multinode-ib-nonic-5s is multinode-ib-5s's rows
// without the NIC's cells.
func TestNoNICRowsAreTheSame(t *testing.T) {
	var with, without []trace.Row
	eachRow(t, nodeTrace("multinode-ib-5s")+".csv", func(r *trace.Row) { with = append(with, *r) })
	eachRow(t, nodeTrace("multinode-ib-nonic-5s")+".csv", func(r *trace.Row) { without = append(without, *r) })
	require.Len(t, without, len(with))
	for i := range with {
		a, b := with[i], without[i]
		require.NotNil(t, a.Node)
		require.NotEmpty(t, a.Node.NIC)
		require.Empty(t, b.Node.NIC)
		require.Equal(t, a.Node.Pod, b.Node.Pod)
		require.Equal(t, a.Node.BusID, b.Node.BusID)
		a.Node, b.Node, a.Line, b.Line = nil, nil, 0, 0
		require.Equal(t, a, b)
	}
}

// TestDatasetReadIsNotACollective: a dataset read moves one way: the GPUs
// waiting on it are input bound, never communication bound, put down to
// none_found while the NIC has room and to network_saturated once it has
// not.
func TestDatasetReadIsNotACollective(t *testing.T) {
	labels, verdicts := replayLabelled(t, nodeTrace("dataset-read-5s"))
	for _, vs := range verdicts {
		for _, v := range vs {
			require.NotEqual(t, "communication_bound", v.Bottleneck, "%s at %v", v.UUID, v.Time)
		}
	}
	saturated, ethLoad := 0, regexp.MustCompile(`^eth0 at \d+ % of 100 Gb/s`)
	inLabel(labels, verdicts, "cause", "network_saturated", func(v score.Verdict) {
		if ethLoad.MatchString(v.CauseEvidence) {
			saturated++
		}
	})
	require.Positive(t, saturated, "the saturated NIC named")
}

// TestSharedTracesHaveNoCause: a trace without node evidence columns (the
// shared contract's) gets no cause: its replay is as before.
func TestSharedTracesHaveNoCause(t *testing.T) {
	out, stderr, code := runReplay(t, tracePath("p100-no-profiling-15s"))
	require.Equal(t, 0, code, stderr)
	require.NotContains(t, out, `"cause"`)
}
