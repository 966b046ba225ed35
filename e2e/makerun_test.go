//go:build e2e

package e2e

import (
	"net"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EMakeRun captures the first 15 s of `make run`, as a new user sees
// them: the banner first, a fleet summary, short lines without the
// collector's own resource and component fields; and the banner's
// address serves the metrics. It runs make with the binary already built
// (-o build) and needs port 9400, the local configuration's.
func TestE2EMakeRun(t *testing.T) {
	bin, err := filepath.Abs(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if l, err := net.Listen("tcp", "127.0.0.1:9400"); err != nil {
		t.Fatalf("port 9400, where the local configuration serves metrics, is taken: %v", err)
	} else {
		l.Close()
	}
	logs := &syncBuffer{}
	cmd := exec.Command("make", "-s", "-C", "..", "-o", "build", "run", "BIN="+bin)
	cmd.Stdout, cmd.Stderr = logs, logs
	// Its own process group, so that make and the collector it started
	// stop together.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done: //nolint:errcheck // stopped by SIGTERM: Wait reports the signal
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done //nolint:errcheck // killed above: Wait can only report the kill
			t.Error("make run did not stop within 30 s of SIGTERM")
		}
	}
	t.Cleanup(stop)

	summary := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3}  info  34 GPUs: \d+ compute_bound, .*idle \(1 held by a pod: \$6\.88/h wasted\)`)
	var served, page string
	for time.Since(began) < 15*time.Second {
		if body, err := scrape("http://127.0.0.1:9400/metrics"); err == nil && strings.Contains(body, "otelgpu_bottleneck_state{") {
			page = body
			if served == "" {
				served = time.Since(began).Round(100 * time.Millisecond).String()
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	stop()
	out := logs.String()
	if t.Failed() || !summary.MatchString(out) {
		t.Logf("make run's first 15 s:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	banner := "otelcol-gpu on 24 simulated GPUs (16 NVIDIA, 8 AMD), 34 devices with MIG instances and partitions. Metrics: http://127.0.0.1:9400/metrics. Log: alerts and stragglers as they happen, a fleet summary within 10 s, then every 30 s."
	if lines[0] != banner {
		t.Errorf("first line %q, want the banner %q", lines[0], banner)
	}
	if loc := summary.FindStringIndex(out); loc == nil {
		t.Error("no fleet summary within 15 s")
	} else {
		t.Logf("summary: %s", strings.SplitN(out[loc[0]:], "\n", 2)[0])
	}
	if served == "" {
		t.Error("the banner's address served no analyzer metrics within 15 s")
	} else {
		t.Logf("metrics served %s after make run started", served)
	}
	// hw.status on every device, each in exactly one state: the faults
	// come later (TestMakeRunFleetHealth runs them in data time).
	states := map[string]int{}
	devices := map[string]bool{}
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "hw_status{") {
			continue
		}
		id := regexp.MustCompile(`hw_id="([^"]+)"`).FindStringSubmatch(l)
		if id == nil {
			t.Errorf("a hw_status series without hw_id: %s", l)
			continue
		}
		devices[id[1]] = true
		if strings.HasSuffix(l, " 1") {
			states[id[1]]++
		}
	}
	if len(devices) != 34 {
		t.Errorf("hw_status for %d devices, want every one of the 34", len(devices))
	}
	for id := range devices {
		if states[id] != 1 {
			t.Errorf("device %s is in %d states, want 1", id, states[id])
		}
	}
	for _, l := range lines[1:] {
		for _, own := range []string{"service.instance.id", "otelcol.component", "otelcol.pipeline", `"resource"`} {
			if strings.Contains(l, own) {
				t.Errorf("a line carries the collector's own %s: %q", own, l)
			}
		}
		// A line a person reads in a terminal. The longest is a class
		// change: GPU, both classes, workload, hint and the evidence the
		// verdict rests on, about 180 characters with the example's names.
		if len(l) > 180 {
			t.Errorf("a line of %d characters: %q", len(l), l)
		}
	}
}
