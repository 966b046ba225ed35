package main

import (
	"bufio"
	"bytes"
	"fmt"
	"log"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"time"
)

const pipelineTail = `
exporters:
  otlp_grpc:
    endpoint: %s
    tls: {insecure: true}
    compression: %s
service:
  telemetry: {metrics: {level: none}, logs: {level: warn}}
  pipelines:
    metrics: {receivers: [%s], processors: [%s], exporters: [otlp_grpc]}
`

func simulatedConfig(sinkAddr string, hosts, perHost int, interval time.Duration, analyze bool, extra string) string {
	return simulatedConfigWith(sinkAddr, "gzip", hosts, perHost, interval, analyze, extra)
}

func simulatedConfigWith(sinkAddr, compression string, hosts, perHost int, interval time.Duration, analyze bool, extra string) string {
	procs := "batch"
	if analyze {
		procs = "gpu_analyzer, batch"
	}
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
  gpu_analyzer: {}
  batch: {timeout: 200ms}
`, interval, hosts, perHost, extra) + fmt.Sprintf(pipelineTail, sinkAddr, compression, "dcgm", procs)
}

type path struct {
	name, note  string
	compression string
	gpus        int
	config      string
	env         []string
	warmup      time.Duration
}

type ingestionResult struct {
	path
	samples []sample
}

// measureIngestion compares the dcgm receiver with dcgm-exporter scraped by
// the prometheus receiver, on the same GPUs and fields, runs interleaved.
// The DCGM backend is compared with the real dcgm-exporter in measureDCGM.
func measureIngestion(s *sink, work string) []ingestionResult {
	const gpus = 64
	exp := startFakeExporter(gpus)
	var paths []path
	// The exporter's default compression (gzip) is most of the CPU on both
	// paths; without it the comparison shows the ingestion itself.
	for _, comp := range []string{"gzip", "none"} {
		paths = append(paths,
			path{name: "otelcol-gpu `dcgm` receiver, simulated backend", gpus: gpus, compression: comp, warmup: 3 * time.Second,
				config: simulatedConfigWith(s.addr, comp, 4, 16, time.Second, false, "")},
			// The prometheus receiver applies its targets about every 5 s:
			// its first scrape comes some 6 s after start.
			path{name: "dcgm-exporter `/metrics` scraped by the `prometheus` receiver", gpus: gpus, compression: comp, warmup: *warmup,
				config: fmt.Sprintf(`
receivers:
  prometheus:
    config:
      scrape_configs:
        - job_name: dcgm-exporter
          scrape_interval: 1s
          scrape_timeout: 1s
          static_configs: [{targets: ["%s"]}]
processors:
  batch: {timeout: 200ms}
`, exp.addr) + fmt.Sprintf(pipelineTail, s.addr, comp, "prometheus", "batch")},
		)
	}
	results := make([]ingestionResult, len(paths))
	for i := range paths {
		results[i].path = paths[i]
	}
	for r := 0; r < *runs; r++ {
		for i, p := range paths {
			smp, err := measure(s, work, p.warmup, p.config, p.env...)
			if err != nil {
				log.Fatalf("ingestion %s: %v", p.name, err)
			}
			results[i].samples = append(results[i].samples, smp)
			log.Printf("ingestion run %d %-50.50s %-4s %.3f CPU s/M points, %.0f MB", r+1, p.name, p.compression, smp.cpuPerMillion(), smp.rssMB)
		}
	}
	return results
}

type growthResult struct {
	gpus    int
	samples []sample
}

// measureGrowth runs the full pipeline (receiver, analyzer, batch, OTLP)
// at growing fleet sizes, interleaved.
func measureGrowth(s *sink, work string) []growthResult {
	sizes := []struct{ gpus, hosts, per int }{{8, 1, 8}, {64, 4, 16}, {512, 32, 16}, {4096, 256, 16}}
	fleet := `      workloads:
        - {name: llm, kind: training, namespace: ml, gpus: "*/*", phases: [{kind: compute_bound}]}
      faults:
        - {kind: slow_rank, gpus: "0/1", start: 0s}`
	results := make([]growthResult, len(sizes))
	for r := 0; r < *runs; r++ {
		for i, sz := range sizes {
			results[i].gpus = sz.gpus
			smp, err := measure(s, work, 3*time.Second, simulatedConfig(s.addr, sz.hosts, sz.per, time.Second, true, fleet))
			if err != nil {
				log.Fatalf("growth %d GPUs: %v", sz.gpus, err)
			}
			results[i].samples = append(results[i].samples, smp)
			log.Printf("growth run %d %5d GPUs: %.3f cores, %.0f MB", r+1, sz.gpus, smp.cpu/window.Seconds(), smp.rssMB)
		}
	}
	return results
}

type latencyResult struct {
	interval  time.Duration
	total     []float64 // fault to alert at the exporter's destination, s
	detection []float64 // fault to the data point that carries the alert, s
}

// measureLatency injects a critical XID into the simulated fleet and times
// its GPUFaulted alert arriving at the OTLP destination. Real faults strike
// between samples: each run puts the fault at another phase of the interval
// (10 s plus a fraction of it), so the figures include the wait for the
// next sample.
func measureLatency(s *sink, work string) []latencyResult {
	var results []latencyResult
	for _, interval := range []time.Duration{time.Second, 5 * time.Second} {
		res := latencyResult{interval: interval}
		for r := 0; r < *runs; r++ {
			faultAt := 10*time.Second + time.Duration(float64(interval)*(float64(r)+0.5)/float64(*runs))
			fleet := fmt.Sprintf("      faults:\n        - {kind: xid, gpus: \"0/3\", start: %s, xid: 79}", faultAt)
			s.reset()
			c, err := startCollector(work, simulatedConfig(s.addr, 2, 8, interval, true, fleet))
			if err != nil {
				log.Fatal(err)
			}
			deadline := time.Now().Add(faultAt + 6*interval + 30*time.Second)
			var first, at, data time.Time
			for time.Now().Before(deadline) {
				if first, at, data = s.alert(); !at.IsZero() {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			c.stop()
			if at.IsZero() {
				log.Fatalf("no GPUFaulted alert within %v at a %v interval: %s", deadline, interval, c.logs.String())
			}
			fault := first.Add(faultAt)
			res.total = append(res.total, at.Sub(fault).Seconds())
			res.detection = append(res.detection, data.Sub(fault).Seconds())
			log.Printf("latency run %d at %v (fault at %v): %.2f s", r+1, interval, faultAt, at.Sub(fault).Seconds())
		}
		results = append(results, res)
	}
	return results
}

type analyzerResult struct {
	passthroughNs, analyzerNs        []float64
	analyzerAllocsPerPoint, bytesGPU []float64
	// ratioDefault and ratioEvery: BenchmarkAnalyzerRatio's CPU ratio to
	// the pass-through, batches alternating on one thread, as shipped
	// (verdicts on change and every 30 s) and with a verdict every sample.
	ratioDefault, ratioEvery []float64
	raw                      string
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+)\s+\d+\s+(.*)$`)

// measureAnalyzer runs the analyzer's Go benchmarks: the processor against
// a pass-through in the same run, and state bytes per GPU.
func measureAnalyzer() analyzerResult {
	cmd := exec.Command("go", "test", "./processor/gpuanalyzerprocessor", "-run", "^$",
		"-bench", "BenchmarkAnalyzer|BenchmarkStateBytesPerGPU", "-benchmem", "-count", strconv.Itoa(*runs))
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		log.Fatalf("analyzer benchmarks: %v", err)
	}
	var r analyzerResult
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r.raw += sc.Text() + "\n"
		vals := map[string]float64{}
		f := regexp.MustCompile(`([0-9.]+) (\S+)`).FindAllStringSubmatch(m[2], -1)
		for _, kv := range f {
			v, _ := strconv.ParseFloat(kv[1], 64)
			vals[kv[2]] = v
		}
		switch {
		case regexp.MustCompile(`^BenchmarkAnalyzer/passthrough`).MatchString(m[1]):
			r.passthroughNs = append(r.passthroughNs, vals["ns/datapoint"])
		case regexp.MustCompile(`^BenchmarkAnalyzer/analyzer`).MatchString(m[1]):
			r.analyzerNs = append(r.analyzerNs, vals["ns/datapoint"])
			r.analyzerAllocsPerPoint = append(r.analyzerAllocsPerPoint, vals["allocs/op"]/(4096*20))
		case regexp.MustCompile(`^BenchmarkAnalyzerRatio/default`).MatchString(m[1]):
			r.ratioDefault = append(r.ratioDefault, vals["x-passthrough"])
		case regexp.MustCompile(`^BenchmarkAnalyzerRatio/every_sample`).MatchString(m[1]):
			r.ratioEvery = append(r.ratioEvery, vals["x-passthrough"])
		case regexp.MustCompile(`^BenchmarkStateBytesPerGPU`).MatchString(m[1]):
			r.bytesGPU = append(r.bytesGPU, vals["bytes/gpu"])
		}
	}
	if len(r.analyzerNs) == 0 {
		log.Fatalf("no analyzer benchmark results in:\n%s", raw)
	}
	log.Printf("analyzer: %.1f ns/point vs %.1f pass-through", median(r.analyzerNs), median(r.passthroughNs))
	return r
}
