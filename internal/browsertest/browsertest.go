// Package browsertest opens headless Chromium for the tests that render
// gpureplay's report in a browser (built with the e2e tag).
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium finds a Chromium to drive: Debian's package installs
// /usr/bin/chromium. Without one the test skips, unless
// OTELCOL_GPU_REQUIRE_BROWSER=1 (make test sets it), where it fails.
func Chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no Chromium on PATH (Debian: apt-get install chromium): the report is not rendered in a browser"
	if os.Getenv("OTELCOL_GPU_REQUIRE_BROWSER") == "1" {
		tb.Fatal(msg + ", and OTELCOL_GPU_REQUIRE_BROWSER=1")
	}
	tb.Skip(msg)
	return ""
}

// Open starts the browser headless, 1280 × 900, and returns a context
// that drives one tab of it for at most timeout; the browser closes when
// the test ends.
func Open(tb testing.TB, browser string, timeout time.Duration) context.Context {
	tb.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1280, 900))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	tb.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	tb.Cleanup(cancelTimeout)
	return ctx
}
