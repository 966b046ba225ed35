package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// restart saves every GPU of a and restores them into a new analyzer.
func restart(t *testing.T, a *Analyzer) *Analyzer {
	t.Helper()
	b := New(a.cfg)
	a.Save(func(id string, state []byte) { require.NoError(t, b.Restore(id, state)) })
	return b
}

// TestRestartKeepsForTimers: an alert pending for 8 of its 10 minutes fires
// 2 minutes after a restart, not 10.
func TestRestartKeepsForTimers(t *testing.T) {
	idle := func(s *Sample) { s.SMActive, s.GPUUtil, s.PodAttributed = 0, 0, true }
	a := New(testConfig())
	v := run(a, "g", 0, 480, idle)
	require.Equal(t, Pending, v.Alerts[GPUIdle])

	a = restart(t, a)
	v = run(a, "g", 540, 599, idle) // a minute down
	require.Equal(t, Pending, v.Alerts[GPUIdle])
	v = run(a, "g", 600, 600, idle)
	require.Equal(t, Firing, v.Alerts[GPUIdle], "600 s after it became pending")
	require.Equal(t, Idle, v.PrevClass, "the class is kept too")

	// A firing alert stays firing, without a second `for`.
	a = restart(t, a)
	v = run(a, "g", 610, 610, idle)
	require.Equal(t, Firing, v.Alerts[GPUIdle])
}

func TestRestartKeepsStragglers(t *testing.T) {
	slow := func(i int, s *Sample) {
		if i == 0 {
			s.Step = 2
		}
	}
	a := New(testConfig())
	v := job(a, 6, 0, 60, slow)
	require.True(t, v["a"].Straggler)
	a = restart(t, a)
	v = job(a, 6, 61, 61, slow)
	require.True(t, v["a"].Straggler, "still a straggler at the first sample after a restart")
	v = job(a, 6, 62, 120, slow)
	require.True(t, v["a"].Straggler)
	require.Equal(t, Firing, v["a"].Alerts[GPUStraggler])
}

func TestRestartKeepsLeakFit(t *testing.T) {
	leak := fb(func(t float64) float64 { return 20480 + 8*t })
	a := New(testConfig())
	_, v := runEvery(a, "g", 0, 1200, 15, leak)
	require.Equal(t, Pending, v.Alerts[GPUMemoryLeak])
	a = restart(t, a)
	firing, _ := runEvery(a, "g", 1215, 1800, 15, leak)
	require.NotEmpty(t, firing)
	require.Equal(t, 1500.0, firing[0], "as if there had been no restart")
}

func TestRestoredStateTooOld(t *testing.T) {
	idle := func(s *Sample) { s.SMActive, s.GPUUtil, s.PodAttributed = 0, 0, true }
	a := New(testConfig())
	run(a, "g", 0, 480, idle)
	a = restart(t, a)
	// Down for longer than the TTL: the GPU starts afresh.
	v := run(a, "g", 1200, 1200, idle)
	require.Equal(t, Pending, v.Alerts[GPUIdle])
	v = run(a, "g", 1201, 1799, idle)
	require.Equal(t, Pending, v.Alerts[GPUIdle], "pending since 1200 s")
}

func TestRestoreBadState(t *testing.T) {
	a := New(testConfig())
	run(a, "g", 0, 10, nil)
	var saved []byte
	a.Save(func(_ string, state []byte) { saved = append([]byte(nil), state...) })
	b := New(testConfig())
	require.ErrorContains(t, b.Restore("g", saved[:len(saved)-3]), "GPU g: truncated or malformed state")
	other := append([]byte{99}, saved[1:]...)
	require.ErrorContains(t, b.Restore("g", other), "state of version 99")
	require.Zero(t, b.Tracked())
	require.NoError(t, b.Restore("g", saved))
	require.Equal(t, 1, b.Tracked())
}

// TestStateEncodingSize: the saved state of a GPU with a full leak fit.
func TestStateEncodingSize(t *testing.T) {
	a := New(testConfig())
	runEvery(a, "g", 0, 3600, 1, fb(func(t float64) float64 { return 20480 + t }))
	var n int
	a.Save(func(_ string, state []byte) { n = len(state) })
	t.Logf("saved state: %d bytes", n)
	require.LessOrEqual(t, n, 2048)
}

// TestRestartStartsUsageAfresh: the usage counters are not kept across a
// restart, so they start at the first sample after it, with a start time of
// their own; the downtime is not counted into them.
func TestRestartStartsUsageAfresh(t *testing.T) {
	a := New(testConfig())
	v := feed(t, a, "g", 0, 100, nil)[100]
	require.Equal(t, 100.0, seconds(v.Usage)[Used])

	a = restart(t, a)
	out := feed(t, a, "g", 700, 760, nil) // ten minutes down
	first, last := out[700], out[760]
	require.Equal(t, [NumUsageStates]float64{}, seconds(first.Usage), "nothing counted at the first sample after the restart")
	require.Equal(t, int64(700e9), first.UsageStart)
	require.Equal(t, 60.0, seconds(last.Usage)[Used], "only the time since the restart")
	require.Equal(t, 0.0, seconds(last.Usage)[UsageUnknown], "the downtime is not in the new counters")
	require.Equal(t, int64(0), last.ClassStart, "the class time is kept, with its start")
}

// TestRestoreVersion1: a state saved before the leak fit worked in bytes
// (version 1, MiB) is read back as the same fit in bytes, exactly.
func TestRestoreVersion1(t *testing.T) {
	a := New(testConfig())
	runEvery(a, "g", 0, 1200, 15, fb(func(t float64) float64 { return 20480 + 8*t }))
	g := a.gpus["g"]
	want := *g.leak

	// The same state as version 1 wrote it: the leak fit in MiB.
	old := *g
	l := *g.leak
	old.leak = &l
	l.free /= mib
	for i := range l.buckets {
		k := &l.buckets[i]
		k.y0, k.sw, k.suw, k.sww = k.y0/mib, k.sw/mib, k.suw/mib, k.sww/mib/mib
	}
	v1 := old.encode(nil)
	v1[0] = 1

	b := New(testConfig())
	require.NoError(t, b.Restore("g", v1))
	got := b.gpus["g"].leak
	require.Equal(t, want.buckets, got.buckets)
	require.Equal(t, want.free, got.free)
	require.Equal(t, want.n, got.n)
}
