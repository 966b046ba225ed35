package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/fakenode"
)

// The node-evidence section: the lean agent's whole-process CPU on an HGX
// node with the gpu_node receiver on and off, the two interleaved.

var (
	sharedDir  = flag.String("shared", "../shared", "the shared folder (its realdata/ holds the H100 node's InfiniBand sysfs the node section reads)")
	nodeWindow = flag.Duration("node-window", 60*time.Second, "measurement window per run of the node section at the chart's intervals (six dcgm and four gpu_node scrapes)")
	nodeRuns   = flag.Int("node-runs", 3, "runs per path in the node section")
)

// nodeGPUs is the node's GPUs: an HGX H100 board, as the InfiniBand tree's
// eight rails serve.
const nodeGPUs = 8

// nodeScale is one pair of intervals the section measures.
type nodeScale struct {
	name           string
	dcgm, node     time.Duration
	window         time.Duration
	off, on        []sample
	offKey, onName string
}

type nodeResult struct {
	skipped string // why the section was not measured
	scales  []*nodeScale
	runs    int
}

// cpuPerGPUScrape is the process's CPU per GPU per dcgm scrape, in µs.
func (s *nodeScale) cpuPerGPUScrape(smp sample) float64 {
	scrapes := s.window.Seconds() / s.dcgm.Seconds()
	return smp.cpu / (nodeGPUs * scrapes) * 1e6
}

func measureNode(s *sink, work string) nodeResult {
	ib := filepath.Join(*sharedDir, "realdata", filepath.FromSlash(fakenode.H100InfiniBand))
	if _, err := os.Stat(ib); err != nil {
		return nodeResult{skipped: fmt.Sprintf("the H100 node's InfiniBand sysfs is read from the shared folder (-shared): %v", err)}
	}
	if _, err := os.Stat(*agentBin); err != nil {
		return nodeResult{skipped: fmt.Sprintf("no agent at %s (make build-agent)", *agentBin)}
	}
	host := filepath.Join(work, "node-host")
	if err := fakenode.Write(host, ib, nodeGPUs); err != nil {
		log.Fatal(err)
	}
	lib, err := dcgmstandin.Build(*standin, work)
	if err != nil {
		log.Fatal(err)
	}
	state := filepath.Join(work, "standin-state-node")
	if err := (dcgmstandin.State{GPUs: nodeGPUs, Connected: true}).Write(state); err != nil {
		log.Fatal(err)
	}
	env := []string{"LD_LIBRARY_PATH=" + filepath.Dir(lib), "STANDIN_DCGM_STATE=" + state}

	res := nodeResult{runs: *nodeRuns, scales: []*nodeScale{
		// The Helm chart's agent: dcgm every 10 s, gpu_node every 15 s.
		{name: "the chart's intervals", dcgm: 10 * time.Second, node: 15 * time.Second, window: *nodeWindow},
		// Both ten times as often: the scrapes' own cost, with less of the
		// process's fixed cost (timers, the runtime) in each figure.
		{name: "both ten times as often", dcgm: time.Second, node: 1500 * time.Millisecond, window: 12 * time.Second},
	}}
	saved := *window
	defer func() { *window = saved }()
	for r := 0; r < res.runs; r++ {
		for _, sc := range res.scales {
			*window = sc.window
			for _, on := range []bool{false, true} {
				smp, err := measureWith(*agentBin, s, work, 3*time.Second, nodeConfig(s.addr, host, sc, on), env...)
				if err != nil {
					//nolint:gocritic // exitAfterDefer: the deferred restore of -window does not matter once the program exits
					log.Fatalf("node %s (gpu_node %v): %v", sc.name, on, err)
				}
				if on {
					sc.on = append(sc.on, smp)
				} else {
					sc.off = append(sc.off, smp)
				}
				log.Printf("node run %d, %s, gpu_node %-5v: %.1f µs CPU per GPU per dcgm scrape, %d points", r+1, sc.name, on, sc.cpuPerGPUScrape(smp), smp.points)
			}
		}
	}
	return res
}

// nodeConfig is the agent's configuration: the chart's agent pipeline
// (memory_limiter, batch, OTLP with gzip) with or without gpu_node.
func nodeConfig(sinkAddr, host string, sc *nodeScale, on bool) string {
	receivers := "dcgm"
	var b strings.Builder
	fmt.Fprintf(&b, "receivers:\n  dcgm:\n    backend: dcgm\n    endpoint: localhost:5555\n    collection_interval: %s\n    hostname: bench-node\n", sc.dcgm)
	if on {
		receivers = "dcgm, gpu_node"
		fmt.Fprintf(&b, "  gpu_node:\n    collection_interval: %s\n    root_path: %s\n    host_name: bench-node\n    network: {enabled: true, ethtool: false}\n", sc.node, host)
	}
	b.WriteString("processors:\n  memory_limiter: {check_interval: 1s, limit_mib: 100, spike_limit_mib: 20}\n  batch: {}\n")
	fmt.Fprintf(&b, pipelineTail, sinkAddr, "gzip", receivers, "memory_limiter, batch")
	return b.String()
}

func (r nodeResult) markdown(w func(string, ...any)) {
	w("## 8. Node evidence: the agent's CPU with `gpu_node` on and off")
	w("")
	if r.skipped != "" {
		w("Not measured: %s.", r.skipped)
		return
	}
	w("The lean agent (`otelcol-gpu-agent`) on an HGX H100 node: the `dcgm` receiver on the stand-in DCGM library (%d GPUs, the receiver's fields), and, on, the `gpu_node` receiver reading the node's files under `root_path`: the nine RDMA ports of a real H100 node's `/sys/class/infiniband` (the shared real data's `%s`, of which it reads the 243 counters it emits) and %d GPU pods' cgroup v2 files with the node's `/proc/pressure` (`internal/fakenode`). The chart's agent pipeline: `memory_limiter`, `batch`, OTLP with gzip to the sink. CPU is the whole process's, over each window after a 3 s warm-up, per GPU per `dcgm` scrape; the paths alternate, %d runs each, medians.", nodeGPUs, fakenode.H100InfiniBand, nodeGPUs, r.runs)
	w("")
	w("| intervals (`dcgm`, `gpu_node`) | window | gpu_node off: µs CPU per GPU per scrape | on | added | data points per GPU per scrape, off → on |")
	w("|---|---|---|---|---|---|")
	for _, sc := range r.scales {
		off, on := median(col(sc.off, sc.cpuPerGPUScrape)), median(col(sc.on, sc.cpuPerGPUScrape))
		pts := func(xs []sample) float64 {
			return median(col(xs, func(s sample) float64 { return float64(s.points) })) / (nodeGPUs * sc.window.Seconds() / sc.dcgm.Seconds())
		}
		w("| %s, %s: %s | %s | %.1f | %.1f | %+.1f %% | %.1f → %.1f |", sc.dcgm, sc.node, sc.name, sc.window, off, on, (on/off-1)*100, pts(sc.off), pts(sc.on))
	}
	if len(r.scales) > 0 {
		sc := r.scales[0]
		off, on := median(col(sc.off, sc.cpuPerGPUScrape)), median(col(sc.on, sc.cpuPerGPUScrape))
		w("")
		w("Target: at most +15 %% of the agent's CPU per GPU per scrape at the intervals it ships with: %+.1f %% (%s). Ten times as often, the scrapes dominate the process's CPU and the node evidence's share shows: its points go through the same pipeline as the GPUs', and reading a file kept open costs about 0.3 µs (`go test ./internal/sysfile -bench Read`), against 3 to 5 µs to open, read and close it.", (on/off-1)*100, verdict(on/off-1 <= 0.15))
	}
	w("")
	w("<details><summary>raw runs (µs CPU per GPU per dcgm scrape)</summary>")
	w("")
	for _, sc := range r.scales {
		w("- %s: off %s; on %s", sc.name, fmtRuns(col(sc.off, sc.cpuPerGPUScrape)), fmtRuns(col(sc.on, sc.cpuPerGPUScrape)))
	}
	w("")
	w("</details>")
}

func fmtRuns(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, ", ")
}
