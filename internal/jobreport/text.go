package jobreport

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
)

// Report is a job's facts with the advice drawn from them: what every
// output shows.
type Report struct {
	Facts
	Advice []Advice `json:"advice"`
}

// Build takes the job's facts and advice; running says the job has not
// ended (no advice on its time limit then).
func (j *Job) Build(running bool, timeLimit float64) Report {
	f := j.Facts()
	f.Running, f.TimeLimit = running, timeLimit
	return Report{Facts: f, Advice: Advise(&f)}
}

const rule = "================================================================================"

// WriteText prints the report for a terminal, in jobstats' layout (a
// header of facts, utilization per GPU, notes) with this product's
// sections between: bottlenecks, causes, stragglers, usage and cost,
// alerts and incidents. Every figure the advice quotes is in a section
// above it.
func WriteText(w io.Writer, r *Report) error {
	b := &strings.Builder{}
	f := &r.Facts
	title(b, "Job Report")
	kv := func(k, format string, args ...any) { fmt.Fprintf(b, "%17s: %s\n", k, fmt.Sprintf(format, args...)) }
	kv("Job", "%s", f.Job.String())
	kv("Scheduler", "%s", f.Job.Scheduler)
	state := "ended"
	if f.Running {
		state = "running"
	}
	kv("State", "%s", state)
	kv("Nodes", "%d", len(f.Nodes))
	kv("GPUs", "%d (%s)", f.GPUs, perNode(f))
	kv("Start", "%s UTC", Clock(f.Start))
	kv("Run Time", "%s", Duration(f.RunSeconds()))
	if f.TimeLimit > 0 {
		kv("Time Limit", "%s (%s used)", Duration(f.TimeLimit), Percent(f.RunSeconds()/f.TimeLimit))
	} else {
		kv("Time Limit", "unknown")
	}
	kv("GPU Time", "%s", GPUHours(f.GPUSeconds))

	title(b, "Overall Utilization")
	bar(b, "GPU utilization", f.Util/100)
	bar(b, "GPU memory usage", f.MemShare)
	if !math.IsNaN(f.CPUEfficiency) {
		bar(b, "CPU efficiency", f.CPUEfficiency)
	}

	title(b, "Detailed Utilization")
	if !math.IsNaN(f.CPUEfficiency) {
		fmt.Fprintf(b, "  CPU time used/allocated: %s/%s (efficiency=%s)\n\n", Duration(f.CPUSeconds), Duration(f.CPUAllocSeconds), Percent(f.CPUEfficiency))
	}
	b.WriteString("  GPU utilization per node\n")
	eachGPU(f, func(g GPU) { fmt.Fprintf(b, "      %s: %s\n", g.Name, pct100(g.Util)) })
	b.WriteString("\n  GPU memory usage per node - maximum used/total\n")
	eachGPU(f, func(g GPU) {
		share := "n/a"
		if g.MemTotal > 0 && !math.IsNaN(g.MemPeak) {
			share = Percent(g.MemPeak / g.MemTotal)
		}
		fmt.Fprintf(b, "      %s: %s/%s (%s)\n", g.Name, GB(g.MemPeak), GB(g.MemTotal), share)
	})
	b.WriteString("\n  Main bottleneck per GPU (share of its time; input/communication bound)\n")
	eachGPU(f, func(g GPU) {
		fmt.Fprintf(b, "      %s: %s %s (input %s, communication %s)\n", g.Name, cmpOr(g.Main, "unknown"), Percent(g.MainShare), Percent(g.Input), Percent(g.Communication))
	})

	title(b, "Bottlenecks (GPU time per class)")
	for _, c := range f.Classes {
		fmt.Fprintf(b, "  %-20s %6s  %s\n", c.Name, Percent(c.Share), GPUHours(c.Seconds))
	}
	b.WriteString("\n  Causes on the node's evidence\n")
	if len(f.Causes) == 0 {
		b.WriteString("      none found (or no node evidence)\n")
	}
	for _, c := range f.Causes {
		fmt.Fprintf(b, "      %s: %s of GPU time on %s%s\n", c.Cause, Percent(c.Share), list(c.GPUs, 3), paren(c.Why))
	}
	b.WriteString("\n  Stragglers\n")
	if len(f.Stragglers) == 0 {
		b.WriteString("      none\n")
	}
	for _, s := range f.Stragglers {
		open := ""
		if s.Open {
			open = ", still at the end"
		}
		fmt.Fprintf(b, "      %s: %s to %s (%s%s), score up to %.2f%s\n", s.GPU, Clock(s.From), Clock(s.To)[11:], Duration(s.To-s.From), open, s.MaxScore, causeSuffix(s.Cause, s.Why))
	}

	title(b, "GPU-hours and Cost")
	for _, u := range f.Usage {
		cost := ""
		if u.Cost > 0 {
			cost = "  " + Money(u.Cost, f.Currency)
		}
		fmt.Fprintf(b, "  %-14s %12s %6s%s\n", u.State, GPUHours(u.Seconds), Percent(share(u.Seconds, f.GPUSeconds)), cost)
	}
	if c := f.Cost(""); c > 0 {
		fmt.Fprintf(b, "  %-14s %12s %6s  %s\n", "total", GPUHours(f.GPUSeconds), "", Money(c, f.Currency))
	} else {
		b.WriteString("  (no price configured: no cost)\n")
	}

	title(b, "Alerts and Incidents")
	if len(f.Alerts) == 0 && len(f.Incidents) == 0 && len(f.PendingOnly) == 0 {
		b.WriteString("  none\n")
	}
	for _, a := range f.Alerts {
		fmt.Fprintf(b, "  %s on %s: %s\n", a.Alert, a.GPU, alertStory(a))
	}
	for _, in := range f.Incidents {
		to := "still at the end"
		if in.To != 0 {
			to = "until " + Clock(in.To)[11:]
		}
		fmt.Fprintf(b, "  %s %s from %s, %s\n", in.GPU, in.State, Clock(in.From), to)
	}
	for _, a := range slices.Sorted(maps.Keys(f.PendingOnly)) {
		fmt.Fprintf(b, "  %s went pending %s and resolved without firing\n", a, times(f.PendingOnly[a]))
	}
	if f.Dropped > 0 {
		fmt.Fprintf(b, "  (%d more episodes left out)\n", f.Dropped)
	}

	title(b, "Advice")
	if len(r.Advice) == 0 {
		b.WriteString("  * Nothing to advise: no rule of the report's found waste or a wait to fix.\n")
	}
	for _, a := range r.Advice {
		wrap(b, a.Text)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

func title(b *strings.Builder, t string) {
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	pad := (len(rule) - len(t)) / 2
	b.WriteString(strings.Repeat(" ", pad) + t + "\n" + rule + "\n")
}

// bar draws jobstats' utilization bar: 50 columns for 100 %.
func bar(b *strings.Builder, label string, r float64) {
	if math.IsNaN(r) {
		fmt.Fprintf(b, "  %-17s [%-50s]\n", label, "not reported")
		return
	}
	n := int(math.Round(math.Max(0, math.Min(1, r)) * 50))
	fill := strings.Repeat("|", n) + strings.Repeat(" ", 50-n)
	p := Percent(r)
	fmt.Fprintf(b, "  %-17s [%s%s]\n", label, fill[:50-len(p)], p)
}

func eachGPU(f *Facts, fn func(GPU)) {
	for _, n := range f.Nodes {
		for _, g := range n.GPUs {
			fn(g)
		}
	}
}

func perNode(f *Facts) string {
	var parts []string
	for _, n := range f.Nodes {
		parts = append(parts, fmt.Sprintf("%s: %d", cmpOr(n.Host, "unknown host"), len(n.GPUs)))
	}
	return list(parts, 4)
}

func pct100(u float64) string {
	if math.IsNaN(u) {
		return "not reported"
	}
	return fmt.Sprintf("%.1f%%", u)
}

func share(a, b float64) float64 {
	if b <= 0 {
		return math.NaN()
	}
	return a / b
}

func causeSuffix(c, why string) string {
	if c == "" {
		return ""
	}
	return ", cause " + c + paren(why)
}

func alertStory(a Alert) string {
	var parts []string
	if a.Pending != 0 {
		parts = append(parts, "pending "+Clock(a.Pending))
	}
	if a.Firing != 0 {
		parts = append(parts, "firing "+Clock(a.Firing))
	} else {
		parts = append(parts, "never fired")
	}
	if a.Resolved != 0 {
		parts = append(parts, "resolved "+Clock(a.Resolved))
	}
	return strings.Join(parts, ", ")
}

// wrap writes one note as jobstats does: "  * " and lines of at most 80.
func wrap(b *strings.Builder, text string) {
	line := "  *"
	for _, w := range strings.Fields(text) {
		if len(line)+1+len(w) > 80 && line != "  *" {
			b.WriteString(line + "\n")
			line = "   "
		}
		line += " " + w
	}
	b.WriteString(line + "\n")
}
