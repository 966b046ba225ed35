//go:build e2e

package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestE2EMakeRun captures `make run` as a new user sees it: in the first
// 15 s the banner first, a fleet summary, short lines without the
// collector's own resource and component fields, and the banner's address
// serving the metrics; then, within two minutes, the second fleet's causes
// (the straggler on a degraded rail, the data loader at its CPU limit) and
// never a launch_bound verdict for the L40S all-reduce. It runs make with
// the binary already built (RUN_BIN) and needs port 9400, the local
// configuration's.
func TestE2EMakeRun(t *testing.T) {
	// The demo build make run makes for its configuration, where make test
	// built it (OTELCOL_GPU_DEMO_BIN); else the full distribution, which
	// has the same components and more.
	bin := os.Getenv("OTELCOL_GPU_DEMO_BIN")
	if bin == "" {
		bin = binary(t)
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		t.Fatal(err)
	}
	// RUN_BIN: the binary under test (make test's demo build, or the full
	// distribution), already built. It comes from the test's own
	// environment and is one argument to make: no shell sees it.
	logs, began, stop := startMake(t, "run", "RUN_BIN="+bin)

	summary := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d\.\d{3}  info  42 GPUs: \d+ compute_bound, .*idle \(1 held by a pod: \$6\.88/h wasted\)`)
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
	first15 := logs.String()
	// The causes, in data time (the fleets' clocks are the wall clock
	// from the collector's start): the fabric_errors fault starts at 20 s,
	// the straggler is found ~15 s later; the loader's throttling shows
	// from the node's second reading.
	causes := map[string]*regexp.Regexp{
		"the straggler on the degraded rail": regexp.MustCompile(`(?m)^\S+  info  GPU straggler explained  rack-b-1/gpu1  ml/ib-pretrain-worker-1  job=ib-pretrain ` +
			`bottleneck=\w+ cause=fabric_errors evidence="symbol errors \+[0-9,]+/min on mlx5_1:1" hint=check_fabric$`),
		"the throttled data loader": regexp.MustCompile(`(?m)^\S+  info  GPU wait explained  rack-b-2/gpu1  ml/data-loader-2-1  ` +
			`bottleneck=input_bound cause=cpu_throttled evidence="throttled in \d+ % of periods at a 4-CPU limit" hint=raise_cpu_limit$`),
	}
	seen := map[string]string{}
	for time.Since(began) < 2*time.Minute && len(seen) < len(causes) {
		out := logs.String()
		for what, re := range causes {
			if _, ok := seen[what]; !ok && re.MatchString(out) {
				seen[what] = time.Since(began).Round(time.Second).String()
			}
		}
		time.Sleep(time.Second)
	}
	stop()
	out := logs.String()
	for what := range causes {
		if at, ok := seen[what]; ok {
			t.Logf("%s explained %s after make run started: %s", what, at, causes[what].FindString(out))
		} else {
			t.Errorf("%s not explained within two minutes", what)
		}
	}
	// The all-reduce between the L40S nodes is communication bound over
	// the network (symmetric PCIe traffic on both ranks). Its first
	// verdict, before any PCIe rate (a counter needs two samples), reads
	// launch_bound; the first summary's change line names it as the class
	// it changed from, and, when that summary comes before the second
	// sample of dcgm/causes, counts the two ranks as "2 launch_bound".
	// No line may name either GPU as launch_bound.
	if l := regexp.MustCompile(`(?m)^.*rack-b-[23]/gpu0.*(bottleneck|to)=launch_bound.*$`).FindString(out); l != "" {
		t.Errorf("the inter-node all-reduce read launch_bound: %q", l)
	}
	// Its rail's NIC moves the collective both ways, so the class rests on
	// the NIC's own figures, not on the PCIe symmetry that infers them.
	// A first summary that comes before gpu_node/causes' second reading
	// (a NIC's rate needs two) logs the change on PCIe's evidence; the
	// class holds, so no later change line follows, and the NIC's figures
	// show in the wait's explanation instead: either says the rail was read.
	byNIC := regexp.MustCompile(`(?m)gpu=rack-b-2/gpu0 from=\w+ to=communication_bound .*evidence=nic scope=network`).MatchString(out)
	railLoad := regexp.MustCompile(`(?m)GPU wait explained  rack-b-2/gpu0 .*bottleneck=communication_bound .*evidence="eth\d+ at \d+ % of 100 Gb/s`).MatchString(out)
	if !byNIC && !railLoad {
		t.Error("no communication_bound for the all-reduce's rack-b-2/gpu0 on its NIC's figures (evidence=nic, or its rail's load in the wait's explanation)")
	}
	if t.Failed() || !summary.MatchString(first15) {
		t.Logf("make run's log:\n%s", out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	banner := "otelcol-gpu on 32 simulated GPUs (24 NVIDIA, 8 AMD), 42 devices with MIG instances and partitions. Metrics: http://127.0.0.1:9400/metrics. Log: alerts, stragglers and their causes as they happen, a fleet summary within 10 s, then every 30 s."
	if lines[0] != banner {
		t.Errorf("first line %q, want the banner %q", lines[0], banner)
	}
	if loc := summary.FindStringIndex(first15); loc == nil {
		t.Error("no fleet summary within 15 s")
	} else {
		t.Logf("summary: %s", strings.SplitN(first15[loc[0]:], "\n", 2)[0])
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
	if len(devices) != 42 {
		t.Errorf("hw_status for %d devices, want every one of the 42", len(devices))
	}
	for id := range devices {
		if states[id] != 1 {
			t.Errorf("device %s is in %d states, want 1", id, states[id])
		}
	}
	inFirst15 := len(strings.Split(strings.TrimRight(first15, "\n"), "\n"))
	for i, l := range lines[1:] {
		for _, own := range []string{"service.instance.id", "otelcol.component", "otelcol.pipeline", `"resource"`} {
			if strings.Contains(l, own) {
				t.Errorf("a line carries the collector's own %s: %q", own, l)
			}
		}
		// A line a person reads in a terminal. The longest is a class
		// change: GPU, both classes, workload, hint and the evidence the
		// verdict rests on, about 180 characters with the example's names.
		// Two kinds are longer: a cause's line carries the GPU, its pod
		// and job, class, cause, hint and the analyzer's evidence in words
		// (up to ~90 characters), ~200-245 in all; and a fleet summary
		// past the first lists stragglers, faults and health.
		limit := 180
		switch {
		case strings.Contains(l, "  info  GPU wait explained  ") || strings.Contains(l, "  info  GPU straggler explained  "):
			limit = 250
		case i+1 >= inFirst15 && strings.Contains(l, " GPUs: "):
			continue
		}
		if len(l) > limit {
			t.Errorf("a line of %d characters: %q", len(l), l)
		}
	}
}

// startMake runs make TARGET ARG in the repository root, in its own
// process group so that make and the collector it started stop together,
// once port 9400 (where both make run configurations serve metrics) is
// free. stop sends SIGTERM and waits; it runs at the test's end anyway.
func startMake(t *testing.T, target, arg string) (logs *syncBuffer, began time.Time, stop func()) {
	t.Helper()
	if l, err := net.Listen("tcp", "127.0.0.1:9400"); err != nil {
		t.Fatalf("port 9400, where make %s serves metrics, is taken: %v", target, err)
	} else {
		l.Close()
	}
	logs = &syncBuffer{}
	cmd := exec.Command("make", "-s", "-C", "..", target, arg) //nolint:gosec // the test's own binary path, from its environment
	cmd.Stdout, cmd.Stderr = logs, logs
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	began = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stopped := false
	stop = func() {
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
			t.Errorf("make %s did not stop within 30 s of SIGTERM", target)
		}
	}
	t.Cleanup(stop)
	return logs, began, stop
}
