package whatif

import (
	"fmt"
	"math"
	"slices"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Point is one reactive setting's result.
type Point struct {
	Name    string  `json:"name"`
	Summary Summary `json:"summary"`
}

// reactiveSettings are the HPA settings of the frontier (spec section 5):
// SM activity at targets 0.5 to 0.9 and GPU_UTIL at 0.6, default behavior,
// min 1, max ten times the peak demand.
func reactiveSettings(maxReplicas int) []struct {
	name string
	m    map[string]any
} {
	target := func(metric string, value float64, attrs map[string]any) map[string]any {
		t := map[string]any{
			"scale_target_ref": map[string]any{"api_version": "apps/v1", "kind": "Deployment", "name": "llm", "namespace": "serving"},
			"metric":           metric,
			"target_value":     value,
			"min_replicas":     1,
			"max_replicas":     maxReplicas,
		}
		if attrs != nil {
			t["metric_attributes"] = attrs
		}
		return map[string]any{"targets": []any{t}}
	}
	var out []struct {
		name string
		m    map[string]any
	}
	for _, v := range []float64{0.5, 0.6, 0.7, 0.8, 0.9} {
		out = append(out, struct {
			name string
			m    map[string]any
		}{fmt.Sprintf("sm.active %.1f", v), target(metricnames.NvidiaGPUSMActive, v, nil)})
	}
	out = append(out, struct {
		name string
		m    map[string]any
	}{"gpu.utilization 0.6", target(metricnames.HWGPUUtilization, 0.6, map[string]any{metricnames.AttrHWGPUTask: metricnames.AttrHWGPUTaskGeneral})})
	return out
}

// Frontier runs the reactive settings of spec section 5 on the demand.
func Frontier(demand *Demand, opts Options) ([]Point, error) {
	opts = opts.withDefaults()
	maxReplicas := int(math.Ceil(10 * demand.Peak() * opts.Scale))
	var out []Point
	for _, s := range reactiveSettings(max(maxReplicas, 1)) {
		cfg, err := components.AutoscaleSettings(s.m)
		if err != nil {
			return nil, err
		}
		sum, err := Run(cfg, demand, opts, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		out = append(out, Point{Name: s.name, Summary: sum})
	}
	return out, nil
}

// Comparison is the recommended settings against the frontier at equal
// SLO-violation minutes.
type Comparison struct {
	GPUHours            float64 `json:"gpu_hours"`
	SLOViolationMinutes float64 `json:"slo_violation_minutes"`
	// FrontierGPUHours is what the reactive frontier needs for the same
	// SLO-violation minutes: linear between the two nearest reactive points.
	FrontierGPUHours float64 `json:"frontier_gpu_hours"`
	// Saving is 1 − GPUHours / FrontierGPUHours.
	Saving float64 `json:"saving"`
	// Outside says where the SLO minutes lie outside the frontier's range:
	// "below" (better service than every reactive point: the frontier value
	// is then that of the point with the fewest minutes, a lower bound) or
	// "above" (worse than every reactive point: extrapolated linearly from
	// the two with the most minutes, at least 0).
	Outside string `json:"outside,omitempty"`
	// FrontierGPUHoursLinear and SavingLinear read "linear between the two
	// nearest reactive points" literally also below the range: the line
	// through the two points of the Pareto frontier (no other point has
	// both fewer minutes and fewer GPU-hours) with the fewest minutes,
	// extended to the settings' minutes. Where that line does not fall as
	// minutes grow (one point, or a flat or rising pair), it is the clamp.
	// Inside the range and above it they equal the headline figures.
	FrontierGPUHoursLinear float64 `json:"frontier_gpu_hours_linear"`
	SavingLinear           float64 `json:"saving_linear"`
}

// Compare places a result against the frontier.
func Compare(rec Summary, frontier []Point) Comparison {
	pts := make([]Summary, 0, len(frontier))
	for _, p := range frontier {
		pts = append(pts, p.Summary)
	}
	// By SLO minutes; at equal minutes the cheaper point first.
	slices.SortFunc(pts, func(a, b Summary) int {
		if a.SLOViolationMinutes != b.SLOViolationMinutes {
			return cmpFloat(a.SLOViolationMinutes, b.SLOViolationMinutes)
		}
		return cmpFloat(a.GPUHours, b.GPUHours)
	})
	pts = slices.CompactFunc(pts, func(a, b Summary) bool { return a.SLOViolationMinutes == b.SLOViolationMinutes })
	c := Comparison{GPUHours: rec.GPUHours, SLOViolationMinutes: rec.SLOViolationMinutes}
	x := rec.SLOViolationMinutes
	lerp := func(a, b Summary) float64 {
		return a.GPUHours + (b.GPUHours-a.GPUHours)*(x-a.SLOViolationMinutes)/(b.SLOViolationMinutes-a.SLOViolationMinutes)
	}
	n := len(pts)
	switch {
	case n == 0:
		return c
	case x < pts[0].SLOViolationMinutes:
		c.FrontierGPUHours, c.Outside = pts[0].GPUHours, "below"
	case x > pts[n-1].SLOViolationMinutes:
		c.Outside = "above"
		c.FrontierGPUHours = pts[n-1].GPUHours
		if n > 1 {
			c.FrontierGPUHours = max(0, lerp(pts[n-2], pts[n-1]))
		}
	default:
		i, found := slices.BinarySearchFunc(pts, x, func(p Summary, x float64) int { return cmpFloat(p.SLOViolationMinutes, x) })
		if found {
			c.FrontierGPUHours = pts[i].GPUHours
		} else {
			c.FrontierGPUHours = lerp(pts[i-1], pts[i])
		}
	}
	c.FrontierGPUHoursLinear = c.FrontierGPUHours
	if c.Outside == "below" {
		c.FrontierGPUHoursLinear = extrapolateBelow(pts, x)
	}
	c.Saving = saving(c.GPUHours, c.FrontierGPUHours)
	c.SavingLinear = saving(c.GPUHours, c.FrontierGPUHoursLinear)
	c.FrontierGPUHours = round(c.FrontierGPUHours)
	c.FrontierGPUHoursLinear = round(c.FrontierGPUHoursLinear)
	return c
}

// extrapolateBelow extends the line through the two Pareto-optimal points
// with the fewest SLO minutes to x minutes, fewer than any point has. pts
// are sorted by minutes, the cheaper first at equal minutes. Where the line
// does not rise towards fewer minutes, the answer is the clamp: the first
// point's GPU-hours.
func extrapolateBelow(pts []Summary, x float64) float64 {
	// The Pareto frontier from the fewest minutes: each next point must be
	// strictly cheaper than every point before it.
	var pareto []Summary
	for _, p := range pts {
		if len(pareto) == 0 || p.GPUHours < pareto[len(pareto)-1].GPUHours {
			pareto = append(pareto, p)
		}
	}
	a := pts[0]
	if len(pareto) < 2 {
		return a.GPUHours
	}
	b := pareto[1]
	slope := (b.GPUHours - a.GPUHours) / (b.SLOViolationMinutes - a.SLOViolationMinutes)
	if !(slope < 0) {
		return a.GPUHours
	}
	return a.GPUHours + slope*(x-a.SLOViolationMinutes)
}

func saving(hours, frontier float64) float64 {
	if frontier > 0 {
		return round(1 - hours/frontier)
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
