package score

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	mn "github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Phase is one label's verdict over its own window, for gpureplay -labels:
// where Score asks how often the analyzer is right across a trace, a phase
// asks what it said about one stretch of known load. The window is the
// label's [Start, End) as written, with no grace: a labels file for phase
// checks leaves the edges out itself.
type Phase struct {
	Label Label
	// Samples is how many of the GPU's verdicts fall in the window.
	Samples int
	// Verdict is what the window's verdicts say, in the label's terms: the
	// most common class (bottleneck), "true" or "false" (straggler), the
	// most common cause or "none" (cause), "fired" or "not fired" (alert).
	Verdict string
	// Share is the share of the window's verdicts that say Verdict; for an
	// alert, the share with it firing.
	Share float64
	// Pass is Verdict == the label's value (an alert: fired), never with
	// no samples.
	Pass bool
}

// phaseKinds are the label kinds a phase check reads, with the values each
// takes (nil: any non-empty value).
var phaseKinds = map[string][]string{
	"bottleneck": {
		mn.AttrOTelGPUBottleneckClassUnknown, mn.AttrOTelGPUBottleneckClassFaulted, mn.AttrOTelGPUBottleneckClassThrottled,
		mn.AttrOTelGPUBottleneckClassIdle, mn.AttrOTelGPUBottleneckClassMemoryBound, mn.AttrOTelGPUBottleneckClassCommunicationBound,
		mn.AttrOTelGPUBottleneckClassLaunchBound, mn.AttrOTelGPUBottleneckClassInputBound, mn.AttrOTelGPUBottleneckClassComputeBound,
	},
	"straggler": {"true", "false"},
	"alert": {
		mn.AttrAlertnameGPUFaulted, mn.AttrAlertnameGPUOverheating, mn.AttrAlertnameGPUMemoryPressure, mn.AttrAlertnameGPUThrottled,
		mn.AttrAlertnameGPUStraggler, mn.AttrAlertnameGPUIdle, mn.AttrAlertnameGPUMemoryLeak,
	},
	"cause": nil,
}

// CheckLabels checks labels read by ReadLabels from a file for a phase
// check: a known kind and value (a typo would otherwise read as a
// disagreement), and a window that is not empty. Errors name the line (the
// header is line 1).
func CheckLabels(labels []Label) error {
	var errs []error
	for i, l := range labels {
		line := i + 2
		values, ok := phaseKinds[l.Kind]
		switch {
		case l.UUID == "":
			errs = append(errs, fmt.Errorf("line %d: empty uuid", line))
		case !ok:
			errs = append(errs, fmt.Errorf("line %d: unknown kind %q; want bottleneck, straggler, alert or cause", line, l.Kind))
		case l.Value == "" || (values != nil && !slices.Contains(values, l.Value)):
			errs = append(errs, fmt.Errorf("line %d: %s label: unknown value %q; want one of %s", line, l.Kind, l.Value, strings.Join(values, ", ")))
		case math.IsNaN(l.Start) || math.IsInf(l.Start, 0) || math.IsNaN(l.End) || math.IsInf(l.End, 0) || !(l.Start < l.End):
			errs = append(errs, fmt.Errorf("line %d: want start < end, got %v and %v", line, l.Start, l.End))
		}
	}
	return errors.Join(errs...)
}

// Phases is each label's verdict over its window, in the labels' order. An
// alert label passes when the alert fires at a verdict from alertTolerance
// before its start (the contract's tolerance) to its end.
func Phases(labels []Label, verdicts map[string][]Verdict) []Phase {
	out := make([]Phase, 0, len(labels))
	for _, l := range labels {
		p := Phase{Label: l}
		from := l.Start
		if l.Kind == "alert" {
			from -= alertTolerance
		}
		counts := map[string]int{}
		for _, v := range verdicts[l.UUID] {
			if v.Time < from || v.Time >= l.End {
				continue
			}
			p.Samples++
			switch l.Kind {
			case "bottleneck":
				counts[v.Bottleneck]++
			case "straggler":
				counts[strconv.FormatBool(v.Straggler)]++
			case "cause":
				c := v.Cause
				if c == "" {
					c = "none"
				}
				counts[c]++
			case "alert":
				if slices.Contains(v.Alerts, l.Value) {
					counts["fired"]++
				}
			}
		}
		if p.Samples > 0 {
			if l.Kind == "alert" {
				p.Verdict, p.Pass = "not fired", counts["fired"] > 0
				if p.Pass {
					p.Verdict = "fired"
				}
				p.Share = float64(counts["fired"]) / float64(p.Samples)
			} else {
				p.Verdict = majority(counts)
				p.Share = float64(counts[p.Verdict]) / float64(p.Samples)
				p.Pass = p.Verdict == l.Value
			}
		}
		out = append(out, p)
	}
	return out
}

// majority is the most common key; a tie goes to the first in byte order,
// so that the same verdicts always give the same table.
func majority(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	best := ""
	for _, k := range keys {
		if best == "" || counts[k] > counts[best] {
			best = k
		}
	}
	return best
}

// WriteTable prints the phases as a table: one row per label, its window
// in seconds from origin (the earliest label start where origin is 0), and
// a last line that counts them. Rows are numbered from 1 in the labels'
// order, so that a script that wrote the labels can name its phases.
func WriteTable(w io.Writer, phases []Phase, origin float64) error {
	if origin == 0 && len(phases) > 0 {
		origin = phases[0].Label.Start
		for _, p := range phases {
			origin = math.Min(origin, p.Label.Start)
		}
	}
	rows := [][]string{{"#", "gpu", "window (s)", "kind", "label", "verdict", "share", "samples", "result"}}
	passed, empty := 0, 0
	for i, p := range phases {
		l := p.Label
		result, share := "FAIL", fmt.Sprintf("%.0f%%", 100*p.Share)
		switch {
		case p.Samples == 0:
			result, share, empty = "NO DATA", "-", empty+1
		case p.Pass:
			result = "pass"
			passed++
		}
		verdict := p.Verdict
		if p.Samples == 0 {
			verdict = "-"
		}
		rows = append(rows, []string{
			strconv.Itoa(i + 1), shortUUID(l.UUID),
			fmt.Sprintf("%.0f-%.0f", l.Start-origin, l.End-origin),
			l.Kind, l.Value, verdict, share, strconv.Itoa(p.Samples), result,
		})
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for j, c := range r {
			widths[j] = max(widths[j], len(c))
		}
	}
	var b strings.Builder
	for _, r := range rows {
		for j, c := range r {
			if j > 0 {
				b.WriteString("  ")
			}
			if j == len(r)-1 {
				b.WriteString(c)
			} else {
				fmt.Fprintf(&b, "%-*s", widths[j], c)
			}
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d of %d labels agree with the analyzer", passed, len(phases))
	if empty > 0 {
		fmt.Fprintf(&b, "; %d without a verdict in their window", empty)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// shortUUID keeps a table narrow: the UUID's first group after its prefix
// tells one GPU of a machine from another.
func shortUUID(u string) string {
	if len(u) <= 12 {
		return u
	}
	return u[:12]
}
