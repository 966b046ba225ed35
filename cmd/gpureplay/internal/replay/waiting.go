package replay

import (
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// waitTally answers, per job (the analyzer's peer group), how much of its
// GPU time waited and on which GPU: each interval between two batches goes
// to what the group's GPUs were at the first of them, as the analyzer's
// usage counters do. A waiting GPU's interval is held by each GPU that was
// a straggler of its group then.
type waitTally struct {
	groupBy []string
	groups  map[string]*waitGroup
	// at the previous batch
	last    float64
	started bool
	prev    map[string]*waitSnapshot
}

type waitGroup struct {
	gpus            map[string]bool
	gpuSec, waitSec float64
	heldBy          map[string]float64
}

type waitSnapshot struct {
	gpus, waiting int
	stragglers    []string
}

func newWaitTally(groupBy []string) *waitTally {
	return &waitTally{groupBy: groupBy, groups: map[string]*waitGroup{}}
}

// groupOf is the row's peer group as the analyzer forms it from the
// group_by attributes that a trace carries; "" without all of them.
func (w *waitTally) groupOf(r *trace.Row) string {
	parts := make([]string, 0, len(w.groupBy))
	for _, attr := range w.groupBy {
		var v string
		switch attr {
		case metricnames.AttrK8sNamespaceName:
			v = r.Namespace
		case metricnames.AttrK8sJobName:
			v = r.Job
		case metricnames.AttrHostName:
			v = r.Host
		case metricnames.AttrK8sPodName:
			v = r.Pod
		case metricnames.AttrK8sContainerName:
			v = r.Container
		case metricnames.AttrK8sDeploymentName:
			v = r.Deployment
		}
		if v == "" {
			return ""
		}
		parts = append(parts, v)
	}
	return strings.Join(parts, "/")
}

// add takes a batch's rows and their verdicts.
func (w *waitTally) add(t float64, rows []trace.Row, vs []verdict) {
	if w.started {
		dt := t - w.last
		for key, s := range w.prev {
			g := w.groups[key]
			g.gpuSec += float64(s.gpus) * dt
			g.waitSec += float64(s.waiting) * dt
			for _, id := range s.stragglers {
				g.heldBy[id] += float64(s.waiting) * dt
			}
		}
	}
	w.started, w.last, w.prev = true, t, map[string]*waitSnapshot{}
	for i := range rows {
		key := w.groupOf(&rows[i])
		if key == "" {
			continue
		}
		g := w.groups[key]
		if g == nil {
			g = &waitGroup{gpus: map[string]bool{}, heldBy: map[string]float64{}}
			w.groups[key] = g
		}
		g.gpus[rows[i].UUID] = true
		s := w.prev[key]
		if s == nil {
			s = &waitSnapshot{}
			w.prev[key] = s
		}
		s.gpus++
		if vs[i].usage == "waiting" {
			s.waiting++
		}
		if vs[i].straggler {
			s.stragglers = append(s.stragglers, rows[i].UUID)
		}
	}
}

// Write prints one line per group whose GPUs waited:
//
//	{"summary": "waiting", "job": "ml/llm", "gpus": 8, "gpu_hours": 1.5, "waiting_hours": 0.6, "waiting_share": 0.4, "waited_on": {"GPU-...": 0.95}}
//
// waited_on gives, for each GPU that was a straggler of the job while
// others waited, the share of the waiting time it held.
func (w *waitTally) Write(out io.Writer) error {
	for _, key := range slices.Sorted(maps.Keys(w.groups)) {
		g := w.groups[key]
		if g.waitSec <= 0 {
			continue
		}
		b := []byte(`{"summary": "waiting", "job": `)
		b = appendJSONString(b, key)
		b = append(b, `, "gpus": `...)
		b = appendRounded(b, float64(len(g.gpus)), 1)
		b = append(b, `, "gpu_hours": `...)
		b = appendRounded(b, g.gpuSec/3600, 1e6)
		b = append(b, `, "waiting_hours": `...)
		b = appendRounded(b, g.waitSec/3600, 1e6)
		b = append(b, `, "waiting_share": `...)
		b = appendRounded(b, g.waitSec/g.gpuSec, 1e4)
		b = append(b, `, "waited_on": {`...)
		for i, id := range slices.Sorted(maps.Keys(g.heldBy)) {
			b = appendKey(b, i, id)
			b = appendRounded(b, g.heldBy[id]/g.waitSec, 1e4)
		}
		b = append(b, "}}\n"...)
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}
