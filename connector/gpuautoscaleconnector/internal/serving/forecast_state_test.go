package serving

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A calibrated estimator restarted from its saved state chooses the same
// forecaster with the same headroom as the one that ran on; one started
// afresh is cold: the peak times the cold headroom.
func TestCalibrationSurvivesARestart(t *testing.T) {
	p := params()
	p.Attainment, p.ColdHeadroom, p.ErrorHistory = 0.9, 1.5, 24*time.Hour
	f := newFleet(p)
	for f.s < 6*3600 {
		// A daily cycle with a ripple, so that the forecasters' errors differ.
		r := dailyRate(f.s) * (1 + 0.05*float64(f.s/15%7)/6)
		f.step(rates(4, r), f.s%600 == 0, 4)
	}
	saved, err := f.e.MarshalState()
	require.NoError(t, err)
	t.Logf("six hours of 15 s evaluations, calibrated: %d bytes", len(saved))

	ran, back, cold := restart(t, f, p, saved)
	require.Greater(t, ran.Errors, minErrors)
	require.Equal(t, ran.Forecaster, back.Forecaster, "the calibration survived: the same forecaster is chosen")
	require.InEpsilon(t, ran.Headroom, back.Headroom, 1e-3)
	require.InDelta(t, ran.Errors, back.Errors, 3, "the errors pending at the restart are not kept")
	require.Equal(t, ran.Pods, back.Pods)

	require.Equal(t, ForecastPeak, cold.Forecaster, "afresh: cold")
	require.InDelta(t, 1.5, cold.Headroom, 0, "afresh: the cold headroom")
	require.Zero(t, cold.Errors)
}

// A saved calibration no estimator makes is refused with a reason, and
// the estimator keeps what it had; a state saved before calibrations were
// kept restores with a cold one.
func TestCalibrationStateRefused(t *testing.T) {
	p := params()
	p.Attainment = 0.9
	f := newFleet(p)
	for range 80 {
		f.step(rates(2, 500), true, 2)
	}
	good, err := f.e.MarshalState()
	require.NoError(t, err)
	edit := func(change func(m map[string]any)) []byte { return editState(t, good, change) }
	first := func(m map[string]any) map[string]any { return m["calibration"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name  string
		state []byte
		want  string
	}{
		{"an unknown forecaster", edit(func(m map[string]any) { first(m)["f"] = "oracle" }), `forecaster "oracle"`},
		{"a repeated forecaster", edit(func(m map[string]any) {
			c := m["calibration"].([]any)
			m["calibration"] = append(c, c[0])
		}), "repeats"},
		{"columns of different lengths", edit(func(m map[string]any) { first(m)["b"] = []any{1} }), "times, 1 bases"},
		{"a base of 0", edit(func(m map[string]any) { first(m)["b"].([]any)[0] = 0 }), "entry 0"},
		{"a negative ratio", edit(func(m map[string]any) { first(m)["e"].([]any)[1] = -2 }), "entry 1"},
		{"time going back", edit(func(m map[string]any) { first(m)["t"].([]any)[2] = -15000 }), "time step -15000"},
		{"a negative provision", edit(func(m map[string]any) {
			m["provisions"].([]any)[0].(map[string]any)["v"] = -1
		}), "provisions[0]"},
	} {
		requireRefused(t, p, good, tc.state, tc.want, tc.name)
	}

	old := edit(func(m map[string]any) { delete(m, "calibration"); delete(m, "provisions") })
	e := New(p)
	require.NoError(t, e.RestoreState(old), "a state from before calibrations were kept")
	for _, c := range e.cal.fs {
		require.Empty(t, c.ratios)
	}
}

// A saved state comes from a file a restart reads: whatever it holds,
// restoring it returns an error or an estimator whose own state restores
// again, and never panics.
func FuzzRestoreState(f *testing.F) {
	p := params()
	p.Attainment, p.Seasonal = 0.9, true
	fl := newFleet(p)
	for range 80 {
		fl.step(rates(2, 500+float64(fl.s%45)), fl.s%60 == 0, 2)
	}
	good, err := fl.e.MarshalState()
	require.NoError(f, err)
	f.Add(good)
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"calibration":[{"f":"now","t":[9007199254740992,1],"b":[1,1],"e":[1,1]}]}`))
	f.Add([]byte(`{"v":1,"provisions":[{"t":"2026-01-01T00:00:00Z","v":1e308}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e := New(p)
		if e.RestoreState(b) != nil {
			return
		}
		again, err := e.MarshalState()
		require.NoError(t, err)
		require.NoError(t, New(p).RestoreState(again), "an accepted state saves as one that is accepted")
	})
}
