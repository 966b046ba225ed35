package whatif

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// Grid is the scenarios of the README's table: every demand file at scales
// 1, 5 and 20 and startups of 180 s and 600 s.
func Grid(demands []string) []Scenario {
	var out []Scenario
	for _, d := range demands {
		for _, scale := range []float64{1, 5, 20} {
			for _, startup := range []time.Duration{180 * time.Second, 600 * time.Second} {
				out = append(out, Scenario{d, scale, startup})
			}
		}
	}
	return out
}

// CompareAll runs the settings and the frontier on every scenario, on
// workers goroutines; rows come back in the scenarios' order.
func CompareAll(settings component.Config, scenarios []Scenario, workers int) ([]Row, error) {
	demands := map[string]*Demand{}
	for _, s := range scenarios {
		if demands[s.Demand] != nil {
			continue
		}
		f, err := os.Open(s.Demand)
		if err != nil {
			return nil, err
		}
		d, err := ReadDemand(f, s.Demand)
		f.Close()
		if err != nil {
			return nil, err
		}
		demands[s.Demand] = d
	}
	rows := make([]Row, len(scenarios))
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
			return nil, err
		}
	}
	return rows, nil
}

// WriteTable writes the rows as a Markdown table, with the mean saving.
func WriteTable(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| demand | scale | startup | GPU-hours | SLO min | frontier GPU-hours at equal SLO | saving | best reactive: SLO min, GPU-hours |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	total := 0.0
	for _, r := range rows {
		best := r.Frontier[0].Summary
		for _, p := range r.Frontier {
			if s := p.Summary; s.SLOViolationMinutes < best.SLOViolationMinutes ||
				(s.SLOViolationMinutes == best.SLOViolationMinutes && s.GPUHours < best.GPUHours) {
				best = s
			}
		}
		note := ""
		if r.Outside != "" {
			note = " (" + r.Outside + ")"
		}
		fmt.Fprintf(w, "| %s | %g | %v | %.2f | %.1f | %.2f%s | %.0f %% | %.1f, %.2f |\n",
			filepath.Base(r.Demand), r.Scale, r.Startup, r.GPUHours, r.SLOViolationMinutes,
			r.FrontierGPUHours, note, 100*r.Saving, best.SLOViolationMinutes, best.GPUHours)
		total += r.Saving
	}
	if len(rows) > 0 {
		fmt.Fprintf(w, "\nMean saving: %.0f %%\n", 100*total/float64(len(rows)))
	}
}
