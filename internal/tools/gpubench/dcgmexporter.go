package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
)

// The DCGM comparison: NVIDIA's dcgm-exporter (built from source; see
// buildDCGMExporter) and otelcol-gpu's dcgm receiver reading the same
// stand-in DCGM library, 32 GPUs, every field of the receiver's catalogue,
// every second.
const standinGPUs = 32

// buildDCGMExporter is how to build the dcgm-exporter this section
// measures. Neither dcgm-exporter nor the go-dcgm commit it pins is served
// by the Go module proxy, so both come from their Git repositories.
const buildDCGMExporter = "git clone -q --branch 4.5.3-4.8.2 https://github.com/NVIDIA/dcgm-exporter /tmp/dcgm-exporter && " +
	"git clone -q https://github.com/NVIDIA/go-dcgm /tmp/go-dcgm && git -C /tmp/go-dcgm checkout -q ec245c09fe3e && " +
	"cd /tmp/dcgm-exporter && go mod edit -replace github.com/NVIDIA/go-dcgm=/tmp/go-dcgm && " +
	"go build -trimpath -o dcgm-exporter ./cmd/dcgm-exporter"

// dcgmPath is one measured path of the DCGM comparison.
type dcgmPath struct {
	key, name string
	samples   []sample
}

type dcgmResult struct {
	exporter string // the dcgm-exporter binary measured; "" when none was given
	window   time.Duration
	paths    []*dcgmPath
}

func (r dcgmResult) path(key string) *dcgmPath {
	for _, p := range r.paths {
		if p.key == key {
			return p
		}
	}
	return nil
}

// process is a child process whose CPU and memory are measured.
type process struct {
	cmd  *exec.Cmd
	logs bytes.Buffer
}

func startProcess(bin string, args, env []string) (*process, error) {
	p := &process{cmd: exec.Command(bin, args...)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = &p.logs, &p.logs
	if err := p.cmd.Start(); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *process) collector() *collector { return &collector{cmd: p.cmd} }

func (p *process) stop() { p.collector().stop() }

// dcgmExporterCounters writes dcgm-exporter's counters file with the
// fields of the receiver's catalog, counters as counters.
func dcgmExporterCounters(path string) error {
	var b strings.Builder
	b.WriteString("# DCGM field, Prometheus type, help: the dcgm receiver's fields.\n")
	for _, f := range dcgmfield.All() {
		kind := "gauge"
		switch f {
		case dcgmfield.TotalEnergy, dcgmfield.ECCSBEVolTotal, dcgmfield.ECCDBEVolTotal, dcgmfield.PCIeReplayCounter,
			dcgmfield.PowerViolation, dcgmfield.ThermalViolation:
			kind = "counter"
		}
		fmt.Fprintf(&b, "%s, %s, %s.\n", f, kind, f)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// scraper fetches a /metrics page every second, as Prometheus would, and
// counts the samples served.
type scraper struct {
	points atomic.Int64
	errs   atomic.Int64
	stop   chan struct{}
	done   chan struct{}
}

func startScraper(url string) *scraper {
	s := &scraper{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		client := &http.Client{Timeout: time.Second}
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			resp, err := client.Get(url)
			if err != nil {
				s.errs.Add(1)
				continue
			}
			var n int64
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				if line := sc.Bytes(); len(line) > 0 && line[0] != '#' {
					n++
				}
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			s.points.Add(n)
		}
	}()
	return s
}

func (s *scraper) close() { close(s.stop); <-s.done }

// waitHTTP waits until url answers 200.
func waitHTTP(url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer within %v", url, within)
}

// measureDCGM runs the DCGM comparison, paths interleaved: the classic
// pipeline (dcgm-exporter scraped by a collector's prometheus receiver,
// exported over OTLP; CPU of both processes), dcgm-exporter alone (scraped
// by this benchmark), and otelcol-gpu's dcgm receiver with the DCGM backend
// in the full distribution and in the lean agent.
func measureDCGM(s *sink, work string) dcgmResult {
	lib, err := dcgmstandin.Build(*standin, work)
	if err != nil {
		log.Fatal(err)
	}
	state := filepath.Join(work, "standin-state-dcgm")
	if err := (dcgmstandin.State{GPUs: standinGPUs, Connected: true}).Write(state); err != nil {
		log.Fatal(err)
	}
	counters := filepath.Join(work, "dcgm-exporter-counters.csv")
	if err := dcgmExporterCounters(counters); err != nil {
		log.Fatal(err)
	}
	env := []string{"LD_LIBRARY_PATH=" + filepath.Dir(lib), "STANDIN_DCGM_STATE=" + state}
	res := dcgmResult{exporter: *dcgmExporter, window: *dcgmWindow}
	// The measurement helpers read -window: this section has its own.
	saved := *window
	*window = *dcgmWindow
	defer func() { *window = saved }()

	// The same processors on every collector path: what a node agent runs.
	tail := "processors:\n  memory_limiter: {check_interval: 1s, limit_mib: 100, spike_limit_mib: 20}\n  batch: {timeout: 200ms}\n" +
		fmt.Sprintf(pipelineTail, s.addr, "none", "%s", "memory_limiter, batch")
	receiverConfig := "receivers:\n  dcgm:\n    backend: dcgm\n    endpoint: localhost:5555\n    collection_interval: 1s\n" +
		fmt.Sprintf(tail, "dcgm")

	type runner func() (sample, error)
	var runners []runner
	add := func(key, name string, run runner) {
		p := &dcgmPath{key: key, name: name}
		res.paths = append(res.paths, p)
		runners = append(runners, func() (sample, error) {
			smp, err := run()
			if err == nil {
				p.samples = append(p.samples, smp)
			}
			return smp, err
		})
	}
	if *dcgmExporter != "" {
		add("classic", "dcgm-exporter + collector `prometheus` receiver → OTLP (CPU and RSS of both processes)", func() (sample, error) {
			return measureClassic(s, work, env, counters)
		})
		add("exporter", "dcgm-exporter alone, `/metrics` scraped every 1 s", func() (sample, error) {
			return measureExporterAlone(env, counters)
		})
	}
	add("otelcol-gpu", "`otelcol-gpu` `dcgm` receiver, DCGM backend → OTLP", func() (sample, error) {
		return measure(s, work, 3*time.Second, receiverConfig, env...)
	})
	if _, err := os.Stat(*agentBin); err == nil {
		add("agent", "`otelcol-gpu-agent` `dcgm` receiver, DCGM backend → OTLP", func() (sample, error) {
			return measureWith(*agentBin, s, work, 3*time.Second, receiverConfig, env...)
		})
	} else {
		log.Printf("dcgm: no agent at %s (make build-agent): not measured", *agentBin)
	}
	for r := 0; r < *runs; r++ {
		for i, run := range runners {
			smp, err := run()
			if err != nil {
				//nolint:gocritic // exitAfterDefer: the deferred restore of -window does not matter once the program exits
				log.Fatalf("dcgm %s: %v", res.paths[i].key, err)
			}
			log.Printf("dcgm run %d %-12s %.3f CPU s/M points, %.0f points/s, %.0f MB", r+1, res.paths[i].key,
				smp.cpuPerMillion(), float64(smp.points)/res.window.Seconds(), smp.rssMB)
		}
	}
	return res
}

func exporterArgs(counters, addr string) []string {
	return []string{"-f", counters, "-a", addr, "-c", "1000", "-r", "localhost:5555", "--disable-startup-validate"}
}

// measureExporterAlone runs dcgm-exporter and scrapes it every second.
func measureExporterAlone(env []string, counters string) (sample, error) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	p, err := startProcess(*dcgmExporter, exporterArgs(counters, addr), env)
	if err != nil {
		return sample{}, err
	}
	defer p.stop()
	url := "http://" + addr + "/metrics"
	if err := waitHTTP(url, 20*time.Second); err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, p.logs.String())
	}
	sc := startScraper(url)
	defer sc.close()
	time.Sleep(3 * time.Second)
	c := p.collector()
	cpu0, err := c.cpuSeconds()
	if err != nil {
		return sample{}, err
	}
	p0 := sc.points.Load()
	time.Sleep(*window)
	cpu1, err := c.cpuSeconds()
	if err != nil {
		return sample{}, err
	}
	smp := sample{cpu: cpu1 - cpu0, points: sc.points.Load() - p0, rssMB: c.peakRSSMB()}
	if smp.points == 0 {
		return smp, fmt.Errorf("no samples served (%d failed scrapes): %s", sc.errs.Load(), p.logs.String())
	}
	return smp, nil
}

// measureClassic runs dcgm-exporter and a collector whose prometheus
// receiver scrapes it every second and exports OTLP to the sink.
func measureClassic(s *sink, work string, env []string, counters string) (sample, error) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort())
	p, err := startProcess(*dcgmExporter, exporterArgs(counters, addr), env)
	if err != nil {
		return sample{}, err
	}
	defer p.stop()
	if err := waitHTTP("http://"+addr+"/metrics", 20*time.Second); err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, p.logs.String())
	}
	config := fmt.Sprintf(`
receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: dcgm-exporter
          scrape_interval: 1s
          scrape_timeout: 1s
          static_configs: [{targets: ["%s"]}]
processors:
  memory_limiter: {check_interval: 1s, limit_mib: 100, spike_limit_mib: 20}
  batch: {timeout: 200ms}
`, addr) + fmt.Sprintf(pipelineTail, s.addr, "none", "prometheus", "memory_limiter, batch")
	c, err := startCollector(work, config)
	if err != nil {
		return sample{}, err
	}
	defer c.stop()
	// The prometheus receiver applies its targets about every 5 s: its
	// first scrape comes some 6 s after start.
	time.Sleep(*warmup)
	e := p.collector()
	cpuE0, err1 := e.cpuSeconds()
	cpuC0, err2 := c.cpuSeconds()
	if err1 != nil || err2 != nil {
		return sample{}, fmt.Errorf("%w %w: %s %s", err1, err2, p.logs.String(), c.logs.String())
	}
	p0 := s.points.Load()
	time.Sleep(*window)
	cpuE1, err1 := e.cpuSeconds()
	cpuC1, err2 := c.cpuSeconds()
	if err1 != nil || err2 != nil {
		return sample{}, fmt.Errorf("%w %w", err1, err2)
	}
	smp := sample{cpu: cpuE1 - cpuE0 + cpuC1 - cpuC0, points: s.points.Load() - p0, rssMB: e.peakRSSMB() + c.peakRSSMB()}
	if smp.points == 0 {
		return smp, fmt.Errorf("no data points reached the sink: %s", c.logs.String())
	}
	return smp, nil
}

func (r dcgmResult) markdown(w func(string, ...any)) {
	w("## 5. DCGM: NVIDIA's dcgm-exporter and the `dcgm` receiver on the same DCGM library")
	w("")
	w("Both read the stand-in DCGM library (`receiver/dcgmreceiver/testdata/standin-dcgm`, loaded as `libdcgm.so.4` through `LD_LIBRARY_PATH`, serving every DCGM call both make), connected through go-dcgm as to a standalone host engine at `localhost:5555`: %d GPUs, the receiver's %d fields (dcgm-exporter's counters file lists the same fields), every second; each run measures a %v window after a warm-up (%v for the classic pipeline, whose `prometheus` receiver scrapes first some 6 s after it starts; 3 s for the others). OTLP without compression; `memory_limiter` and `batch` on every collector. CPU is the processes' threads' run time (both processes for the classic pipeline), per million data points delivered: at the OTLP sink (for the classic pipeline including the `prometheus` receiver's 5 `up` and `scrape_*` points per scrape), or for dcgm-exporter alone, the samples its `/metrics` served to a scrape every second. dcgm-exporter serves the %d fields as %d samples per scrape; the receiver maps them to about 1,419 data points (each clock-event reason a point of its own), so the table also gives CPU per GPU.", standinGPUs, int(dcgmfield.Count), r.window, *warmup, int(dcgmfield.Count), standinGPUs*int(dcgmfield.Count))
	w("")
	if r.exporter == "" {
		w("**dcgm-exporter was not measured**: no binary was given. Build NVIDIA's dcgm-exporter 4.8.2 (neither it nor the go-dcgm commit it pins is on the Go module proxy) and run `make bench` with `DCGM_EXPORTER_BIN` set to it:")
		w("")
		w("```sh")
		w("%s", buildDCGMExporter)
		w("DCGM_EXPORTER_BIN=/tmp/dcgm-exporter/dcgm-exporter make bench")
		w("```")
		w("")
	} else {
		w("dcgm-exporter: `%s` (4.8.2, `-c 1000 -r localhost:5555 --disable-startup-validate`), built with:", filepath.Base(r.exporter))
		w("")
		w("```sh")
		w("%s", buildDCGMExporter)
		w("```")
		w("")
	}
	w("| path | data points/s | CPU s per million data points | CPU ms per GPU per second | peak RSS (MB) |")
	w("|---|---|---|---|---|")
	cpm := map[string]float64{}
	for _, p := range r.paths {
		if len(p.samples) == 0 {
			continue
		}
		c := median(col(p.samples, sample.cpuPerMillion))
		cpm[p.key] = c
		rate := median(col(p.samples, func(s sample) float64 { return float64(s.points) / r.window.Seconds() }))
		perGPU := median(col(p.samples, func(s sample) float64 { return s.cpu / r.window.Seconds() / standinGPUs * 1e3 }))
		w("| %s | %.0f | %.3f | %.3f | %.1f |", p.name, rate, c, perGPU, median(col(p.samples, func(s sample) float64 { return s.rssMB })))
	}
	w("")
	if ours, ok := cpm["otelcol-gpu"]; ok && r.exporter != "" {
		ratio := func(k string) float64 { return ours / cpm[k] }
		w("Targets, `otelcol-gpu` against the others in the same run: ≤ 0.25× the classic pipeline's CPU per data point (%.2f×: %s), ≤ 0.5× dcgm-exporter's alone (%.2f×: %s).",
			ratio("classic"), verdict(ratio("classic") <= 0.25), ratio("exporter"), verdict(ratio("exporter") <= 0.5))
		if agent, ok := cpm["agent"]; ok {
			w("The lean agent: %.2f× the classic pipeline, %.2f× dcgm-exporter alone.", agent/cpm["classic"], agent/cpm["exporter"])
		}
		w("")
	}
	if a, f := r.path("agent"), r.path("otelcol-gpu"); a != nil && f != nil && len(a.samples) > 0 && len(f.samples) > 0 {
		rss := func(p *dcgmPath) float64 { return median(col(p.samples, func(s sample) float64 { return s.rssMB })) }
		w("Lean agent (`make build-agent`) against the full distribution, same configuration, %d GPUs: peak RSS %.1f MB against %.1f MB (target: under 64 MB).", standinGPUs, rss(a), rss(f))
		if e := r.path("exporter"); e != nil && len(e.samples) > 0 {
			w("dcgm-exporter alone: %.1f MB.", rss(e))
		}
		w("")
	}
	w("The receiver's DCGM path reads the latest values with one `dcgmEntitiesGetLatestValues` call per 256 values into a C buffer reused from scrape to scrape; go-dcgm's own call copied each 4 KiB `dcgmFieldValue_v2` into a fresh Go slice (about 10 MB a scrape at 32 GPUs). `go test ./receiver/dcgmreceiver -run '^$' -bench 'BenchmarkScrape/dcgm' -cpuprofile cpu.out` shows where the rest goes.")
	w("")
}

// freePort returns a TCP port free on the loopback interface now, for a
// process that takes its listen address as a flag.
func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
