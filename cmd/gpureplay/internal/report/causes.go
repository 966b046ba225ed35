package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The causes: why a GPU waited or straggled, by its node's evidence (its
// pod's cgroup, its node's pressure, its rail's NIC), as the analyzer puts
// it on a verdict. A trace without node evidence has none, and the page
// and its data are as they were without them.

// CauseSpan is one stretch of time a GPU's verdicts gave the same cause in
// the same class: From is its first verdict, To the first verdict after it
// (an open one, still so at the end, has To at the GPU's last sample).
// Seconds is its GPU time: each verdict counts until the GPU's next
// sample, the last one a sample interval, as the classes' time does.
type CauseSpan struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
	// Class is the verdict's class, as the analyzer names it.
	Class string `json:"class"`
	// Straggler: the cause is the straggler's, found by comparison with
	// its job's other nodes.
	Straggler bool   `json:"straggler,omitempty"`
	Cause     string `json:"cause"`
	// Why is the evidence in words, from the analyzer's log line.
	Why     string  `json:"why,omitempty"`
	Hint    string  `json:"hint,omitempty"`
	Seconds float64 `json:"seconds"`
	From    float64 `json:"from"`
	To      float64 `json:"to"`
	Open    bool    `json:"open,omitempty"`
}

// CauseTotal is the fleet's GPU time on one cause.
type CauseTotal struct {
	Cause string `json:"cause"`
	// Seconds is all of it; StragglerSeconds the part of it the GPUs
	// straggled.
	Seconds          float64 `json:"seconds"`
	StragglerSeconds float64 `json:"straggler_seconds,omitempty"`
	GPUs             int     `json:"gpus"`
	// Classes and Hints are those its spans had, sorted.
	Classes []string `json:"classes"`
	Hints   []string `json:"hints,omitempty"`
}

// addCause extends the GPU's open cause span with the verdict at t, or
// closes it and opens another. It runs before t joins g.t: the previous
// sample's time counts until t.
func (g *gpuTrack) addCause(t float64, v *Verdict) {
	if o := g.openCause; o != nil {
		o.Seconds += t - g.t[len(g.t)-1]
		if v.Cause == o.Cause && v.Class == o.Class && v.Straggler == o.Straggler && v.Why == o.Why {
			return
		}
		o.To = t
		g.causes = append(g.causes, *o)
		g.openCause = nil
	}
	if v.Cause != "" {
		g.openCause = &CauseSpan{Class: v.Class, Straggler: v.Straggler, Cause: v.Cause, Why: v.Why, Hint: v.Hint, From: t}
	}
}

// spans are the GPU's cause spans, the open one closed at its last sample.
func (g *gpuTrack) causeSpans(interval float64) []CauseSpan {
	out := slices.Clone(g.causes)
	if g.openCause != nil {
		s := *g.openCause
		s.To, s.Open, s.Seconds = g.t[len(g.t)-1], true, s.Seconds+interval
		out = append(out, s)
	}
	for i := range out {
		out[i].UUID, out[i].Name = g.id.UUID, g.id.Name
	}
	return out
}

// addCauses puts the GPUs' causes (ids in the lanes' order) into the page's
// data: every span, the fleet's totals, each straggler's cause and a
// sentence in the summary. Without a cause it adds nothing.
func (c *Collector) addCauses(d *Data, ids []string) {
	for _, id := range ids {
		d.Causes = append(d.Causes, c.gpus[id].causeSpans(d.SampleInterval)...)
	}
	if len(d.Causes) == 0 {
		return
	}
	type acc struct {
		CauseTotal
		gpus           map[string]bool
		classes, hints map[string]bool
	}
	by := map[string]*acc{}
	for _, s := range d.Causes {
		a := by[s.Cause]
		if a == nil {
			a = &acc{CauseTotal: CauseTotal{Cause: s.Cause}, gpus: map[string]bool{}, classes: map[string]bool{}, hints: map[string]bool{}}
			by[s.Cause] = a
		}
		a.Seconds += s.Seconds
		if s.Straggler {
			a.StragglerSeconds += s.Seconds
		}
		a.gpus[s.UUID], a.classes[s.Class] = true, true
		if s.Hint != "" {
			a.hints[s.Hint] = true
		}
	}
	for _, a := range by {
		t := a.CauseTotal
		t.GPUs, t.Classes, t.Hints = len(a.gpus), slices.Sorted(maps.Keys(a.classes)), slices.Sorted(maps.Keys(a.hints))
		d.CauseTotals = append(d.CauseTotals, t)
	}
	// The longest first; none_found after every cause that names one.
	slices.SortFunc(d.CauseTotals, func(a, b CauseTotal) int {
		return cmp.Or(cmp.Compare(b2i(a.Cause == noneFound), b2i(b.Cause == noneFound)),
			cmp.Compare(b.Seconds, a.Seconds), strings.Compare(a.Cause, b.Cause))
	})
	for i := range d.Stragglers {
		s := &d.Stragglers[i]
		if best := stragglerCause(d.Causes, s); best != nil {
			s.Cause, s.Why = best.Cause, best.Why
		}
	}
	d.Summary = slices.Insert(d.Summary, summaryAt(d.Summary), d.causeSentence())
}

// noneFound is the cause that says the node's evidence explains nothing.
const noneFound = "none_found"

// stragglerCause is the straggler cause that held longest within the
// straggler's span (the earliest of a tie); nil if none did.
func stragglerCause(spans []CauseSpan, s *Straggler) *CauseSpan {
	var best *CauseSpan
	for i := range spans {
		c := &spans[i]
		if c.UUID != s.UUID || !c.Straggler || c.From < s.From || c.From > s.To {
			continue
		}
		if best == nil || c.Seconds > best.Seconds {
			best = c
		}
	}
	return best
}

// summaryAt is where the causes' sentence goes: after the bottlenecks'.
func summaryAt(summary []string) int {
	for i, s := range summary {
		if strings.HasPrefix(s, "Bottlenecks in GPU time") {
			return i + 1
		}
	}
	return min(1, len(summary))
}

// causeSentence sums the causes up in one sentence.
func (d *Data) causeSentence() string {
	var parts []string
	var unexplained float64
	for _, t := range d.CauseTotals {
		if t.Cause == noneFound {
			unexplained = t.Seconds
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s on %s", t.Cause, duration(t.Seconds), plural(t.GPUs, "GPU")))
	}
	s := "The nodes' evidence explains no wait"
	if len(parts) > 0 {
		s = "Why GPUs waited, by their nodes' evidence, in GPU time: " + strings.Join(parts, ", ")
	}
	if unexplained > 0 {
		s += fmt.Sprintf("; for %s more the evidence was read and explains nothing", duration(unexplained))
	}
	return s + "."
}
