package report

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
)

// jobs renders the job section: per job the advice first (what to do),
// then the facts it rests on, in jobstats' order, then this product's.
func (p *page) jobs() {
	if len(p.d.Jobs) == 0 {
		return
	}
	p.s(`<section id="jobs"><h2>Job reports</h2>`)
	p.s(`<p class="note">Per job, as <code>gpureplay -job</code> prints it: jobstats' figures (utilization and peak memory per GPU, run time against the limit), then the time per bottleneck class, the causes, stragglers, GPU-hours and cost, and the advice drawn from them.</p>`)
	for i := range p.d.Jobs {
		p.job(&p.d.Jobs[i])
	}
	p.s("</section>\n")
}

func (p *page) job(r *jobreport.Report) {
	f := &r.Facts
	state := "ended"
	if f.Running {
		state = "running at the end of the trace"
	}
	p.f(`<article class="job" data-job="%s"><h3>%s <small>%s, %s</small></h3>`, esc(f.Job.String()), esc(f.Job.String()), esc(f.Job.Scheduler), state)

	p.s(`<div class="advice"><h4>Advice</h4>`)
	if len(r.Advice) == 0 {
		p.s(`<p class="none">Nothing to advise: no rule found waste or a wait to fix.</p>`)
	} else {
		p.s("<ul>")
		for _, a := range r.Advice {
			p.f(`<li data-code="%s">%s</li>`, esc(a.Code), esc(a.Text))
		}
		p.s("</ul>")
	}
	p.s("</div>")

	limit := "unknown"
	if f.TimeLimit > 0 {
		limit = jobreport.Duration(f.TimeLimit) + " (" + jobreport.Percent(f.RunSeconds()/f.TimeLimit) + " used)"
	}
	p.s(`<dl class="facts">`)
	for _, kv := range [][2]string{
		{"GPUs", strconv.Itoa(f.GPUs) + " on " + strconv.Itoa(len(f.Nodes)) + " nodes"},
		{"run time", jobreport.Duration(f.RunSeconds()) + " from " + jobreport.Clock(f.Start) + " UTC"},
		{"time limit", limit},
		{"GPU time", jobreport.GPUHours(f.GPUSeconds)},
		{"GPU utilization", known(jobreport.Percent(f.Util / 100))},
		{"GPU memory (peak)", known(jobreport.Percent(f.MemShare))},
		{"CPU efficiency", cpuEfficiency(f)},
	} {
		p.f("<dt>%s</dt><dd>%s</dd>", kv[0], esc(kv[1]))
	}
	p.s("</dl>")

	p.classBar(f)
	p.jobGPUs(f)
	p.jobEpisodes(f)
	p.s("</article>\n")
}

// known says "not reported" for a figure the trace lacks.
func known(s string) string {
	if s == "n/a" {
		return "not reported"
	}
	return s
}

func cpuEfficiency(f *jobreport.Facts) string {
	if math.IsNaN(f.CPUEfficiency) {
		return "not in the trace (no pod cgroup columns)"
	}
	return jobreport.Percent(f.CPUEfficiency) + " (" + jobreport.Duration(f.CPUSeconds) + " of " + jobreport.Duration(f.CPUAllocSeconds) + " CPU time)"
}

// classBar draws the job's GPU time per class as one stacked bar, in the
// timeline's colors, with the shares written beside.
func (p *page) classBar(f *jobreport.Facts) {
	p.s(`<h4>GPU time per bottleneck class</h4><div class="classbar">`)
	for _, c := range f.Classes {
		p.f(`<span class="seg" style="width:%s%%;background:%s" title="%s %s"></span>`,
			strconv.FormatFloat(math.Round(c.Share*1000)/10, 'f', -1, 64), classColors[classIndex(c.Name)], esc(c.Name), jobreport.Percent(c.Share))
	}
	p.s(`</div><p class="shares">`)
	for _, c := range f.Classes {
		p.f(`<span><i style="background:%s"></i>%s %s <small>(%s)</small></span>`, classColors[classIndex(c.Name)], esc(c.Name), jobreport.Percent(c.Share), jobreport.GPUHours(c.Seconds))
	}
	p.s("</p>")
}

func (p *page) jobGPUs(f *jobreport.Facts) {
	p.s(`<h4>GPUs</h4><table class="job-gpus"><thead><tr><th>GPU</th><th>utilization</th><th>memory peak / total</th><th>main class</th><th>input bound</th><th>communication bound</th></tr></thead><tbody>`)
	for _, n := range f.Nodes {
		for _, g := range n.GPUs {
			mem := "not reported"
			if !math.IsNaN(g.MemPeak) {
				mem = jobreport.GB(g.MemPeak) + " / " + jobreport.GB(g.MemTotal)
			}
			util := "not reported"
			if !math.IsNaN(g.Util) {
				util = strconv.FormatFloat(math.Round(g.Util*10)/10, 'f', 1, 64) + " %"
			}
			p.f(`<tr data-uuid="%s"><td>%s</td><td class="n">%s</td><td class="n">%s</td><td>%s %s</td><td class="n">%s</td><td class="n">%s</td></tr>`,
				esc(g.UUID), esc(g.Name), util, mem, esc(cmpOr(g.Main, "unknown")), jobreport.Percent(g.MainShare), jobreport.Percent(g.Input), jobreport.Percent(g.Communication))
		}
	}
	p.s("</tbody></table>")
}

func (p *page) jobEpisodes(f *jobreport.Facts) {
	if len(f.Causes) > 0 {
		p.s(`<h4>Causes on the node's evidence</h4><table class="job-causes"><thead><tr><th>cause</th><th>GPU time</th><th>GPUs</th><th>evidence</th></tr></thead><tbody>`)
		for _, c := range f.Causes {
			p.f(`<tr><td>%s</td><td class="n">%s</td><td>%s</td><td>%s</td></tr>`, esc(c.Cause), jobreport.Percent(c.Share), esc(joinMax(c.GPUs, 4)), esc(c.Why))
		}
		p.s("</tbody></table>")
	}
	p.s(`<h4>Stragglers</h4>`)
	if len(f.Stragglers) == 0 {
		p.s("<p>None.</p>")
	} else {
		p.s(`<table class="job-stragglers"><thead><tr><th>GPU</th><th>from</th><th>for</th><th>score up to</th><th>cause</th></tr></thead><tbody>`)
		for _, s := range f.Stragglers {
			long := duration(s.To - s.From)
			if s.Open {
				long += " (still at the end)"
			}
			p.f(`<tr data-uuid="%s"><td>%s</td><td>%s</td><td>%s</td><td class="n">%.2f</td><td>%s</td></tr>`,
				esc(s.UUID), esc(s.GPU), clock(s.From, false), long, s.MaxScore, esc(cmpOr(s.Cause, "—")))
		}
		p.s("</tbody></table>")
	}
	p.s(`<h4>GPU-hours and cost</h4><table class="job-usage"><thead><tr><th>usage</th><th>GPU-hours</th><th>share</th><th>cost</th></tr></thead><tbody>`)
	for _, u := range f.Usage {
		cost := "—"
		if u.Cost > 0 {
			cost = jobreport.Money(u.Cost, f.Currency)
		}
		share := math.NaN()
		if f.GPUSeconds > 0 {
			share = u.Seconds / f.GPUSeconds
		}
		p.f(`<tr data-state="%s"><td>%s</td><td class="n">%s</td><td class="n">%s</td><td class="n">%s</td></tr>`,
			esc(u.State), esc(stateWords[u.State]), strconv.FormatFloat(u.Seconds/3600, 'f', 2, 64), jobreport.Percent(share), cost)
	}
	p.s("</tbody></table>")
	if len(f.Alerts) > 0 || len(f.Incidents) > 0 || len(f.PendingOnly) > 0 {
		p.s(`<h4>Alerts and incidents</h4><ul class="job-alerts">`)
		for _, a := range f.Alerts {
			p.f("<li>%s on %s: fired %s, resolved %s</li>", esc(a.Alert), esc(a.GPU), when(a.Firing, "never"), when(a.Resolved, "not by the end"))
		}
		for _, in := range f.Incidents {
			p.f("<li>%s %s from %s to %s</li>", esc(in.GPU), esc(in.State), clock(in.From, false), when(in.To, "the end"))
		}
		for _, a := range slices.Sorted(maps.Keys(f.PendingOnly)) {
			p.f("<li>%s went pending %s and resolved without firing</li>", esc(a), plural(f.PendingOnly[a], "time"))
		}
		p.s("</ul>")
	}
}

func joinMax(items []string, n int) string {
	if len(items) <= n {
		return join(items)
	}
	return join(items[:n]) + " and " + strconv.Itoa(len(items)-n) + " more"
}

func join(items []string) string { return strings.Join(items, ", ") }

// jobStyle is the job section's style sheet, only on pages with one.
const jobStyle = `<style>
article.job{border:1px solid #ddd;border-radius:4px;padding:8px 14px 10px;margin:10px 0 16px}
article.job h3{font-size:15px;margin:2px 0 6px}article.job h4{font-size:13px;margin:12px 0 4px;color:#333}
.advice{background:#fff8e1;border-left:4px solid #f0b400;padding:4px 12px;margin:4px 0 8px}
.advice h4{margin:4px 0}.advice ul{margin:2px 0 4px;padding-left:18px}.advice li{margin:3px 0}
dl.facts{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:6px 0;font-size:13px}
dl.facts dt{color:#555}dl.facts dd{margin:0}
.classbar{display:flex;height:14px;border:1px solid #999;max-width:720px}.classbar .seg{display:block;height:100%}
p.shares span{display:inline-block;margin:2px 14px 0 0;font-size:12px}
p.shares i{display:inline-block;width:12px;height:10px;margin-right:4px;border:1px solid #999;vertical-align:-1px}
ul.job-alerts{margin:2px 0;padding-left:18px;font-size:13px}
</style>
`
