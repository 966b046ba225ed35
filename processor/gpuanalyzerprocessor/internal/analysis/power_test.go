package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// noProfiling shapes a sample as nvidia-smi or dcgm-exporter without
// profiling fields give it: utilization, power, memory; the reference
// power as the processor's table would give an H100 (0: unknown).
func noProfiling(util, watts, ref float64) func(*Sample) {
	return func(s *Sample) {
		s.Has = HasGPUUtil | HasPower | HasFBUsed
		s.GPUUtil, s.Power, s.RefPower, s.FBUsed = util, watts, ref, 40<<30
	}
}

func TestPowerRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mod   func(*Sample)
		class Class
		state UsageState
		hint  Hint
	}{
		{"waiting alone: fake load", noProfiling(1, 150, 700), LaunchBound, Waiting, UseCUDAGraphs},
		{"working: busy at high power", noProfiling(0.9, 550, 700), Unknown, Used, NoHint},
		{"between the bands", noProfiling(0.9, 280, 700), Unknown, Used, NoHint},
		{"moderate utilization at low power", noProfiling(0.5, 150, 700), Unknown, Used, NoHint},
		{"idle by utilization", noProfiling(0.01, 150, 700), Idle, ClusterIdle, NoHint},
		{"no power: no guess", func(s *Sample) { noProfiling(1, 0, 700)(s); s.Has &^= HasPower }, Unknown, Used, NoHint},
		{"power limit 0, unknown model, never worked", noProfiling(1, 150, 0), Unknown, Used, NoHint},
		{"power only, working", func(s *Sample) { noProfiling(0, 550, 700)(s); s.Has &^= HasGPUUtil }, Unknown, Used, NoHint},
		{"power only, idle", func(s *Sample) { noProfiling(0, 70, 700)(s); s.Has &^= HasGPUUtil }, Idle, ClusterIdle, NoHint},
		{"power only, cannot tell", func(s *Sample) { noProfiling(0, 200, 700)(s); s.Has &^= HasGPUUtil }, Unknown, UsageUnknown, NoHint},
		{"profiling decides", func(s *Sample) { noProfiling(1, 150, 700)(s); s.Has |= HasSMActive; s.SMActive = 0.9 }, ComputeBound, Used, NoHint},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := feed(t, New(testConfig()), "g", 0, 60, tc.mod)
			require.Equal(t, tc.class, v[60].Class)
			require.Equal(t, tc.hint, v[60].Hint)
			var want [NumUsageStates]float64
			want[tc.state] = 60
			require.Equal(t, want, seconds(v[60].Usage))
		})
	}
}

// TestLearntReference: a GPU whose model the table does not know learns its
// reference once it has drawn three times its least: before, a wait at 150 W
// is no evidence (it might be all the GPU ever draws); after it has worked
// at 550 W, the same wait is one.
func TestLearntReference(t *testing.T) {
	a := New(testConfig())
	v := feed(t, a, "g", 0, 60, noProfiling(1, 150, 0))
	require.Equal(t, Unknown, v[60].Class, "never seen at work: no reference")
	feed(t, a, "g", 61, 120, noProfiling(0.9, 550, 0))
	v = feed(t, a, "g", 121, 200, noProfiling(1, 150, 0))
	require.Equal(t, LaunchBound, v[200].Class, "550 W learnt: 150 W is a wait")
	require.Equal(t, Waiting, v[200].Usage.State)
}

// TestHolderAndWaitingPeers: eight GPUs of one job; seven spin in a
// collective at 150 W while the eighth, near idle with its memory
// allocated, writes a checkpoint. The seven are communication_bound and
// waiting, pointed at the straggler, never stragglers themselves; the
// eighth is the straggler once it has held them for the sustain time, with
// reduce_host_work. Without its memory, it gets no hint.
func TestHolderAndWaitingPeers(t *testing.T) {
	for _, fb := range []float64{40 << 30, 0} {
		a := New(testConfig())
		var last map[string]Verdict
		for ts := 0; ts <= 40; ts++ {
			last = map[string]Verdict{}
			for i := range 8 {
				id := string(rune('a' + i))
				s := busy(float64(ts))
				if i == 0 {
					noProfiling(0.02, 146, 700)(&s)
					s.FBUsed = fb
				} else {
					noProfiling(1, 150, 700)(&s)
				}
				s.Group = "ml\x00llm"
				require.Equal(t, Accepted, a.Ingest(id, &s))
			}
			a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
		}
		holder := last["a"]
		require.True(t, holder.Straggler)
		require.Equal(t, Idle, holder.Class)
		for i := 1; i < 8; i++ {
			v := last[string(rune('a'+i))]
			require.Equal(t, CommunicationBound, v.Class)
			require.Equal(t, FixStraggler, v.Hint)
			require.Equal(t, Waiting, v.Usage.State)
			require.False(t, v.Straggler, "waiting peers are never stragglers")
			require.Zero(t, v.Score)
		}
		if fb > 0 {
			require.Equal(t, ReduceHostWork, holder.Hint, "memory held: host-side work")
		} else {
			require.Equal(t, NoHint, holder.Hint)
		}
	}
}

// TestPowerStraggler: eight GPUs of one synchronous job without profiling
// fields. The ranks that finish their step first spin in the collective at
// low power until the slow one arrives, so over the window they draw less
// than it does: the rank that works while its peers draw less is the
// straggler. Its peers are not, nor is a rank within min_power_deviation
// of them, one that draws less, one that does not work, or any GPU whose
// SM activity is reported (profiling decides there).
func TestPowerStraggler(t *testing.T) {
	const ref = 700
	for _, tc := range []struct {
		name             string
		peerW, oddW      float64
		util             float64 // 0: power alone, as W&B reports it
		profiled         bool
		want             bool
		wantScoreAtLeast float64
	}{
		// Peers busy 60 % of each step at 560 W and spinning the rest at
		// 150 W: 396 W; the slow rank works throughout.
		{name: "slow rank", peerW: 396, oddW: 600, util: 1, want: true, wantScoreAtLeast: 2.5},
		{name: "power alone", peerW: 396, oddW: 600, want: true, wantScoreAtLeast: 2.5},
		{name: "within the minimum deviation", peerW: 500, oddW: 560, util: 1},
		{name: "draws less than its peers", peerW: 560, oddW: 396, util: 1},
		{name: "not working", peerW: 70, oddW: 280, util: 1},
		{name: "profiled", peerW: 396, oddW: 600, util: 1, profiled: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(testConfig())
			var last map[string]Verdict
			for ts := 0; ts <= 40; ts++ {
				last = map[string]Verdict{}
				for i := range 8 {
					s := busy(float64(ts))
					watts := tc.peerW
					if i == 0 {
						watts = tc.oddW
					}
					if tc.profiled {
						s.Has |= HasPower
						s.Power, s.RefPower = watts, ref
					} else {
						noProfiling(tc.util, watts, ref)(&s)
						if tc.util == 0 {
							s.Has &^= HasGPUUtil
						}
					}
					s.Group = "ml\x00llm"
					require.Equal(t, Accepted, a.Ingest(string(rune('a'+i)), &s))
				}
				a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
			}
			odd := last["a"]
			require.Equal(t, tc.want, odd.Straggler, "score %v", odd.Score)
			require.GreaterOrEqual(t, odd.Score, tc.wantScoreAtLeast)
			for i := 1; i < 8; i++ {
				v := last[string(rune('a'+i))]
				require.False(t, v.Straggler, "peer %d", i)
				require.Less(t, v.Score, 1.0, "peer %d", i)
			}
		})
	}
}
