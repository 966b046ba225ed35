//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/otelcol-gpu/otelcol-gpu/internal/browsertest"
)

// artifacts is where the test leaves its screenshots:
// OTELCOL_GPU_ARTIFACTS (make test sets _artifacts/ in the checkout), else
// a temporary directory that is kept. The test prints it.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("OTELCOL_GPU_ARTIFACTS")
	if dir == "" {
		var err error
		// Not t.TempDir: the screenshots outlive the test.
		if dir, err = os.MkdirTemp("", "otelcol-gpu-artifacts-"); err != nil { //nolint:usetesting // see above
			t.Fatal(err)
		}
	}
	dir = filepath.Join(dir, "report")
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	return dir
}

type replayed struct {
	stragglers map[string]float64            // uuid: first straggler verdict
	firing     map[string]map[string]float64 // uuid: alert: first firing verdict
	cost       map[string]map[string]float64 // namespace: state: cost
	gpus       map[string]bool
}

// replayFacts reads what gpureplay printed for a trace: the verdicts, and
// the -cost summary.
func replayFacts(t *testing.T, out []byte) replayed {
	t.Helper()
	r := replayed{stragglers: map[string]float64{}, firing: map[string]map[string]float64{}, cost: map[string]map[string]float64{}, gpus: map[string]bool{}}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v struct {
			Summary   string
			Namespace string
			Cost      map[string]float64
			Time      float64
			UUID      string
			Straggler bool
			Alerts    []string
		}
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		if v.Summary == "cost" {
			r.cost[v.Namespace] = v.Cost
			continue
		}
		if v.Summary != "" {
			continue
		}
		r.gpus[v.UUID] = true
		if _, seen := r.stragglers[v.UUID]; v.Straggler && !seen {
			r.stragglers[v.UUID] = v.Time
		}
		for _, a := range v.Alerts {
			if r.firing[v.UUID] == nil {
				r.firing[v.UUID] = map[string]float64{}
			}
			if _, seen := r.firing[v.UUID][a]; !seen {
				r.firing[v.UUID][a] = v.Time
			}
		}
	}
	return r
}

// shown is what the page shows, read from the rendered DOM.
type shown struct {
	Lanes []struct {
		UUID   string  `json:"uuid"`
		Top    float64 `json:"top"`
		Bottom float64 `json:"bottom"`
	} `json:"lanes"`
	Marks []struct {
		Kind  string  `json:"kind"`
		UUID  string  `json:"uuid"`
		Alert string  `json:"alert"`
		From  float64 `json:"from"`
		Left  float64 `json:"left"`
		Y     float64 `json:"y"`
		Lane  string  `json:"lane"`
	} `json:"marks"`
	PlotLeft  float64 `json:"plotLeft"`
	PlotWidth float64 `json:"plotWidth"`
	Start     float64 `json:"start"`
	End       float64 `json:"end"`
	Cost      []struct {
		Namespace string  `json:"namespace"`
		State     string  `json:"state"`
		Cost      float64 `json:"cost"`
		Text      string  `json:"text"`
	} `json:"cost"`
	Load float64 `json:"load"`
}

// readPage gathers, in the browser, the lanes and marks with their
// rendered positions, and the cost table's cells.
const readPage = `(() => {
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const svg = document.getElementById('lanes').getBoundingClientRect();
  const lanes = [...document.querySelectorAll('svg#lanes g.lane')].map(g => {
    const r = g.getBoundingClientRect();
    return {uuid: g.dataset.uuid, top: r.top - svg.top, bottom: r.bottom - svg.top};
  });
  const marks = [...document.querySelectorAll('svg#lanes rect.mark')].map(m => {
    const r = m.getBoundingClientRect();
    return {kind: m.classList.contains('straggler') ? 'straggler' : (m.classList.contains('firing') ? 'firing' : 'pending'),
      uuid: m.dataset.uuid, alert: m.dataset.alert || '', from: +m.dataset.from,
      left: r.left - svg.left, y: (r.top + r.bottom) / 2 - svg.top, lane: m.closest('g.lane').dataset.uuid};
  });
  const cost = [...document.querySelectorAll('#cost-table td[data-state]')].map(td => ({
    namespace: td.closest('tr').dataset.namespace, state: td.dataset.state, cost: +td.dataset.cost,
    text: td.firstChild.textContent.trim()}));
  const nav = performance.getEntriesByType('navigation')[0];
  return {lanes, marks, plotLeft: 200, plotWidth: 960, start: data.start, end: data.end, cost, load: nav.loadEventEnd};
})()`

// sharedTraces are the six labelled traces of the analysis contract.
var sharedTraces = []string{"serving-mixed-5s", "training-h100-1s", "finetune-step-straggler-2s",
	"llm-collectives-2s", "memory-leak-15s", "p100-no-profiling-15s"}

// TestE2EReportInBrowser renders gpureplay's reports of the six shared traces
// in headless Chromium (one browser, one page each): no console error and
// no request, one lane per GPU, each straggler and firing alert mark on
// its GPU's lane where the verdicts first say so, and the cost table
// equal to -cost's figures. It keeps a screenshot of each.
func TestE2EReportInBrowser(t *testing.T) {
	browser := browsertest.Chromium(t)
	dir := t.TempDir()
	gpureplay := goBuild(t, dir, "../cmd/gpureplay")
	shots := artifacts(t)
	prices := "../examples/cost/prices.yaml"

	ctx := browsertest.Open(t, browser, 3*time.Minute)

	var mu sync.Mutex
	var problems, requests []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning {
				problems = append(problems, fmt.Sprintf("console.%s", e.Type))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError || e.Entry.Level == log.LevelWarning {
				problems = append(problems, fmt.Sprintf("%s: %s", e.Entry.Level, e.Entry.Text))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, e.Request.URL)
		}
	})
	if err := chromedp.Run(ctx, log.Enable(), network.Enable()); err != nil {
		t.Fatal(err)
	}

	marked := 0 // traces with a straggler or alert mark checked
	for _, name := range sharedTraces {
		trace := "../cmd/gpureplay/testdata/traces/" + name + ".csv"
		page := filepath.Join(dir, name+".html")
		out, err := exec.Command(gpureplay, "-cost", prices, "-report", page, trace).Output()
		if err != nil {
			t.Fatalf("gpureplay %s: %v", name, err)
		}
		facts := replayFacts(t, out)
		url := "file://" + page
		mu.Lock()
		problems, requests = nil, nil
		mu.Unlock()

		var got shown
		var shot, full []byte
		if err := chromedp.Run(ctx,
			chromedp.Navigate(url),
			chromedp.WaitVisible("#lanes", chromedp.ByID),
			chromedp.Evaluate(readPage, &got),
			chromedp.CaptureScreenshot(&shot),
			chromedp.FullScreenshot(&full, 90),
		); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for file, b := range map[string][]byte{name + ".png": shot, name + "-full.jpg": full} {
			if err := os.WriteFile(filepath.Join(shots, file), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		st, _ := os.Stat(page)
		t.Logf("%s: %d bytes, loaded in %.0f ms", name, st.Size(), got.Load)

		mu.Lock()
		if len(problems) > 0 {
			t.Errorf("%s: the browser reported %q", name, problems)
		}
		for _, u := range requests {
			if u != url {
				t.Errorf("%s: the page fetched %s", name, u)
			}
		}
		mu.Unlock()

		if len(got.Lanes) != len(facts.gpus) {
			t.Errorf("%s: %d lanes for %d GPUs", name, len(got.Lanes), len(facts.gpus))
		}
		lanes := map[string]int{}
		for i, l := range got.Lanes {
			lanes[l.UUID] = i
			if !facts.gpus[l.UUID] {
				t.Errorf("%s: a lane for %s, which the replay never saw", name, l.UUID)
			}
		}
		x := func(t float64) float64 { return got.PlotLeft + (t-got.Start)/(got.End-got.Start)*got.PlotWidth }
		stragglerMarks, firingMarks := map[string]float64{}, map[string]map[string]float64{}
		for _, m := range got.Marks {
			if m.Lane != m.UUID {
				t.Errorf("%s: a %s mark of %s on %s's lane", name, m.Kind, m.UUID, m.Lane)
			}
			l := got.Lanes[lanes[m.UUID]]
			if m.Y < l.Top || m.Y > l.Bottom {
				t.Errorf("%s: a %s mark of %s drawn at y %.0f, outside its lane (%.0f to %.0f)", name, m.Kind, m.UUID, m.Y, l.Top, l.Bottom)
			}
			if math.Abs(m.Left-x(m.From)) > 1.5 {
				t.Errorf("%s: a %s mark of %s from %v drawn at x %.1f, want %.1f", name, m.Kind, m.UUID, m.From, m.Left, x(m.From))
			}
			switch m.Kind {
			case "straggler":
				if _, ok := stragglerMarks[m.UUID]; !ok {
					stragglerMarks[m.UUID] = m.From
				}
			case "firing":
				if firingMarks[m.UUID] == nil {
					firingMarks[m.UUID] = map[string]float64{}
				}
				if _, ok := firingMarks[m.UUID][m.Alert]; !ok {
					firingMarks[m.UUID][m.Alert] = m.From
				}
			}
		}
		if fmt.Sprint(stragglerMarks) != fmt.Sprint(facts.stragglers) {
			t.Errorf("%s: straggler marks from %v, the verdicts say %v", name, stragglerMarks, facts.stragglers)
		}
		if fmt.Sprint(firingMarks) != fmt.Sprint(facts.firing) {
			t.Errorf("%s: firing marks from %v, the verdicts say %v", name, firingMarks, facts.firing)
		}
		if len(facts.stragglers)+len(facts.firing) > 0 {
			marked++
		} else {
			t.Logf("%s: no straggler or alert to check", name)
		}

		cells := 0
		for _, c := range got.Cost {
			want, ok := facts.cost[c.Namespace][c.State]
			if !ok || c.Cost != want {
				t.Errorf("%s: cost of %q %s is %v on the page, -cost says %v", name, c.Namespace, c.State, c.Cost, want)
			}
			if text := fmt.Sprintf("$%.2f", want); c.Text != text {
				t.Errorf("%s: cost of %q %s reads %q, want %q", name, c.Namespace, c.State, c.Text, text)
			}
			cells++
		}
		if want := len(facts.cost) * 5; cells != want {
			t.Errorf("%s: %d cost cells, want %d (5 states for each of %d namespaces)", name, cells, want, len(facts.cost))
		}
	}
	if marked < 4 {
		t.Errorf("only %d of the %d traces had a straggler or alert mark to check", marked, len(sharedTraces))
	}
}
