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

// readJob gathers, in the browser, the job section as shown: its advice
// items, its facts, the class bar's segments' widths, and whether the
// advice box has a visible size.
const readJob = `(() => {
  const a = document.querySelector('article.job');
  const box = a.querySelector('.advice').getBoundingClientRect();
  return {
    advice: [...a.querySelectorAll('.advice li')].map(li => li.innerText),
    facts: [...a.querySelectorAll('dl.facts dt')].map(dt => dt.innerText + ': ' + dt.nextElementSibling.innerText),
    bar: [...a.querySelectorAll('.classbar .seg')].map(s => s.getBoundingClientRect().width),
    barWidth: a.querySelector('.classbar').getBoundingClientRect().width,
    gpus: a.querySelectorAll('table.job-gpus tbody tr').length,
    visible: box.width > 0 && box.height > 0,
  };
})()`

// TestE2EReportJobInBrowser renders the unit tests' job (ml/train: a
// loader throttled at its CPU limit, a straggler on an erring rail) in
// headless Chromium: no console error or exception, the advice as the
// data say it (markup shown as text), the class bar filling its box in
// proportion. With OTELCOL_GPU_ARTIFACTS set it keeps a screenshot of the
// section in report/jobs.png there.
func TestE2EReportJobInBrowser(t *testing.T) {
	browser := browsertest.Chromium(t)
	d, err := fleet(true).Build(Options{Source: "jobs.csv"})
	require.NoError(t, err)
	require.Len(t, d.Jobs, 1)
	page := filepath.Join(t.TempDir(), "jobs.html")
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
		Advice   []string  `json:"advice"`
		Facts    []string  `json:"facts"`
		Bar      []float64 `json:"bar"`
		BarWidth float64   `json:"barWidth"`
		GPUs     int       `json:"gpus"`
		Visible  bool      `json:"visible"`
	}
	var shot []byte
	require.NoError(t, chromedp.Run(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitVisible("#jobs", chromedp.ByID),
		chromedp.Evaluate(readJob, &got),
		chromedp.ScrollIntoView("#jobs", chromedp.ByID),
		chromedp.Screenshot("#jobs", &shot, chromedp.ByID),
	))
	if dir := os.Getenv("OTELCOL_GPU_ARTIFACTS"); dir != "" {
		dir = filepath.Join(dir, "report")
		require.NoError(t, os.MkdirAll(dir, 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "jobs.png"), shot, 0o644))
		t.Logf("screenshot in %s", dir)
	}
	mu.Lock()
	assert.Empty(t, problems, "the browser reported")
	mu.Unlock()
	assert.True(t, got.Visible)
	require.Len(t, got.Advice, len(d.Jobs[0].Advice))
	for i, a := range d.Jobs[0].Advice {
		assert.Equal(t, a.Text, got.Advice[i], "the advice is text, markup and all")
	}
	assert.Contains(t, got.Facts, "GPUs: 4 on 2 nodes")
	assert.Equal(t, 4, got.GPUs)
	var sum float64
	for i, w := range got.Bar {
		sum += w
		assert.InDelta(t, d.Jobs[0].Classes[i].Share*got.BarWidth, w, 2.5, "segment %d in proportion", i)
	}
	assert.InDelta(t, got.BarWidth, sum, 3, "the segments fill the bar")
}
