// Command gpubench measures otelcol-gpu as a whole process and writes
// BENCHMARKS.md: ingestion cost against dcgm-exporter scraped by the
// prometheus receiver, the analyzer against a pass-through, how cost grows
// with the fleet, alert latency, and the DCGM backend (full distribution
// and lean agent) against NVIDIA's dcgm-exporter on the same stand-in DCGM
// library, and the lean agent's CPU with the gpu_node receiver's node
// evidence on and off. `make bench` runs it.
//
// Every figure is a median of several runs; the paths that are compared are
// run interleaved, in the same session. CPU comes from the threads' run
// time in /proc/PID/task/*/schedstat, peak RSS from /proc/PID/status (VmHWM).
// Data points are
// counted where they arrive: an OTLP gRPC sink in this process.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var (
	bin     = flag.String("bin", "bin/otelcol-gpu", "the otelcol-gpu binary")
	out     = flag.String("o", "BENCHMARKS.md", "where to write the report")
	runs    = flag.Int("runs", 5, "runs per measurement (medians are reported)")
	window  = flag.Duration("window", 12*time.Second, "measurement window per run")
	warmup  = flag.Duration("warmup", 8*time.Second, "time before each window of the prometheus receiver path (others: 3 s)")
	standin = flag.String("standin", "receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", "the stand-in libdcgm source")

	agentBin      = flag.String("agent", "bin/otelcol-gpu-agent", "the lean agent binary (make build-agent); measured in the DCGM section when present")
	dcgmExporter  = flag.String("dcgm-exporter", os.Getenv("DCGM_EXPORTER_BIN"), "NVIDIA's dcgm-exporter binary, built from source (default $DCGM_EXPORTER_BIN); without it the DCGM section says how to build it")
	dcgmWindow    = flag.Duration("dcgm-window", 8*time.Second, "measurement window per run in the DCGM section (its four paths keep make bench under 20 minutes)")
	only          = flag.String("only", "", "run one section alone and write only it (to stdout unless -o is given): dcgm, analyzer, gateway, vendors or node")
	gatewayWindow = flag.Duration("gateway-window", 30*time.Second, "measurement window per run in the gateway section (three 10 s scrapes)")
)

func main() {
	flag.Parse()
	log.SetFlags(log.Ltime)
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// run measures and writes the report; its deferred clean-ups run before
// main exits on an error.
func run() error {
	if _, err := os.Stat(*bin); err != nil {
		return fmt.Errorf("%s: %w (run make build)", *bin, err)
	}
	began := time.Now()
	sink, err := startSink()
	if err != nil {
		return err
	}
	defer sink.stop()
	work, err := os.MkdirTemp("", "gpubench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	var r report
	switch *only {
	case "":
	case "dcgm", "analyzer", "gateway", "vendors", "node":
		text := r.dcgmOnly
		switch *only {
		case "dcgm":
			r.dcgm = measureDCGM(sink, work)
		case "analyzer":
			r.analyzer = measureAnalyzer()
			text = r.analyzerOnly
		case "gateway":
			r.gateway = measureGateway(sink, work)
			text = r.gatewayOnly
		case "vendors":
			r.vendors = measureVendors()
			text = r.vendorsOnly
		case "node":
			r.node = measureNode(work)
			text = r.nodeOnly
		}
		r.took = time.Since(began)
		// One section is not BENCHMARKS.md: without -o it goes to stdout.
		outSet := false
		flag.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "o" })
		if !outSet {
			fmt.Print(text())
			return nil
		}
		if err := os.WriteFile(*out, []byte(text()), 0o644); err != nil {
			return err
		}
		log.Printf("wrote %s in %v", *out, r.took.Round(time.Second))
		return nil
	default:
		return fmt.Errorf("-only %q: the sections that run alone are: dcgm, analyzer, gateway, vendors, node", *only)
	}
	r.ingestion = measureIngestion(sink, work)
	r.dcgm = measureDCGM(sink, work)
	r.analyzer = measureAnalyzer()
	r.growth = measureGrowth(sink, work)
	r.latency = measureLatency(sink, work)
	r.gateway = measureGateway(sink, work)
	r.vendors = measureVendors()
	r.node = measureNode(work)
	r.took = time.Since(began)
	if err := os.WriteFile(*out, []byte(r.markdown()), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s in %v", *out, r.took.Round(time.Second))
	return nil
}

// sample is one whole-process measurement.
type sample struct {
	cpu    float64 // seconds of CPU in the window
	points int64   // data points that reached the sink in the window
	rssMB  float64 // peak RSS of the process
}

func (s sample) cpuPerMillion() float64 { return s.cpu / float64(s.points) * 1e6 }

// collector runs otelcol-gpu with a configuration.
type collector struct {
	cmd  *exec.Cmd
	logs bytes.Buffer
}

func startCollector(work, config string) (*collector, error) {
	return startCollectorWith(*bin, work, config)
}

func startCollectorWith(binary, work, config string, env ...string) (*collector, error) {
	path := filepath.Join(work, fmt.Sprintf("config-%d.yaml", time.Now().UnixNano()))
	if err := os.WriteFile(path, []byte(config), 0o644); err != nil {
		return nil, err
	}
	c := &collector{}
	c.cmd = exec.Command(binary, "--config", path)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = &c.logs, &c.logs
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *collector) stop() {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
	}
}

// cpuSeconds is the CPU time the process's threads have run, in
// nanoseconds from /proc/PID/task/*/schedstat: clock ticks (10 ms) are far
// too coarse for a receiver that needs a few milliseconds a second. Go's
// threads live as long as the process, so summing them at both ends of a
// window measures the window.
func (c *collector) cpuSeconds() (float64, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", c.cmd.Process.Pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no schedstat for pid %d", c.cmd.Process.Pid)
	}
	var ns float64
	for _, t := range tasks {
		raw, err := os.ReadFile(t)
		if err != nil {
			continue // a thread that just exited
		}
		if f := strings.Fields(string(raw)); len(f) > 0 {
			v, _ := strconv.ParseFloat(f[0], 64)
			ns += v
		}
	}
	return ns / 1e9, nil
}

func (c *collector) peakRSSMB() float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) >= 2 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// measure runs a configuration and measures one window after the warm-up.
func measure(sink *sink, work string, warm time.Duration, config string, env ...string) (sample, error) {
	return measureWith(*bin, sink, work, warm, config, env...)
}

// measureWith is measure with another collector binary (the lean agent).
func measureWith(binary string, sink *sink, work string, warm time.Duration, config string, env ...string) (sample, error) {
	began := sink.points.Load()
	c, err := startCollectorWith(binary, work, config, env...)
	if err != nil {
		return sample{}, err
	}
	defer c.stop()
	time.Sleep(warm)
	// On a loaded machine a large fleet may take longer than the warm-up
	// to deliver its first data: the window starts once data flows.
	for deadline := time.Now().Add(30 * time.Second); sink.points.Load() == began && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if c.cmd.ProcessState != nil {
		return sample{}, fmt.Errorf("collector exited: %s", c.logs.String())
	}
	cpu0, err := c.cpuSeconds()
	if err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, c.logs.String())
	}
	p0 := sink.points.Load()
	time.Sleep(*window)
	cpu1, err := c.cpuSeconds()
	if err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, c.logs.String())
	}
	s := sample{cpu: cpu1 - cpu0, points: sink.points.Load() - p0, rssMB: c.peakRSSMB()}
	if s.points == 0 {
		return s, fmt.Errorf("no data points reached the sink: %s", c.logs.String())
	}
	return s, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func machine() string {
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if strings.HasPrefix(line, "model name") {
				model = strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
				break
			}
		}
	}
	mem := ""
	if raw, err := os.ReadFile("/proc/meminfo"); err == nil {
		f := strings.Fields(strings.SplitN(string(raw), "\n", 2)[0])
		if kb, err := strconv.ParseFloat(f[1], 64); err == nil {
			mem = fmt.Sprintf(", %.0f GiB memory", kb/1024/1024)
		}
	}
	return fmt.Sprintf("%d CPUs (%s)%s, %s, %s/%s", runtime.NumCPU(), model, mem, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
