// Package whatif replays a demand series through the gpu_autoscale
// connector in a closed loop: a fluid-queue model of an inference
// Deployment emits the metrics its pods would report, the connector
// decides the replicas, and the model follows.
//
// It is gpureplay's -whatif:
//
//	gpureplay -whatif SETTINGS.yaml [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-o FILE] DEMAND.csv
//
// prints one JSON line per evaluation and the summary (Run); -compare
// prints the reactive frontier and the saving at equal SLO minutes
// (Frontier, Compare); -table [-scales 1,5,20] DEMAND.csv... prints that
// comparison as a Markdown table; -cycle LENGTH,PERIOD lengthens each
// series with a slow swing (Demand.Cycled).
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

// NewDeployment returns a Deployment with n replicas, ready from the start.
func NewDeployment(name string, n int32, startup time.Duration) *Deployment {
	d := &Deployment{name: name, startup: startup}
	for range n {
		d.replicas = append(d.replicas, replica{ordinal: d.next})
		d.next++
	}
	d.peak = n
	return d
}

// Replicas is the requested count (spec.replicas).
func (d *Deployment) Replicas() int32 { return int32(len(d.replicas)) }

// Scale sets the requested count at the model's current time. New replicas
// are ready startup later; removed ones are, first, those not yet ready
// (the most recently requested first), then the most recently readied.
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

// ready returns the replicas that serve at the current time.
func (d *Deployment) ready() []replica {
	var out []replica
	for _, r := range d.replicas {
		if r.readyAt <= d.now {
			out = append(out, r)
		}
	}
	return out
}

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
