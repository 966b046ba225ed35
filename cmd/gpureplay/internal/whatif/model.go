// Package whatif replays a demand series through the gpu_autoscale
// connector in a closed loop, as the what-if contract (version 2) fixes
// it: a fluid-queue model of an inference Deployment emits the metrics
// its pods would report, the connector decides the replicas, and the
// model follows.
//
// It is gpureplay's -whatif:
//
//	gpureplay -whatif SETTINGS.yaml [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-cold] [-o FILE] DEMAND.csv
//
// prints one JSON line per evaluation and the summary (Run); every run
// starts warm unless -cold. -compare prints the reactive frontier and the
// saving at equal SLO minutes (Frontier, Envelope, Compare); -table
// [-scales 1,5,20] DEMAND.csv... prints that comparison as a Markdown
// table; -cycle LENGTH,PERIOD lengthens each series with a slow swing
// (Demand.Cycled).
package whatif

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// replica is one pod of the simulated Deployment.
type replica struct {
	ordinal int
	readyAt time.Duration
	// tokens is the pod's vllm:generation_tokens_total: the tokens it has
	// generated since it became ready (spec section 3).
	tokens float64
}

// Deployment is the simulated scale target: replicas serve startup after
// they were requested.
type Deployment struct {
	name     string // pods are NAME-N, N the replica's ordinal
	startup  time.Duration
	now      time.Duration
	replicas []replica
	next     int // the next replica's ordinal

	peak       int32
	ups, downs int
}

// NewDeployment returns a Deployment with n replicas requested at t = 0
// and ready at readyAt: 0 for the warm start, the start-up time for the
// cold one (spec section 2).
func NewDeployment(name string, n int32, startup, readyAt time.Duration) *Deployment {
	d := &Deployment{name: name, startup: startup}
	for range n {
		d.replicas = append(d.replicas, replica{ordinal: d.next, readyAt: readyAt})
		d.next++
	}
	d.peak = n
	return d
}

// warmReplicas is the warm start of spec section 2: enough pods for the
// demand at t = 0 at 80 % load, within the target's bounds:
// max(min_replicas, min(max_replicas, ceil(d0 / 0.8))).
func warmReplicas(minReplicas, maxReplicas int32, d0 float64) int32 {
	n := ceil(d0 / 0.8)
	return max(minReplicas, int32(min(float64(maxReplicas), n)))
}

// ceil is ⌈x⌉ of the contract's exact arithmetic: a demand row times
// -scale, over 0.8, carries float noise in its last bits (8.48 × 5 / 0.8
// is 53.00000000000001 in float64), which must not add a pod. The rows have
// a few decimals, so a relative 1e-12 is far above the noise and far
// below any real fraction of a pod.
func ceil(x float64) float64 { return math.Ceil(x * (1 - 1e-12)) }

// Replicas is the requested count (spec.replicas).
func (d *Deployment) Replicas() int32 { return int32(len(d.replicas)) }

// Scale sets the requested count at the model's current time. New replicas
// are ready startup later; removed ones are, first, those not yet ready
// (the most recently requested first), then the most recently readied
// (spec section 2).
func (d *Deployment) Scale(n int32) {
	n = max(n, 0)
	switch have := int32(len(d.replicas)); {
	case n > have:
		d.ups++
		for range n - have {
			d.replicas = append(d.replicas, replica{ordinal: d.next, readyAt: d.now + d.startup})
			d.next++
		}
		d.peak = max(d.peak, n)
	case n < have:
		d.downs++
		// Latest readiness first: replicas not yet ready are ready later
		// than any ready one; among equals, the newest.
		slices.SortStableFunc(d.replicas, func(a, b replica) int {
			if c := cmp.Compare(a.readyAt, b.readyAt); c != 0 {
				return c
			}
			return cmp.Compare(a.ordinal, b.ordinal)
		})
		d.replicas = d.replicas[:n]
	}
}

// Pods lists the replicas as the connector sees them: all Running (a
// replica not yet ready is loading its model: running, without values).
func (d *Deployment) Pods() []offline.Pod {
	out := make([]offline.Pod, 0, len(d.replicas))
	for _, r := range d.replicas {
		out = append(out, offline.Pod{Name: d.name + "-" + strconv.Itoa(r.ordinal), Phase: "Running"})
	}
	return out
}

// ready returns the indexes of the replicas that serve at the current
// time, in d.replicas.
func (d *Deployment) ready() []int {
	var out []int
	for i, r := range d.replicas {
		if r.readyAt <= d.now {
			out = append(out, i)
		}
	}
	return out
}

// generate adds one step's tokens to every ready pod's counter: 1000
// tokens per second at full load, 1000 × u × dt (spec section 3).
func (d *Deployment) generate(ready []int, u, dt float64) {
	for _, i := range ready {
		d.replicas[i].tokens += tokensPerSecond * u * dt
	}
}

// tokensPerSecond is a busy pod's generation rate (spec section 3): in
// tokens a pod's throughput is constant, whatever the requests' size.
const tokensPerSecond = 1000

// queue is the fluid queue: work arrives at the demand, ready pods serve
// up to 1.0 each per second, and what they cannot serve waits.
type queue struct {
	backlog float64 // B, pod-seconds of work waiting
}

// step advances the queue by dt seconds at the given demand and capacity,
// and returns the load per ready pod u.
func (q *queue) step(demand float64, capacity int, dt float64) float64 {
	a := demand * dt
	c := float64(capacity)
	served := min(q.backlog+a, c*dt)
	q.backlog = q.backlog + a - served
	if capacity == 0 {
		return 0
	}
	return served / (c * dt)
}

// wait is how long newly arriving work waits, in seconds: B / c.
func (q *queue) wait(capacity int) float64 {
	switch {
	case q.backlog == 0:
		return 0
	case capacity == 0:
		return math.Inf(1)
	}
	return q.backlog / float64(capacity)
}

// requestSize is s(t), one request's work in pod-seconds at t (spec
// section 3): 0.05 × m(t), m(t) = 1 + 0.5 sin(2πt/1800) + 0.25
// sin(2πt/420 + 1), between 0.25 and 1.75. The mix of short and long
// requests drifts, so a count of requests is only a proxy for work.
func requestSize(t time.Duration) float64 {
	x := t.Seconds()
	return 0.05 * (1 + 0.5*math.Sin(2*math.Pi*x/1800) + 0.25*math.Sin(2*math.Pi*x/420+1))
}
