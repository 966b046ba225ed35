//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/grpc/status"
)

// floodBatch is one node agent's batch: gpus GPUs of node, each with a
// few readings, stamped at ts; name is the metric the sink counts.
func floodBatch(node string, gpus int, ts time.Time, name string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	at := pcommon.NewTimestampFromTime(ts)
	for g := range gpus {
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr("hw.id", fmt.Sprintf("GPU-%s-%05d", node, g))
		a.PutStr("host.name", node)
		a.PutStr("k8s.namespace.name", "ml")
		a.PutStr("k8s.job.name", node)
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for i, n := range []string{name, "nvidia.gpu.dram.active", "hw.temperature", "hw.gpu.memory.usage", "hw.gpu.memory.limit"} {
			m := ms.AppendEmpty()
			m.SetName(n)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(at)
			dp.SetDoubleValue(float64(i) * 0.1)
		}
	}
	return md
}

// tally counts outcomes by name.
type tally struct {
	mu sync.Mutex
	m  map[string]int
}

func (t *tally) add(k string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[string]int{}
	}
	t.m[k]++
}

func (t *tally) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	keys := make([]string, 0, len(t.m))
	for k := range t.m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, t.m[k])
	}
	return b.String()
}

func (t *tally) get(k string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.m[k]
}

// TestE2EFlood floods a gateway (memory_limiter first, as in the examples)
// over OTLP/gRPC and OTLP/HTTP with more than its slow backend can take.
// The gateway refuses with a retryable status (gRPC UNAVAILABLE, HTTP 503)
// once its heap passes the limiter's soft limit, does not crash, and
// accepts again once the flood is over. An agent in front of it (a second
// collector with a sending queue) keeps retrying what is refused: every
// one of its data points reaches the backend, none twice.
func TestE2EFlood(t *testing.T) {
	sink := &otlpSink{count: "agent.gpu.sm.active"}
	// A backend slower than any machine floods: one request a second, of at
	// most 8,192 data points (the batch processor's default).
	sink.delay.Store(int64(time.Second))
	sinkAddr := startSink(t, sink)
	dir := t.TempDir()

	grpcPort, httpPort, telemetry := freePort(t), freePort(t), freePort(t)
	gateway := filepath.Join(dir, "gateway.yaml")
	if err := os.WriteFile(gateway, []byte(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:%d, max_recv_msg_size_mib: 64}
      http: {endpoint: 127.0.0.1:%d}
processors:
  memory_limiter:               # refuse above 96 MiB of heap (soft limit)
    check_interval: 100ms
    limit_mib: 128
    spike_limit_mib: 32
  gpu_analyzer:
    group_by: [k8s.namespace.name, k8s.job.name]
  batch:
    timeout: 1s
exporters:
  otlp:
    endpoint: %s
    tls: {insecure: true}
    timeout: 30s
    sending_queue: {queue_size: 100000, num_consumers: 1}
    retry_on_failure: {max_elapsed_time: 0s}
service:
  telemetry:
    logs: {level: warn}
    metrics:
      level: normal
      readers:
        - pull: {exporter: {prometheus: {host: 127.0.0.1, port: %d}}}
  pipelines:
    metrics:
      receivers: [otlp]
      processors: [memory_limiter, gpu_analyzer, batch]
      exporters: [otlp]
`, grpcPort, httpPort, sinkAddr, telemetry)), 0o644); err != nil {
		t.Fatal(err)
	}
	// GOMEMLIMIT as the manifests set it, a little above the limiter's
	// limit, so that the Go runtime collects before the limiter must.
	gw := startEnv(t, []string{"GOMEMLIMIT=160MiB"}, "--config", gateway)

	// The agent: OTLP in, a sending queue to the gateway that retries
	// without end, as examples/gateway/agent.yaml's exporter does.
	agentPort := freePort(t)
	agent := filepath.Join(dir, "agent.yaml")
	if err := os.WriteFile(agent, []byte(fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc: {endpoint: 127.0.0.1:%d}
exporters:
  otlp:
    endpoint: 127.0.0.1:%d
    tls: {insecure: true}
    sending_queue: {queue_size: 10000, num_consumers: 2}
    retry_on_failure: {initial_interval: 100ms, max_interval: 2s, max_elapsed_time: 0s}
service:
  telemetry: {logs: {level: error}, metrics: {level: none}}
  pipelines:
    metrics: {receivers: [otlp], exporters: [otlp]}
`, agentPort, grpcPort)), 0o644); err != nil {
		t.Fatal(err)
	}
	ag := start(t, "--config", agent)

	gwClient := otlpClient(t, fmt.Sprintf("127.0.0.1:%d", grpcPort))
	agClient := otlpClient(t, fmt.Sprintf("127.0.0.1:%d", agentPort))
	ctx := context.Background()
	for _, c := range []pmetricotlp.GRPCClient{gwClient, agClient} {
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if _, err := c.Export(ctx, pmetricotlp.NewExportRequest()); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("a collector did not accept OTLP within 30 s")
			}
		}
	}
	rssBefore, _ := rssKiB(gw.cmd.Process.Pid)

	// The flood: 8 gRPC and 2 HTTP senders, 2,000 GPUs (10,000 data
	// points) a request, as fast as the gateway answers, for 20 s.
	var grpcCodes, httpCodes tally
	var floodSent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				md := floodBatch(fmt.Sprintf("flood-%d", w), 2000, time.Now(), "nvidia.gpu.sm.active")
				_, err := gwClient.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md))
				grpcCodes.add(status.Code(err).String())
				if err == nil {
					floodSent.Add(int64(md.DataPointCount()))
				}
			}
		}()
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/v1/metrics", httpPort)
	for w := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				body, _ := pmetricotlp.NewExportRequestFromMetrics(floodBatch(fmt.Sprintf("flood-http-%d", w), 2000, time.Now(), "nvidia.gpu.sm.active")).MarshalProto()
				resp, err := http.Post(url, "application/x-protobuf", bytes.NewReader(body))
				if err != nil {
					httpCodes.add("error")
					continue
				}
				httpCodes.add(strconv.Itoa(resp.StatusCode))
				if resp.StatusCode != http.StatusOK {
					httpCodes.add("Retry-After:" + resp.Header.Get("Retry-After"))
				}
				resp.Body.Close()
			}
		}()
	}
	// Meanwhile the agent sends its node's GPUs, 50 a second.
	agentSent := 0
	var peakRSS int64
	floodBegan := time.Now()
	for time.Since(floodBegan) < 20*time.Second {
		md := floodBatch("agent-node", 50, time.Now(), "agent.gpu.sm.active")
		if _, err := agClient.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(md)); err != nil {
			t.Fatalf("the agent refused: %v", err)
		}
		agentSent += 50
		if kib, err := rssKiB(gw.cmd.Process.Pid); err == nil {
			peakRSS = max(peakRSS, kib)
		}
		if !gw.alive() {
			t.Fatal("the gateway crashed under the flood")
		}
		time.Sleep(time.Second)
	}
	close(stop)
	wg.Wait()
	held := int64(agentSent) - sink.points.Load()
	t.Logf("flood for 20 s: gRPC %s; HTTP %s; %d data points accepted; gateway RSS %d MiB before, %d MiB at peak",
		grpcCodes.String(), httpCodes.String(), floodSent.Load(), rssBefore>>10, peakRSS>>10)

	// Within the gateway Deployment's memory limit (1Gi): a pod would not
	// have been killed.
	if peakRSS > 1<<20 {
		t.Errorf("the gateway's RSS reached %d MiB under the flood, above the manifest's 1Gi limit", peakRSS>>10)
	}
	body, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", telemetry))
	if err != nil {
		t.Fatal(err)
	}
	refused := selfMetric(body, "otelcol_processor_memory_limiter_refused_metric_points")
	t.Logf("gateway: memory_limiter refused %v data points", refused)
	if grpcCodes.get("Unavailable") == 0 || refused <= 0 {
		t.Errorf("the flood was never refused (gRPC UNAVAILABLE %d times, memory_limiter refused %v points)", grpcCodes.get("Unavailable"), refused)
	}
	for code := range grpcCodes.m {
		if code != "OK" && code != "Unavailable" {
			t.Errorf("gRPC status %s: refusals must be retryable (UNAVAILABLE)", code)
		}
	}
	for code := range httpCodes.m {
		if code != "200" && code != "503" && !strings.HasPrefix(code, "Retry-After:") {
			t.Errorf("HTTP status %s: refusals must be retryable (503)", code)
		}
	}

	// The backend recovers too; the gateway accepts again, and the agent's
	// queue delivers everything it held.
	sink.delay.Store(0)
	var recovered time.Duration
	for began := time.Now(); time.Since(began) < 2*time.Minute; time.Sleep(500 * time.Millisecond) {
		if _, err := gwClient.Export(ctx, pmetricotlp.NewExportRequestFromMetrics(floodBatch("after", 10, time.Now(), "nvidia.gpu.sm.active"))); err == nil {
			recovered = time.Since(began)
			break
		}
	}
	if recovered == 0 {
		t.Fatal("the gateway still refuses 2 minutes after the flood")
	}
	want := int64(agentSent)
	for deadline := time.Now().Add(2 * time.Minute); sink.points.Load() < want && time.Now().Before(deadline); {
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // anything sent twice would arrive now
	t.Logf("accepting again %v after the flood; the agent sent %d GPU samples, %d of them still held (its queue, retrying) when the flood ended; the backend received %d",
		recovered.Round(100*time.Millisecond), want, held, sink.points.Load())
	if got := sink.points.Load(); got != want {
		t.Errorf("the backend received %d of the agent's %d samples: lost or duplicated", got, want)
	}
	if !gw.alive() || !ag.alive() {
		t.Fatal("a collector exited")
	}
	ag.stop(t)
	gw.stop(t)
}
