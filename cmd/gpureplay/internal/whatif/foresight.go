package whatif

import (
	"fmt"
	"math"
	"time"
)

// Foresight: what an autoscaler that knows the demand ahead could spend,
// with the same start-up as everyone else. The contract's ideal
// (max(min_replicas, ceil(demand)) with no start-up delay) is a bound no
// autoscaler whose pods take minutes to start can reach: a burst shorter
// than a start-up costs a pod its whole start-up, and the ideal charges
// it only the burst. The room the acceptance of issue 39 reads (1 − ideal
// / frontier) therefore counts GPU-hours that perfect foresight could not
// save either, and, at a row with SLO minutes, leaves out what violating
// them saves. These runs say what foresight saves at the row's minutes.
//
// The plan works in layers, as pods are interchangeable:
// replicas are layers, layer k wanted while ceil(demand) ≥ k. A layer's
// pod, once its interval of need ends, is kept through a gap no longer
// than the start-up (keeping it costs the gap, letting it go and asking
// again a start-up ahead costs the start-up: the offline ski-rental
// choice) and let go otherwise; it is asked for a start-up before each
// interval it serves. The warm start's pods are ready at t = 0 like the
// settings' own. With no skip this meets every demand with no SLO minute,
// (the by-hand tests check its GPU-hours on bursts and gaps).
// A skip leaves out, above min_replicas, the intervals shorter than it
// (their work waits in the queue): cheaper, with SLO minutes; the skips
// give the foresight's own frontier, placed at the row's SLO minutes like
// the reactive one.

// foresightSkips are the interval lengths the foresight frontier leaves
// out, from none to every one (min_replicas throughout, the least any
// setting spends).
var foresightSkips = []time.Duration{0, 30 * time.Second, time.Minute, 2 * time.Minute,
	5 * time.Minute, 10 * time.Minute, 20 * time.Minute, time.Hour, math.MaxInt64}

// span is [from, to) in seconds.
type span struct{ from, to int }

// layerSpans returns, for each layer k (index k − 1) of the (already
// scaled) demand, the intervals its pod is wanted, gaps no longer than
// the start-up merged in.
func layerSpans(d *Demand, minReplicas, initial, startup int) [][]span {
	n := int(d.End / time.Second)
	need := make([]int, n)
	top, row := 0, 0
	for t := range n {
		k := max(minReplicas, int(ceil(d.At(time.Duration(t)*time.Second, &row))))
		need[t], top = k, max(top, k)
	}
	layers := make([][]span, max(top, initial))
	for k := 1; k <= len(layers); k++ {
		var merged []span
		for t := 0; t < n; {
			if need[t] < k {
				t++
				continue
			}
			from := t
			for t < n && need[t] >= k {
				t++
			}
			// A gap no longer than the start-up is kept through.
			if len(merged) > 0 && from-merged[len(merged)-1].to <= startup {
				merged[len(merged)-1].to = t
				continue
			}
			merged = append(merged, span{from, t})
		}
		layers[k-1] = merged
	}
	return layers
}

// foresightPlan returns the replicas requested at each of n seconds: the
// layers' intervals, each asked for a start-up ahead, with intervals
// shorter than skip left out above minReplicas. initial pods are ready at
// t = 0.
func foresightPlan(layers [][]span, n, minReplicas, initial, startup int, skip time.Duration) []int32 {
	plan := make([]int32, n)
	for i, spans := range layers {
		k := i + 1
		for _, sp := range spans {
			if k > minReplicas && sp.to-sp.from < int(skip/time.Second) {
				continue
			}
			from := sp.from - startup
			if k <= initial && sp.from <= startup {
				// The warm pod is ready at 0: kept until this interval.
				from = 0
			}
			for t := max(from, 0); t < sp.to; t++ {
				plan[t]++
			}
		}
	}
	return plan
}

// Foresight runs the foresight plans of every skip through the contract's
// model, with min_replicas 1 and the start (warm, or cold with opts.Cold)
// of the reactive frontier's runs: one point each.
func Foresight(demand *Demand, opts Options) ([]Point, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	d := opts.demand(demand).Scaled(opts.Scale)
	const minReplicas = 1
	maxReplicas := int32(max(ceil(10*d.Peak()), 1))
	initial, readyAt := warmReplicas(minReplicas, maxReplicas, d.Pods[0]), time.Duration(0)
	if opts.Cold {
		// Cold, nothing is ready at t = 0: the plan asks for every pod.
		initial, readyAt = 0, opts.Startup
	}
	n, s := int(d.End/time.Second), int(opts.Startup/time.Second)
	layers := layerSpans(d, minReplicas, int(initial), s)
	var out []Point
	for _, skip := range foresightSkips {
		plan := foresightPlan(layers, n, minReplicas, int(initial), s, skip)
		sum := runPlan(d, plan, minReplicas, initial, opts, readyAt)
		name := fmt.Sprintf("foresight skip %v", skip)
		if skip == math.MaxInt64 {
			name = "foresight min_replicas only"
		}
		out = append(out, Point{Name: name, Summary: sum})
	}
	return out, nil
}

// runPlan is the contract's fluid model (section 2, section 4's figures)
// with the replicas taken from plan instead of a connector.
func runPlan(d *Demand, plan []int32, minReplicas, initial int32, opts Options, readyAt time.Duration) Summary {
	start := "warm"
	if opts.Cold {
		start = "cold"
	}
	dep := NewDeployment("foresight", initial, opts.Startup, readyAt)
	const dt = time.Second
	var (
		q   queue
		m   meter
		row int
		slo = opts.SLOWait.Seconds()
	)
	for i, now := 0, time.Duration(0); now < d.End; i, now = i+1, now+dt {
		dep.now = now
		if i < len(plan) && plan[i] != dep.Replicas() {
			dep.Scale(plan[i])
		}
		demand := d.At(now, &row)
		c := len(dep.ready())
		q.step(demand, c, dt.Seconds())
		m.step(dep.Replicas(), minReplicas, demand, &q, c, slo, dt.Seconds())
	}
	return m.summary(dep, start, initial)
}
