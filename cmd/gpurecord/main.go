// Command gpurecord records the GPUs of the machine it runs on, or what a
// Prometheus holds of a fleet's, as a trace that gpureplay replays: to keep
// an incident, attach it to a bug report, or try new analyzer thresholds on
// real data.
//
//	gpurecord [-backend auto|dcgm|nvml|amdsmi|simulated] [-endpoint ADDR] [-embedded]
//	          [-interval 1s] [-duration 10m] [-unpaced] [-o FILE] [-hostname NAME]
//	          [-pod-resources SOCKET] [-simulated FILE] [-amdsmi-library PATH]
//
// It reads through the dcgm receiver's own backends: DCGM (nv-hostengine at
// -endpoint, or an embedded host engine), NVML, AMD SMI (libamd_smi.so, on
// the loader's path or at -amdsmi-library), or the simulated fleet; auto
// tries DCGM, then NVML, then AMD SMI. An AMD GPU's row holds the figures
// both vendors have, in the same DCGM columns and units (graphics activity
// as GPU_UTIL, VRAM, socket power, energy, hotspot temperature, PCIe
// throughput, ECC totals), and a blank XID; AMD's own figures (memory
// controller activity, XGMI, CPER records) have no column. Every -interval it writes one row per GPU to -o
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
// sample. With -unpaced (the simulated backend and a -duration only) it
// takes the samples one after another without waiting, each -interval after
// the previous in the trace's time: the simulated fleet's values depend on
// the collection times alone, so a 6-minute recording takes a second and
// holds the same values it would have after 6 minutes. A lost GPU source is noted in the trace as a comment and
// reconnected. Bad flags exit with status 2, a failure (no GPU source, an
// unwritable output) with status 1, each with one line on stderr.
//
// # Recording from Prometheus
//
//	gpurecord -prometheus URL -start TIME -end TIME [-match SELECTOR] [-step D]
//	          [-max-series 10000] [-bearer-token-file FILE] [-o FILE]
//
// With -prometheus it records what the Prometheus at URL (its base URL,
// http or https, basic auth as user:password@ in it, a bearer token from
// -bearer-token-file or $PROMETHEUS_BEARER_TOKEN) holds from -start to
// -end (both included; RFC 3339 or Unix seconds), so that last week's
// incident replays through gpureplay. It reads two shapes of series:
//
//   - dcgm-exporter's: DCGM_FI_* gauges for every field of the
//     internal/dcgmfield catalogue, under dcgm-exporter's names or the newer
//     DCGM aliases, in DCGM's units; the dcgm receiver's `naming:
//     dcgm_exporter` writes the same. Labels UUID, Hostname, gpu, modelName,
//     namespace, pod, container give the identity columns (exported_namespace,
//     exported_pod, exported_container first, where the scrape renamed
//     dcgm-exporter's own). dcgm-exporter labels a MIG instance with its
//     parent's UUID and GPU_I_ID, not an instance UUID: its uuid is
//     PARENT-UUID/giN. DCGM_FI_DEV_XID_ERRORS holds the last XID (a new
//     series for each code, labelled err_code); read per GPU across those
//     series, the trace has the code at the sample where it changes to a new
//     non-zero value, 0 at the others, and a blank cell at the first
//     (history).
//   - the collector's: the receiver's default metrics as its prometheus and
//     prometheus_remote_write exporters name them (hw_gpu_utilization_ratio,
//     nvidia_gpu_clock_frequency_hertz, nvidia_gpu_xid_errors_total, ...;
//     or without unit and type suffixes), with resource_to_telemetry_conversion
//     (hw_id, host_name, nvidia_gpu_index, hw_model, k8s_namespace_name,
//     k8s_pod_name, k8s_container_name, k8s_job_name labels). They go back to
//     DCGM's units: ratios to percent where DCGM has percent, bytes to MiB,
//     Hz to MHz, J to mJ, seconds to microseconds; FB_FREE from
//     hw_gpu_memory_utilization and FB_USED; PCIe and NVLink rates from the
//     integrated byte counters (from the second sample on); counters as the
//     collector counts them (from its start); an XID where its per-code
//     counter goes up. Where a GPU reports no SM activity, a graphics engine
//     or DRAM activity equal to the receiver's fallback (GPU_UTIL or
//     MEM_COPY_UTIL) is left blank.
//
// Where one GPU has both shapes in one request window, dcgm-exporter's
// series win and the collector's are left out: they are DCGM's own numbers.
//
// By default it reads raw samples with their scrape timestamps: the
// range-vector selector NAME{-match}[1h] as an instant query
// (/api/v1/query), one hour per request. A scrape that stopped leaves a
// gap, where query_range's 5-minute lookback would repeat the last value.
// With -step it evaluates NAME{-match} through /api/v1/query_range at
// that step instead, 720 steps per request, as Grafana does: rows at the
// steps, fewer of them over long ranges. Either way it first asks which
// metric names exist, then reads one name per request. -match (label
// matchers such as {Hostname="node-7"}) is added to every query.
//
// Samples of one GPU at one timestamp form one row; rows come in timestamp,
// then uuid, order, a blank cell for a field not reported. Each window is
// written and flushed as it is read. Series without a GPU UUID (UUID, or
// hw_id) are skipped, counted and reported on stderr at the end; a query
// that returns more than -max-series series fails. An HTTP error,
// Prometheus' status "error", or SIGINT stops the recording with exit
// status 1 and one line on stderr; the rows already written stay, followed
// by a comment that says where the trace stops.
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
