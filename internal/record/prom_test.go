package record

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ot "github.com/prometheus/otlptranslator"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	mn "github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/promfake"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

const tracesDir = "../../cmd/gpureplay/testdata/traces/"

// loadTrace reads the batches of a shared trace with from <= time < to.
func loadTrace(t *testing.T, name string, from, to float64) [][]trace.Row {
	t.Helper()
	var out [][]trace.Row
	for _, b := range readTrace(t, filepath.Join(tracesDir, name)) {
		if b[0].Time >= from && b[0].Time < to {
			out = append(out, b)
		}
	}
	require.NotEmpty(t, out)
	return out
}

func serve(t *testing.T, s *promfake.Server) string {
	t.Helper()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

// promRecord runs gpurecord -prometheus and returns its exit status, its
// stderr and the trace it wrote (nil if none).
func promRecord(t *testing.T, ctx context.Context, args ...string) (int, string, [][]trace.Row) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "prom.csv")
	code, stderr := record(t, ctx, Env{}, append(args, "-o", out)...)
	if _, err := os.Stat(out); err != nil {
		return code, stderr, nil
	}
	return code, stderr, readTrace(t, out)
}

type gpuAt struct {
	t    int64
	uuid string
}

func byGPUAt(batches [][]trace.Row) map[gpuAt]trace.Row {
	m := map[gpuAt]trace.Row{}
	for _, b := range batches {
		for _, r := range b {
			m[gpuAt{int64(math.Round(r.Time * 1000)), r.UUID}] = r
		}
	}
	return m
}

// requireSameRows requires the same rows (GPU and time), identities and
// values of fields. An XID cell of 0 and a blank one are the same: no XID.
func requireSameRows(t *testing.T, want, got [][]trace.Row, fields []f.Field) {
	t.Helper()
	w, g := byGPUAt(want), byGPUAt(got)
	require.Len(t, g, len(w), "rows")
	for k, wr := range w {
		gr, ok := g[k]
		require.Truef(t, ok, "no row for %s at %d", k.uuid, k.t)
		require.Equal(t, [7]any{wr.Host, wr.GPU, wr.HasGPU, wr.Model, wr.Namespace, wr.Pod, wr.Container},
			[7]any{gr.Host, gr.GPU, gr.HasGPU, gr.Model, gr.Namespace, gr.Pod, gr.Container}, "identity of %s", k.uuid)
		for _, fd := range fields {
			wv, wok := wr.Values.Get(fd)
			gv, gok := gr.Values.Get(fd)
			if fd == f.XIDErrors {
				require.Equalf(t, wv, gv, "%s at %d: %s", k.uuid, k.t, fd)
				continue
			}
			require.Equalf(t, wok, gok, "%s at %d: %s present", k.uuid, k.t, fd)
			require.Equalf(t, wv, gv, "%s at %d: %s", k.uuid, k.t, fd)
		}
	}
}

// traceFields are the fields the shared traces have.
func traceFields(batches [][]trace.Row) []f.Field {
	var out []f.Field
	for _, fd := range f.All() {
		for _, b := range batches {
			if b[0].Values.Has(fd) {
				out = append(out, fd)
				break
			}
		}
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestPrometheusDCGMExporter records dcgm-exporter's series of a 2.5-hour
// trace, read raw in one-hour windows, and gets the trace back.
func TestPrometheusDCGMExporter(t *testing.T) {
	want := loadTrace(t, "memory-leak-15s.csv", 0, math.Inf(1))
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	// A series without a UUID is skipped, and said so.
	prom.Add(map[string]string{"__name__": "DCGM_FI_DEV_GPU_TEMP", "gpu": "0", "Hostname": "old-node"}, promfake.Sample{T: 1767225600000, V: 40})
	base := serve(t, prom)

	code, stderr, got := promRecord(t, context.Background(), "-prometheus", base, "-start", "1767225600", "-end", "2026-01-01T02:29:45Z")
	require.Equal(t, ExitOK, code, stderr)
	require.Contains(t, stderr, `gpurecord: skipped 1 series without a GPU UUID (label UUID for DCGM_FI_* names, hw_id for the collector's), such as DCGM_FI_DEV_GPU_TEMP{Hostname="old-node", gpu="0"}`+"\n")
	require.Regexp(t, `^gpurecord: 7200 rows, 600 samples of 12 GPUs, written to .*prom.csv$`, lastLine(stderr))
	requireSameRows(t, want, got, traceFields(want))

	// Rows in timestamp, then uuid, order.
	for _, b := range got {
		require.True(t, sort.SliceIsSorted(b, func(i, j int) bool { return b[i].UUID < b[j].UUID }))
	}
	// The XID gauge's first sample is history (blank); no XID after.
	for i, b := range got {
		for _, r := range b {
			v, ok := r.Values.Get(f.XIDErrors)
			require.Equal(t, i > 0, ok)
			require.Zero(t, v)
		}
	}

	// One names query, then raw samples window by window: three windows of
	// at most an hour each, none through query_range.
	reqs := prom.Requests()
	require.Equal(t, "/api/v1/label/__name__/values", reqs[0].Get("path"))
	require.Equal(t, `{__name__=~"DCGM_FI_.+|hw_.+|nvidia_gpu_.+"}`, reqs[0].Get("match[]"))
	times := map[string]string{}
	for _, r := range reqs[1:] {
		require.Equal(t, "/api/v1/query", r.Get("path"))
		m := regexp.MustCompile(`^DCGM_FI_[A-Z_]+\[(\d+)ms\]$`).FindStringSubmatch(r.Get("query"))
		require.NotNil(t, m, r.Get("query"))
		times[r.Get("time")] = m[1]
	}
	require.Equal(t, map[string]string{"1767229199.999": "3600000", "1767232799.999": "3600000", "1767234585.000": "1785001"}, times)
	require.Len(t, reqs, 1+3*len(traceFields(want)), "one query per name present and window")
}

// TestPrometheusXID: dcgm-exporter's XID gauge holds the last XID; the
// trace has the code at the sample where the gauge changes to a new code.
func TestPrometheusXID(t *testing.T) {
	want := loadTrace(t, "serving-mixed-5s.csv", 1767226800, 1767227000)
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	// A gauge that starts at an old XID, changes, holds, goes to 0 (as the
	// receiver's dcgm_exporter naming writes it) and back.
	labels := map[string]string{"__name__": "DCGM_FI_DEV_XID_ERRORS", "UUID": "GPU-x", "gpu": "0"}
	vals := []float64{43, 43, 79, 79, 0, 79, 31}
	for i, v := range vals {
		prom.Add(labels, promfake.Sample{T: 1767226800000 + int64(i)*5000, V: v})
	}
	// dcgm-exporter labels the gauge with the code: each XID is a new
	// series, read in time order whatever order the series come in.
	for _, s := range []struct {
		code string
		from int
		vals []float64
	}{{"0", 0, []float64{0, 0, 0}}, {"79", 3, []float64{79, 79}}, {"13", 5, []float64{13, 13}}} {
		for i, v := range s.vals {
			prom.Add(map[string]string{"__name__": "DCGM_FI_DEV_XID_ERRORS", "UUID": "GPU-y", "gpu": "1", "err_code": s.code, "err_msg": "..."},
				promfake.Sample{T: 1767226800000 + int64(s.from+i)*5000, V: v})
		}
	}
	code, stderr, got := promRecord(t, context.Background(), "-prometheus", serve(t, prom), "-start", "1767226800", "-end", "1767226995")
	require.Equal(t, ExitOK, code, stderr)

	var xids []string
	var x, y []string
	for _, b := range got {
		for _, r := range b {
			v, ok := r.Values.Get(f.XIDErrors)
			switch r.UUID {
			case "GPU-x":
				x = append(x, cell(v, ok))
				continue
			case "GPU-y":
				y = append(y, cell(v, ok))
				continue
			}
			if ok && v != 0 {
				xids = append(xids, fmt.Sprintf("%s/%d %.0f at %.0f", r.Host, r.GPU, v, r.Time))
			}
		}
	}
	require.Equal(t, []string{"gpu-node-02/1 79 at 1767226900", "gpu-node-02/2 13 at 1767226900"}, xids)
	require.Equal(t, []string{"", "0", "79", "0", "0", "79", "31"}, x)
	require.Equal(t, []string{"", "0", "0", "79", "0", "13", "0"}, y)
	w, g := byGPUAt(want), byGPUAt(got)
	for k, wr := range w {
		requireSameRows(t, [][]trace.Row{{wr}}, [][]trace.Row{{g[k]}}, traceFields(want))
	}
}

func cell(v float64, ok bool) string {
	if !ok {
		return ""
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// TestPrometheusCollector records the collector's own series, as its
// Prometheus exporters name them, with and without unit suffixes, and gets
// the trace back in DCGM's units.
func TestPrometheusCollector(t *testing.T) {
	want := loadTrace(t, "serving-mixed-5s.csv", 1767226800, 1767227100)
	for _, suffixes := range []bool{true, false} {
		t.Run(fmt.Sprintf("suffixes=%v", suffixes), func(t *testing.T) {
			ss, err := promfake.Collector(want, suffixes)
			require.NoError(t, err)
			prom := promfake.New()
			prom.AddSeries(ss...)
			code, stderr, got := promRecord(t, context.Background(), "-prometheus", serve(t, prom), "-start", "1767226800", "-end", "1767227095")
			require.Equal(t, ExitOK, code, stderr)
			firstDBE := map[string]float64{}
			for _, r := range want[0] {
				firstDBE[r.UUID], _ = r.Values.Get(f.ECCDBEVolTotal)
			}
			// PCIe and NVLink rates come back from byte counters, from the
			// second sample on; ECC counts from the collector's start; the
			// limit is FB_USED + FB_FREE.
			for _, b := range got {
				for i := range b {
					r := &b[i]
					for _, fd := range []f.Field{f.PCIeTxBytes, f.PCIeRxBytes, f.NVLinkTxBytes, f.NVLinkRxBytes} {
						require.Equalf(t, r.Time != 1767226800, r.Values.Has(fd), "%s at %v: %s", r.UUID, r.Time, fd)
					}
					if dbe, ok := r.Values.Get(f.ECCDBEVolTotal); ok {
						r.Values.Set(f.ECCDBEVolTotal, dbe+firstDBE[r.UUID])
					}
					require.Equal(t, val(t, *r, f.FBUsed)+val(t, *r, f.FBFree), val(t, *r, f.FBTotal))
				}
			}
			rates := map[f.Field]bool{f.PCIeTxBytes: true, f.PCIeRxBytes: true, f.NVLinkTxBytes: true, f.NVLinkRxBytes: true}
			var fields []f.Field
			for _, fd := range traceFields(want) {
				if !rates[fd] {
					fields = append(fields, fd)
				}
			}
			requireSameRows(t, want, got, fields)
			// The rates, within the byte counters' truncation to whole bytes.
			w := byGPUAt(want)
			for k, gr := range byGPUAt(got) {
				for fd := range rates {
					if g, ok := gr.Values.Get(fd); ok {
						wr := w[k]
						wv, _ := wr.Values.Get(fd)
						require.InDeltaf(t, wv, g, 0.2+1e-9*wv, "%s at %d: %s", k.uuid, k.t, fd)
					}
				}
			}
		})
	}
}

// TestPrometheusCollectorNoProfiling: where a GPU has no profiling, the
// receiver reports GPU_UTIL and MEM_COPY_UTIL as the graphics engine and
// DRAM activity; those are not taken for profiling fields.
func TestPrometheusCollectorNoProfiling(t *testing.T) {
	want := loadTrace(t, "p100-no-profiling-15s.csv", 0, 1767225900)
	ss, err := promfake.Collector(want, true)
	require.NoError(t, err)
	prom := promfake.New()
	prom.AddSeries(ss...)
	code, stderr, got := promRecord(t, context.Background(), "-prometheus", serve(t, prom), "-start", "1767225600", "-end", "1767225900")
	require.Equal(t, ExitOK, code, stderr)
	fields := traceFields(want)
	require.Contains(t, fields, f.GPUUtil)
	requireSameRows(t, want, got, append(fields, f.GREngineActive, f.DRAMActive, f.SMActive))
}

// TestPrometheusBothShapes: a GPU with dcgm-exporter's series is read from
// those; the collector's series of the same GPU in the same window are
// left out, those of GPUs only the collector reports are read.
func TestPrometheusBothShapes(t *testing.T) {
	want := loadTrace(t, "serving-mixed-5s.csv", 1767226800, 1767226900)
	var dcgmOnly [][]trace.Row
	const otelOnly = "GPU-af6d114c-e8d7-af1f-cd50-e3d6d96e182d"
	for _, b := range want {
		var rows []trace.Row
		for _, r := range b {
			if r.UUID != otelOnly {
				rows = append(rows, r)
			}
		}
		dcgmOnly = append(dcgmOnly, rows)
	}
	// The collector's samples a second later than dcgm-exporter's.
	var shifted [][]trace.Row
	for _, b := range want {
		rows := make([]trace.Row, len(b))
		for i, r := range b {
			r.Time++
			rows[i] = r
		}
		shifted = append(shifted, rows)
	}
	ss, err := promfake.Collector(shifted, true)
	require.NoError(t, err)
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(dcgmOnly)...)
	prom.AddSeries(ss...)
	code, stderr, got := promRecord(t, context.Background(), "-prometheus", serve(t, prom), "-start", "1767226800", "-end", "1767226900")
	require.Equal(t, ExitOK, code, stderr)
	for _, b := range got {
		for _, r := range b {
			ms := int64(math.Round(r.Time * 1000))
			require.Equalf(t, r.UUID == otelOnly, ms%5000 == 1000, "%s at %d: only the GPU without dcgm-exporter series has rows at the collector's times", r.UUID, ms)
		}
	}
	require.Len(t, byGPUAt(got), len(byGPUAt(want)))
}

// TestPrometheusStep reads through query_range: rows at the steps, in
// requests of at most 720 steps, and a stopped series repeated for the
// lookback, where raw samples have none.
func TestPrometheusStep(t *testing.T) {
	prom := promfake.New()
	labels := map[string]string{"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-a", "gpu": "0", "Hostname": "n"}
	const t0 = int64(1767225600000)
	for ms := t0; ms < t0+2*3600_000; ms += 5000 {
		if ms >= t0+3600_000 && ms < t0+3600_000+600_000 {
			continue // stopped for 10 minutes
		}
		prom.Add(labels, promfake.Sample{T: ms, V: float64((ms - t0) / 5000 % 100)})
	}
	base := serve(t, prom)
	code, stderr, got := promRecord(t, context.Background(), "-prometheus", base, "-start", "1767225600", "-end", "1767232800", "-step", "10s")
	require.Equal(t, ExitOK, code, stderr)
	rows := byGPUAt(got)
	var ranges int
	for _, r := range prom.Requests()[1:] {
		require.Equal(t, "/api/v1/query_range", r.Get("path"))
		require.Equal(t, "DCGM_FI_DEV_GPU_UTIL", r.Get("query"))
		require.Equal(t, "10", r.Get("step"))
		s, _ := strconv.ParseFloat(r.Get("start"), 64)
		e, _ := strconv.ParseFloat(r.Get("end"), 64)
		require.LessOrEqual(t, e-s, 719*10.0)
		ranges++
	}
	require.Equal(t, 2, ranges, "721 steps: two requests")
	// Steps every 10 s; in the gap the last value stays for 5 minutes.
	n := 0
	for ms := t0; ms <= t0+7200_000; ms += 10_000 {
		gap := ms >= t0+3600_000 && ms < t0+3600_000+600_000
		stale := gap && ms < t0+3600_000-5000+300_000
		_, ok := rows[gpuAt{ms, "GPU-a"}]
		require.Equalf(t, !gap || stale, ok, "row at %d", ms)
		if ok {
			n++
		}
		if stale {
			require.Equal(t, 19.0, val(t, rows[gpuAt{ms, "GPU-a"}], f.GPUUtil), "the last value before the gap")
		}
	}
	require.Len(t, rows, n)
	require.Equal(t, 721-60+30, n)

	// Raw samples: none in the gap, each at its scrape time.
	code, stderr, got = promRecord(t, context.Background(), "-prometheus", base, "-start", "1767225600", "-end", "1767232800")
	require.Equal(t, ExitOK, code, stderr)
	require.Len(t, byGPUAt(got), 1440-120)
}

// TestPrometheusMatch adds -match to every query, with or without braces.
func TestPrometheusMatch(t *testing.T) {
	want := loadTrace(t, "serving-mixed-5s.csv", 1767226800, 1767226830)
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	base := serve(t, prom)
	for _, m := range []string{`{Hostname="gpu-node-02"}`, ` Hostname = "gpu-node-02" `} {
		code, stderr, got := promRecord(t, context.Background(), "-prometheus", base, "-start", "1767226800", "-end", "1767226825", "-match", m)
		require.Equal(t, ExitOK, code, stderr)
		require.Regexp(t, `^gpurecord: 48 rows, 6 samples of 8 GPUs`, lastLine(stderr))
		for _, b := range got {
			for _, r := range b {
				require.Equal(t, "gpu-node-02", r.Host)
			}
		}
	}
	for _, r := range prom.Requests() {
		q := r.Get("query") + r.Get("match[]")
		require.Regexp(t, `\{(__name__=~"[^"]+", )?Hostname ?= ?"gpu-node-02"\}`, q)
	}
}

// TestPrometheusMIGAndExportedLabels: a MIG instance is its parent's UUID
// and its GPU instance id; pod labels renamed by the scrape (exported_*)
// are the workload's.
func TestPrometheusMIGAndExportedLabels(t *testing.T) {
	prom := promfake.New()
	for gi, v := range map[string]float64{"1": 40, "2": 90} {
		prom.Add(map[string]string{"__name__": "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "UUID": "GPU-p", "gpu": "3", "modelName": "NVIDIA A100-SXM4-80GB",
			"GPU_I_ID": gi, "GPU_I_PROFILE": "3g.40gb", "Hostname": "n1"}, promfake.Sample{T: 1767225600000, V: v / 100})
	}
	prom.Add(map[string]string{"__name__": "DCGM_FI_DEV_GPU_UTIL", "UUID": "GPU-q", "gpu": "4", "Hostname": "n1",
		"namespace": "gpu-operator", "pod": "dcgm-exporter-x7", "container": "exporter",
		"exported_namespace": "ml", "exported_pod": "train-0", "exported_container": "pytorch"}, promfake.Sample{T: 1767225600000, V: 97})
	code, stderr, got := promRecord(t, context.Background(), "-prometheus", serve(t, prom), "-start", "1767225600", "-end", "1767225601")
	require.Equal(t, ExitOK, code, stderr)
	require.Len(t, got, 1)
	rows := got[0]
	require.Equal(t, []string{"GPU-p/gi1", "GPU-p/gi2", "GPU-q"}, []string{rows[0].UUID, rows[1].UUID, rows[2].UUID})
	require.Equal(t, 3, rows[1].GPU)
	require.Equal(t, 0.9, val(t, rows[1], f.GREngineActive))
	require.Equal(t, []string{"ml", "train-0", "pytorch"}, []string{rows[2].Namespace, rows[2].Pod, rows[2].Container})
}

// TestPromNames: the collector's metric names are the ones the
// OpenTelemetry-to-Prometheus translation (the exporters') gives the
// receiver's metrics, and every metric of receiver/dcgmreceiver/
// metadata.yaml is read or left out on purpose.
func TestPromNames(t *testing.T) {
	raw, err := os.ReadFile("../../receiver/dcgmreceiver/metadata.yaml")
	require.NoError(t, err)
	var md struct {
		Metrics map[string]struct {
			Unit  string
			Gauge *struct{}
			Sum   *struct{ Monotonic bool }
		}
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	read := map[string]bool{}
	for _, o := range otelMetrics {
		m, ok := md.Metrics[o.name]
		require.Truef(t, ok, "%s is not a receiver metric", o.name)
		require.Equal(t, m.Unit, o.unit, o.name)
		typ, ottyp := otelGauge, ot.MetricType(ot.MetricTypeGauge)
		if m.Sum != nil {
			typ, ottyp = otelUpDown, ot.MetricTypeNonMonotonicCounter
			if m.Sum.Monotonic {
				typ, ottyp = otelCounter, ot.MetricTypeMonotonicCounter
			}
		}
		require.Equal(t, typ, o.typ, o.name)
		for _, suffixes := range []bool{true, false} {
			want, err := (&ot.MetricNamer{WithMetricSuffixes: suffixes}).Build(ot.Metric{Name: o.name, Unit: o.unit, Type: ottyp})
			require.NoError(t, err)
			require.Equal(t, want, promName(o.name, o.unit, o.typ, suffixes))
			require.Contains(t, promByName, want)
		}
		if o.label != "" {
			want, err := (&ot.LabelNamer{}).Build(o.label)
			require.NoError(t, err)
			require.Equal(t, want, promLabel(o.label))
		}
		read[o.name] = true
	}
	// Left out on purpose: the clock event flags repeat the bitmask; the
	// per-process series split a GPU's readings by pod, and a trace has one
	// row per GPU.
	leftOut := map[string]bool{
		"nvidia.gpu.clock.event.active":        true,
		mn.OTelGPUProcessUtilization:           true,
		mn.OTelGPUProcessMemoryUsage:           true,
		mn.OTelGPUProcessMemoryCopyUtilization: true,
		mn.OTelGPUProcessCount:                 true,
		// The temperature thresholds are the board's, static: a trace
		// has columns only for what is sampled.
		mn.HWTemperatureLimit: true,
		// The health check's answer is no DCGM field: a trace, whose
		// columns are DCGM's fields, has none for it.
		mn.NvidiaGPUHealth: true,
	}
	// AMD's own figures (amd.gpu.*) have no column in a trace, whose
	// columns are DCGM's fields; an AMD GPU's hw.* series are read back.
	for name := range md.Metrics {
		if strings.HasPrefix(name, "amd.gpu.") {
			continue
		}
		require.Truef(t, read[name] || leftOut[name], "receiver metric %s: read it back, or leave it out here on purpose", name)
	}
	// Names as the e2e tests see them in a real Prometheus.
	for _, n := range []string{"hw_gpu_utilization_ratio", "hw_temperature_celsius", "hw_power_watts", "hw_energy_joules_total", "hw_errors_total",
		"hw_gpu_memory_usage_bytes", "hw_gpu_memory_utilization_ratio", "nvidia_gpu_sm_active_ratio", "nvidia_gpu_dram_active_ratio",
		"nvidia_gpu_clock_frequency_hertz", "nvidia_gpu_clock_event_reasons", "nvidia_gpu_throttle_time_seconds_total", "nvidia_gpu_xid_errors_total",
		"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_UTIL_RATIO", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS"} {
		require.Contains(t, promByName, n)
	}
	for _, m := range promMetrics {
		require.Regexp(t, "^(?:"+promNamesRegexp+")$", m.name)
	}
	require.Equal(t, convXIDCounter, promMetrics[len(promMetrics)-1].conv, "the XID counters last")
}

func TestDecodeMatrix(t *testing.T) {
	ss, warnings, err := decodeMatrix(strings.NewReader(`{"data":{"result":[{"values":[[1767225600.5,"1.5"],[1767225601,"NaN"]],"metric":{"__name__":"a"}}],"extra":[1],"resultType":"matrix"},
		"warnings":["w1"],"status":"success"}`), 10)
	require.NoError(t, err)
	require.Equal(t, []string{"w1"}, warnings)
	require.Len(t, ss, 1)
	require.Equal(t, map[string]string{"__name__": "a"}, ss[0].labels)
	require.Equal(t, promPoint{t: 1767225600500, v: 1.5}, ss[0].points[0])
	require.True(t, math.IsNaN(ss[0].points[1].v))

	for in, want := range map[string]string{
		`{"status":"error","errorType":"bad_data","error":"1:5: parse error"}`:                          "prometheus says bad_data: 1:5: parse error",
		`{"status":"success","data":{"resultType":"vector","result":[]}}`:                               `result type "vector", want matrix`,
		`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,2]]}]}}`: "malformed sample",
		`<html>`: "reading the answer",
		`{"status":"success","data":{"resultType":"matrix","result":[{},{},{}]}}`: "more than 2 series",
	} {
		_, _, err := decodeMatrix(strings.NewReader(in), 2)
		require.ErrorContains(t, err, want, in)
	}
}

func TestParseWhen(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1767225600":                time.Unix(1767225600, 0),
		"1767225600.25":             time.Unix(1767225600, 250e6),
		"2026-01-01T00:00:00Z":      time.Unix(1767225600, 0),
		"2026-01-01T01:00:00+01:00": time.Unix(1767225600, 0),
	} {
		got, err := parseWhen(in)
		require.NoError(t, err, in)
		require.True(t, want.Equal(got), "%s: %v", in, got)
	}
}
