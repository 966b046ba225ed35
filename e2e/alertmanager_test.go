//go:build e2e

package e2e

// The gpu_alertmanager exporter against real Alertmanagers: Debian's
// prometheus-alertmanager (0.25) and 0.31.1 built from the module proxy
// (make alertmanager), each as a cluster of two peers on localhost, with
// a webhook receiver in the test. Two collector replicas run the same
// simulated fleet and send to both peers.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// alertmanagerBins are the Alertmanagers to test: Debian's, and the one
// `make alertmanager` builds (ALERTMANAGER, bin/alertmanager by default).
func alertmanagerBins(t *testing.T) map[string]string {
	t.Helper()
	bins := map[string]string{}
	if p, err := exec.LookPath("prometheus-alertmanager"); err == nil {
		bins["debian"] = p
	} else {
		sharedtest.Need(t, "Debian's prometheus-alertmanager (make e2e installs it): %v", err)
	}
	p := os.Getenv("ALERTMANAGER")
	if p == "" {
		p = filepath.Join("..", "bin", "alertmanager")
	}
	if _, err := os.Stat(p); err == nil {
		bins["proxy"] = p
	} else {
		sharedtest.Need(t, "Alertmanager 0.31.1 at %s (make alertmanager builds it): %v", p, err)
	}
	return bins
}

// notification is one alert of a webhook post, as received.
type notification struct {
	at     time.Time
	status string
	labels map[string]string
}

type webhook struct {
	*httptest.Server
	mu  sync.Mutex
	got []notification
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var msg struct {
			Alerts []struct {
				Status string            `json:"status"`
				Labels map[string]string `json:"labels"`
			} `json:"alerts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			t.Errorf("webhook: %v", err)
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		now := time.Now()
		w.mu.Lock()
		for _, a := range msg.Alerts {
			w.got = append(w.got, notification{at: now, status: a.Status, labels: a.Labels})
		}
		w.mu.Unlock()
	}))
	t.Cleanup(w.Close)
	return w
}

// first returns when the alert of name on host/gpu was first notified with
// status after since, and how many such notifications came.
func (w *webhook) first(name, host, gpu, status string, since time.Time) (time.Time, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var at time.Time
	n := 0
	for _, g := range w.got {
		if g.status == status && g.labels["alertname"] == name && g.labels["host_name"] == host && g.labels["hw_name"] == gpu && !g.at.Before(since) {
			if n == 0 {
				at = g.at
			}
			n++
		}
	}
	return at, n
}

type amPeer struct {
	bin, dir   string
	web, clust int
	peers      []int
	cmd        *exec.Cmd
	logs       *syncBuffer
	done       chan struct{}
}

func (a *amPeer) url() string { return fmt.Sprintf("http://127.0.0.1:%d", a.web) }

func (a *amPeer) start(t *testing.T, config string) {
	t.Helper()
	args := []string{"--config.file=" + config, "--storage.path=" + a.dir,
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", a.web),
		fmt.Sprintf("--cluster.listen-address=127.0.0.1:%d", a.clust),
		fmt.Sprintf("--cluster.advertise-address=127.0.0.1:%d", a.clust),
		// Gossip quickly: the test's peers are on one machine.
		"--cluster.gossip-interval=100ms", "--cluster.pushpull-interval=1s", "--log.level=warn"}
	for _, p := range a.peers {
		args = append(args, fmt.Sprintf("--cluster.peer=127.0.0.1:%d", p))
	}
	a.logs, a.done = &syncBuffer{}, make(chan struct{})
	a.cmd = exec.Command(a.bin, args...)
	a.cmd.Stdout, a.cmd.Stderr = a.logs, a.logs
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = a.cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		a.kill()
		if t.Failed() {
			t.Logf("alertmanager %d output:\n%s", a.web, a.logs.String())
		}
	})
	if !ready(a.url()+"/-/ready", 30*time.Second) {
		t.Fatalf("alertmanager %d not ready:\n%s", a.web, a.logs.String())
	}
}

// ready polls url until it answers 200, for at most within.
func ready(url string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// kill sends SIGKILL, by PID: no state saved, as in a crash.
func (a *amPeer) kill() {
	select {
	case <-a.done:
		return
	default:
	}
	_ = a.cmd.Process.Signal(syscall.SIGKILL)
	<-a.done
}

// amConfig is the shipped examples/alertmanager/alertmanager.yml with the
// test's webhook, and a 5 s group_interval so that a resolve is notified
// within seconds rather than at the next minute.
func amConfig(t *testing.T, dir, webhook string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "examples", "alertmanager", "alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(raw), "http://127.0.0.1:5001/alerts", webhook, 1)
	s = regexp.MustCompile(`group_interval: \S+`).ReplaceAllString(s, "group_interval: 5s")
	if !strings.Contains(s, webhook) || !strings.Contains(s, "group_wait: 0s") {
		t.Fatalf("the shipped Alertmanager configuration changed shape:\n%s", s)
	}
	p := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fault is one injected fault and the alert it must page.
type fault struct {
	kind, gpu, extra string
	start            time.Duration
	alert            string
	host, name       string // as labelled
	forDur           time.Duration
}

// The faults, relative to the fleet's first sample. Five with for 0 for the
// median; the thermal throttle with the analyzer's for of 1 m; an XID while
// every Alertmanager is down (killed at 22 s, back at 40 s).
var amFaults = []fault{
	{"xid", "1/3", "xid: 79", 8 * time.Second, "GPUFaulted", "gpu-node-1", "gpu3", 0},
	{"ecc", "1/1", "", 10 * time.Second, "GPUFaulted", "gpu-node-1", "gpu1", 0},
	{"xid", "1/4", "xid: 79", 12 * time.Second, "GPUFaulted", "gpu-node-1", "gpu4", 0},
	{"ecc", "1/2", "", 14 * time.Second, "GPUFaulted", "gpu-node-1", "gpu2", 0},
	{"xid", "0/6", "xid: 79", 16 * time.Second, "GPUFaulted", "gpu-node-0", "gpu6", 0},
	{"thermal_throttle", "0/2", "duration: 75s", 10 * time.Second, "GPUThrottled", "gpu-node-0", "gpu2", time.Minute},
}

var outageFault = fault{"xid", "0/4", "xid: 79", 30 * time.Second, "GPUFaulted", "gpu-node-0", "gpu4", 0}

const (
	killAt = 22 * time.Second
	backAt = 40 * time.Second
)

// amCollectorConfig is the collector of examples/alertmanager/config.yaml
// with the test's faults, 1 s samples and a 4 s window (so that the
// throttle is told within a few samples), a 40 s fault lookback (so that
// the faults clear within the test), a file exporter whose first point
// tells the fleet's start, and both peers; its prometheus exporter and its
// own telemetry on the given ports, for the mixin's Prometheus path.
func amCollectorConfig(t *testing.T, dir string, peers []*amPeer, metricsPort, telemetryPort int) string {
	t.Helper()
	var faults strings.Builder
	for _, f := range append(slices.Clone(amFaults), outageFault) {
		fmt.Fprintf(&faults, "        - {kind: %s, gpus: %q, start: %s", f.kind, f.gpu, f.start)
		if f.extra != "" {
			fmt.Fprintf(&faults, ", %s", f.extra)
		}
		faults.WriteString("}\n")
	}
	var eps []string
	for _, p := range peers {
		eps = append(eps, strconv.Quote(p.url()))
	}
	cfg := fmt.Sprintf(`receivers:
  dcgm:
    backend: simulated
    collection_interval: 1s
    simulated:
      seed: 1
      hosts: 2
      gpus_per_host: 8
      models: [h100, h100]
      workloads:
        - {name: llm-pretrain, kind: training, namespace: ml, gpus: "0/*", phases: [{kind: compute_bound}]}
        - {name: inference, kind: serving, namespace: serving, gpus: "1/*", phases: [{kind: compute_bound}]}
      faults:
%sprocessors:
  gpu_analyzer:
    window: 4s
    verdict_interval: 5s
    bottleneck: {fault_lookback: 40s}
exporters:
  gpu_alertmanager:
    endpoints: [%s]
    storage: file_storage/alerts
    evaluation_interval: 5s
  file:
    path: %s
  # As examples/alertmanager/config.yaml serves the verdicts: the GPU and
  # pod attributes on every series, as the mixin's rules expect them.
  prometheus:
    endpoint: 127.0.0.1:%d
    resource_constant_labels:
      included: ["hw.*", "host.name", "nvidia.gpu.*", "otelgpu.*", "k8s.*"]
    without_scope_info: true
extensions:
  file_storage/alerts:
    directory: %s
    create_directory: true
service:
  extensions: [file_storage/alerts]
  # The exporter's delivery telemetry, which the fleet overview's alert
  # delivery panels read.
  telemetry:
    metrics:
      level: normal
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}
  pipelines:
    metrics:
      receivers: [dcgm]
      processors: [gpu_analyzer]
      exporters: [gpu_alertmanager, file, prometheus]
`, faults.String(), strings.Join(eps, ", "), filepath.Join(dir, "metrics.json"), metricsPort, filepath.Join(dir, "queue"), telemetryPort)
	p := filepath.Join(dir, "collector.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var firstTime = regexp.MustCompile(`"timeUnixNano":"(\d+)"`)

// fleetStart reads the fleet's first sample time from the file exporter.
func fleetStart(t *testing.T, path string) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		raw, _ := os.ReadFile(path)
		if line, _, ok := strings.Cut(string(raw), "\n"); ok {
			if m := firstTime.FindStringSubmatch(line); m != nil {
				ns, _ := strconv.ParseInt(m[1], 10, 64)
				return time.Unix(0, ns)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no sample in %s within 30 s", path)
	return time.Time{}
}

func TestAlertmanagerPaging(t *testing.T) {
	for version, bin := range alertmanagerBins(t) {
		t.Run(version, func(t *testing.T) { pagingWith(t, bin) })
	}
}

func pagingWith(t *testing.T, bin string) {
	dir := t.TempDir()
	hook := newWebhook(t)
	cfg := amConfig(t, dir, hook.URL+"/alerts")
	a := &amPeer{bin: bin, dir: filepath.Join(dir, "am0"), web: freePort(t), clust: freePort(t)}
	b := &amPeer{bin: bin, dir: filepath.Join(dir, "am1"), web: freePort(t), clust: freePort(t)}
	a.peers, b.peers = []int{b.clust}, []int{a.clust}
	a.start(t, cfg)
	b.start(t, cfg)

	// The mixin's Prometheus path, beside the direct one, started before
	// the collectors so that its first scrapes come before the faults.
	metricsPorts, telemetryPorts := []int{freePort(t), freePort(t)}, []int{freePort(t), freePort(t)}
	pp := startPromPath(t, dir, bin, cfg, metricsPorts[0], telemetryPorts)

	// Two replicas of the same gateway: the same fleet, the same alerts.
	var starts []time.Time
	for i := range 2 {
		rdir := filepath.Join(dir, fmt.Sprintf("replica%d", i))
		if err := os.MkdirAll(rdir, 0o750); err != nil {
			t.Fatal(err)
		}
		c := start(t, "--config="+amCollectorConfig(t, rdir, []*amPeer{a, b}, metricsPorts[i], telemetryPorts[i]))
		t.Cleanup(func() {
			if c.alive() {
				c.stop(t)
			}
		})
		starts = append(starts, fleetStart(t, filepath.Join(rdir, "metrics.json")))
	}
	// The earlier replica's fleet starts first: its faults are the first,
	// and the latencies measured from them the longest.
	t0 := slices.MinFunc(starts, func(x, y time.Time) int { return x.Compare(y) })

	wait := func(f fault, status string, since time.Time, within time.Duration) (time.Time, int) {
		t.Helper()
		deadline := t0.Add(f.start + within)
		for time.Now().Before(deadline) {
			if at, n := hook.first(f.alert, f.host, f.name, status, since); n > 0 {
				return at, n
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("%s %s on %s/%s: no %s notification within %v of the fault", f.kind, f.alert, f.host, f.name, status, within)
		return time.Time{}, 0
	}

	// Fault to page, for 0: each within 5 s, the median under 5 s.
	var lat []time.Duration
	direct := map[fault]time.Duration{}
	for _, f := range amFaults[:5] {
		at, _ := wait(f, "firing", t0, f.forDur+5*time.Second)
		d := at.Sub(t0.Add(f.start))
		lat = append(lat, d)
		direct[f] = d
		t.Logf("fault to page: %s on %s/%s (%s, for 0): %.3f s", f.kind, f.host, f.name, f.alert, d.Seconds())
	}
	slices.Sort(lat)
	t.Logf("fault to page, for 0: median %.3f s over %d faults (two replicas, two peers)", lat[len(lat)/2].Seconds(), len(lat))
	if lat[len(lat)/2] >= 5*time.Second {
		t.Errorf("median fault to page %v, want under 5 s", lat[len(lat)/2])
	}

	// Kill -9 both peers; an XID fires while they are down; it is paged
	// once they are back.
	time.Sleep(time.Until(t0.Add(killAt)))
	// Two replicas, two peers: one notification per alert.
	for _, f := range amFaults[:5] {
		if _, n := hook.first(f.alert, f.host, f.name, "firing", t0); n != 1 {
			t.Errorf("%s on %s/%s: %d firing notifications, want 1", f.alert, f.host, f.name, n)
		}
	}
	a.kill()
	b.kill()
	time.Sleep(time.Until(t0.Add(backAt)))
	back := time.Now()
	a.start(t, cfg)
	b.start(t, cfg)
	at, _ := wait(outageFault, "firing", back, backAt-outageFault.start+15*time.Second)
	t.Logf("fired while every Alertmanager was down (kill -9): paged %.3f s after they were back", at.Sub(back).Seconds())

	// Thermal throttling: for 1 m, within for + 5 s.
	th := amFaults[5]
	at, _ = wait(th, "firing", t0, th.forDur+5*time.Second)
	direct[th] = at.Sub(t0.Add(th.start))
	t.Logf("fault to page: thermal throttle on %s/%s (%s, for 1m): %.3f s", th.host, th.name, th.alert, direct[th].Seconds())

	// The XID of the outage clears after the 40 s lookback: its resolve is
	// notified.
	at, _ = wait(outageFault, "resolved", back, 40*time.Second+20*time.Second)
	t.Logf("resolve: %s on %s/%s notified %.3f s after the fault cleared", outageFault.alert, outageFault.host, outageFault.name,
		at.Sub(t0.Add(outageFault.start+40*time.Second)).Seconds())

	// The same faults through the mixin's Prometheus path, beside these;
	// the replica it scrapes is the first, whose fleet started at starts[0].
	pp.report(t, hook, starts[0], direct)
	pp.checkDeliveryPanels(t)
}
