//go:build e2e

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// prometheus is Debian's Prometheus, run on loopback with the remote-write
// receiver, a temporary data directory and a port chosen at run time.
type prometheus struct {
	bin, dir, config string
	flags            []string // beside the common ones: which receiver
	retention        string   // --storage.tsdb.retention.time; 1d if empty
	port             int
	cmd              *exec.Cmd
	done             chan struct{}
	logs             *syncBuffer
}

// prometheusBin is Debian's prometheus, or $PROMETHEUS.
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("prometheus"); err != nil {
			t.Fatalf("prometheus not found (make e2e installs Debian's package): %v", err)
		}
	}
	return bin
}

func startPrometheus(t *testing.T, dir string, port int) *prometheus {
	t.Helper()
	bin := prometheusBin(t)
	// The monitoring mixin's rules, as make mixin generates them.
	rules, err := filepath.Abs(filepath.Join("..", "examples", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  evaluation_interval: 15s\nrule_files: ["+strconv.Quote(rules)+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{bin: bin, dir: dir, config: cfg, port: port, flags: []string{"--web.enable-remote-write-receiver"}}
	p.start(t)
	return p
}

func (p *prometheus) url() string { return fmt.Sprintf("http://127.0.0.1:%d", p.port) }

func (p *prometheus) start(t *testing.T) {
	t.Helper()
	p.logs = &syncBuffer{}
	retention := p.retention
	if retention == "" {
		retention = "1d"
	}
	p.cmd = exec.Command(p.bin, append([]string{"--config.file=" + p.config, "--storage.tsdb.path=" + filepath.Join(p.dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", p.port),
		"--storage.tsdb.retention.time=" + retention, "--log.level=warn"}, p.flags...)...)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.done = make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop() })
	if !ready(p.url()+"/-/ready", 30*time.Second) {
		t.Fatalf("prometheus not ready: %s", p.logs.String())
	}
}

// stop stops Prometheus by PID.
func (p *prometheus) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

type promResult struct {
	Metric map[string]string `json:"metric"`
	Value  [2]any            `json:"value"`
}

func (p *prometheus) query(t *testing.T, q string, at time.Time) []promResult {
	t.Helper()
	v := url.Values{"query": {q}}
	if !at.IsZero() {
		v.Set("time", strconv.FormatFloat(float64(at.UnixNano())/1e9, 'f', 3, 64))
	}
	resp, err := http.Get(p.url() + "/api/v1/query?" + v.Encode())
	if err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []promResult `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s", q, err, body.Error)
	}
	return body.Data.Result
}

// samples counts the samples of otelcol-gpu's metrics (hw_*, nvidia_*, amd_*, otelgpu_*, not
// the recording rules' outputs, whose names have colons) in
// the span seconds up to at, metric by metric: count_over_time drops the
// metric name, so one query over all of them would collide.
func (p *prometheus) samples(t *testing.T, span int, at time.Time) int {
	t.Helper()
	resp, err := http.Get(p.url() + "/api/v1/label/__name__/values")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var names struct{ Data []string }
	if err := json.NewDecoder(resp.Body).Decode(&names); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, n := range names.Data {
		if !strings.HasPrefix(n, "hw_") && !strings.HasPrefix(n, "nvidia_") && !strings.HasPrefix(n, "amd_") && !strings.HasPrefix(n, "otelgpu_") {
			continue
		}
		if strings.Contains(n, ":") {
			continue // a recording rule's output (level:metric:operation), not a sample sent
		}
		if r := p.query(t, fmt.Sprintf("sum(count_over_time(%s[%ds]))", n, span), at); len(r) == 1 {
			total += int(r[0].float(t))
		}
	}
	return total
}

func (r promResult) float(t *testing.T) float64 {
	s, _ := r.Value[1].(string)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("value %v: %v", r.Value, err)
	}
	return f
}

// fileDataPoints counts the data points the collector wrote to its file
// exporter with timestamps up to cutoff: what it sent to Prometheus too.
func fileDataPoints(t *testing.T, path string, cutoff time.Time) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<20), 64<<20)
	var um pmetric.JSONUnmarshaler
	n := 0
	for sc.Scan() {
		md, err := um.UnmarshalMetrics(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					dps, ok := metricpoints.Of(ms.At(k))
					if !ok {
						continue
					}
					for l := 0; l < dps.Len(); l++ {
						if !dps.At(l).Timestamp().AsTime().After(cutoff) {
							n++
						}
					}
				}
			}
		}
	}
	return n
}

// TestE2EPrometheusRemoteWrite runs examples/prometheus/config.yaml into a
// real Prometheus, takes Prometheus down for 60 s mid-run, and checks that
// every GPU's series, the analyzer's verdicts and every dashboard panel are
// there, and that no sample was lost. In parallel with
// TestE2EPrometheusKill's runs: its own Prometheus, mostly asleep.
func TestE2EPrometheusRemoteWrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prom := startPrometheus(t, dir, freePort(t))
	sent := filepath.Join(dir, "sent.jsonl")
	c := startEnv(t, []string{
		"PROMETHEUS_REMOTE_WRITE_URL=" + prom.url() + "/api/v1/write",
		"OTELCOL_GPU_QUEUE_DIR=" + filepath.Join(dir, "wal"),
	}, "--config", filepath.Join("..", "examples", "prometheus", "config.yaml"),
		"--set=exporters::file::path="+sent,
		"--set=service::pipelines::metrics::exporters=[prometheus_remote_write, file]",
		"--set=service::telemetry::metrics::level=none")
	began := time.Now()

	time.Sleep(30 * time.Second)
	prom.stop()
	t.Logf("prometheus stopped at %v for 60 s", time.Since(began).Round(time.Second))
	time.Sleep(60 * time.Second)
	if !c.alive() {
		t.Fatal("the collector exited during the outage")
	}
	prom.start(t)
	t.Logf("prometheus restarted at %v", time.Since(began).Round(time.Second))
	time.Sleep(30 * time.Second)

	// Every data point sent up to a cut-off must be in Prometheus, the
	// outage's included, once the write-ahead log has drained.
	cutoff := time.Now().Add(-10 * time.Second)
	want := fileDataPoints(t, sent, cutoff)
	span := int(cutoff.Sub(began).Seconds()) + 60
	var got int
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if got = prom.samples(t, span, cutoff); got >= want {
			break
		}
		time.Sleep(2 * time.Second)
	}
	t.Logf("samples up to the cut-off: %d sent by the collector, %d in Prometheus", want, got)
	if want == 0 || got != want {
		t.Fatalf("sample count: the collector sent %d, Prometheus has %d", want, got)
	}

	// Every simulated GPU has its series.
	for vendor, n := range map[string]float64{"NVIDIA": 16, "AMD": 8} {
		q := fmt.Sprintf(`count(count by (hw_id) (hw_temperature_celsius{hw_vendor=%q}))`, vendor)
		if r := prom.query(t, q, time.Time{}); len(r) != 1 || r[0].float(t) != n {
			t.Errorf("%s GPUs with series: %v, want %v", vendor, r, n)
		}
	}
	// The verdicts agree with the injected faults.
	for _, check := range []struct{ what, query string }{
		{"slow rank 0/5 is a straggler", `otelgpu_straggler_state{host_name="gpu-node-0", hw_name="gpu5"} == 1`},
		{"0/2 is thermally throttled", `otelgpu_bottleneck_state{host_name="gpu-node-0", hw_name="gpu2", otelgpu_bottleneck_class="throttled"} == 1`},
		{"1/3 is faulted after its XID 79", `otelgpu_bottleneck_state{host_name="gpu-node-1", hw_name="gpu3", otelgpu_bottleneck_class="faulted"} == 1`},
		{"1/5 is faulted after its ECC error", `otelgpu_bottleneck_state{host_name="gpu-node-1", hw_name="gpu5", otelgpu_bottleneck_class="faulted"} == 1`},
		{"GPUFaulted fires for 1/3", `otelgpu_alerts{alertname="GPUFaulted", alertstate="firing", host_name="gpu-node-1", hw_name="gpu3"} == 1`},
		{"the notebook's GPU 1/6 is idle and held", `otelgpu_bottleneck_state{host_name="gpu-node-1", hw_name="gpu6", otelgpu_bottleneck_class="idle", k8s_pod_name!=""} == 1`},
		{"the training job's healthy GPU 0/0 is compute bound", `otelgpu_bottleneck_state{host_name="gpu-node-0", hw_name="gpu0", otelgpu_bottleneck_class="compute_bound"} == 1`},
		{"the healthy GPU 0/0 is no straggler", `otelgpu_straggler_state{host_name="gpu-node-0", hw_name="gpu0"} == 0`},
		// The AMD node, read and judged the same way.
		// Without SM activity, the slow rank is told by its power: it works
		// while its peers spin part of each step in the collective.
		{"AMD slow rank 2/5 is a straggler", `otelgpu_straggler_state{host_name="gpu-node-2", hw_name="gpu5", hw_vendor="AMD"} == 1`},
		{"AMD 2/6, its peer, is no straggler", `otelgpu_straggler_state{host_name="gpu-node-2", hw_name="gpu6", hw_vendor="AMD"} == 0`},
		{"AMD 2/2 is thermally throttled", `otelgpu_bottleneck_state{host_name="gpu-node-2", hw_name="gpu2", hw_vendor="AMD", otelgpu_bottleneck_class="throttled"} == 1`},
		{"AMD 2/2's thermal violation is there", `amd_gpu_violation_residency_ratio{host_name="gpu-node-2", hw_name="gpu2", amd_gpu_violation_reason="socket_thermal"} > 0`},
		{"AMD 2/0 is priced", `otelgpu_cost_total{host_name="gpu-node-2", hw_name="gpu0", hw_vendor="AMD", otelgpu_usage_state="used"} > 0`},
	} {
		if r := prom.query(t, check.query, time.Time{}); len(r) != 1 {
			t.Errorf("%s: %s returned %d series", check.what, check.query, len(r))
		}
	}
	// The rules load and evaluate.
	resp, err := http.Get(prom.url() + "/api/v1/rules")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Data struct {
			Groups []struct {
				Rules []struct {
					Name, Health, LastError string
				}
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&rules); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	n := 0
	for _, g := range rules.Data.Groups {
		for _, r := range g.Rules {
			n++
			if r.Health == "err" {
				t.Errorf("rule %s: %s", r.Name, r.LastError)
			}
		}
	}
	if n == 0 {
		t.Error("no rules loaded")
	}

	checkDashboards(t, prom)
	checkDCGMExporterDashboard(t, prom)
}

// panelQuery is one query of a dashboard panel.
type panelQuery struct{ file, title, expr string }

// dashboardQueries reads every panel query of the dashboards in
// examples/grafana, which the monitoring mixin (mixin/) generates.
func dashboardQueries(t *testing.T) []panelQuery {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "grafana", "*.json"))
	if len(files) < 4 {
		t.Fatalf("found %d dashboards", len(files))
	}
	var out []panelQuery
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Panels []struct {
				Title   string
				Targets []struct{ Expr string }
			}
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, p := range d.Panels {
			for _, tg := range p.Targets {
				out = append(out, panelQuery{filepath.Base(f), p.Title, tg.Expr})
			}
		}
	}
	return out
}

// checkDashboards runs every panel query of every dashboard in
// examples/grafana, its variables at All, and requires data; then with the
// vendor variable at AMD.
func checkDashboards(t *testing.T, prom *prometheus) {
	var queries []panelQuery
	for _, q := range dashboardQueries(t) {
		// The alert delivery panels read the gpu_alertmanager exporter's
		// telemetry, which this test's collector (no such exporter,
		// telemetry off) has none of: TestAlertmanagerPaging checks them
		// (checkDeliveryPanels), against collectors that page.
		if !alertDeliveryPanel.MatchString(q.title) {
			queries = append(queries, q)
		}
	}
	for _, q := range queries {
		// The vendor and model variables at All, as Grafana expands them
		// (allValue .*): an NVIDIA-only fleet, and series without the
		// labels, still answer.
		expr := strings.NewReplacer("$vendor", ".*", "$model", ".*").Replace(q.expr)
		if r := prom.query(t, expr, time.Time{}); len(r) == 0 {
			t.Errorf("%s: panel %q: %s returned no data", q.file, q.title, q.expr)
		}
	}
	t.Logf("%d dashboard queries returned data", len(queries))

	// With the vendor variable at AMD: every panel that is not NVIDIA's
	// alone answers for the AMD GPUs too, except those that show a state
	// the AMD node is not in (no idle GPU, no firing alert). Its slow rank
	// is a straggler, so the straggler panels answer for AMD too.
	notOnAMD := regexp.MustCompile(`\(NVIDIA( with profiling only)?\)|[Ii]dle|[Ff]iring|funnel|Waiting|wasting|Wasted|GPU spend`)
	amd := 0
	for _, q := range queries {
		if notOnAMD.MatchString(q.title) {
			continue
		}
		expr := strings.NewReplacer("$vendor", "AMD", "$model", ".*").Replace(q.expr)
		if r := prom.query(t, expr, time.Time{}); len(r) == 0 {
			t.Errorf("%s: panel %q with vendor AMD: %s returned no data", q.file, q.title, expr)
		}
		amd++
	}
	t.Logf("%d dashboard queries returned AMD data", amd)
}

// nvidiaDashboardQueries are the queries of NVIDIA's standard DCGM exporter
// Grafana dashboard, with its instance and gpu variables at "All".
var nvidiaDashboardQueries = []string{
	`DCGM_FI_DEV_GPU_TEMP{instance=~".*", gpu=~".*"}`,
	`avg(DCGM_FI_DEV_GPU_TEMP{instance=~".*", gpu=~".*"})`,
	`DCGM_FI_DEV_POWER_USAGE{instance=~".*", gpu=~".*"}`,
	`sum(DCGM_FI_DEV_POWER_USAGE{instance=~".*", gpu=~".*"})`,
	`DCGM_FI_DEV_SM_CLOCK{instance=~".*", gpu=~".*"} * 1000000`,
	`DCGM_FI_DEV_MEM_CLOCK{instance=~".*", gpu=~".*"} * 1000000`,
	`DCGM_FI_DEV_GPU_UTIL{instance=~".*", gpu=~".*"}`,
	`DCGM_FI_DEV_MEM_COPY_UTIL{instance=~".*", gpu=~".*"}`,
	`DCGM_FI_DEV_FB_USED{instance=~".*", gpu=~".*"}`,
	`DCGM_FI_DEV_FB_FREE{instance=~".*", gpu=~".*"}`,
	`DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{instance=~".*", gpu=~".*"}`,
	`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{instance=~".*", gpu=~".*"}`,
}

// checkDCGMExporterDashboard runs a collector with dcgm-exporter naming into
// the same Prometheus and checks that the standard dashboard's queries
// return data, labelled as dcgm-exporter labels them.
func checkDCGMExporterDashboard(t *testing.T, prom *prometheus) {
	c := startEnv(t, []string{
		"PROMETHEUS_REMOTE_WRITE_URL=" + prom.url() + "/api/v1/write",
		"OTELCOL_GPU_QUEUE_DIR=" + filepath.Join(prom.dir, "wal-dcgm-exporter"),
	}, "--config", filepath.Join("..", "examples", "prometheus", "config.yaml"),
		"--set=receivers::dcgm::naming=dcgm_exporter",
		"--set=receivers::dcgm::collection_interval=1s",
		"--set=service::pipelines::metrics::processors=[]",
		// The first collector holds the self-telemetry port.
		"--set=service::telemetry::metrics::level=none")
	labels := regexp.MustCompile(`^GPU-[0-9a-f-]{36}$`)
	deadline := time.Now().Add(60 * time.Second)
	for _, q := range nvidiaDashboardQueries {
		var r []promResult
		for time.Now().Before(deadline) {
			if r = prom.query(t, q, time.Time{}); len(r) > 0 {
				break
			}
			time.Sleep(time.Second)
		}
		if len(r) == 0 {
			t.Errorf("dcgm-exporter dashboard query %s returned no data", q)
			continue
		}
		if strings.Contains(q, "{") && !strings.HasPrefix(q, "avg(") && !strings.HasPrefix(q, "sum(") {
			if m := r[0].Metric; !labels.MatchString(m["UUID"]) || m["gpu"] == "" || m["modelName"] == "" || m["Hostname"] == "" {
				t.Errorf("%s: labels %v lack dcgm-exporter's UUID, gpu, modelName, Hostname", q, m)
			}
		}
	}
	c.stop(t)
}
