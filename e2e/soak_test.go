//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/encoding/gzip" // the collector's OTLP exporter compresses by default
)

// -soak.duration runs the churn soak longer than CI's few minutes, e.g.
// go test -tags e2e -run Soak ./e2e -soak.duration=2h -timeout 3h
var soakDuration = flag.Duration("soak.duration", 3*time.Minute, "how long TestE2ESoakChurn feeds the gateway")

// otlpSink is an OTLP/gRPC metrics backend that counts what it receives;
// delay, if set, makes it slow (nanoseconds per request).
type otlpSink struct {
	pmetricotlp.UnimplementedGRPCServer
	points, requests atomic.Int64
	delay            atomic.Int64
	// count, if set, counts only the data points of this metric.
	count string
}

func (s *otlpSink) Export(ctx context.Context, req pmetricotlp.ExportRequest) (pmetricotlp.ExportResponse, error) {
	if d := time.Duration(s.delay.Load()); d > 0 {
		select {
		case <-time.After(d):
		case <-ctx.Done():
			return pmetricotlp.NewExportResponse(), ctx.Err()
		}
	}
	s.requests.Add(1)
	if s.count == "" {
		s.points.Add(int64(req.Metrics().DataPointCount()))
	} else {
		s.points.Add(int64(countMetric(req.Metrics(), s.count)))
	}
	return pmetricotlp.NewExportResponse(), nil
}

func countMetric(md pmetric.Metrics, name string) int {
	n := 0
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if m := ms.At(k); m.Name() == name {
					n += m.Gauge().DataPoints().Len()
				}
			}
		}
	}
	return n
}

// startSink serves an otlpSink on a free port of 127.0.0.1.
func startSink(t *testing.T, s *otlpSink) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxRecvMsgSize(64 << 20))
	pmetricotlp.RegisterGRPCServer(srv, s)
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(srv.Stop)
	return l.Addr().String()
}

func otlpClient(t *testing.T, endpoint string) pmetricotlp.GRPCClient {
	t.Helper()
	conn, err := grpc.NewClient(endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return pmetricotlp.NewGRPCClient(conn)
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// selfMetric sums the samples of one of the collector's own metrics on its
// Prometheus telemetry endpoint (a counter with or without the _total
// suffix), or -1 if it is absent.
func selfMetric(body, name string) float64 {
	sum, seen := 0.0, false
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name+"{") && !strings.HasPrefix(line, name+" ") &&
			!strings.HasPrefix(line, name+"_total{") && !strings.HasPrefix(line, name+"_total ") {
			continue
		}
		f := strings.Fields(line)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err == nil {
			sum, seen = sum+v, true
		}
	}
	if !seen {
		return -1
	}
	return sum
}

// churnFleet is ten times the simulated default fleet (160 GPUs on 20
// nodes) in which every GPU slot is taken by a new GPU (a new hw.id, on a
// rescheduled pod) every lifetime, staggered: 32 serving pods of an
// autoscaled Deployment, the rest ranks of training jobs that end every
// third generation. Some GPUs raise XIDs: 13 (restart_app, remembered by
// the escalation policy) and 79 (drain, remembered as handled).
type churnFleet struct {
	lifetime time.Duration
	began    time.Time
}

const (
	churnNodes       = 20
	churnGPUsPerNode = 8
	churnServing     = 32
)

func (f *churnFleet) batch(node int, now time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(now)
	for g := range churnGPUsPerNode {
		slot := node*churnGPUsPerNode + g
		// Staggered: slot s is replaced at offsets s/160 of a lifetime.
		age := now.Sub(f.began) + time.Duration(slot)*f.lifetime/(churnNodes*churnGPUsPerNode)
		gen := int(age / f.lifetime)
		born := now.Add(-(age % f.lifetime))
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr("hw.id", fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", gen, slot))
		a.PutStr("hw.name", fmt.Sprintf("gpu%d", g))
		a.PutStr("hw.model", "NVIDIA H100 80GB HBM3")
		host := fmt.Sprintf("gpu-node-%d", node)
		a.PutStr("host.name", host)
		a.PutStr("k8s.node.name", host)
		if slot < churnServing {
			a.PutStr("k8s.namespace.name", "serving")
			a.PutStr("k8s.deployment.name", "llm-inference")
			a.PutStr("k8s.pod.name", fmt.Sprintf("llm-inference-%d-%d", gen, slot))
		} else {
			job := fmt.Sprintf("train-%d-%d", slot/16, gen/3)
			a.PutStr("k8s.namespace.name", "ml")
			a.PutStr("k8s.job.name", job)
			a.PutStr("k8s.pod.name", fmt.Sprintf("%s-%d", job, slot%16))
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		phase := float64((slot+gen)%10) / 10
		gauge := func(name string, v float64, kv ...string) {
			m := ms.AppendEmpty()
			m.SetName(name)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetDoubleValue(v)
			for i := 0; i+1 < len(kv); i += 2 {
				dp.Attributes().PutStr(kv[i], kv[i+1])
			}
		}
		gauge("nvidia.gpu.sm.active", 0.3+0.6*phase)
		gauge("nvidia.gpu.dram.active", 0.2+0.3*phase)
		gauge("hw.gpu.utilization", 0.5+0.5*phase, "hw.gpu.task", "general")
		gauge("hw.gpu.memory.usage", 40e9+30e9*phase)
		gauge("hw.gpu.memory.limit", 80e9)
		gauge("hw.temperature", 55+20*phase)
		gauge("nvidia.gpu.clock.frequency", 1.98e9, "nvidia.gpu.clock", "sm")
		gauge("nvidia.gpu.clock.event_reasons", 0)
		gauge("nvidia.gpu.row_remap.failure", 0)
		if slot < churnServing {
			gauge("vllm:num_requests_waiting", 10*phase)
		} else {
			gauge("training.step.compute.duration", 0.5+0.1*phase)
		}
		counter := func(name string, v int64, attr string, code any) {
			m := ms.AppendEmpty()
			m.SetName(name)
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dp := s.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(pcommon.NewTimestampFromTime(born))
			dp.SetTimestamp(ts)
			dp.SetIntValue(v)
			switch c := code.(type) {
			case int:
				dp.Attributes().PutInt(attr, int64(c))
			case string:
				dp.Attributes().PutStr(attr, c)
			}
		}
		counter("hw.errors", 0, "error.type", "uncorrected")
		// An XID once the GPU has run a third of its life.
		if now.Sub(born) > f.lifetime/3 {
			switch slot % 8 {
			case 1:
				counter("nvidia.gpu.xid.errors", 1, "nvidia.gpu.xid", 13)
			case 5:
				counter("nvidia.gpu.xid.errors", 1, "nvidia.gpu.xid", 79)
			}
		}
	}
	return md
}

// TestE2ESoakChurn runs the gateway of examples/kubernetes/gateway-autoscale.yaml
// (memory_limiter, gpu_analyzer with cost, batch, gpu_autoscale) with
// gpu_remediation beside it, feeds it a fleet ten times the simulated
// default whose GPUs come and go, and samples its RSS: it must level off.
// The expiries run on shortened settings, so that minutes exercise what a
// day does: the analyzer's gpu_ttl (data time) and max_gpus, the
// autoscaler's series (metric_max_age, wall time) and the remediator's
// gpu_ttl (wall time). -soak.duration runs it longer.
func TestE2ESoakChurn(t *testing.T) {
	d := *soakDuration
	if d < time.Minute {
		t.Fatalf("-soak.duration must be at least 1m, got %v", d)
	}
	sink := &otlpSink{count: "hw.temperature"} // one a GPU a second: what came in goes out
	sinkAddr := startSink(t, sink)
	port, telemetry := freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "gateway.yaml")
	err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
processors:
  memory_limiter:
    check_interval: 1s
    limit_mib: 1024
    spike_limit_mib: 256
  gpu_analyzer:
    window: 10s
    group_by: [k8s.namespace.name, k8s.job.name]
    gpu_ttl: 20s
    max_gpus: 400             # fewer than live + within-ttl GPUs: max_gpus is hit too
    summary_interval: 10s
    cost:
      default_per_gpu_hour: 2.5
      report_interval: 5s
  batch:
    timeout: 1s
connectors:
  gpu_autoscale:
    interval: 1s
    metric_max_age: 3s        # series are forgotten after 10 × this
    auth: {type: none}
    leader_election: {enabled: false}
    targets:
      - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm-inference, namespace: serving}
        metric: nvidia.gpu.sm.active
        target_value: 0.6
        min_replicas: 2
        max_replicas: 64
        mode: predictive
        lead_time: 30s
        dry_run: true
      - scale_target_ref: {api_version: apps/v1, kind: Deployment, name: llm-inference-queue, namespace: serving}
        match: {k8s.namespace.name: serving, k8s.deployment.name: llm-inference}
        metric: nvidia.gpu.sm.active
        target_value: 0.8
        min_replicas: 1
        max_replicas: 64
        mode: serving
        serving: {queue_metric: "vllm:num_requests_waiting", token_metrics: [{name: "vllm:generation_tokens_total"}]}
        dry_run: true
  gpu_remediation:
    dry_run: true
    interval: 1s
    gpu_ttl: 15s
    auth: {type: none}
    leader_election: {enabled: false}
exporters:
  otlp:
    endpoint: %s
    tls: {insecure: true}
service:
  telemetry:
    logs: {level: warn}
    metrics:
      level: normal
      readers:
        - pull:
            exporter:
              prometheus: {host: 127.0.0.1, port: %d}
  pipelines:
    metrics/in:
      receivers: [otlp]
      processors: [memory_limiter, gpu_analyzer, batch]
      exporters: [otlp, gpu_autoscale, gpu_remediation]
    metrics/decisions:
      receivers: [gpu_autoscale, gpu_remediation]
      exporters: [otlp]
`, port, sinkAddr, telemetry)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, "--config", cfg)
	client := otlpClient(t, fmt.Sprintf("127.0.0.1:%d", port))
	ctx := context.Background()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := client.Export(ctx, pmetricotlp.NewExportRequest()); err == nil {
			break
		}
		if !c.alive() || time.Now().After(deadline) {
			t.Fatal("the gateway did not accept OTLP within 30 s")
		}
	}

	// A GPU lives 6 s: 27 new hw.ids a second, 160 at a time, each node
	// reporting every second.
	fleet := &churnFleet{lifetime: 6 * time.Second, began: time.Now()}
	samples := 30
	every := d / time.Duration(samples)
	var rss []int64
	var sent, temps int64
	began := time.Now()
	nextSample := began.Add(every)
	for tick := time.NewTicker(time.Second); time.Since(began) < d; <-tick.C {
		if !c.alive() {
			t.Fatal("the gateway exited")
		}
		now := time.Now()
		for n := range churnNodes {
			md := fleet.batch(n, now)
			if _, err := client.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md)); err != nil {
				t.Fatalf("export: %v", err)
			}
			sent += int64(md.DataPointCount())
			temps += int64(md.ResourceMetrics().Len())
		}
		if now.After(nextSample) {
			kib, err := rssKiB(c.cmd.Process.Pid)
			if err != nil {
				t.Fatal(err)
			}
			rss = append(rss, kib)
			nextSample = nextSample.Add(every)
		}
	}
	gpus := time.Since(fleet.began) / fleet.lifetime * churnNodes * churnGPUsPerNode
	var series strings.Builder
	for i, kib := range rss {
		fmt.Fprintf(&series, " %s:%.0f", (time.Duration(i+1) * every).Round(time.Second), float64(kib)/1024)
	}
	t.Logf("RSS (MiB) every %v over %v, %d GPUs seen (%d at a time), %d data points sent:%s",
		every.Round(time.Second), d, gpus, churnNodes*churnGPUsPerNode, sent, series.String())

	// The gateway's own account: GPUs expired and refused at max_gpus,
	// the tracked count bounded, and every data point passed on.
	body, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetry))
	if err != nil {
		t.Fatal(err)
	}
	evicted := selfMetric(body, "otelcol_processor_gpu_analyzer_gpus_evicted")
	rejected := selfMetric(body, "otelcol_processor_gpu_analyzer_gpus_rejected")
	tracked := selfMetric(body, "otelcol_processor_gpu_analyzer_tracked_gpus")
	for deadline := time.Now().Add(30 * time.Second); sink.points.Load() < temps && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("analyzer: %v GPUs evicted after gpu_ttl, %v samples refused at max_gpus, %v tracked; of the %d temperature readings sent, the backend received %d",
		evicted, rejected, tracked, temps, sink.points.Load())
	if evicted <= 0 || rejected <= 0 || tracked < 0 || tracked > 400 {
		t.Errorf("want GPUs evicted (%v) and refused at max_gpus (%v), and at most 400 tracked (%v); the gateway's metrics:\n%s", evicted, rejected, tracked, grepLines(body, "gpu_"))
	}
	if got := sink.points.Load(); got != temps {
		t.Errorf("the backend received %d of the %d temperature readings sent: the gateway lost or duplicated some", got, temps)
	}

	// RSS levels off: the last third's peak is within 10 % (and 16 MiB for
	// the allocator's slack) of the middle third's, and below a hard cap.
	third := len(rss) / 3
	peak := func(xs []int64) int64 {
		m := int64(0)
		for _, x := range xs {
			m = max(m, x)
		}
		return m
	}
	mid, last := peak(rss[third:2*third]), peak(rss[2*third:])
	t.Logf("RSS peak: middle third %.0f MiB, last third %.0f MiB", float64(mid)/1024, float64(last)/1024)
	if last > mid*11/10+16<<10 {
		t.Errorf("RSS still grows: last third's peak %d KiB against the middle third's %d KiB", last, mid)
	}
	if hardCap := int64(512 << 10); last > hardCap {
		t.Errorf("RSS %d KiB above the hard cap of %d KiB", last, hardCap)
	}
	c.stop(t)
}

// grepLines returns the lines of body that contain s.
func grepLines(body, s string) string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
