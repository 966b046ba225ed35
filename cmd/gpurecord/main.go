// Command gpurecord records the GPUs of the machine it runs on as a trace
// that gpureplay replays: to keep an incident, attach it to a bug report,
// or try new analyzer thresholds on real data.
//
//	gpurecord [-backend auto|dcgm|nvml|simulated] [-endpoint ADDR] [-embedded]
//	          [-interval 1s] [-duration 10m] [-o FILE] [-hostname NAME]
//	          [-pod-resources SOCKET] [-simulated FILE]
//
// It reads through the dcgm receiver's own backends: DCGM (nv-hostengine at
// -endpoint, or an embedded host engine), NVML, or the simulated fleet; auto
// tries DCGM, then NVML. Every -interval it writes one row per GPU to -o
// (standard output by default) in the trace format of the analyzer contract:
// timestamp (Unix seconds, millisecond precision, never going backwards),
// uuid, host, gpu, model, namespace, pod, container, job, then every DCGM
// field the receiver reads under dcgm-exporter's names, in DCGM's units
// (utilizations in percent, profiling activities as ratios, bytes per second,
// MiB, W, C, MHz, cumulative ECC counts, the clock-event bitmask, and the XID
// code at the sample where one occurred). A blank cell is a value the GPU
// did not report. The namespace, pod and container come from the kubelet's
// pod-resources socket where it exists.
//
// It stops after -duration (duration/interval samples), or at SIGINT or
// SIGTERM, with everything recorded so far written: it flushes after every
// sample. A lost GPU source is noted in the trace as a comment and
// reconnected. Bad flags exit with status 2, a failure (no GPU source, an
// unwritable output) with status 1, each with one line on stderr.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/otelcol-gpu/otelcol-gpu/internal/record"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := record.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, record.Env{})
	stop()
	os.Exit(code)
}
