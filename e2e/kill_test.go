//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// prometheus3Binary is Prometheus 3 (its OTLP receiver), PROMETHEUS3 or the
// one `make prometheus3` builds.
func prometheus3Binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("PROMETHEUS3")
	if bin == "" {
		bin = filepath.Join("..", "bin", "prometheus3")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("Prometheus 3 not found at %s (run make prometheus3, or set PROMETHEUS3): %v", bin, err)
	}
	return bin
}

// startPrometheus3 runs Prometheus 3 with examples/prometheus/prometheus-otlp.yml,
// its OTLP receiver and the given flags. The rules are left out: their outputs would be
// samples that nobody sent, in the counts below.
func startPrometheus3(t *testing.T, dir string, port int, flags ...string) *prometheus {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "examples", "prometheus", "prometheus-otlp.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	delete(cfg, "rule_files")
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{bin: prometheus3Binary(t), dir: dir, config: path, port: port, flags: append([]string{"--web.enable-otlp-receiver"}, flags...)}
	p.start(t)
	return p
}

// selfMetric sums the series of one of Prometheus' own metrics, read from
// its /metrics.
func (p *prometheus) selfMetric(t *testing.T, name string) float64 {
	t.Helper()
	body, err := scrape(p.url() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	sum, found := 0.0, false
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		sum, found = sum+f, true
	}
	if !found {
		t.Fatalf("Prometheus has no %s", name)
	}
	return sum
}

// samplesByGPU counts, per hw_id, the samples of the collector's metrics
// (hw_*, nvidia_*, amd_*, otelgpu_*) in the span seconds up to at; all counts every series,
// target_info included.
func (p *prometheus) samplesByGPU(t *testing.T, span int, at time.Time, all bool) map[string]int {
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
	counts := map[string]int{}
	for _, n := range names.Data {
		if !all && !strings.HasPrefix(n, "hw_") && !strings.HasPrefix(n, "nvidia_") && !strings.HasPrefix(n, "amd_") && !strings.HasPrefix(n, "otelgpu_") {
			continue
		}
		for _, r := range p.query(t, fmt.Sprintf("sum by (hw_id) (count_over_time(%s[%ds]))", n, span), at) {
			counts[r.Metric["hw_id"]] += int(r.float(t))
		}
	}
	return counts
}

// otlpRecorder is an OTLP/HTTP endpoint that records every data point it
// is sent, by series and timestamp. With forward set it is the door in
// front of Prometheus: it passes each request on and records the points of
// those Prometheus acknowledged, so that a point acknowledged twice, which
// Prometheus would drop without a word, is seen. Without, it answers
// itself: the agent's count of what it produced. With opaque set it only
// forwards (remote-write, which it does not read).
type otlpRecorder struct {
	forward string
	opaque  bool
	srv     *httptest.Server

	door     sync.RWMutex // held shared by each request in flight
	closed   bool
	loseAcks int // requests Prometheus takes that the sender is told it did not (503)

	mu     sync.Mutex
	points map[string]*recordedPoint
	other  int // data points neither gauge nor sum
	errs   []error
}

type recordedPoint struct {
	gpu   string
	ms    int64 // the timestamp, in Prometheus' milliseconds
	times int   // how often it was acknowledged
}

func newOTLPRecorder(t *testing.T, forward string) *otlpRecorder {
	r := &otlpRecorder{forward: forward, points: map[string]*recordedPoint{}}
	r.srv = httptest.NewServer(r)
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpRecorder) url() string { return r.srv.URL }

// close makes the door answer 503 (retryable) and returns once no request
// is in flight; open lets requests through again.
func (r *otlpRecorder) close() { r.door.Lock(); r.closed = true; r.door.Unlock() }
func (r *otlpRecorder) open()  { r.door.Lock(); r.closed = false; r.door.Unlock() }

func (r *otlpRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.door.RLock()
	defer r.door.RUnlock()
	if r.closed {
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	status := http.StatusOK
	var answer []byte
	if r.forward == "" {
		w.Header().Set("Content-Type", "application/x-protobuf")
		answer, _ = pmetricotlp.NewExportResponse().MarshalProto()
	} else {
		fwd, err := http.NewRequest(http.MethodPost, r.forward, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fwd.Header = req.Header.Clone()
		resp, err := http.DefaultClient.Do(fwd)
		if err != nil { // Prometheus is down
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		answer, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	}
	if status/100 == 2 && !r.opaque {
		if err := r.record(req.Header.Get("Content-Encoding"), body); err != nil {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
			if r.forward == "" {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
		}
	}
	if status/100 == 2 && r.forward != "" {
		r.mu.Lock()
		if r.loseAcks > 0 {
			r.loseAcks--
			status = http.StatusServiceUnavailable
		}
		r.mu.Unlock()
	}
	w.WriteHeader(status)
	_, _ = w.Write(answer)
}

func (r *otlpRecorder) record(encoding string, body []byte) error {
	switch encoding {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			return err
		}
		if body, err = io.ReadAll(zr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("content encoding %q", encoding)
	}
	req := pmetricotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rms := req.Metrics().ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		res := rms.At(i).Resource().Attributes()
		resKey, _ := json.Marshal(res.AsRaw()) // map keys sorted: canonical
		gpu := ""
		if v, ok := res.Get("hw.id"); ok {
			gpu = v.AsString()
		}
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				dps, ok := metricpoints.Of(ms.At(k))
				if !ok {
					r.other++
					continue
				}
				for l := 0; l < dps.Len(); l++ {
					dp := dps.At(l)
					attrs, _ := json.Marshal(dp.Attributes().AsRaw())
					key := fmt.Sprintf("%s|%s|%s|%s|%d", resKey, sms.At(j).Scope().Name(), ms.At(k).Name(), attrs, dp.Timestamp())
					p := r.points[key]
					if p == nil {
						p = &recordedPoint{gpu: gpu, ms: int64(dp.Timestamp()) / 1e6}
						r.points[key] = p
					}
					p.times++
				}
			}
		}
	}
	return nil
}

// upTo returns the series-and-timestamp keys recorded with timestamps up to
// cutoff.
func (r *otlpRecorder) upTo(cutoff int64) map[string]*recordedPoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*recordedPoint{}
	for k, p := range r.points {
		if p.ms <= cutoff {
			out[k] = &recordedPoint{gpu: p.gpu, ms: p.ms, times: p.times}
		}
	}
	return out
}

// kill9 sends SIGKILL: no shutdown, no flush, nothing the process could
// still write.
func (c *collector) kill9(t *testing.T, what string) {
	t.Helper()
	if !c.alive() {
		t.Fatalf("the %s exited before it was killed:\n%s", what, c.logs.String())
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-c.done
	c.done <- err
}

// TestE2EPrometheusKill runs the restart-proof paths: the lean agent
// (examples/agent/otlp.yaml) sends to a gateway, which sends to Prometheus 3
// over OTLP (examples/gateway/gateway.yaml) or remote-write
// (examples/gateway/gateway-remote-write.yaml), each with its queue or log
// on disk. Prometheus is down for 60 s; in the middle of the outage the
// gateway is killed with SIGKILL and, while it is down, so is the agent,
// with a backlog that exists only in its queue on disk; both restart on the
// same directories. Afterwards every data point the agent produced is in
// Prometheus, none twice.
//
// What the agent produced is counted as the remote-write outage test counts
// it, by an exporter beside the queue in the agent's pipeline: the lean
// agent has no file exporter (and a file exporter's buffer dies with a
// kill), so an otlp_http exporter without a queue posts each scrape to this
// test, synchronously, before the scrape is done: a kill cannot lose a
// counted point. The gateway runs without the analyzer: its verdicts are
// derived, not samples the agent produced.
//
// Duplicates: Prometheus drops a sample identical to the newest of its
// series without a word, and keeps one that arrives again behind newer
// samples in its out-of-order head, where queries merge it away; neither
// shows in a count of samples. So on the OTLP path a door in front of
// Prometheus records every data point Prometheus acknowledged (none may be
// acknowledged twice), and on both paths Prometheus' own counter of
// appended samples, summed over its two lives, must equal the samples its
// queries count, with none refused as out of order or too old.
//
// E2E_LOSE_ONE_ACK=1 shows that duplicates are seen: the door tells the
// gateway that Prometheus refused the first request after the outage, which
// Prometheus in fact took; the OTLP run then requires points acknowledged
// twice.
//
// The three runs, and TestE2EPrometheusRemoteWrite, run in parallel: each
// has its own Prometheus, ports and directories, and each spends minutes
// asleep through its outage, which CI need not wait out four times.
func TestE2EPrometheusKill(t *testing.T) {
	t.Parallel()
	t.Run("otlp", func(t *testing.T) {
		t.Parallel()
		killDuringOutage(t, true, false, filepath.Join("..", "examples", "gateway", "gateway.yaml"), "PROMETHEUS_OTLP_URL", "/api/v1/otlp/v1/metrics")
	})
	t.Run("remote_write", func(t *testing.T) {
		t.Parallel()
		killDuringOutage(t, false, false, filepath.Join("..", "examples", "gateway", "gateway-remote-write.yaml"), "PROMETHEUS_REMOTE_WRITE_URL", "/api/v1/write")
	})
	// The Kubernetes agent's exporter, load_balancing (examples/gateway/agent.yaml
	// on the full distribution), with a static resolver and no k8s_attributes.
	t.Run("load_balancing", func(t *testing.T) {
		t.Parallel()
		killDuringOutage(t, true, true, filepath.Join("..", "examples", "gateway", "gateway.yaml"), "PROMETHEUS_OTLP_URL", "/api/v1/otlp/v1/metrics")
	})
}

// loadBalancingAgent writes examples/gateway/agent.yaml with the simulated
// fleet, no k8s_attributes (there is no API server here) and a static
// resolver that finds the gateway at port.
func loadBalancingAgent(t *testing.T, dir string, port int) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "examples", "gateway", "agent.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["receivers"] = map[string]any{"dcgm": map[string]any{"backend": "simulated"}}
	delete(cfg["processors"].(map[string]any), "k8s_attributes")
	lb := cfg["exporters"].(map[string]any)["load_balancing"].(map[string]any)
	lb["resolver"] = map[string]any{"static": map[string]any{"hostnames": []any{fmt.Sprintf("127.0.0.1:%d", port)}}}
	cfg["service"].(map[string]any)["pipelines"].(map[string]any)["metrics"].(map[string]any)["processors"] = []any{"memory_limiter"}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "load-balancing-agent.yaml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// killDuringOutage runs the scenario of TestE2EPrometheusKill with a gateway
// configuration that reads Prometheus' address from urlEnv; otlp says
// whether the door can read what passes; loadBalancing runs the Kubernetes
// agent's load_balancing exporter instead of the lean agent.
func killDuringOutage(t *testing.T, otlp, loadBalancing bool, gatewayConfig, urlEnv, path string) {
	dir := t.TempDir()
	var flags []string
	if !otlp {
		flags = append(flags, "--web.enable-remote-write-receiver")
	}
	prom := startPrometheus3(t, dir, freePort(t), flags...)
	door := newOTLPRecorder(t, prom.url()+path)
	door.opaque = !otlp
	produced := newOTLPRecorder(t, "")
	gatewayPort := freePort(t)

	startGateway := func() *collector {
		return startEnv(t, []string{
			urlEnv + "=" + door.url(),
			"OTELCOL_GPU_QUEUE_DIR=" + filepath.Join(dir, "gateway-queue"),
		}, "--config", gatewayConfig,
			fmt.Sprintf("--set=receivers::otlp::protocols::grpc::endpoint=127.0.0.1:%d", gatewayPort),
			"--set=service::pipelines::metrics::processors=[memory_limiter]",
			"--set=service::telemetry::metrics::level=none")
	}
	bin, config, exporter, extra := agentBinary(t), filepath.Join("..", "examples", "agent", "otlp.yaml"), "otlp_grpc",
		[]string{fmt.Sprintf("--set=extensions::health_check::endpoint=127.0.0.1:%d", freePort(t))}
	if loadBalancing {
		bin, config, exporter, extra = binary(t), loadBalancingAgent(t, dir, gatewayPort), "load_balancing",
			[]string{"--set=service::telemetry::metrics::level=none"}
	}
	startAgent := func() *collector {
		return startBinary(t, bin, []string{
			fmt.Sprintf("GATEWAY_ENDPOINT=127.0.0.1:%d", gatewayPort),
			"OTELCOL_GPU_QUEUE_DIR=" + filepath.Join(dir, "agent-queue"),
		}, append([]string{"--config", config,
			"--set=receivers::dcgm::backend=simulated",
			"--set=receivers::dcgm::collection_interval=5s",
			"--set=receivers::dcgm::simulated::seed=1",
			"--set=receivers::dcgm::simulated::hosts=2",
			"--set=receivers::dcgm::simulated::gpus_per_host=8",
			"--set=exporters::otlp_http/count::endpoint=" + produced.url(),
			"--set=exporters::otlp_http/count::compression=none",
			"--set=exporters::otlp_http/count::sending_queue::enabled=false",
			"--set=service::pipelines::metrics::exporters=[" + exporter + ", otlp_http/count]"}, extra...)...)
	}
	gateway, agent := startGateway(), startAgent()
	began := time.Now()
	since := func() time.Duration { return time.Since(began).Round(time.Second) }
	span := func() int { return int(time.Since(began).Seconds()) + 60 }
	stored := func(at time.Time) (total int, byGPU map[string]int) {
		byGPU = prom.samplesByGPU(t, span(), at, false)
		for _, n := range byGPU {
			total += n
		}
		return total, byGPU
	}

	for n, _ := stored(time.Now()); n == 0; n, _ = stored(time.Now()) {
		if time.Since(began) > time.Minute || !gateway.alive() || !agent.alive() {
			t.Fatalf("nothing reached Prometheus within a minute\ngateway:\n%s\nagent:\n%s", gateway.logs.String(), agent.logs.String())
		}
		time.Sleep(time.Second)
	}
	time.Sleep(20 * time.Second)

	// Prometheus' counters restart with it: read them with no request in
	// flight, then stop it.
	door.close()
	appended := prom.selfMetric(t, "prometheus_tsdb_head_samples_appended_total")
	refused := prom.selfMetric(t, "prometheus_tsdb_out_of_order_samples_total") + prom.selfMetric(t, "prometheus_tsdb_too_old_samples_total")
	outOfOrder := prom.selfMetric(t, "prometheus_tsdb_head_out_of_order_samples_appended_total")
	prom.stop()
	door.open() // to a stopped Prometheus: 502, which the gateway retries
	outage := time.Now()
	t.Logf("%v: Prometheus stopped for 60 s (%v samples appended so far)", since(), appended)

	time.Sleep(20 * time.Second)
	gateway.kill9(t, "gateway")
	t.Logf("%v: gateway killed (SIGKILL)", since())
	time.Sleep(10 * time.Second)
	agent.kill9(t, "agent")
	t.Logf("%v: agent killed (SIGKILL) while the gateway is down: its backlog is only in its queue on disk", since())
	time.Sleep(5 * time.Second)
	agent = startAgent()
	t.Logf("%v: agent restarted on the same queue", since())
	time.Sleep(5 * time.Second)
	gateway = startGateway()
	t.Logf("%v: gateway restarted on the same queue", since())
	time.Sleep(time.Until(outage.Add(60 * time.Second)))
	loseAck := otlp && os.Getenv("E2E_LOSE_ONE_ACK") != ""
	if loseAck {
		door.mu.Lock()
		door.loseAcks = 1
		door.mu.Unlock()
	}
	prom.start(t)
	t.Logf("%v: Prometheus restarted", since())
	time.Sleep(30 * time.Second)

	// Every point produced up to a cut-off must reach Prometheus once the
	// queues have drained.
	cutoff := time.Now().Add(-10 * time.Second).Truncate(time.Millisecond)
	want := produced.upTo(cutoff.UnixMilli())
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(2 * time.Second) {
		if n, _ := stored(cutoff); n >= len(want) || time.Now().After(deadline) {
			break
		}
	}
	if !gateway.alive() || !agent.alive() {
		t.Fatalf("a collector exited\ngateway:\n%s\nagent:\n%s", gateway.logs.String(), agent.logs.String())
	}
	door.close() // nothing more arrives: Prometheus' counters and its data hold still
	appended += prom.selfMetric(t, "prometheus_tsdb_head_samples_appended_total")
	refused += prom.selfMetric(t, "prometheus_tsdb_out_of_order_samples_total") + prom.selfMetric(t, "prometheus_tsdb_too_old_samples_total")
	outOfOrder += prom.selfMetric(t, "prometheus_tsdb_head_out_of_order_samples_appended_total")

	// 1. In Prometheus, GPU by GPU: the samples equal the points produced.
	total, byGPU := stored(cutoff)
	wantByGPU := map[string]int{}
	for _, p := range want {
		wantByGPU[p.gpu]++
	}
	gpus := slices.Sorted(maps.Keys(wantByGPU))
	for _, g := range gpus {
		if byGPU[g] != wantByGPU[g] {
			t.Errorf("GPU %s: %d samples produced, %d in Prometheus", g, wantByGPU[g], byGPU[g])
		}
	}
	t.Logf("samples up to the cut-off: %d produced by the agent, %d in Prometheus (%d GPUs)", len(want), total, len(byGPU))
	if len(want) == 0 || len(gpus) != 16 || total != len(want) {
		t.Errorf("sample count: the agent produced %d (%d GPUs), Prometheus has %d", len(want), len(gpus), total)
	}

	// 2. At the door (OTLP): every produced point acknowledged, none twice,
	// nothing else.
	if otlp {
		got, missing, example := door.upTo(cutoff.UnixMilli()), 0, ""
		for k := range want {
			if got[k] == nil {
				missing, example = missing+1, k
			}
		}
		if missing > 0 {
			t.Errorf("%d of %d data points produced by the agent were never acknowledged by Prometheus, e.g. %s", missing, len(want), example)
		}
		for k := range got {
			if want[k] == nil {
				t.Errorf("Prometheus acknowledged a data point the agent never produced: %s", k)
				break
			}
		}
		twice := 0
		for _, p := range door.upTo(time.Now().UnixMilli()) {
			if p.times > 1 {
				twice++
			}
		}
		t.Logf("at Prometheus' door: %d of the %d produced acknowledged, %d acknowledged more than once", len(got), len(want), twice)
		if twice > 0 && !loseAck {
			t.Errorf("%d data points were acknowledged by Prometheus more than once", twice)
		}
		if twice == 0 && loseAck {
			t.Error("E2E_LOSE_ONE_ACK: a request Prometheus took was sent again, and the door did not see it twice")
		}
	}

	// 3. Prometheus' own counters: every sample it appended is one its
	// queries count (a duplicate kept out of order would be appended but
	// merged away), and it refused none as out of order or too old.
	all := 0
	for _, n := range prom.samplesByGPU(t, span(), time.Now(), true) {
		all += n
	}
	t.Logf("Prometheus appended %v samples over its two lives (%v of them out of order, within its window), refused %v; its queries count %d", appended, outOfOrder, refused, all)
	if int(appended) != all && !loseAck {
		t.Errorf("Prometheus appended %v samples but its queries count %d: some arrived twice", appended, all)
	}
	if refused != 0 {
		t.Errorf("Prometheus refused %v samples as out of order or too old", refused)
	}
	produced.mu.Lock()
	defer produced.mu.Unlock()
	door.mu.Lock()
	defer door.mu.Unlock()
	if other := produced.other + door.other; other > 0 {
		t.Errorf("%d data points of types this test does not count", other)
	}
	for _, err := range append(produced.errs, door.errs...) {
		t.Errorf("reading an OTLP request: %v", err)
	}
}
