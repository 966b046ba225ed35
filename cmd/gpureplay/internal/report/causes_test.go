package report

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

const t0 = 1767225600 // 2026-01-01 00:00:00 UTC

const (
	throttledWhy = "throttled in 36 % of periods at a 4-CPU limit"
	// A sentence with markup in it, as a NIC's name could carry: the page
	// shows it as text.
	fabricWhy = `symbol errors +762/min on mlx5_1:1 <script>alert("x")</script>`
)

// fleet replays four GPUs of one job, a sample a minute for 30 minutes:
// h1/gpu0 input bound at its CPU limit from minute 3 to 17, h2/gpu0 a
// straggler on an erring rail from minute 10 to the end, h1/gpu1
// communication bound with nothing found on its node for the first five
// minutes, h2/gpu1 never waiting. withCauses false gives the same verdicts
// without node evidence.
func fleet(withCauses bool) *Collector {
	c := NewCollector()
	for i := range 30 {
		for _, g := range []struct {
			uuid, host string
			gpu        int
		}{{"GPU-a", "h1", 0}, {"GPU-c", "h1", 1}, {"GPU-b", "h2", 0}, {"GPU-d", "h2", 1}} {
			r := trace.Row{Time: float64(t0 + 60*i), UUID: g.uuid, Host: g.host, GPU: g.gpu, HasGPU: true, Model: "H100",
				Namespace: "ml", Job: "train"}
			v := Verdict{Class: "compute_bound", Usage: "used"}
			switch {
			case g.uuid == "GPU-a" && i >= 3 && i < 18:
				v = Verdict{Class: "input_bound", Usage: "waiting", Cause: "cpu_throttled", Why: throttledWhy, Hint: "raise_cpu_limit"}
			case g.uuid == "GPU-b" && i >= 10:
				v = Verdict{Class: "compute_bound", Usage: "used", Straggler: true, Score: 1.3, Cause: "fabric_errors", Why: fabricWhy, Hint: "check_fabric"}
			case g.uuid == "GPU-c" && i < 5:
				v = Verdict{Class: "communication_bound", Usage: "waiting", Cause: "none_found", Why: "mlx5_0 at 5 % of 400 Gb/s", Hint: "overlap_communication"}
			}
			if !withCauses {
				v.Cause, v.Why = "", ""
			}
			c.Add(&r, v)
		}
	}
	return c
}

func render(t *testing.T, d *Data) string {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, Write(&b, d))
	return b.String()
}

// section is the HTML of the page's section id.
func section(t *testing.T, page, id string) string {
	t.Helper()
	_, s, ok := strings.Cut(page, `<section id="`+id+`">`)
	require.True(t, ok, "a section %s", id)
	s, _, ok = strings.Cut(s, "</section>")
	require.True(t, ok)
	return s
}

// TestCauseSpans: each run of verdicts with the same cause in the same
// class is a span with its evidence and hint, timed from its first verdict
// to the next one (an open one to the GPU's last sample), its GPU time
// counted as the classes' is; the fleet's totals add the spans up, the
// longest cause first and none_found last; the straggler gets its cause,
// and the summary says it in a sentence after the bottlenecks'.
func TestCauseSpans(t *testing.T) {
	d, err := fleet(true).Build(Options{Source: "causes.csv"})
	require.NoError(t, err)
	require.Equal(t, []CauseSpan{
		{UUID: "GPU-a", Name: "h1/gpu0", Class: "input_bound", Cause: "cpu_throttled", Why: throttledWhy, Hint: "raise_cpu_limit",
			Seconds: 900, From: t0 + 180, To: t0 + 1080},
		{UUID: "GPU-c", Name: "h1/gpu1", Class: "communication_bound", Cause: "none_found", Why: "mlx5_0 at 5 % of 400 Gb/s",
			Hint: "overlap_communication", Seconds: 300, From: t0, To: t0 + 300},
		{UUID: "GPU-b", Name: "h2/gpu0", Class: "compute_bound", Straggler: true, Cause: "fabric_errors", Why: fabricWhy, Hint: "check_fabric",
			Seconds: 1200, From: t0 + 600, To: t0 + 1740, Open: true},
	}, d.Causes)
	require.Equal(t, []CauseTotal{
		{Cause: "fabric_errors", Seconds: 1200, StragglerSeconds: 1200, GPUs: 1, Classes: []string{"compute_bound"}, Hints: []string{"check_fabric"}},
		{Cause: "cpu_throttled", Seconds: 900, GPUs: 1, Classes: []string{"input_bound"}, Hints: []string{"raise_cpu_limit"}},
		{Cause: "none_found", Seconds: 300, GPUs: 1, Classes: []string{"communication_bound"}, Hints: []string{"overlap_communication"}},
	}, d.CauseTotals)
	// The cause's time is the class's: GPU-a's 15 input-bound minutes.
	assert.Equal(t, 900.0, d.ClassSeconds["input_bound"])

	require.Len(t, d.Stragglers, 1)
	assert.Equal(t, "fabric_errors", d.Stragglers[0].Cause)
	assert.Equal(t, fabricWhy, d.Stragglers[0].Why)

	require.Len(t, d.Summary, 6) // the last points to the job reports
	assert.True(t, strings.HasPrefix(d.Summary[1], "Bottlenecks in GPU time"), d.Summary[1])
	assert.Equal(t, "Why GPUs waited, by their nodes' evidence, in GPU time: fabric_errors 20 min on 1 GPU, cpu_throttled 15 min on 1 GPU; "+
		"for 5 min more the evidence was read and explains nothing.", d.Summary[2])
}

// TestCauseSpanBreaks: a new cause, the same cause with other evidence, a
// new class and a verdict without a cause each end a span.
func TestCauseSpanBreaks(t *testing.T) {
	c := NewCollector()
	for i, v := range []Verdict{
		{Class: "input_bound", Cause: "cpu_throttled", Why: "throttled in 20 %"},
		{Class: "input_bound", Cause: "cpu_throttled", Why: "throttled in 20 %"},
		{Class: "input_bound", Cause: "cpu_throttled", Why: "throttled in 50 %"},
		{Class: "input_bound", Cause: "io_wait", Why: "I/O pressure 30 %"},
		{Class: "communication_bound", Cause: "io_wait", Why: "I/O pressure 30 %"},
		{Class: "compute_bound"},
		{Class: "input_bound", Cause: "io_wait", Why: "I/O pressure 30 %"},
	} {
		c.Add(&trace.Row{Time: float64(t0 + 10*i), UUID: "GPU-1"}, v)
	}
	d, err := c.Build(Options{})
	require.NoError(t, err)
	type got struct {
		class, cause, why string
		from, secs        float64
		open              bool
	}
	var spans []got
	for _, s := range d.Causes {
		spans = append(spans, got{s.Class, s.Cause, s.Why, s.From - t0, s.Seconds, s.Open})
	}
	assert.Equal(t, []got{
		{"input_bound", "cpu_throttled", "throttled in 20 %", 0, 20, false},
		{"input_bound", "cpu_throttled", "throttled in 50 %", 20, 10, false},
		{"input_bound", "io_wait", "I/O pressure 30 %", 30, 10, false},
		{"communication_bound", "io_wait", "I/O pressure 30 %", 40, 10, false},
		{"input_bound", "io_wait", "I/O pressure 30 %", 60, 10, true},
	}, spans)
	require.Len(t, d.CauseTotals, 2)
	// A tie goes by name.
	assert.Equal(t, CauseTotal{Cause: "io_wait", Seconds: 30, GPUs: 1, Classes: []string{"communication_bound", "input_bound"}}, d.CauseTotals[1])
	assert.Equal(t, "Why GPUs waited, by their nodes' evidence, in GPU time: cpu_throttled 30 s on 1 GPU, io_wait 30 s on 1 GPU.", d.Summary[2])
}

var causeRow = regexp.MustCompile(`<tr data-uuid="[^"]*" data-cause="[^"]*" data-from="[^"]*">(.*?)</tr>`)
var cell = regexp.MustCompile(`<td[^>]*>(.*?)</td>`)

// TestCausesSection: the page lists the fleet's time per cause and every
// GPU's spans in plain words, the stragglers' table gains the cause, and
// every sentence is escaped, in the tables and in the embedded data.
func TestCausesSection(t *testing.T) {
	d, err := fleet(true).Build(Options{Source: "causes.csv"})
	require.NoError(t, err)
	page := render(t, d)
	s := section(t, page, "causes")

	totals := regexp.MustCompile(`<tr data-cause="([a-z_]+)" data-seconds="([0-9.]+)">`).FindAllStringSubmatch(s, -1)
	require.Len(t, totals, 3)
	assert.Equal(t, []string{"fabric_errors", "1200"}, totals[0][1:])
	assert.Contains(t, s, `<td class="n">20 min</td><td class="n">20 min</td><td class="n">1</td><td>compute_bound</td><td>check the fabric: the rail&#39;s port, cable and switch <small>check_fabric</small></td>`)

	var rows [][]string
	for _, m := range causeRow.FindAllStringSubmatch(s, -1) {
		var cells []string
		for _, c := range cell.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, c[1])
		}
		rows = append(rows, cells)
	}
	require.Equal(t, [][]string{
		{"h1/gpu0", "input_bound", "00:03:00", "00:18:00", "15 min", "<code>cpu_throttled</code>", throttledWhy,
			"raise the pod&#39;s CPU limit <small>raise_cpu_limit</small>"},
		{"h1/gpu1", "communication_bound", "00:00:00", "00:05:00", "5 min", "<code>none_found</code>", "mlx5_0 at 5 % of 400 Gb/s",
			"overlap communication with compute <small>overlap_communication</small>"},
		{"h2/gpu0", "straggling (compute_bound)", "00:10:00", "00:29:00 (still at the end)", "20 min", "<code>fabric_errors</code>",
			`symbol errors +762/min on mlx5_1:1 &lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;`,
			"check the fabric: the rail&#39;s port, cable and switch <small>check_fabric</small>"},
	}, rows)

	st := section(t, page, "stragglers")
	assert.Contains(t, st, "<th>cause</th>")
	assert.Contains(t, st, `<td data-cause="fabric_errors"><code>fabric_errors</code>: symbol errors +762/min on mlx5_1:1 &lt;script&gt;`)

	assert.NotContains(t, page, `<script>alert`, "no sentence is markup")
	m := regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`).FindStringSubmatch(page)
	require.NotNil(t, m)
	var back Data
	require.NoError(t, json.Unmarshal([]byte(m[1]), &back))
	assert.Equal(t, d.Causes, back.Causes, "the spans are in the page's data")
	assert.Equal(t, d.CauseTotals, back.CauseTotals)
	sum := strings.Split(section(t, page, "summary"), "</li>")
	assert.Contains(t, sum[2], "Why GPUs waited, by their nodes&#39; evidence")
}

// TestNoCauses: without node evidence the data have no cause keys and the
// page no causes' section or column: it is the page of the same verdicts
// before causes, byte for byte but for what they changed.
func TestNoCauses(t *testing.T) {
	d, err := fleet(false).Build(Options{Source: "causes.csv"})
	require.NoError(t, err)
	assert.Empty(t, d.Causes)
	assert.Empty(t, d.CauseTotals)
	assert.Len(t, d.Summary, 5, "no causes' sentence (the last points to the job reports)")
	b, err := json.Marshal(d)
	require.NoError(t, err)
	for _, k := range []string{`"causes"`, `"cause_totals"`, `"cause"`, `"why"`} {
		assert.NotContains(t, string(b), k)
	}
	page := render(t, d)
	assert.NotContains(t, page, `id="causes"`)
	assert.Contains(t, section(t, page, "stragglers"),
		"<table><thead><tr><th>job</th><th>GPU</th><th>from</th><th>to</th><th>for</th><th>score up to</th></tr></thead><tbody><tr data-uuid=\"GPU-b\">")
	assert.NotContains(t, page, "data-cause")
}
