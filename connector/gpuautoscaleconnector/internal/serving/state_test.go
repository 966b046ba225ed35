package serving

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// dailyRate is a day's cycle of per-pod tokens per second: low at night,
// a morning ramp.
func dailyRate(s int) float64 {
	h := float64(s%86400) / 3600
	return 400 + 300*math.Max(0, math.Sin((h-6)/24*2*math.Pi))
}

// An estimator restarted from its saved state forecasts as the one that
// ran on: the daily profile, the matured errors' headroom and the learned
// capacity survive the restart. One started afresh knows none of them.
func TestStateSurvivesARestart(t *testing.T) {
	p := params()
	p.Seasonal, p.ColdHeadroom = true, 1.5
	f := newFleet(p)
	const day = 86400
	for f.s < day+7*3600 { // a day and the morning after
		f.step(rates(4, dailyRate(f.s)), f.s%600 == 0, 4)
	}
	saved, err := f.e.MarshalState()
	require.NoError(t, err)
	require.Less(t, len(saved), 1<<20, "a checkpoint stays small")

	ran, back, cold := restart(t, f, p, saved)
	require.Greater(t, ran.Seasonal, 1.0, "the morning ramp is ahead: the profile raises the forecast")
	require.InDelta(t, ran.Seasonal, back.Seasonal, 1e-9, "the daily profile survived")
	// The forecasts pending at the restart are not kept: the three
	// evaluations since matured three errors fewer.
	require.Equal(t, ran.Errors-3, back.Errors, "the matured errors survived")
	require.Greater(t, back.Errors, minErrors)
	require.InEpsilon(t, ran.Headroom, back.Headroom, 0.02)
	require.InDelta(t, ran.Capacity, back.Capacity, 1e-9, "the capacity learned from busy pods survived")
	require.Equal(t, "busy", back.CapacityFrom)
	require.Equal(t, ran.Pods, back.Pods)

	require.InDelta(t, 1, cold.Seasonal, 0, "afresh: no profile")
	require.InDelta(t, 1.5, cold.Headroom, 0, "afresh: the cold headroom")
	require.Zero(t, cold.Errors)
	require.Equal(t, "observed", cold.CapacityFrom)
}

// A saved state that is not one is refused with a reason, and the
// estimator keeps what it had.
func TestStateRefused(t *testing.T) {
	p := params()
	p.Seasonal = true
	f := newFleet(p)
	for range 40 {
		f.step(rates(2, 500), true, 2)
	}
	good, err := f.e.MarshalState()
	require.NoError(t, err)
	edit := func(change func(m map[string]any)) []byte { return editState(t, good, change) }
	for _, tc := range []struct {
		name  string
		state []byte
		want  string
	}{
		{"not JSON", []byte("\x00\x01"), "unreadable"},
		{"another version", edit(func(m map[string]any) { m["v"] = 99 }), "version 99"},
		{"negative capacity", edit(func(m map[string]any) { m["capacity"] = -1 }), "capacity is -1"},
		{"a short profile", edit(func(m map[string]any) {
			m["profile"].(map[string]any)["bins"] = []any{}
		}), "0 bins"},
		{"a negative need", edit(func(m map[string]any) {
			m["history"].([]any)[0].(map[string]any)["n"] = -3
		}), "history[0]"},
	} {
		requireRefused(t, p, good, tc.state, tc.want, tc.name)
	}
}

// editState returns the saved state good with change applied to its JSON.
func editState(t *testing.T, good []byte, change func(m map[string]any)) []byte {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(good, &m))
	change(m)
	b, err := json.Marshal(m)
	require.NoError(t, err)
	return b
}

// requireRefused restores good, then bad, which must be refused with an
// error containing want, the estimator keeping good's state.
func requireRefused(t *testing.T, p Params, good, bad []byte, want, name string) {
	t.Helper()
	e := New(p)
	require.NoError(t, e.RestoreState(good))
	require.ErrorContains(t, e.RestoreState(bad), want, name)
	again, err := e.MarshalState()
	require.NoError(t, err)
	require.JSONEq(t, string(good), string(again), "%s: the estimator kept what it had", name)
}

// restart restores saved into a new estimator and starts another afresh,
// then steps the four pods of f, the restored and the fresh one three
// times (the first evaluation after a restart rates the counters afresh)
// and returns their last estimates.
func restart(t *testing.T, f *fleet, p Params, saved []byte) (ran, back, cold Estimate) {
	t.Helper()
	restored := &fleet{e: New(p), tokens: map[string]float64{}, s: f.s}
	require.NoError(t, restored.e.RestoreState(saved))
	fresh := &fleet{e: New(p), tokens: map[string]float64{}, s: f.s}
	for range 3 {
		r := rates(4, dailyRate(f.s+15))
		ran = f.step(r, false, 4)
		back = restored.step(r, false, 4)
		cold = fresh.step(r, false, 4)
	}
	return ran, back, cold
}
