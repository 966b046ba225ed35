package report

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Colors of the classes, in the order of classes: faulted red (an
// alarm), throttled orange (a warning), each busy class a hue of its own
// that is neither red, orange, the alerts' pink nor the fixes' gold, the
// idle and unknown ones grey.
var classColors = []string{
	"#d7191c", // faulted
	"#ff7f00", // throttled
	"#2b83ba", // compute_bound
	"#7b3294", // memory_bound
	"#8c510a", // communication_bound
	"#80cdc1", // input_bound
	"#1a9641", // launch_bound
	"#d9d9d9", // idle
	"#f7f7f7", // unknown
}

// Field colors of a lane's small chart: utilization, SM activity, power,
// memory.
var fieldColors = [4]string{"#2b83ba", "#1a9641", "#e66101", "#7b3294"}
var fieldNames = [4]string{"GPU utilization", "SM activity", "power (of the GPU's peak in the trace)", "memory used"}

// Layout of the timeline, in SVG user units (pixels at 100 %).
const (
	labelWidth = 200
	plotWidth  = 960
	axisHeight = 22
	markHeight = 12
	bandHeight = 14
	chartH     = 30
	laneGap    = 8
	laneHeight = markHeight + bandHeight + chartH + laneGap
)

// Write renders the page.
func Write(w io.Writer, d *Data) error {
	bw := bufio.NewWriter(w)
	p := &page{w: bw, d: d}
	p.write()
	return bw.Flush()
}

type page struct {
	w *bufio.Writer
	d *Data
}

func (p *page) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }
func (p *page) s(s string)                   { p.w.WriteString(s) }

func esc(s string) string { return html.EscapeString(s) }

func num(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// x maps a time to the plot's horizontal axis.
func (p *page) x(t float64) float64 {
	span := p.d.End - p.d.Start
	if span <= 0 {
		return labelWidth
	}
	return labelWidth + round((t-p.d.Start)/span*plotWidth, 10)
}

func (p *page) bucketX(b int) float64 {
	if p.d.Buckets == 0 {
		return labelWidth
	}
	return labelWidth + round(float64(b)/float64(p.d.Buckets)*plotWidth, 10)
}

func (p *page) write() {
	d := p.d
	p.s(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
`)
	p.f("<title>GPU fleet report: %s</title>\n", esc(d.Source))
	p.s(style)
	if len(d.Causes) > 0 {
		p.s(causeStyle)
	}
	if len(d.Jobs) > 0 {
		p.s(jobStyle)
	}
	p.s("</head>\n<body>\n")
	p.f("<h1>GPU fleet report: %s</h1>\n", esc(d.Source))
	p.f(`<p class="meta">Replayed by gpureplay through the gpu_analyzer processor. %s GPUs, %d rows, %s to %s UTC.</p>`+"\n",
		strconv.Itoa(len(d.Lanes)), d.Rows, esc(clock(d.Start, true)), esc(clock(d.End, true)))
	p.s(`<section id="summary"><h2>Summary</h2><ul>`)
	for _, s := range d.Summary {
		p.f("<li>%s</li>", esc(s))
	}
	p.s("</ul></section>\n")
	p.timeline()
	p.causes()
	p.stragglers()
	p.alerts()
	p.cost()
	p.autoscale()
	p.remediation()
	p.jobs()                  // last: a fleet has many jobs, and the summary points here
	b, err := json.Marshal(d) // escapes <, > and &: safe inside <script>
	if err != nil {
		b = []byte("null")
	}
	p.s(`<script type="application/json" id="report-data">`)
	p.w.Write(b)
	p.s("</script>\n</body>\n</html>\n")
}

func (p *page) timeline() {
	d := p.d
	p.s(`<section id="timeline"><h2>Timeline per GPU</h2>` + "\n")
	p.s(`<p class="legend">`)
	for i, c := range classes {
		p.f(`<span><i style="background:%s"></i>%s</span>`, classColors[i], c)
	}
	p.s(`<br><span><i class="straggler"></i>straggler</span><span><i class="pending"></i>alert pending</span><span><i class="firing"></i>alert firing</span>`)
	if d.Remediation != nil {
		p.s(`<span><i class="fix"></i>remediation decision</span>`)
	}
	for k, name := range fieldNames {
		p.f(`<span><i class="line" style="background:%s"></i>%s</span>`, fieldColors[k], name)
	}
	p.s("</p>\n")
	if d.Downsampled {
		p.f(`<p class="note" id="downsampled">Downsampled to %d points per GPU: each is the mean of a GPU's samples over %s, its class the one most of them had. Marks keep their exact times.</p>`+"\n",
			d.Buckets, esc(duration(d.BucketSeconds)))
	}
	height := axisHeight + len(d.Lanes)*laneHeight
	p.f(`<svg id="lanes" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="timeline per GPU">`+"\n",
		labelWidth+plotWidth+10, height, labelWidth+plotWidth+10, height)
	p.axis(height)
	fixes := map[string][]DecisionJSON{}
	for _, x := range d.Remediation {
		fixes[x.UUID] = append(fixes[x.UUID], x)
	}
	strag := map[string][]Straggler{}
	for _, s := range d.Stragglers {
		strag[s.UUID] = append(strag[s.UUID], s)
	}
	alerts := map[string][]AlertEpisode{}
	for _, a := range d.Alerts {
		alerts[a.UUID] = append(alerts[a.UUID], a)
	}
	for i, l := range d.Lanes {
		y := axisHeight + i*laneHeight
		p.f(`<g class="lane" data-uuid="%s" data-name="%s" transform="translate(0,%d)">`, esc(l.UUID), esc(l.Name), y)
		p.f(`<text class="name" x="0" y="%d">%s</text>`, markHeight+bandHeight-3, esc(l.Name))
		if w := strings.Trim(l.Namespace+"/"+l.Workload, "/"); w != "" {
			p.f(`<text class="workload" x="0" y="%d">%s</text>`, markHeight+bandHeight+11, esc(w))
		}
		p.f(`<title>%s %s</title>`, esc(l.Name), esc(l.UUID))
		// Segments are the bulk of a page: their band's y and height come
		// from the style sheet, and only those wide enough to point at
		// get a tooltip.
		for _, s := range l.Segments {
			x0, x1 := p.bucketX(s[0]), p.bucketX(s[1])
			p.f(`<rect class="seg c%d" x="%s" width="%s"`, s[2], num(x0), num(round(x1-x0, 10)))
			if x1-x0 >= 4 {
				p.f(`><title>%s %s–%s</title></rect>`, classes[s[2]],
					clock(d.Start+float64(s[0])*d.BucketSeconds, false), clock(d.Start+float64(s[1])*d.BucketSeconds, false))
			} else {
				p.s("/>")
			}
		}
		for _, s := range strag[l.UUID] {
			p.span("mark straggler", l.UUID, "", s.From, s.To, 0, 5,
				fmt.Sprintf("straggler %s–%s, score up to %.2f", clock(s.From, false), clock(s.To, false), s.MaxScore))
		}
		for _, m := range alertMarks(alerts[l.UUID], d.End, d.BucketSeconds) {
			p.span("mark alert "+m.kind, l.UUID, m.alert, m.from, m.to, 6, 5, m.title())
		}
		for _, x := range fixes[l.UUID] {
			cx, cy := p.x(x.Time), markHeight+bandHeight/2
			p.f(`<path class="mark fix" data-uuid="%s" data-time="%s" d="M%s %dl5 5-5 5-5-5z"><title>%s: %s (%s, %s)</title></path>`,
				esc(l.UUID), num(x.Time), num(cx), cy-5, clock(x.Time, false), esc(x.Action), esc(x.Fault), esc(x.Reason))
		}
		p.chart(l)
		p.s("</g>\n")
	}
	p.s("</svg></section>\n")
}

// alertMark is one mark on a lane: an alert pending or firing from one
// time to another, standing for episodes episodes.
type alertMark struct {
	kind, alert string
	from, to    float64
	resolved    float64 // of the last episode; 0 if still active
	episodes    int
}

func (m alertMark) title() string {
	t := m.alert + " " + m.kind + " " + clock(m.from, false)
	if m.kind == "firing" {
		t += resolvedNote(m.resolved)
	}
	if m.episodes > 1 {
		t += fmt.Sprintf(" (%d episodes, less than a point apart: see the table)", m.episodes)
	}
	return t
}

// alertMarks turns one lane's episodes into marks: each episode's pending
// span and firing span, where spans of the same alert and kind that are
// less than a point (bucket) apart are one mark, as they would overlap on
// the lane anyway. A real fleet's flapping alerts would otherwise draw
// thousands of marks no one can tell apart.
func alertMarks(episodes []AlertEpisode, end, bucket float64) []alertMark {
	var out []alertMark
	last := map[string]int{} // kind/alert: index in out
	add := func(kind, alert string, from, to, resolved float64) {
		key := kind + "/" + alert
		if i, ok := last[key]; ok && from-out[i].to < bucket {
			out[i].to, out[i].resolved = max(out[i].to, to), resolved
			out[i].episodes++
			return
		}
		last[key] = len(out)
		out = append(out, alertMark{kind: kind, alert: alert, from: from, to: to, resolved: resolved, episodes: 1})
	}
	for _, a := range episodes {
		stop := a.Resolved
		if stop == 0 {
			stop = end
		}
		if a.Pending != 0 {
			to := a.Firing
			if to == 0 {
				to = stop
			}
			add("pending", a.Alert, a.Pending, to, a.Resolved)
		}
		if a.Firing != 0 {
			add("firing", a.Alert, a.Firing, stop, a.Resolved)
		}
	}
	return out
}

func resolvedNote(t float64) string {
	if t == 0 {
		return ", still firing at the end"
	}
	return ", resolved " + clock(t, false)
}

// span draws a mark from one time to another, at least 2 units wide so
// that a one-sample episode shows.
func (p *page) span(class, uuid, alert string, from, to float64, y, h int, title string) {
	x0, x1 := p.x(from), p.x(to)
	w := max(2, round(x1-x0, 10))
	p.f(`<rect class="%s" data-uuid="%s"`, class, esc(uuid))
	if alert != "" {
		p.f(` data-alert="%s"`, esc(alert))
	}
	p.f(` data-from="%s" data-to="%s" x="%s" y="%d" width="%s" height="%d"><title>%s</title></rect>`,
		num(from), num(to), num(x0), y, num(w), h, esc(title))
}

// chart draws a lane's four fields, each scaled to 0..1: utilization
// over 100 %, SM activity as is, power over the GPU's highest bucket,
// memory as its used share.
func (p *page) chart(l Lane) {
	top := markHeight + bandHeight + 2
	maxGap := p.d.maxGap()
	peak := 0.0
	for _, v := range l.Power {
		if !math.IsNaN(v) {
			peak = max(peak, v)
		}
	}
	for k, s := range []Series{l.Util, l.SM, l.Power, l.Memory} {
		scale := [4]float64{100, 1, peak, 1}[k]
		if scale <= 0 {
			continue
		}
		var b strings.Builder
		pen, gap := false, 0
		for i, v := range s {
			if math.IsNaN(v) {
				gap++
				if gap > maxGap {
					pen = false
				}
				continue
			}
			gap = 0
			x := (p.bucketX(i) + p.bucketX(i+1)) / 2
			y := float64(top) + round((1-min(1, max(0, v/scale)))*(chartH-4), 10)
			if pen {
				b.WriteString("L")
			} else {
				if b.Len() > 0 {
					b.WriteString(" ")
				}
				b.WriteString("M")
			}
			b.WriteString(num(round(x, 10)))
			b.WriteString(" ")
			b.WriteString(num(y))
			pen = true
		}
		if b.Len() > 0 {
			p.f(`<path class="field" stroke="%s" d="%s"/>`, fieldColors[k], b.String())
		}
	}
}

// axis draws time ticks at a round step that gives about eight of them.
func (p *page) axis(height int) {
	d := p.d
	span := d.End - d.Start
	p.f(`<line class="axis" x1="%d" y1="%d" x2="%d" y2="%d"/>`, labelWidth, axisHeight-4, labelWidth+plotWidth, axisHeight-4)
	if span <= 0 {
		p.f(`<text class="tick" x="%d" y="12">%s</text>`, labelWidth, clock(d.Start, false))
		return
	}
	step := 1.0
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800} {
		step = s
		if span/s <= 8 {
			break
		}
	}
	for t := math.Ceil(d.Start/step) * step; t <= d.End; t += step {
		x := p.x(t)
		label := time.Unix(int64(t), 0).UTC().Format("15:04")
		if step < 60 {
			label = time.Unix(int64(t), 0).UTC().Format("15:04:05")
		} else if step >= 86400 {
			label = time.Unix(int64(t), 0).UTC().Format("Jan 2")
		}
		p.f(`<line class="grid" x1="%s" y1="%d" x2="%s" y2="%d"/><text class="tick" x="%s" y="12">%s</text>`,
			num(x), axisHeight-4, num(x), height, num(x), label)
	}
}

func (p *page) stragglers() {
	p.s(`<section id="stragglers"><h2>Stragglers per job</h2>`)
	if len(p.d.Stragglers) == 0 {
		p.s("<p>No GPU was a straggler.</p></section>\n")
		return
	}
	causes := p.stragglerCauses()
	p.s("<table><thead><tr><th>job</th><th>GPU</th><th>from</th><th>to</th><th>for</th><th>score up to</th>")
	if causes {
		p.s("<th>cause</th>")
	}
	p.s("</tr></thead><tbody>")
	for _, s := range p.d.Stragglers {
		to := clock(s.To, false)
		if s.Open {
			to += " (still at the end)"
		}
		p.f(`<tr data-uuid="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="n">%.2f</td>`,
			esc(s.UUID), esc(s.Job), esc(s.Name), clock(s.From, false), to, duration(s.To-s.From), s.MaxScore)
		if causes {
			p.s(stragglerCauseCell(&s))
		}
		p.s("</tr>")
	}
	p.s("</tbody></table></section>\n")
}

func (p *page) alerts() {
	p.s(`<section id="alerts"><h2>Alerts</h2>`)
	if len(p.d.Alerts) == 0 {
		p.s("<p>No alert went pending or fired.</p></section>\n")
		return
	}
	names := map[string]string{}
	for _, l := range p.d.Lanes {
		names[l.UUID] = l.Name
	}
	// Firing episodes first, in time order, then those that only went
	// pending; at most maxAlertRows rows, the rest counted (every episode
	// is in the page's data).
	rows := slices.Clone(p.d.Alerts)
	slices.SortStableFunc(rows, func(a, b AlertEpisode) int {
		return cmp.Compare(b2i(a.Firing == 0), b2i(b.Firing == 0))
	})
	p.s("<table><thead><tr><th>alert</th><th>GPU</th><th>pending</th><th>firing</th><th>resolved</th></tr></thead><tbody>")
	for _, a := range rows[:min(len(rows), maxAlertRows)] {
		p.f(`<tr data-uuid="%s" data-alert="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(a.UUID), esc(a.Alert), esc(a.Alert), esc(names[a.UUID]), when(a.Pending, "—"), when(a.Firing, "never fired"), when(a.Resolved, "still active at the end"))
	}
	p.s("</tbody></table>")
	if more := len(rows) - maxAlertRows; more > 0 {
		p.f(`<p class="more">%d more episodes are not listed (the first %d are, firing ones first); every episode is in the page's data (the JSON in #report-data).</p>`, more, maxAlertRows)
	}
	p.s("</section>\n")
}

// maxAlertRows bounds the alert table: a fleet whose alerts flap has
// thousands of episodes, which would make the page megabytes of rows.
const maxAlertRows = 200

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func when(t float64, none string) string {
	if t == 0 {
		return none
	}
	return clock(t, false)
}

func (p *page) cost() {
	c := p.d.Cost
	if c == nil {
		return
	}
	p.s(`<section id="cost"><h2>Cost per namespace and usage state</h2>`)
	p.f(`<p class="note">GPU time priced by the analyzer's cost settings (%s), as <code>gpureplay -cost</code> prints it; hours in parentheses.</p>`, esc(c.Currency))
	p.s(`<table id="cost-table"><thead><tr><th>namespace</th>`)
	for _, st := range c.States {
		p.f("<th>%s</th>", esc(st))
	}
	p.s("<th>total</th></tr></thead><tbody>")
	for _, r := range c.Rows {
		p.f(`<tr data-namespace="%s"><td>%s</td>`, esc(r.Namespace), esc(cmpOr(r.Namespace, "(none)")))
		var total float64
		for _, st := range c.States {
			total += r.Cost[st]
			p.f(`<td class="n" data-state="%s" data-cost="%s" data-hours="%s">%s <small>(%s h)</small></td>`,
				esc(st), num(r.Cost[st]), num(r.GPUHours[st]), money(r.Cost[st], c.Currency), strconv.FormatFloat(r.GPUHours[st], 'f', 2, 64))
		}
		p.f(`<td class="n total">%s</td></tr>`, money(total, c.Currency))
	}
	p.s("</tbody></table></section>\n")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maxTableRows bounds a decision table; the embedded data keeps all.
const maxTableRows = 500

func (p *page) autoscale() {
	a := p.d.Autoscale
	if a == nil {
		return
	}
	p.s(`<section id="autoscale"><h2>Autoscaler decisions</h2>`)
	if len(a.Events) == 0 {
		p.f("<p>%s, none changed anything.</p></section>\n", esc(plural(a.Evaluations, "evaluation")))
		return
	}
	p.f(`<p class="note">The evaluations (of %d) that scaled or changed the desired count or the reason; a replay is always a dry run.</p>`, a.Evaluations)
	p.s("<table><thead><tr><th>time</th><th>target</th><th>current</th><th>desired</th><th>reason</th></tr></thead><tbody>")
	for i, e := range a.Events {
		if i == maxTableRows {
			p.f(`<tr><td colspan="5">… and %d more in the embedded data</td></tr>`, len(a.Events)-i)
			break
		}
		p.f(`<tr><td>%s</td><td>%s</td><td class="n">%d</td><td class="n">%d</td><td>%s</td></tr>`,
			clock(e.Time, false), esc(e.Target), e.Current, e.Desired, esc(e.Reason))
	}
	p.s("</tbody></table></section>\n")
}

func (p *page) remediation() {
	r := p.d.Remediation
	if r == nil {
		return
	}
	p.s(`<section id="remediation"><h2>Remediation decisions (dry run)</h2>`)
	if len(r) == 0 {
		p.s("<p>No decision.</p></section>\n")
		return
	}
	p.s("<table><thead><tr><th>time</th><th>node</th><th>GPU</th><th>fault</th><th>action</th><th>reason</th><th>incident</th></tr></thead><tbody>")
	for i, x := range r {
		if i == maxTableRows {
			p.f(`<tr><td colspan="7">… and %d more in the embedded data</td></tr>`, len(r)-i)
			break
		}
		p.f(`<tr data-uuid="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>`,
			esc(x.UUID), clock(x.Time, false), esc(x.Node), esc(x.UUID), esc(x.Fault), esc(x.Action), esc(x.Reason), esc(x.Incident))
	}
	p.s("</tbody></table></section>\n")
}

// style is the page's style sheet, with a class per bottleneck class
// (c0, c1, ...) for the segments.
var style = "<style>\n" + segmentStyle() + baseStyle

func segmentStyle() string {
	var b strings.Builder
	for i, c := range classColors {
		fmt.Fprintf(&b, "rect.c%d{fill:%s}", i, c)
	}
	return b.String() + "\n"
}

const baseStyle = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#222;margin:16px 24px;max-width:1200px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:22px 0 6px;border-bottom:1px solid #ddd}
.meta,.note{color:#555;font-size:13px}
#summary ul{margin:4px 0;padding-left:20px}#summary li{margin:2px 0}
.legend span{display:inline-block;margin:0 12px 2px 0;font-size:12px}
.legend i{display:inline-block;width:12px;height:10px;margin-right:4px;border:1px solid #999;vertical-align:-1px}
.legend i.line{height:3px;border:0;vertical-align:3px}
i.straggler,rect.straggler{background:#111;fill:#111}
i.pending,rect.pending{background:#de77ae;fill:#de77ae}
i.firing,rect.firing{background:#c51b7d;fill:#c51b7d}
i.fix,path.fix{background:#000;fill:#ffd700;stroke:#000}
svg{display:block;font-size:11px}
text.name{font-weight:600}text.workload{fill:#666}text.tick{fill:#555;text-anchor:middle}
line.axis{stroke:#888}line.grid{stroke:#eee}
rect.seg{y:12px;height:14px}path.field{fill:none;stroke-width:1}
table{border-collapse:collapse;font-size:13px;margin:4px 0}
th,td{border-bottom:1px solid #eee;padding:3px 10px 3px 0;text-align:left}td.n{text-align:right;font-variant-numeric:tabular-nums}
small{color:#777}
</style>
`
