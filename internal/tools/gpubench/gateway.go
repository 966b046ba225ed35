package main

import (
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The gateway's cost at fleet sizes the Helm chart's defaults are chosen
// for: a feeder collector (the simulated fleet, as the agents would send
// it) sends OTLP to a gateway collector with the chart's gateway pipeline
// (memory_limiter, gpu_analyzer grouped by job, the export queue on disk),
// which exports to the sink. Only the gateway is measured.

// gatewayInterval is the agents' collection interval the chart ships.
const gatewayInterval = 10 * time.Second

type gatewayResult struct {
	gpus    int
	samples []sample
}

// gatewayFleet is a fleet of hosts × 8 GPUs in training jobs of 8 hosts
// (64 GPUs) each: the analyzer's groups are jobs, as in a cluster.
func gatewayFleet(hosts int) string {
	var b strings.Builder
	b.WriteString("      workloads:\n")
	for first := 0; first < hosts; first += 8 {
		last := min(first+7, hosts-1)
		fmt.Fprintf(&b, "        - {name: job-%d, kind: training, namespace: ml, gpus: \"%d-%d/*\", phases: [{kind: compute_bound}]}\n", first/8, first, last)
	}
	b.WriteString("      faults:\n        - {kind: slow_rank, gpus: \"0/1\", start: 0s}")
	return b.String()
}

// gatewayConfig is the chart's gateway pipeline (charts/otelcol-gpu,
// templates/_config.tpl) with the export going to the sink instead of
// Prometheus, and the queue in the run's directory.
func gatewayConfig(listen, sinkAddr, queueDir string) string {
	return fmt.Sprintf(`
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: %s
        max_recv_msg_size_mib: 256
processors:
  memory_limiter: {check_interval: 1s, limit_percentage: 80, spike_limit_percentage: 20}
  gpu_analyzer:
    window: 30s
    group_by: [k8s.namespace.name, k8s.job.name]
exporters:
  otlp_grpc:
    endpoint: %s
    tls: {insecure: true}
    retry_on_failure: {enabled: true, initial_interval: 1s, max_interval: 30s, max_elapsed_time: 0s}
    sending_queue:
      enabled: true
      storage: file_storage
      num_consumers: 1
      sizer: bytes
      queue_size: 536870912
      batch: {flush_timeout: 5s, sizer: items, min_size: 8192, max_size: 16384}
extensions:
  file_storage:
    directory: %s
    create_directory: true
    compaction: {on_start: true, on_rebound: true, directory: %s, cleanup_on_start: true}
service:
  extensions: [file_storage]
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    metrics: {receivers: [otlp], processors: [memory_limiter, gpu_analyzer], exporters: [otlp_grpc]}
`, listen, sinkAddr, queueDir, queueDir)
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// measureGateway runs the gateway at 1,000 and 10,000 GPUs every 10 s,
// interleaved; at most 3 runs (about a minute each), which keep make bench
// within 25 minutes.
func measureGateway(s *sink, work string) []gatewayResult {
	sizes := []int{1000, 10000}
	results := make([]gatewayResult, len(sizes))
	for r := 0; r < min(*runs, 3); r++ {
		for i, gpus := range sizes {
			results[i].gpus = gpus
			smp, err := measureGatewayOnce(s, work, gpus)
			if err != nil {
				log.Fatalf("gateway %d GPUs: %v", gpus, err)
			}
			results[i].samples = append(results[i].samples, smp)
			log.Printf("gateway run %d %5d GPUs: %.3f cores, %.0f MB peak RSS, %d points", r+1, gpus, smp.cpu/gatewayWindow.Seconds(), smp.rssMB, smp.points)
		}
	}
	return results
}

func measureGatewayOnce(s *sink, work string, gpus int) (sample, error) {
	listen, err := freeAddr()
	if err != nil {
		return sample{}, err
	}
	queue, err := os.MkdirTemp(work, "queue-")
	if err != nil {
		return sample{}, err
	}
	gw, err := startCollector(work, gatewayConfig(listen, s.addr, queue))
	if err != nil {
		return sample{}, err
	}
	defer gw.stop()
	hosts := gpus / 8
	feeder, err := startCollector(work, simulatedFleetTo(listen, hosts, 8, gatewayInterval, gatewayFleet(hosts)))
	if err != nil {
		return sample{}, err
	}
	defer feeder.stop()
	// The window starts once data flows through the gateway, and after the
	// analyzer has seen a whole window of samples.
	began := s.points.Load()
	for deadline := time.Now().Add(90 * time.Second); s.points.Load() == began; {
		if time.Now().After(deadline) {
			return sample{}, fmt.Errorf("no data through the gateway in 90 s: gateway: %s feeder: %s", gw.logs.String(), feeder.logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(2 * gatewayInterval)
	if gw.cmd.ProcessState != nil {
		return sample{}, fmt.Errorf("gateway exited: %s", gw.logs.String())
	}
	cpu0, err := gw.cpuSeconds()
	if err != nil {
		return sample{}, err
	}
	p0 := s.points.Load()
	time.Sleep(*gatewayWindow)
	cpu1, err := gw.cpuSeconds()
	if err != nil {
		return sample{}, fmt.Errorf("%w: %s", err, gw.logs.String())
	}
	smp := sample{cpu: cpu1 - cpu0, points: s.points.Load() - p0, rssMB: gw.peakRSSMB()}
	if smp.points == 0 {
		return smp, fmt.Errorf("no data points reached the sink: %s", gw.logs.String())
	}
	_ = os.RemoveAll(filepath.Clean(queue))
	return smp, nil
}

// simulatedFleetTo is the simulated fleet exported without compression to
// addr (the feeder's cost is not measured; the gateway's decompression
// would only add the agents' choice of compression to its figures).
func simulatedFleetTo(addr string, hosts, perHost int, interval time.Duration, fleet string) string {
	return fmt.Sprintf(`
receivers:
  dcgm:
    backend: simulated
    collection_interval: %s
    simulated:
      hosts: %d
      gpus_per_host: %d
%s
processors:
  batch: {timeout: 200ms, send_batch_size: 8192, send_batch_max_size: 16384}
exporters:
  otlp_grpc:
    endpoint: %s
    tls: {insecure: true}
    compression: none
    sending_queue: {enabled: true, queue_size: 100000}
service:
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    metrics: {receivers: [dcgm], processors: [batch], exporters: [otlp_grpc]}
`, interval, hosts, perHost, fleet, addr)
}

// gatewayMarkdown writes the gateway section.
func (r *report) gatewayMarkdown(w func(format string, args ...any)) {
	w("## 6. Gateway at 1,000 and 10,000 GPUs")
	w("")
	w("The Helm chart's gateway pipeline (`memory_limiter`, `gpu_analyzer` grouped by namespace and job, the export queue on disk) receiving a simulated fleet's OTLP every %v, as the agents send it (training jobs of 64 GPUs), and exporting to the sink. Only the gateway process is measured, over %v after the data has flowed for two intervals. The chart's gateway `resources` come from this table (its README says how).", gatewayInterval, *gatewayWindow)
	w("")
	w("| GPUs | data points/s | CPU (cores) | peak RSS (MB) |")
	w("|---|---|---|---|")
	for _, g := range r.gateway {
		cores := median(col(g.samples, func(s sample) float64 { return s.cpu / gatewayWindow.Seconds() }))
		rss := median(col(g.samples, func(s sample) float64 { return s.rssMB }))
		rate := median(col(g.samples, func(s sample) float64 { return float64(s.points) / gatewayWindow.Seconds() }))
		w("| %d | %.0f | %.3f | %.0f |", g.gpus, rate, cores, rss)
	}
	w("")
}
