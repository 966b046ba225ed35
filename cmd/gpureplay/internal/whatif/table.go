package whatif

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
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
	Summary  Summary // the settings' own figures
	Frontier []Point
	// Foresight is the foresight frontier's points (foresight.go).
	Foresight []Point
	// Minutes is the series' length in minutes, of which the SLO minutes
	// are a part.
	Minutes float64
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
// workers goroutines; rows come back in the scenarios' order. Every option
// but the scenario's scale and startup applies to every run: the sample
// interval, the SLO wait, the start (warm, or cold) and the cycle.
func CompareAll(settings component.Config, scenarios []Scenario, base Options, workers int) ([]Row, error) {
	rows, err := compareMany([]component.Config{settings}, scenarios, base, workers)
	if err != nil {
		return nil, err
	}
	return rows[0], nil
}

// readDemands reads each scenario's series once, with the cycle options.
func readDemands(scenarios []Scenario, base Options) (map[string]*Demand, error) {
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
		demands[s.Demand] = base.demand(d)
	}
	return demands, nil
}

// WriteTable writes the rows as a Markdown table after a line that says
// how they were run, then the mean saving per series and over all rows.
// No row is ever left out of a mean (spec section 5): a row whose
// settings serve better than every reactive point is compared with the
// point with the fewest minutes, one that serves worse with the
// envelope's last segment extended, and each row says which.
func WriteTable(w io.Writer, rows []Row, opts Options) {
	opts = opts.withDefaults()
	start := "warm start"
	if opts.Cold {
		start = "cold start (-cold: min_replicas, none ready)"
	}
	fmt.Fprintf(w, "%s, -sample %v, -slo-wait %v; frontier: the %d reactive settings of the contract's section 5\n\n",
		start, opts.Sample, opts.SLOWait, len(reactiveSettings(1)))
	fmt.Fprintln(w, "| demand | scale | startup | GPU-hours | SLO min | frontier GPU-hours at equal SLO | saving | GPU-hours / ideal | frontier points |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	var order []string
	savings, ratios := map[string][]float64{}, map[string][]float64{}
	var all, allRatios []float64
	for _, r := range rows {
		name := filepath.Base(r.Demand)
		frontier := fmt.Sprintf("%.2f", r.FrontierGPUHours)
		switch r.Outside {
		case "below":
			frontier += " (fewer SLO min than every reactive setting: the one with the fewest)"
		case "above":
			frontier += " (more SLO min than every reactive setting: extended)"
		}
		if _, ok := savings[name]; !ok {
			order = append(order, name)
		}
		savings[name] = append(savings[name], r.Saving)
		ratios[name] = append(ratios[name], r.Summary.GPUHoursOverIdeal)
		all = append(all, r.Saving)
		allRatios = append(allRatios, r.Summary.GPUHoursOverIdeal)
		fmt.Fprintf(w, "| %s | %g | %g s | %.2f | %.1f | %s | %.1f %% | %.2f | %s |\n",
			name, r.Scale, r.Startup.Seconds(), r.GPUHours, r.SLOViolationMinutes, frontier, 100*r.Saving,
			r.Summary.GPUHoursOverIdeal, describe(r.Between, r.Frontier))
	}
	fmt.Fprintln(w)
	for _, name := range order {
		fmt.Fprintf(w, "- %s: mean saving %.1f %% (lowest %.1f %%) over %d rows; mean GPU-hours / ideal %.2f\n",
			name, 100*mean(savings[name]), 100*slices.Min(savings[name]), len(savings[name]), mean(ratios[name]))
	}
	if len(all) > 0 {
		fmt.Fprintf(w, "- all: mean saving %.1f %% (lowest %.1f %%) over all %d rows; mean GPU-hours / ideal %.2f\n",
			100*mean(all), 100*slices.Min(all), len(all), mean(allRatios))
	}
}

// describe names the frontier points a comparison used, with their SLO
// minutes and GPU-hours.
func describe(names []string, frontier []Point) string {
	var parts []string
	for _, n := range names {
		for _, p := range frontier {
			if p.Name == n {
				parts = append(parts, fmt.Sprintf("%s: %.1f min, %.2f h", n, p.Summary.SLOViolationMinutes, p.Summary.GPUHours))
			}
		}
	}
	return strings.Join(parts, "; ")
}

func mean(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}
