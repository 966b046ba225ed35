package report

import "strings"

// hintWords says a hint as a next step in plain words; a hint not listed
// is shown by its name.
var hintWords = map[string]string{
	"raise_cpu_limit":        "raise the pod's CPU limit",
	"spread_cpu_load":        "spread the CPU load: fewer busy pods on the node, or more CPUs for this one",
	"raise_memory_limit":     "raise the pod's memory limit",
	"speed_up_storage":       "speed up storage: faster or local disks, caching or prefetching the data",
	"add_network_bandwidth":  "add network bandwidth, or move less data over it",
	"check_fabric":           "check the fabric: the rail's port, cable and switch",
	"check_cooling_or_power": "check the cooling and the power limit",
	"fix_data_loading":       "speed up data loading",
	"fix_host_preprocessing": "speed up the host's preprocessing",
	"overlap_communication":  "overlap communication with compute",
	"fix_straggler":          "fix the GPU the job waits on",
	"reduce_host_work":       "do less on the host between steps (asynchronous checkpoints, prefetching)",
}

// hint writes a hint's words with its name, as the metrics and log carry it.
func hint(h string) string {
	if h == "" {
		return "—"
	}
	if w, ok := hintWords[h]; ok {
		return esc(w) + ` <small>` + esc(h) + `</small>`
	}
	return `<code>` + esc(h) + `</code>`
}

// while says what the GPU was doing when the cause was found.
func while(s *CauseSpan) string {
	if s.Straggler {
		return "straggling (" + s.Class + ")"
	}
	return s.Class
}

// causeStyle is the causes' section's style, in the head of a page that
// has one only: a page without causes keeps the style sheet it had.
const causeStyle = "<style>#causes h3{font-size:14px;margin:14px 0 4px}#cause-spans td.nw{white-space:nowrap}</style>\n"

// causes draws the causes' section: the fleet's GPU time per cause, then
// each GPU's spans. Nothing without a cause.
func (p *page) causes() {
	d := p.d
	if len(d.Causes) == 0 {
		return
	}
	p.s(`<section id="causes"><h2>Why GPUs waited: causes from the nodes</h2>`)
	p.s(`<p class="note">The analyzer looks for a cause where a GPU waits for its input, for the network or under a thermal or power throttle, or straggles behind its job, ` +
		`in its pod's cgroup, its node's pressure and its rail's NIC. GPU time is counted from verdict to verdict; ` +
		`<code>none_found</code> means the evidence was read and explains nothing. A wait with no evidence to read is not counted.</p>`)
	p.s(`<table id="cause-totals"><thead><tr><th>cause</th><th>GPU time</th><th>of it straggling</th><th>GPUs</th><th>while</th><th>what to do</th></tr></thead><tbody>`)
	for _, t := range d.CauseTotals {
		strag := "—"
		if t.StragglerSeconds > 0 {
			strag = duration(t.StragglerSeconds)
		}
		hints := make([]string, len(t.Hints))
		for i, h := range t.Hints {
			hints[i] = hint(h)
		}
		p.f(`<tr data-cause="%s" data-seconds="%s"><td><code>%s</code></td><td class="n">%s</td><td class="n">%s</td><td class="n">%d</td><td>%s</td><td>%s</td></tr>`,
			esc(t.Cause), num(t.Seconds), esc(t.Cause), duration(t.Seconds), strag, t.GPUs, esc(strings.Join(t.Classes, ", ")), cmpOr(strings.Join(hints, "; "), "—"))
	}
	p.s("</tbody></table>\n")
	p.s(`<h3>Per GPU</h3><table id="cause-spans"><thead><tr><th>GPU</th><th>while</th><th>from</th><th>to</th><th>for</th><th>cause</th><th>evidence</th><th>what to do</th></tr></thead><tbody>`)
	for i := range d.Causes {
		s := &d.Causes[i]
		if i == maxTableRows {
			p.f(`<tr><td colspan="8">… and %d more in the embedded data</td></tr>`, len(d.Causes)-i)
			break
		}
		to := clock(s.To, false)
		if s.Open {
			to += " (still at the end)"
		}
		p.f(`<tr data-uuid="%s" data-cause="%s" data-from="%s"><td>%s</td><td>%s</td><td class="nw">%s</td><td class="nw">%s</td><td class="n nw">%s</td><td><code>%s</code></td><td>%s</td><td>%s</td></tr>`,
			esc(s.UUID), esc(s.Cause), num(s.From), esc(s.Name), esc(while(s)), clock(s.From, false), to, duration(s.Seconds),
			esc(s.Cause), esc(cmpOr(s.Why, "—")), hint(s.Hint))
	}
	p.s("</tbody></table></section>\n")
}

// stragglerCauses says whether the stragglers' table has a cause column:
// only where a straggler has a cause, so that a trace without node
// evidence has the table it had.
func (p *page) stragglerCauses() bool {
	for _, s := range p.d.Stragglers {
		if s.Cause != "" {
			return true
		}
	}
	return false
}

// stragglerCauseCell is a straggler's cause cell.
func stragglerCauseCell(s *Straggler) string {
	if s.Cause == "" {
		return "<td>—</td>"
	}
	c := `<td data-cause="` + esc(s.Cause) + `"><code>` + esc(s.Cause) + `</code>`
	if s.Why != "" {
		c += ": " + esc(s.Why)
	}
	return c + "</td>"
}
