package whatif

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
)

// Scenario is one demand series at one scale and startup.
type Scenario struct {
	Demand  string
	Scale   float64
	Startup time.Duration
}

// Row is a scenario's comparison.
type Row struct {
	Scenario
	Comparison
	Frontier []Point
}

// Grid is the scenarios of the README's tables: every demand file at each
// scale and startups of 180 s and 600 s.
func Grid(demands []string, scales []float64) []Scenario {
	var out []Scenario
	for _, d := range demands {
		for _, scale := range scales {
			for _, startup := range []time.Duration{180 * time.Second, 600 * time.Second} {
				out = append(out, Scenario{d, scale, startup})
			}
		}
	}
	return out
}

// CompareAll runs the settings and the frontier on every scenario, on
// workers goroutines; rows come back in the scenarios' order. The cycle
// options apply to every demand series.
func CompareAll(settings component.Config, scenarios []Scenario, cycle Options, workers int) (rows []Row, lengths map[string]time.Duration, err error) {
	demands := map[string]*Demand{}
	for _, s := range scenarios {
		if demands[s.Demand] != nil {
			continue
		}
		f, err := os.Open(s.Demand)
		if err != nil {
			return nil, nil, err
		}
		d, err := ReadDemand(f, s.Demand)
		f.Close()
		if err != nil {
			return nil, nil, err
		}
		demands[s.Demand] = cycle.demand(d)
	}
	lengths = map[string]time.Duration{}
	for name, d := range demands {
		lengths[name] = d.End
	}
	rows = make([]Row, len(scenarios))
	errs := make([]error, len(scenarios))
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				s := scenarios[i]
				opts := Options{Startup: s.Startup, Scale: s.Scale}
				frontier, err := Frontier(demands[s.Demand], opts)
				if err != nil {
					errs[i] = err
					continue
				}
				sum, err := Run(settings, demands[s.Demand], opts, nil)
				if err != nil {
					errs[i] = err
					continue
				}
				rows[i] = Row{Scenario: s, Comparison: Compare(sum, frontier), Frontier: frontier}
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
			return nil, nil, err
		}
	}
	return rows, lengths, nil
}

// neverRecovers says that every reactive setting violated the SLO for at
// least 90 % of the series: none catches up (from one replica, with slow
// starts), so there is no frontier to compare with.
func (r Row) neverRecovers(length time.Duration) bool {
	for _, p := range r.Frontier {
		if p.Summary.SLOViolationMinutes < 0.9*length.Minutes() {
			return false
		}
	}
	return true
}

// WriteTable writes the rows as a Markdown table, then the mean saving per
// series and over all rows, leaving out the rows where the frontier never
// recovers. Each row and mean gives both readings of a result with fewer
// SLO minutes than every reactive point: the headline clamps to the point
// with the fewest minutes, the linear reading extends the frontier
// (Comparison.FrontierGPUHoursLinear).
func WriteTable(w io.Writer, rows []Row, lengths map[string]time.Duration) {
	fmt.Fprintln(w, "| demand | scale | startup | GPU-hours | SLO min | frontier GPU-hours at equal SLO | saving | linear reading: frontier GPU-hours, saving | reactive with the fewest SLO min: SLO min, GPU-hours |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var order []string
	sums, linear := map[string][]float64{}, map[string][]float64{}
	var all, allLinear []float64
	skipped := 0
	for _, r := range rows {
		best := r.Frontier[0]
		for _, p := range r.Frontier {
			if s := p.Summary; s.SLOViolationMinutes < best.Summary.SLOViolationMinutes ||
				(s.SLOViolationMinutes == best.Summary.SLOViolationMinutes && s.GPUHours < best.Summary.GPUHours) {
				best = p
			}
		}
		name := filepath.Base(r.Demand)
		frontier, saving := fmt.Sprintf("%.2f", r.FrontierGPUHours), fmt.Sprintf("%.0f %%", 100*r.Saving)
		lin := fmt.Sprintf("%.2f, %.0f %%", r.FrontierGPUHoursLinear, 100*r.SavingLinear)
		if r.Outside != "below" {
			lin = "same"
		}
		switch {
		case r.neverRecovers(lengths[r.Demand]):
			frontier, saving, lin = "none: every reactive setting violates ≥ 90 % of the time", "—", "—"
			skipped++
		case r.Outside == "below":
			frontier += " (fewer SLO min than any reactive setting: its best)"
			fallthrough
		default:
			if _, ok := sums[name]; !ok {
				order = append(order, name)
			}
			sums[name] = append(sums[name], r.Saving)
			linear[name] = append(linear[name], r.SavingLinear)
			all = append(all, r.Saving)
			allLinear = append(allLinear, r.SavingLinear)
		}
		fmt.Fprintf(w, "| %s | %g | %g s | %.2f | %.1f | %s | %s | %s | %.1f, %.2f (%s) |\n",
			name, r.Scale, r.Startup.Seconds(), r.GPUHours, r.SLOViolationMinutes, frontier, saving, lin,
			best.Summary.SLOViolationMinutes, best.Summary.GPUHours, best.Name)
	}
	mean := func(xs []float64) float64 {
		t := 0.0
		for _, x := range xs {
			t += x
		}
		return t / float64(len(xs))
	}
	fmt.Fprintln(w)
	for _, name := range order {
		fmt.Fprintf(w, "- %s: mean saving %.0f %% (lowest %.0f %%) over %d rows; linear reading %.0f %% (lowest %.0f %%)\n",
			name, 100*mean(sums[name]), 100*slices.Min(sums[name]), len(sums[name]), 100*mean(linear[name]), 100*slices.Min(linear[name]))
	}
	if len(all) > 0 {
		fmt.Fprintf(w, "- all: mean saving %.0f %% over %d rows; linear reading %.0f %%", 100*mean(all), len(all), 100*mean(allLinear))
		if skipped > 0 {
			fmt.Fprintf(w, "; %d rows without a frontier left out", skipped)
		}
		fmt.Fprintln(w)
	}
}
