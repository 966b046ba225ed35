package whatif

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"go.opentelemetry.io/collector/component"
)

// The held-out protocol: settings are chosen on one set of demand series
// and judged on another that the choice never saw. Any number of candidate
// settings files run on the choosing set; the one chosen is run, alone, on
// the reported set, and only the reported rows are printed, each with the
// room the frontier leaves (1 − ideal / frontier) and whether a reactive
// setting dominates it. A series given to both sets, by name or by
// content, is refused: a figure from it would not be held out.

// Candidate is one candidate's result on the choosing set.
type Candidate struct {
	Path string
	Rows []Row
}

// Held is a row's figures beyond the comparison: the room between the
// frontier and the ideal, and whether a reactive point dominates it.
type Held struct {
	// Room is 1 − ideal GPU-hours / the frontier's GPU-hours at the row's
	// SLO minutes: the most any autoscaler could save there.
	Room float64
	// Dominated names a reactive point with no more GPU-hours and no more
	// SLO minutes, one of them fewer ("" when none).
	Dominated string
	// ForesightRoom is 1 − the foresight frontier's GPU-hours / the
	// reactive frontier's, both at the row's SLO minutes: what knowing the
	// demand ahead, with the same start-up, saves there (foresight.go).
	// Below Room where start-ups cost what the ideal does not pay; it can
	// be above it at a row with many SLO minutes.
	ForesightRoom float64
	// WithinObjective is the share of the series' time in which new work
	// waited no longer than the objective (0 when the length is unknown).
	WithinObjective float64
	// NeverScaled names the frontier point whose run never scaled up when
	// the comparison is the line to it ("" when not): past the last setting
	// that scales, the frontier is a line to one that held its replicas.
	NeverScaled string
}

// Judge is the row's room and dominance.
func Judge(r Row) Held {
	h := Held{}
	if r.FrontierGPUHours > 0 {
		h.Room = round(1 - r.Summary.IdealGPUHours/r.FrontierGPUHours)
		if len(r.Foresight) > 0 {
			// Past the foresight's most SLO minutes its line is extended,
			// never below its cheapest point (min_replicas throughout).
			least := r.Foresight[0].Summary.GPUHours
			for _, p := range r.Foresight {
				least = min(least, p.Summary.GPUHours)
			}
			f := Compare(r.Summary, r.Foresight, least)
			h.ForesightRoom = round(1 - f.FrontierGPUHours/r.FrontierGPUHours)
		}
	}
	if r.Minutes > 0 {
		h.WithinObjective = max(0, 1-r.SLOViolationMinutes/r.Minutes)
	}
	// Only a line counts: a row equal to such a point (one pod throughout
	// on a light series) is compared with that point itself.
	for _, p := range r.Frontier {
		if len(r.Between) == 2 && p.Summary.ScaleUps == 0 && slices.Contains(r.Between, p.Name) {
			h.NeverScaled = p.Name
		}
	}
	for _, p := range r.Frontier {
		s := p.Summary
		if s.GPUHours <= r.GPUHours && s.SLOViolationMinutes <= r.SLOViolationMinutes &&
			(s.GPUHours < r.GPUHours || s.SLOViolationMinutes < r.SLOViolationMinutes) {
			h.Dominated = p.Name
			break
		}
	}
	return h
}

// Tally is what the acceptance reads off a set of rows: how many are no
// worse than the frontier (saving ≥ 0 and not dominated), and the sums of
// the savings and of the room.
type Tally struct {
	Rows, NoWorse       int
	SavingSum, RoomSum  float64
	HalfTheRoomIsClosed bool
	ForesightRoomSum    float64
	// NeverScaled counts the rows compared with the line to a reactive
	// setting that never scaled up.
	NeverScaled int
}

// TallyRows sums the rows.
func TallyRows(rows []Row) Tally {
	t := Tally{Rows: len(rows)}
	for _, r := range rows {
		h := Judge(r)
		if r.Saving >= 0 && h.Dominated == "" {
			t.NoWorse++
		}
		t.SavingSum += r.Saving
		t.RoomSum += h.Room
		t.ForesightRoomSum += h.ForesightRoom
		if h.NeverScaled != "" {
			t.NeverScaled++
		}
	}
	t.HalfTheRoomIsClosed = t.SavingSum >= 0.5*t.RoomSum
	return t
}

// better says candidate a is to be chosen over b: more rows no worse than
// the frontier, then the larger sum of savings. The first given wins ties.
func better(a, b Tally) bool {
	if a.NoWorse != b.NoWorse {
		return a.NoWorse > b.NoWorse
	}
	return a.SavingSum > b.SavingSum
}

// checkDisjoint refuses a series given to both sets, by file name or by
// content.
func checkDisjoint(choose, report []string) error {
	sum := func(path string) ([32]byte, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return [32]byte{}, err
		}
		return sha256.Sum256(b), nil
	}
	names := map[string]string{}
	sums := map[[32]byte]string{}
	for _, c := range choose {
		s, err := sum(c)
		if err != nil {
			return err
		}
		names[filepath.Base(c)], sums[s] = c, c
	}
	for _, r := range report {
		s, err := sum(r)
		if err != nil {
			return err
		}
		if c, ok := names[filepath.Base(r)]; ok {
			return fmt.Errorf("-holdout: %s is in the choosing set (%s) and in the reported set: a held-out series is one the choice never saw", r, c)
		}
		if c, ok := sums[s]; ok {
			return fmt.Errorf("-holdout: %s has the same content as %s of the choosing set: a held-out series is one the choice never saw", r, c)
		}
	}
	return nil
}

// HeldOut runs the protocol: every candidate on the choosing grid, the
// chosen one on the reported grid. It returns the candidates (in the order
// given), the index of the chosen one and the reported rows.
func HeldOut(candidates []string, choose, report []Scenario, base Options, workers int) ([]Candidate, int, []Row, error) {
	var cf, rf []string
	for _, s := range choose {
		cf = append(cf, s.Demand)
	}
	for _, s := range report {
		rf = append(rf, s.Demand)
	}
	if err := checkDisjoint(cf, rf); err != nil {
		return nil, 0, nil, err
	}
	cfgs := make([]component.Config, len(candidates))
	for i, path := range candidates {
		cfg, err := LoadSettings(path)
		if err != nil {
			return nil, 0, nil, err
		}
		cfgs[i] = cfg
	}
	rows, err := compareMany(cfgs, choose, base, workers)
	if err != nil {
		return nil, 0, nil, err
	}
	out := make([]Candidate, len(candidates))
	best := 0
	for i := range candidates {
		out[i] = Candidate{Path: candidates[i], Rows: rows[i]}
		if better(TallyRows(rows[i]), TallyRows(rows[best])) {
			best = i
		}
	}
	reported, err := CompareAll(cfgs[best], report, base, workers)
	if err != nil {
		return nil, 0, nil, err
	}
	return out, best, reported, nil
}

// compareMany is CompareAll for several settings, the frontier of each
// scenario run once for all of them.
func compareMany(cfgs []component.Config, scenarios []Scenario, base Options, workers int) ([][]Row, error) {
	demands, err := readDemands(scenarios, base)
	if err != nil {
		return nil, err
	}
	rows := make([][]Row, len(cfgs))
	for i := range rows {
		rows[i] = make([]Row, len(scenarios))
	}
	errs := make([]error, len(scenarios))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := scenarios[i]
				opts := base
				opts.Startup, opts.Scale = s.Startup, s.Scale
				d := demands[s.Demand]
				frontier, foresight, err := scenarioPoints(d, s.Demand, opts)
				if err != nil {
					errs[i] = err
					continue
				}
				for c, cfg := range cfgs {
					sum, err := Run(cfg, d, opts, nil)
					if err != nil {
						errs[i] = err
						break
					}
					rows[c][i] = Row{Scenario: s, Summary: sum, Comparison: Compare(sum, frontier, floorGPUHours(d)), Frontier: frontier, Foresight: foresight, Minutes: d.End.Minutes()}
				}
			}
		}()
	}
	for i := range scenarios {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// WriteHeldOut prints how the settings were chosen (each candidate's tally
// on the choosing set, not its rows), then the reported rows alone, each
// with its room and dominance, and the acceptance's sums.
func WriteHeldOut(w io.Writer, candidates []Candidate, chosen int, choose []string, rows []Row, opts Options) {
	opts = opts.withDefaults()
	start := "warm start"
	if opts.Cold {
		start = "cold start (-cold: min_replicas, none ready)"
	}
	var names []string
	for _, c := range choose {
		names = append(names, filepath.Base(c))
	}
	fmt.Fprintf(w, "held out: settings chosen on %s; the rows below are of series the choice never saw\n\n", strings.Join(names, ", "))
	for i, c := range candidates {
		t := TallyRows(c.Rows)
		mark := ""
		if i == chosen {
			mark = " (chosen)"
		}
		fmt.Fprintf(w, "- candidate %s%s: %d of %d choosing rows no worse than the frontier, sum of savings %.1f %%, sum of room %.1f %%\n",
			filepath.Base(c.Path), mark, t.NoWorse, t.Rows, 100*t.SavingSum, 100*t.RoomSum)
	}
	fmt.Fprintf(w, "\n%s, -sample %v, -slo-wait %v; frontier: the %d reactive settings of the contract's section 5\n\n",
		start, opts.Sample, opts.SLOWait, len(reactiveSettings(1)))
	fmt.Fprintln(w, "| demand | scale | startup | GPU-hours | SLO min | within the objective | frontier GPU-hours at equal SLO | saving | room (1 − ideal / frontier) | room with foresight | dominated | GPU-hours / ideal |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rows {
		h := Judge(r)
		frontier := fmt.Sprintf("%.2f", r.FrontierGPUHours)
		switch r.Outside {
		case "below":
			frontier += " (fewer SLO min than every reactive setting)"
		case "above":
			frontier += " (more SLO min than every reactive setting: extended)"
		}
		if h.NeverScaled != "" {
			frontier += " (on the line to " + h.NeverScaled + ", which never scaled up)"
		}
		dominated := "no"
		if h.Dominated != "" {
			dominated = "by " + h.Dominated
		}
		fmt.Fprintf(w, "| %s | %g | %g s | %.2f | %.1f | %.1f %% | %s | %.1f %% | %.1f %% | %.1f %% | %s | %.2f |\n",
			filepath.Base(r.Demand), r.Scale, r.Startup.Seconds(), r.GPUHours, r.SLOViolationMinutes, 100*h.WithinObjective, frontier,
			100*r.Saving, 100*h.Room, 100*h.ForesightRoom, dominated, r.Summary.GPUHoursOverIdeal)
	}
	t := TallyRows(rows)
	verdict := "no"
	if t.HalfTheRoomIsClosed {
		verdict = "yes"
	}
	fmt.Fprintf(w, "\n- %d of %d rows no worse than the frontier (saving ≥ 0, not dominated)\n", t.NoWorse, t.Rows)
	if t.NeverScaled > 0 {
		// Past the last reactive setting that scales up, the frontier is
		// a line to one that held its replicas throughout, breaking the
		// objective nearly all the time: a saving there is partly against
		// that line, not against a setting one would run.
		fmt.Fprintf(w, "- %d of %d rows lie on the line to a reactive setting that never scaled up: part of their saving is against that line\n", t.NeverScaled, t.Rows)
	}
	fmt.Fprintf(w, "- sum of savings %.1f %% against half the sum of room %.1f %% (sum of room %.1f %%): half the room closed: %s\n",
		100*t.SavingSum, 50*t.RoomSum, 100*t.RoomSum, verdict)
	fmt.Fprintf(w, "- sum of room with foresight %.1f %%: what knowing the demand ahead saves at each row's SLO minutes with the same start-ups (foresight.go); the ideal pays no start-up and violates no SLO, so the room can be more or less than this\n",
		100*t.ForesightRoomSum)
	if t.ForesightRoomSum > 0 {
		// How far the goal is from what no forecast can beat: a share
		// near or past 100 % asks a causal autoscaler for what only
		// knowing the demand ahead would save.
		fmt.Fprintf(w, "- half the room is %.0f %% of the room with foresight: the share of what knowing the demand ahead saves that the goal asks for\n",
			100*0.5*t.RoomSum/t.ForesightRoomSum)
	}
}
