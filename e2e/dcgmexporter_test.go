//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The devices on the captured dcgm-exporter pages (see
// processor/fromdcgmexporterprocessor/testdata/dcgm-exporter): GPU 0 is
// served as its MIG instance 1, GPU 3 is a T4 without profiling.
const (
	pageGPU0 = "GPU-5ca1ab1e-0000-4000-8000-000000000000"
	pageGPU1 = "GPU-5ca1ab1e-0000-4000-8000-000000000001"
	pageGPU2 = "GPU-5ca1ab1e-0000-4000-8000-000000000002"
	pageGPU3 = "GPU-5ca1ab1e-0000-4000-8000-000000000003"
)

// pageDevice is one device on the page: how dcgm-exporter labels it, and
// the hw.id the translation gives it.
type pageDevice struct {
	gpu, uuid, gi string
	hwID          string
}

var pageDevices = []pageDevice{
	{"0", pageGPU0, "1", pageGPU0 + "/1/0"},
	{"1", pageGPU1, "", pageGPU1},
	{"2", pageGPU2, "", pageGPU2},
	{"3", pageGPU3, "", pageGPU3},
}

// exporterPages serves dcgm-exporter pages that change when the test says
// (a generation), and counts which generation each scraper fetched: the
// collector at /metrics, Prometheus at /prometheus/metrics.
type exporterPages struct {
	mu      sync.Mutex
	gen     int
	pages   map[int][]byte
	fetched map[string]map[int]int // path -> generation -> scrapes
}

func (e *exporterPages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	page := e.pages[e.gen]
	if e.fetched[r.URL.Path] == nil {
		e.fetched[r.URL.Path] = map[int]int{}
	}
	e.fetched[r.URL.Path][e.gen]++
	e.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write(page)
}

func (e *exporterPages) set(gen int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gen = gen
}

func (e *exporterPages) scrapes(path string, gen int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fetched[path][gen]
}

// waitScraped waits until path has fetched generation gen.
func (e *exporterPages) waitScraped(t *testing.T, c *collector, path string, gen int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for e.scrapes(path, gen) == 0 {
		if c != nil && !c.alive() {
			t.Fatal("collector exited")
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not fetch page generation %d within %v", path, gen, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// editPage returns a captured page with some values changed: edit gets
// each sample's metric name, labels and value and returns its new value,
// or "" to keep it.
func editPage(t *testing.T, name string, edit func(metric, labels, value string) string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "processor", "fromdcgmexporterprocessor", "testdata", "dcgm-exporter", name))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '{'); i > 0 && !strings.HasPrefix(line, "#") {
			j := strings.LastIndexByte(line, '}')
			if v := edit(line[:i], line[i+1:j], strings.TrimSpace(line[j+1:])); v != "" {
				line = line[:j+1] + " " + v
			}
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

func (d pageDevice) on(labels string) bool {
	if !strings.Contains(labels, `UUID="`+d.uuid+`"`) {
		return false
	}
	return d.gi == "" || strings.Contains(labels, `GPU_I_ID="`+d.gi+`"`)
}

// pageValue reads a sample's value from a page.
func pageValue(t *testing.T, page []byte, metric string, d pageDevice) float64 {
	t.Helper()
	for _, line := range strings.Split(string(page), "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		j := strings.LastIndexByte(line, '}')
		if d.on(line[len(metric)+1 : j]) {
			v, err := strconv.ParseFloat(strings.TrimSpace(line[j+1:]), 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("no %s for %s on the page", metric, d.hwID)
	return 0
}

// exported reads a sample of the collector's prometheus exporter: the
// metric with all the labels given, and its value.
func exported(body, metric string, labels ...string) (float64, bool) {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, metric+"{") {
			continue
		}
		j := strings.LastIndexByte(line, '}')
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line[:j], l)
		}
		if !all {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[j+1:]), 64)
		return v, err == nil
	}
	return 0, false
}

// startScrapingPrometheus runs Debian's Prometheus scraping the pages
// every second at /prometheus/metrics.
func startScrapingPrometheus(t *testing.T, target string) *prometheus {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			t.Fatalf("prometheus not found (make e2e installs Debian's package): %v", err)
		}
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: dcgm-exporter
    honor_labels: true
    metrics_path: /prometheus/metrics
    static_configs: [{targets: [%q]}]
`, target)), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{bin: bin, dir: dir, config: cfg, port: freePort(t)}
	p.start(t)
	return p
}

// translated is one comparison of a dcgm-exporter series, as Prometheus
// stores it, with its translation, as the collector exports it.
type translated struct {
	field, metric string
	labels        []string // the translation's own labels, beside hw_id
	scale         float64  // translation = field × scale
	profiling     bool     // absent on the T4
	board         bool     // the board's: on a MIG instance, the GPU's own device has it
}

var translations = []translated{
	{"DCGM_FI_DEV_GPU_UTIL", "hw_gpu_utilization_ratio", []string{`hw_gpu_task="general"`}, 0.01, false, false},
	{"DCGM_FI_DEV_FB_USED", "hw_gpu_memory_usage_bytes", nil, 1 << 20, false, false},
	{"DCGM_FI_DEV_POWER_USAGE", "hw_power_watts", nil, 1, false, true},
	{"DCGM_FI_DEV_GPU_TEMP", "hw_temperature_celsius", []string{`hw_sensor_location="die"`}, 1, false, false},
	{"DCGM_FI_DEV_SM_CLOCK", "nvidia_gpu_clock_frequency_hertz", []string{`nvidia_gpu_clock="sm"`}, 1e6, false, false},
	{"DCGM_FI_PROF_SM_ACTIVE", "nvidia_gpu_sm_active_ratio", nil, 1, true, false},
	{"DCGM_FI_PROF_DRAM_ACTIVE", "nvidia_gpu_dram_active_ratio", nil, 1, true, false},
}

// checkAgree waits until Prometheus holds page generation gen's value of
// every series compared and the collector exports its translation, and
// requires that the two agree, device by device, for every comparison.
func checkAgree(t *testing.T, prom *prometheus, c *collector, metricsURL string, page []byte) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, tr := range translations {
		for _, d := range pageDevices {
			if tr.profiling && d.uuid == pageGPU3 {
				continue
			}
			want := pageValue(t, page, tr.field, d)
			selector := fmt.Sprintf(`%s{UUID=%q`, tr.field, d.uuid)
			if d.gi != "" {
				selector += fmt.Sprintf(`,GPU_I_ID=%q`, d.gi)
			}
			selector += "}"
			var stored, got float64
			var okStored, okGot bool
			for {
				if !c.alive() {
					t.Fatal("collector exited")
				}
				r := prom.query(t, selector, time.Time{})
				okStored = len(r) == 1 && r[0].float(t) == want
				if okStored {
					stored = r[0].float(t)
				}
				if body, err := scrape(metricsURL); err == nil {
					hwID := d.hwID
					if tr.board {
						// The board's power, repeated on each MIG instance,
						// goes to the GPU's own device, once.
						hwID = d.uuid
					}
					got, okGot = exported(body, tr.metric, append([]string{fmt.Sprintf(`hw_id=%q`, hwID)}, tr.labels...)...)
					okGot = okGot && math.Abs(got-want*tr.scale) <= 1e-9*math.Max(1, math.Abs(want*tr.scale))
				}
				if okStored && okGot {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s for %s: Prometheus has %v (%v), the collector exports %s = %v (%v); the page says %v",
						tr.field, d.hwID, stored, okStored, tr.metric, got, okGot, want)
				}
				time.Sleep(500 * time.Millisecond)
			}
			if math.Abs(stored*tr.scale-got) > 1e-9*math.Max(1, math.Abs(got)) {
				t.Errorf("%s: Prometheus %v × %v != collector %s %v", d.hwID, stored, tr.scale, tr.metric, got)
			}
		}
	}
}

// waitExported polls the collector's endpoint until every series wanted is
// there with value 1 (or, for a series without value, present), or fails.
func waitExported(t *testing.T, c *collector, url string, within time.Duration, want ...series) string {
	t.Helper()
	deadline := time.Now().Add(within)
	var body string
	for {
		if !c.alive() {
			t.Fatal("collector exited")
		}
		if b, err := scrape(url); err == nil {
			body = b
			all := true
			for _, s := range want {
				all = all && s.in(body)
			}
			if all {
				return body
			}
		}
		if time.Now().After(deadline) {
			var missing []string
			for _, s := range want {
				if !s.in(body) {
					missing = append(missing, fmt.Sprintf("%s%v %s", s.name, s.labels, s.value))
				}
			}
			t.Fatalf("within %v, not exported: %s\nlast body (bottleneck lines):\n%s", within, strings.Join(missing, "; "), grepLines(body, "otelgpu_bottleneck_state"))
		}
		time.Sleep(time.Second)
	}
}

func bottleneck(hwID, class string) series {
	return series{"otelgpu_bottleneck_state", []string{fmt.Sprintf(`hw_id=%q`, hwID), fmt.Sprintf(`otelgpu_bottleneck_class=%q`, class)}, "1"}
}

// TestE2EPrometheusDCGMExporterPage runs examples/dcgm-exporter/config.yaml
// on the built collector against a server that serves the pages captured
// from NVIDIA's dcgm-exporter 4.8.2, changing over time: utilizations
// scaled, GPU 2 made idle, XID 79 on GPU 1. The collector's verdicts and
// usage counters must name the page's UUIDs, and a real Prometheus that
// scrapes the same pages must hold exactly what the collector translated,
// scrape for scrape.
func TestE2EPrometheusDCGMExporterPage(t *testing.T) {
	idle := func(metric, labels, _ string) string {
		if !pageDevices[2].on(labels) {
			return ""
		}
		switch metric {
		case "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_MEM_COPY_UTIL":
			return "0"
		case "DCGM_FI_PROF_SM_ACTIVE", "DCGM_FI_PROF_SM_OCCUPANCY", "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_PROF_DRAM_ACTIVE",
			"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "DCGM_FI_PROF_PIPE_FP64_ACTIVE", "DCGM_FI_PROF_PIPE_FP32_ACTIVE", "DCGM_FI_PROF_PIPE_FP16_ACTIVE":
			return "0.010000"
		}
		return ""
	}
	scaled := func(factor float64) func(string, string, string) string {
		return func(metric, _, value string) string {
			if metric != "DCGM_FI_DEV_GPU_UTIL" {
				return ""
			}
			v, err := strconv.ParseFloat(value, 64)
			if err != nil {
				t.Fatal(err)
			}
			return strconv.Itoa(int(math.Round(v * factor)))
		}
	}
	both := func(a, b func(string, string, string) string) func(string, string, string) string {
		return func(m, l, v string) string {
			if w := a(m, l, v); w != "" {
				return w
			}
			return b(m, l, v)
		}
	}
	// Generation 1: the first page as captured (no XID yet). 2: the third
	// page (XID 79 on GPU 1), GPU 2 idle, utilization halved. 3: the
	// fourth page (the same XID, no new event), utilization at 80 %.
	pages := &exporterPages{gen: 1, fetched: map[string]map[int]int{}, pages: map[int][]byte{
		1: editPage(t, "scrape-1.prom", func(string, string, string) string { return "" }),
		2: editPage(t, "scrape-3.prom", both(idle, scaled(0.5))),
		3: editPage(t, "scrape-4.prom", both(idle, scaled(0.8))),
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: pages, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	target := l.Addr().String()

	prom := startScrapingPrometheus(t, target)
	port := freePort(t)
	metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	c := startEnv(t, []string{"DCGM_EXPORTER_TARGET=" + target, fmt.Sprintf("METRICS_ENDPOINT=127.0.0.1:%d", port)},
		"--config", filepath.Join("..", "examples", "dcgm-exporter", "config.yaml"),
		// Another test's collector may hold the self-telemetry port.
		"--set=service::telemetry::metrics::level=none")

	// Generation 1: every device translated, Prometheus agreeing; busy
	// GPUs with SM activity are compute-bound, the T4 (no SM activity,
	// busy) unknown.
	pages.waitScraped(t, c, "/metrics", 1, 60*time.Second)
	checkAgree(t, prom, c, metricsURL, pages.pages[1])
	waitExported(t, c, metricsURL, 30*time.Second,
		bottleneck(pageGPU1, "compute_bound"), bottleneck(pageGPU2, "compute_bound"),
		bottleneck(pageGPU0+"/1/0", "compute_bound"), bottleneck(pageGPU3, "unknown"))
	t.Log("generation 1: translated, agreed with Prometheus, verdicts as expected")

	// Generation 2: utilizations halved, GPU 2 idle, XID 79 on GPU 1.
	pages.set(2)
	pages.waitScraped(t, c, "/metrics", 2, 30*time.Second)
	checkAgree(t, prom, c, metricsURL, pages.pages[2])
	waitExported(t, c, metricsURL, 15*time.Second,
		bottleneck(pageGPU1, "faulted"),
		series{"nvidia_gpu_xid_errors_total", []string{fmt.Sprintf(`hw_id=%q`, pageGPU1), `nvidia_gpu_xid="79"`}, "1"})
	t.Log("generation 2: XID 79 on GPU 1: faulted")

	// Generation 3: utilization at 80 %; the same XID, no second event.
	pages.set(3)
	pages.waitScraped(t, c, "/metrics", 3, 30*time.Second)
	checkAgree(t, prom, c, metricsURL, pages.pages[3])
	// GPU 2's window (30 s) fills with idle samples.
	body := waitExported(t, c, metricsURL, 90*time.Second,
		bottleneck(pageGPU2, "idle"), bottleneck(pageGPU1, "faulted"),
		series{"nvidia_gpu_xid_errors_total", []string{fmt.Sprintf(`hw_id=%q`, pageGPU1), `nvidia_gpu_xid="79"`}, "1"})
	t.Log("generation 3: GPU 2 idle, GPU 1 still faulted on its one XID")

	// Usage counters: every device on the page has its time counted, and
	// GPU 2, idle without a pod, spent some as cluster_idle.
	for _, d := range pageDevices {
		re := regexp.MustCompile(`(?m)^otelgpu_time_seconds_total\{[^}]*hw_id="` + regexp.QuoteMeta(d.hwID) + `"[^}]*\} ([0-9.e+]+)$`)
		total := 0.0
		for _, m := range re.FindAllStringSubmatch(body, -1) {
			v, _ := strconv.ParseFloat(m[1], 64)
			total += v
		}
		if total <= 0 {
			t.Errorf("no GPU time counted for %s", d.hwID)
		}
	}
	// GPU 2, idle and held by no pod, spends its time cluster_idle; the
	// counter is reported at least every cost::report_interval.
	for deadline := time.Now().Add(90 * time.Second); ; {
		if v, ok := exported(body, "otelgpu_time_seconds_total", fmt.Sprintf(`hw_id=%q`, pageGPU2), `otelgpu_usage_state="cluster_idle"`); ok && v > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GPU 2, idle and held by no pod, has no cluster_idle time: %s", grepLines(body, "otelgpu_time_seconds_total"))
		}
		time.Sleep(time.Second)
		if b, err := scrape(metricsURL); err == nil {
			body = b
		}
	}
	// The translated originals are not exported; the scrape's own series are.
	if regexp.MustCompile(`(?m)^DCGM_`).MatchString(body) {
		t.Error("dcgm-exporter's DCGM_FI_* series were exported beside their translation")
	}
	if !regexp.MustCompile(`(?m)^up\{`).MatchString(body) {
		t.Error("the scrape's up series did not pass through")
	}
	c.stop(t)
}
