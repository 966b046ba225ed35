package whatif

import (
	"fmt"
	"slices"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Point is one reactive setting's result.
type Point struct {
	Name    string  `json:"name"`
	Summary Summary `json:"summary"`
	// OnFrontier says the point is on the lower envelope (Envelope).
	OnFrontier bool `json:"on_frontier,omitempty"`
}

// reactiveSetting is one HPA setting of the frontier.
type reactiveSetting struct {
	name string
	m    map[string]any
}

// queueMetric is vLLM's gauge of requests waiting per pod, on which the
// frontier's KEDA-style family scales.
const queueMetric = "vllm:num_requests_waiting"

// reactiveSettings are the HPA settings of the frontier (spec section 5):
// the HPA's algorithm (reactive mode) with its default behavior,
// min_replicas 1 and max_replicas ten times the peak demand, on
//   - nvidia.gpu.sm.active at 0.30, 0.35, ... 0.90 (13 points);
//   - hw.gpu.utilization (hw.gpu.task general) at 0.6, what most users run;
//   - vllm:num_requests_waiting per pod (AverageValue, as KEDA's Prometheus
//     trigger on vLLM's queue) at 1, 2, 5, 10, 20 and 50.
func reactiveSettings(maxReplicas int) []reactiveSetting {
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
	var out []reactiveSetting
	// In hundredths, so that every target is the double nearest its
	// decimal (0.30 + 0.05 + ... would drift).
	for h := 30; h <= 90; h += 5 {
		v := float64(h) / 100
		out = append(out, reactiveSetting{fmt.Sprintf("sm.active %.2f", v), target(metricnames.NvidiaGPUSMActive, v, nil)})
	}
	out = append(out, reactiveSetting{"gpu.utilization 0.6", target(metricnames.HWGPUUtilization, 0.6, map[string]any{metricnames.AttrHWGPUTask: metricnames.AttrHWGPUTaskGeneral})})
	for _, v := range []float64{1, 2, 5, 10, 20, 50} {
		out = append(out, reactiveSetting{fmt.Sprintf("queue %g", v), target(queueMetric, v, nil)})
	}
	return out
}

// Frontier runs the reactive settings of spec section 5 on the demand,
// with the same start (warm, or cold with opts.Cold) as the settings they
// are compared with. Each point says whether it is on the lower envelope.
func Frontier(demand *Demand, opts Options) ([]Point, error) {
	opts = opts.withDefaults()
	maxReplicas := int(ceil(10 * demand.Peak() * opts.Scale))
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
	for _, e := range Envelope(out) {
		for i := range out {
			if out[i].Name == e.Name {
				out[i].OnFrontier = true
			}
		}
	}
	return out, nil
}

// Envelope is the lower envelope of the points (spec section 5): those no
// other point beats on both GPU-hours and SLO-violation minutes (fewer or
// equal on both, fewer on one), by minutes. Between two consecutive
// envelope points every other point needs at least as many GPU-hours as
// the line between them, so the line is what the frontier needs there.
// Of points equal on both, the first in the given order stays.
func Envelope(points []Point) []Point {
	pts := slices.Clone(points)
	// By minutes; at equal minutes the cheaper first; then as given.
	slices.SortStableFunc(pts, func(a, b Point) int {
		if c := cmpFloat(a.Summary.SLOViolationMinutes, b.Summary.SLOViolationMinutes); c != 0 {
			return c
		}
		return cmpFloat(a.Summary.GPUHours, b.Summary.GPUHours)
	})
	var out []Point
	for _, p := range pts {
		// A point with more minutes is on the envelope only if it is
		// strictly cheaper than every point with fewer or equal minutes.
		if len(out) == 0 || p.Summary.GPUHours < out[len(out)-1].Summary.GPUHours {
			out = append(out, p)
		}
	}
	return out
}

// Comparison is the recommended settings against the frontier at equal
// SLO-violation minutes (spec section 5).
type Comparison struct {
	GPUHours            float64 `json:"gpu_hours"`
	SLOViolationMinutes float64 `json:"slo_violation_minutes"`
	// FrontierGPUHours is what the reactive frontier needs for the same
	// SLO-violation minutes.
	FrontierGPUHours float64 `json:"frontier_gpu_hours"`
	// Saving is 1 − GPUHours / FrontierGPUHours.
	Saving float64 `json:"saving"`
	// Between names the frontier points FrontierGPUHours comes from: the
	// two nearest, or the one it equals.
	Between []string `json:"between"`
	// Outside says where the minutes lie outside the frontier's range:
	// "below" (fewer minutes than every reactive point: the frontier
	// point with the fewest minutes, as section 5 says, so the saving
	// claims no more than that point's GPU-hours) or "above" (more minutes
	// than every reactive point: the line through the two envelope points
	// with the most minutes, extended; see Compare).
	Outside string `json:"outside,omitempty"`
}

// Compare places a result against the frontier (spec section 5): linear
// between the two nearest points of the lower envelope; with fewer
// minutes than every point, the point with the fewest minutes. The
// contract does not say what to do with more minutes than every point:
// the envelope's last segment is extended (a reactive setting allowed
// more violations is cheaper still; holding its cheapest point's
// GPU-hours would credit the settings for violating more), but never
// below floorGPUHours, the least any reactive setting can spend
// (min_replicas for the whole series), so that the saving always exists
// and no row has to be left out.
func Compare(rec Summary, frontier []Point, floorGPUHours float64) Comparison {
	env := Envelope(frontier)
	c := Comparison{GPUHours: rec.GPUHours, SLOViolationMinutes: rec.SLOViolationMinutes}
	if len(env) == 0 {
		return c
	}
	x := rec.SLOViolationMinutes
	lerp := func(a, b Point) float64 {
		sa, sb := a.Summary, b.Summary
		return sa.GPUHours + (sb.GPUHours-sa.GPUHours)*(x-sa.SLOViolationMinutes)/(sb.SLOViolationMinutes-sa.SLOViolationMinutes)
	}
	n := len(env)
	switch i, found := slices.BinarySearchFunc(env, x, func(p Point, x float64) int { return cmpFloat(p.Summary.SLOViolationMinutes, x) }); {
	case found:
		c.FrontierGPUHours, c.Between = env[i].Summary.GPUHours, []string{env[i].Name}
	case i == 0:
		c.FrontierGPUHours, c.Between, c.Outside = env[0].Summary.GPUHours, []string{env[0].Name}, "below"
	case i == n:
		c.Outside = "above"
		if n == 1 {
			c.FrontierGPUHours, c.Between = env[0].Summary.GPUHours, []string{env[0].Name}
		} else {
			c.FrontierGPUHours, c.Between = max(floorGPUHours, lerp(env[n-2], env[n-1])), []string{env[n-2].Name, env[n-1].Name}
		}
	default:
		c.FrontierGPUHours, c.Between = lerp(env[i-1], env[i]), []string{env[i-1].Name, env[i].Name}
	}
	if c.FrontierGPUHours > 0 {
		c.Saving = round(1 - c.GPUHours/c.FrontierGPUHours)
	}
	c.FrontierGPUHours = round(c.FrontierGPUHours)
	return c
}

// floorGPUHours is the least GPU-hours any reactive setting of the
// frontier can spend on the demand: min_replicas (1) for its whole length.
func floorGPUHours(d *Demand) float64 { return d.End.Hours() }

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
