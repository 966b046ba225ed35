//go:build e2e

package e2e

// The monitoring mixin's Prometheus path beside TestAlertmanagerPaging's
// direct one, for the same faults of the same fleet: Debian's Prometheus
// scrapes the first replica's prometheus exporter, evaluates the mixin's
// generated rules (examples/prometheus/rules.yaml) and sends to
// Alertmanager, whose webhook is the test's. Its figure is the comparison,
// not a bound: only its arrival is required. The same Prometheus scrapes
// both replicas' own telemetry, where the fleet overview's alert delivery
// panels are checked (checkDashboards, on a collector without the
// exporter, leaves them out).

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The measurement of this path, kept here: scrape and rule
// evaluation every 15 s, as the seeds' Prometheus runs.
const promPathInterval = "15s"

// alertDeliveryPanel names the fleet overview's panels on the
// gpu_alertmanager exporter's own telemetry.
var alertDeliveryPanel = regexp.MustCompile(`^Alert delivery to Alertmanager`)

type promPath struct {
	prom    *prometheus
	version string
}

// startPromPath runs Debian's Prometheus with the mixin's rules, scraping
// the first replica's verdicts on metricsPort and every replica's telemetry,
// and alerting a pair of peers of its own (the same Alertmanager binary and
// configuration, the same webhook). Not the direct path's peers: those are
// killed from 22 s to 40 s, which falls in this path's 15 s + 15 s and would
// hold its page until Prometheus' next resend a minute later; the figure
// wanted is the path's, not an outage's.
func startPromPath(t *testing.T, dir, amBin, amCfg string, metricsPort int, telemetryPorts []int) *promPath {
	t.Helper()
	a := &amPeer{bin: amBin, dir: filepath.Join(dir, "prom-am0"), web: freePort(t), clust: freePort(t)}
	b := &amPeer{bin: amBin, dir: filepath.Join(dir, "prom-am1"), web: freePort(t), clust: freePort(t)}
	a.peers, b.peers = []int{b.clust}, []int{a.clust}
	a.start(t, amCfg)
	b.start(t, amCfg)

	rules, err := filepath.Abs(filepath.Join("..", "examples", "prometheus", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var telemetry []string
	for _, p := range telemetryPorts {
		telemetry = append(telemetry, strconv.Quote(fmt.Sprintf("127.0.0.1:%d", p)))
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: %[1]s
  evaluation_interval: %[1]s
rule_files: [%[2]q]
alerting:
  alertmanagers:
    - api_version: v2
      static_configs:
        - targets: ["127.0.0.1:%[3]d", "127.0.0.1:%[4]d"]
scrape_configs:
  - job_name: otelcol-gpu
    static_configs:
      - targets: ["127.0.0.1:%[5]d"]
  - job_name: otelcol-gpu-telemetry
    static_configs:
      - targets: [%[6]s]
`, promPathInterval, rules, a.web, b.web, metricsPort, strings.Join(telemetry, ", "))
	pdir := filepath.Join(dir, "prometheus")
	if err := os.MkdirAll(pdir, 0o750); err != nil {
		t.Fatal(err)
	}
	p := &prometheus{bin: prometheusBin(t), dir: pdir, config: filepath.Join(pdir, "prometheus.yml"), port: freePort(t)}
	if err := os.WriteFile(p.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p.start(t)
	version := "?"
	if out, err := exec.Command(p.bin, "--version").CombinedOutput(); err == nil {
		version, _, _ = strings.Cut(strings.TrimPrefix(string(out), "prometheus, version "), " ")
	}
	return &promPath{prom: p, version: version}
}

// mixinAlerts are the mixin's alerts that page for a fault through
// Prometheus, beside GPUAnalyzerAlert forwarding the analyzer's own: the
// rules on the receivers' raw metrics (the simulated ECC error raises XID
// 48 too). GPUThermalThrottling's `for` (5 m) is past the test's end: the
// throttle pages as the forwarded GPUThrottled.
var mixinAlerts = map[string][]string{
	"xid":              {"GPUCriticalXID"},
	"ecc":              {"GPUUncorrectableECCErrors", "GPUCriticalXID"},
	"thermal_throttle": {"GPUThermalThrottling"},
}

// promFirst returns the first firing notification, after since, of a
// mixin alert for f's GPU: its time and the alert, as a person reads it.
func (w *webhook) promFirst(f fault, since time.Time) (time.Time, string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, g := range w.got {
		if g.status != "firing" || g.labels["host_name"] != f.host || g.labels["hw_name"] != f.name || g.at.Before(since) {
			continue
		}
		name := g.labels["alertname"]
		if name == "GPUAnalyzerAlert" && g.labels["gpu_alert"] == f.alert {
			return g.at, name + "{gpu_alert=" + f.alert + "}", true
		}
		if slices.Contains(mixinAlerts[f.kind], name) {
			return g.at, name, true
		}
	}
	return time.Time{}, "", false
}

// report waits for each fault's page through Prometheus (its own `for`
// plus two 15 s intervals and a margin) and logs it beside the direct
// path's figure; start is the scraped replica's first sample.
func (pp *promPath) report(t *testing.T, hook *webhook, start time.Time, direct map[fault]time.Duration) {
	t.Helper()
	t.Logf("Prometheus path: Debian Prometheus %s, scrape_interval %s, evaluation_interval %s, examples/prometheus/rules.yaml, "+
		"the same examples/alertmanager/alertmanager.yml (group_wait 0s), the first replica's prometheus exporter scraped",
		pp.version, promPathInterval, promPathInterval)
	var directLat, promLat []time.Duration
	for _, f := range amFaults {
		deadline := start.Add(f.start + f.forDur + 45*time.Second)
		var at time.Time
		var name string
		var ok bool
		for {
			if at, name, ok = hook.promFirst(f, start); ok || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if !ok {
			t.Errorf("%s on %s/%s: no notification through Prometheus (%v or GPUAnalyzerAlert{gpu_alert=%s}) within %v of the fault;"+
				" Prometheus' alerts: %s", f.kind, f.host, f.name, mixinAlerts[f.kind], f.alert, f.forDur+45*time.Second, pp.alerts(t))
			continue
		}
		d := at.Sub(start.Add(f.start))
		t.Logf("fault to page, %s on %s/%s (for %v): direct (%s) %.3f s, through Prometheus (%s) %.3f s",
			f.kind, f.host, f.name, f.forDur, f.alert, direct[f].Seconds(), name, d.Seconds())
		if f.forDur == 0 {
			directLat, promLat = append(directLat, direct[f]), append(promLat, d)
		}
	}
	if len(promLat) == 0 {
		return
	}
	slices.Sort(directLat)
	slices.Sort(promLat)
	t.Logf("fault to page, for 0, median of %d (XID 79, ECC): direct %.3f s, through Prometheus %.3f s (max %.3f s)",
		len(promLat), directLat[len(directLat)/2].Seconds(), promLat[len(promLat)/2].Seconds(), promLat[len(promLat)-1].Seconds())
}

// alerts is Prometheus' view of its alerts, for a failure's message.
func (pp *promPath) alerts(t *testing.T) string {
	r := pp.prom.query(t, "ALERTS", time.Time{})
	var out []string
	for _, a := range r {
		out = append(out, fmt.Sprintf("%s{%s/%s %s}", a.Metric["alertname"], a.Metric["host_name"], a.Metric["hw_name"], a.Metric["alertstate"]))
	}
	return strings.Join(out, ", ")
}

// checkDeliveryPanels runs the fleet overview's alert delivery queries
// against this Prometheus, which scrapes both replicas' telemetry: each
// must answer for both replicas (failed too: the test killed both peers
// while alerts were being sent). Every other panel query is checked by
// checkDashboards.
func (pp *promPath) checkDeliveryPanels(t *testing.T) {
	t.Helper()
	var queries []panelQuery
	for _, q := range dashboardQueries(t) {
		if alertDeliveryPanel.MatchString(q.title) {
			queries = append(queries, q)
		}
	}
	// Two panels, sent and failed, queued and active.
	if len(queries) != 4 {
		t.Fatalf("found %d alert delivery queries in examples/grafana (panels titled %q), want 4", len(queries), alertDeliveryPanel)
	}
	for _, q := range queries {
		// rate needs two scrapes; the test has run for minutes by now, but
		// a series that appeared late may still want its second.
		var r []promResult
		deadline := time.Now().Add(30 * time.Second)
		for {
			if r = pp.prom.query(t, q.expr, time.Time{}); len(r) > 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Second)
		}
		if len(r) == 0 {
			raw, _ := json.Marshal(pp.prom.query(t, `{__name__=~"otelcol_exporter_gpu_alertmanager_.*"}`, time.Time{}))
			t.Errorf("%s: panel %q: %s returned no data; the exporter's telemetry in Prometheus: %s", q.file, q.title, q.expr, raw)
			continue
		}
		instances := map[string]bool{}
		for _, s := range r {
			instances[s.Metric["instance"]] = true
		}
		if len(instances) != 2 {
			t.Errorf("%s: panel %q: %s answered for %d collectors, want both replicas: %v", q.file, q.title, q.expr, len(instances), r)
		}
	}
	t.Logf("%d alert delivery panel queries returned data for both replicas", len(queries))
}
