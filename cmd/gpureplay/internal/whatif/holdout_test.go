package whatif

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A row's room is 1 − ideal / the frontier's GPU-hours at its minutes, and
// it is dominated when a reactive point spends no more and violates no
// more, one of the two fewer; equal on both is not dominated.
func TestJudgeByHand(t *testing.T) {
	frontier := []Point{pt("a", 10, 100), pt("b", 30, 40)}
	row := func(slo, h, ideal float64) Row {
		sum := Summary{SLOViolationMinutes: slo, GPUHours: h, IdealGPUHours: ideal}
		return Row{Summary: sum, Comparison: Compare(sum, frontier, 5), Frontier: frontier}
	}
	// At 20 minutes the envelope needs 70 h; the ideal 35 h leaves 50 %.
	h := Judge(row(20, 60, 35))
	require.InDelta(t, 0.5, h.Room, 1e-9)
	require.Empty(t, h.Dominated)
	require.Equal(t, "b", Judge(row(31, 41, 35)).Dominated, "b spends less and violates less")
	require.Equal(t, "b", Judge(row(30, 41, 35)).Dominated, "b spends less at the same minutes")
	require.Empty(t, Judge(row(30, 40, 35)).Dominated, "equal to b on both")
	require.Empty(t, Judge(row(5, 500, 35)).Dominated, "fewer minutes than every point")

	tally := TallyRows([]Row{row(20, 60, 35), row(31, 41, 35), row(20, 80, 35)})
	require.Equal(t, 3, tally.Rows)
	require.Equal(t, 1, tally.NoWorse, "the second is dominated, the third saves less than nothing")
	// Savings: 1 − 60/70, 1 − 41/(40 − 0.3 × 0 ...) and 1 − 80/70.
	var sum, room float64
	for _, r := range []Row{row(20, 60, 35), row(31, 41, 35), row(20, 80, 35)} {
		sum += r.Saving
		room += 1 - 35/r.FrontierGPUHours
	}
	require.InDelta(t, sum, tally.SavingSum, 1e-6)
	require.InDelta(t, room, tally.RoomSum, 1e-6)
	require.Equal(t, sum >= 0.5*room, tally.HalfTheRoomIsClosed)
}

// A row's share of time within the objective is 1 − its SLO minutes over
// the series' length, and its comparison is marked where it is the line
// to a frontier point whose run never scaled up: past the last setting
// that scales, the frontier is a line to one that held its replicas.
func TestJudgeMarksANeverScalingPoint(t *testing.T) {
	scales, holds := pt("scales", 10, 100), pt("holds", 300, 20)
	scales.Summary.ScaleUps = 7
	frontier := []Point{scales, holds}
	row := func(slo float64) Row {
		sum := Summary{SLOViolationMinutes: slo, GPUHours: 50, IdealGPUHours: 20}
		return Row{Summary: sum, Comparison: Compare(sum, frontier, 5), Frontier: frontier, Minutes: 600}
	}
	past := Judge(row(150))
	require.Equal(t, "holds", past.NeverScaled, "between a point that scales and one that never did")
	require.InDelta(t, 0.75, past.WithinObjective, 1e-9)
	require.Empty(t, Judge(row(5)).NeverScaled, "below the frontier: the point with the fewest minutes, which scales")
	require.Empty(t, Judge(row(300)).NeverScaled, "equal to the point that never scaled: compared with it, not a line")
	require.Zero(t, Judge(Row{Summary: Summary{SLOViolationMinutes: 3}}).WithinObjective, "no length known")
	require.Equal(t, 1, TallyRows([]Row{row(150), row(5), row(300)}).NeverScaled)
}

// The room with foresight is the foresight frontier against the reactive
// one at the row's minutes: linear between its points, extended past its
// most minutes but never below its cheapest point.
func TestForesightRoomByHand(t *testing.T) {
	frontier := []Point{pt("a", 10, 100), pt("b", 30, 40)}
	foresight := []Point{pt("skip 0", 0, 50), pt("skip 1m", 20, 30), pt("min only", 40, 20)}
	row := func(slo float64) Row {
		sum := Summary{SLOViolationMinutes: slo, GPUHours: 60, IdealGPUHours: 35}
		return Row{Summary: sum, Comparison: Compare(sum, frontier, 5), Frontier: frontier, Foresight: foresight}
	}
	// At 20 minutes: the reactive envelope 70 h, foresight 30 h.
	require.InDelta(t, 1-30.0/70, Judge(row(20)).ForesightRoom, 1e-6)
	// At 10 minutes: 100 h against foresight's 40 h.
	require.InDelta(t, 0.6, Judge(row(10)).ForesightRoom, 1e-6)
	// At 60 minutes the reactive line is extended to its floor (5 h); the
	// foresight's is held at its cheapest, 20 h: foresight saves nothing.
	require.InDelta(t, 1-20.0/5, Judge(row(60)).ForesightRoom, 1e-6)
	require.Zero(t, Judge(Row{Summary: Summary{GPUHours: 1}, Comparison: Comparison{FrontierGPUHours: 2}}).ForesightRoom, "no foresight run")
	tally := TallyRows([]Row{row(20), row(10)})
	require.InDelta(t, 1-30.0/70+0.6, tally.ForesightRoomSum, 1e-6)
}

// The choice: the most rows no worse than the frontier first, then the
// larger sum of savings; the first given wins a tie.
func TestBetterCandidate(t *testing.T) {
	require.True(t, better(Tally{NoWorse: 3, SavingSum: -1}, Tally{NoWorse: 2, SavingSum: 5}))
	require.True(t, better(Tally{NoWorse: 2, SavingSum: 0.2}, Tally{NoWorse: 2, SavingSum: 0.1}))
	require.False(t, better(Tally{NoWorse: 2, SavingSum: 0.1}, Tally{NoWorse: 2, SavingSum: 0.1}))
}

// A series in both sets, by name or by content, is refused with both names.
func TestHeldOutRefusesASeriesInBothSets(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	a := write("a.csv", "t_seconds,demand_pods\n0,1\n15,2\n")
	b := write("b.csv", "t_seconds,demand_pods\n0,3\n15,2\n")
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o750))
	sameName := filepath.Join(sub, "a.csv")
	require.NoError(t, os.WriteFile(sameName, []byte("t_seconds,demand_pods\n0,9\n15,9\n"), 0o600))
	copyOfB := write("c.csv", "t_seconds,demand_pods\n0,3\n15,2\n")

	require.NoError(t, checkDisjoint([]string{a}, []string{b}))
	err := checkDisjoint([]string{a}, []string{b, sameName})
	require.ErrorContains(t, err, sameName+" is in the choosing set ("+a+")")
	err = checkDisjoint([]string{b}, []string{copyOfB})
	require.ErrorContains(t, err, copyOfB+" has the same content as "+b)
	_, _, _, err = HeldOut([]string{"../../../../examples/autoscaling/llm-serving.yaml"},
		Grid([]string{a}, []float64{1}), Grid([]string{a}, []float64{1}), Options{}, 1)
	require.ErrorContains(t, err, "-holdout:")
}

// End to end on two short series: every candidate runs on the choosing
// set, the chosen one alone on the reported set, and only the reported
// rows are printed, with their room, dominance and the sums.
func TestHeldOutReportsOnlyTheHeldOutRows(t *testing.T) {
	dir := t.TempDir()
	series := func(name string, level func(i int) float64) string {
		var b strings.Builder
		b.WriteString("t_seconds,demand_pods\n")
		for i := range 80 { // 20 minutes
			fmt.Fprintf(&b, "%d,%.3f\n", 15*i, level(i))
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(b.String()), 0o600))
		return p
	}
	choose := series("ramp.csv", func(i int) float64 { return 1 + float64(i)/20 })
	report := series("step.csv", func(i int) float64 { return 2 + 3*float64(i/40) })
	shipped := "../../../../examples/autoscaling/llm-serving.yaml"
	other := filepath.Join(dir, "reactive.yaml")
	require.NoError(t, os.WriteFile(other, []byte(`targets:
  - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm, namespace: serving}
    metric: nvidia.gpu.sm.active
    target_value: 0.6
    min_replicas: 1
    max_replicas: 100
`), 0o600))
	opts := Options{}
	cands, chosen, rows, err := HeldOut([]string{shipped, other}, Grid([]string{choose}, []float64{1}), Grid([]string{report}, []float64{1}), opts, 2)
	require.NoError(t, err)
	require.Len(t, cands, 2)
	require.Len(t, cands[0].Rows, 2, "each candidate at both start-ups of the choosing set")
	want := 0
	if better(TallyRows(cands[1].Rows), TallyRows(cands[0].Rows)) {
		want = 1
	}
	require.Equal(t, want, chosen)
	require.Len(t, rows, 2)
	for _, r := range rows {
		require.Equal(t, report, r.Demand)
	}
	// The chosen settings' rows are theirs: the same as running them alone.
	settings, err := LoadSettings(cands[chosen].Path)
	require.NoError(t, err)
	alone, err := CompareAll(settings, Grid([]string{report}, []float64{1}), opts, 1)
	require.NoError(t, err)
	require.Equal(t, alone[0].Comparison, rows[0].Comparison)

	var out bytes.Buffer
	WriteHeldOut(&out, cands, chosen, []string{choose}, rows, opts)
	text := out.String()
	require.Contains(t, text, "held out: settings chosen on ramp.csv;")
	require.Contains(t, text, "(chosen)")
	require.Contains(t, text, "| SLO min | within the objective | frontier GPU-hours at equal SLO |")
	require.Contains(t, text, "| room (1 − ideal / frontier) | room with foresight | dominated |")
	for _, r := range rows {
		require.InDelta(t, 20, r.Minutes, 1e-9, "the series is 20 minutes long")
		require.Contains(t, text, fmt.Sprintf("| %.1f | %.1f %% |", r.SLOViolationMinutes, 100*(1-r.SLOViolationMinutes/20)))
	}
	require.Contains(t, text, "- sum of room with foresight ")
	for _, r := range rows {
		require.Len(t, r.Foresight, len(foresightSkips), "every row carries the foresight frontier")
	}
	require.Equal(t, 2, strings.Count(text, "| step.csv | 1 |"), "the reported rows")
	require.NotContains(t, text, "| ramp.csv |", "no row of the choosing set")
	require.Contains(t, text, "half the room closed:")
	// The step leaves foresight room, so the report says what share of it
	// half the room is.
	tally := TallyRows(rows)
	require.Positive(t, tally.ForesightRoomSum)
	require.Contains(t, text, fmt.Sprintf("- half the room is %.0f %% of the room with foresight:", 100*0.5*tally.RoomSum/tally.ForesightRoomSum))
	_ = time.Second
}
