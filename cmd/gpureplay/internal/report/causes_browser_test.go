//go:build e2e

package report

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/browsertest"
)

// readCauses gathers, in the browser, the causes' tables as shown: each
// row's cells' text, and whether the section has a visible size.
const readCauses = `(() => {
  const rows = sel => [...document.querySelectorAll(sel + ' tbody tr')].map(tr => [...tr.cells].map(td => td.innerText));
  const r = document.getElementById('causes').getBoundingClientRect();
  return {totals: rows('#cause-totals'), spans: rows('#cause-spans'), visible: r.width > 0 && r.height > 0};
})()`

// TestE2EReportCausesInBrowser renders the causes of a fleet whose
// verdicts carry them (the unit tests' fleet: the shared traces have no
// node evidence) in headless Chromium: no console error or exception, the
// tables' text as the data say, the markup in a sentence shown as text.
// With OTELCOL_GPU_ARTIFACTS set it keeps a screenshot there.
func TestE2EReportCausesInBrowser(t *testing.T) {
	browser := browsertest.Chromium(t)
	d, err := fleet(true).Build(Options{Source: "causes.csv"})
	require.NoError(t, err)
	page := filepath.Join(t.TempDir(), "causes.html")
	require.NoError(t, os.WriteFile(page, []byte(render(t, d)), 0o600))

	ctx := browsertest.Open(t, browser, time.Minute)
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			problems = append(problems, "console."+string(e.Type))
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text)
		}
	})
	var got struct {
		Totals  [][]string `json:"totals"`
		Spans   [][]string `json:"spans"`
		Visible bool       `json:"visible"`
	}
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("#causes", chromedp.ByID),
		chromedp.Evaluate(readCauses, &got),
		chromedp.ScrollIntoView("#causes", chromedp.ByID),
		chromedp.CaptureScreenshot(&shot),
	))
	if dir := os.Getenv("OTELCOL_GPU_ARTIFACTS"); dir != "" {
		dir = filepath.Join(dir, "report")
		require.NoError(t, os.MkdirAll(dir, 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "causes.png"), shot, 0o644))
		t.Logf("screenshot in %s", dir)
	}
	mu.Lock()
	assert.Empty(t, problems, "the browser reported")
	mu.Unlock()
	assert.True(t, got.Visible)
	require.Len(t, got.Totals, len(d.CauseTotals))
	assert.Equal(t, []string{"fabric_errors", "20 min", "20 min", "1", "compute_bound", "check the fabric: the rail's port, cable and switch check_fabric"}, got.Totals[0])
	require.Len(t, got.Spans, len(d.Causes))
	for i, s := range d.Causes {
		assert.Equal(t, s.Name, got.Spans[i][0])
		assert.Equal(t, s.Cause, got.Spans[i][5])
		assert.Equal(t, s.Why, got.Spans[i][6], "the sentence is text, markup and all")
	}
}
