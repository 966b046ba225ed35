//go:build e2e

package e2e

import (
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/promfake"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// goBuild builds a command of this module into dir.
func goBuild(t *testing.T, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Env = append(os.Environ(), "CGO_CFLAGS=-O2 -g -Wno-deprecated-declarations")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func readTraceFile(t *testing.T, path string) [][]trace.Row {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := trace.NewReader(f, path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]trace.Row
	for {
		b, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
}

type gpuAt struct {
	ms   int64
	uuid string
}

func rowsByGPUAt(batches [][]trace.Row) map[gpuAt]trace.Row {
	m := map[gpuAt]trace.Row{}
	for _, b := range batches {
		for _, r := range b {
			m[gpuAt{int64(math.Round(r.Time * 1000)), r.UUID}] = r
		}
	}
	return m
}

// verdicts replays a trace with the gpureplay binary and returns its
// verdict lines, sorted: a recorded trace orders a timestamp's rows by
// uuid, the sample traces by GPU.
func verdicts(t *testing.T, gpureplay, path string) []string {
	t.Helper()
	out, err := exec.Command(gpureplay, path).Output()
	if err != nil {
		t.Fatalf("gpureplay %s: %v", path, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	sort.Strings(lines)
	return lines
}

// TestE2EPrometheusRecordReplay puts two sample traces into Debian's
// Prometheus 2.42 through promtool's OpenMetrics import, as blocks older
// than its head: serving-mixed-5s (40 minutes, 32 GPUs, two XIDs) as
// dcgm-exporter's series, memory-leak-15s (2.5 hours, 12 GPUs, two leaks)
// as the collector's exporters name the dcgm receiver's metrics. The
// gpurecord binary records the 2.5 hours back, raw, in three one-hour
// windows; every value that went in comes back, in DCGM's units, and the
// gpureplay binary gives the recorded trace the originals' verdicts.
func TestE2EPrometheusRecordReplay(t *testing.T) {
	dir := t.TempDir()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("promtool not found (make e2e installs Debian's prometheus package): %v", err)
	}
	gpurecord := goBuild(t, dir, "../cmd/gpurecord")
	gpureplay := goBuild(t, dir, "../cmd/gpureplay")

	const traces = "../cmd/gpureplay/testdata/traces/"
	serving := readTraceFile(t, traces+"serving-mixed-5s.csv")
	leak := readTraceFile(t, traces+"memory-leak-15s.csv")
	series := promfake.DCGMExporter(serving)
	collector, err := promfake.Collector(leak, true)
	if err != nil {
		t.Fatal(err)
	}
	series = append(series, collector...)
	om := filepath.Join(dir, "import.om")
	f, err := os.Create(om)
	if err != nil {
		t.Fatal(err)
	}
	if err := promfake.WriteOpenMetrics(f, series); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", om, filepath.Join(dir, "data")).CombinedOutput(); err != nil {
		t.Fatalf("promtool: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 15s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The traces are from January 2026: a retention that keeps them.
	prom := &prometheus{bin: prometheusBin(t), dir: dir, config: cfg, port: freePort(t), retention: "36500d"}
	prom.start(t)
	if r := prom.query(t, `count(count by (UUID) (last_over_time(DCGM_FI_DEV_GPU_UTIL[1h])))`, time.Unix(1767227400, 0)); len(r) != 1 || r[0].float(t) != 32 {
		t.Fatalf("imported GPUs of serving-mixed-5s: %v, want 32", r)
	}

	rec := filepath.Join(dir, "recorded.csv")
	cmd := exec.Command(gpurecord, "-prometheus", prom.url(), "-start", "2026-01-01T00:00:00Z", "-end", "1767234585", "-o", rec)
	out, err := cmd.CombinedOutput()
	t.Logf("gpurecord: %s", out)
	if err != nil {
		t.Fatalf("gpurecord: %v", err)
	}
	if want := "gpurecord: 22560 rows, 920 samples of 44 GPUs, written to " + rec + "\n"; string(out) != want {
		t.Errorf("gpurecord said %q, want %q", out, want)
	}
	got := rowsByGPUAt(readTraceFile(t, rec))

	// dcgm-exporter's series: every value as it went in; the XID where it
	// occurred, blank at the first sample (dcgm-exporter's gauge there
	// holds history) and 0 elsewhere.
	want := rowsByGPUAt(serving)
	wantLeak := rowsByGPUAt(leak)
	if len(got) != len(want)+len(wantLeak) {
		t.Fatalf("recorded %d rows, want %d", len(got), len(want)+len(wantLeak))
	}
	fields := dcgmfield.All()
	compare := func(k gpuAt, w, g trace.Row, skip func(dcgmfield.Field, float64, float64) bool) {
		t.Helper()
		if [6]any{w.Host, w.GPU, w.Model, w.Namespace, w.Pod, w.Container} != [6]any{g.Host, g.GPU, g.Model, g.Namespace, g.Pod, g.Container} {
			t.Fatalf("%s at %d: identity %v, want %v", k.uuid, k.ms, g, w)
		}
		for _, fd := range fields {
			wv, wok := w.Values.Get(fd)
			gv, gok := g.Values.Get(fd)
			if skip != nil && skip(fd, wv, gv) {
				continue
			}
			if fd == dcgmfield.XIDErrors {
				wok, gok = true, true // blank and 0 are both "no XID"
			}
			if wok != gok || wv != gv {
				t.Fatalf("%s at %d: %s = %v (%v), want %v (%v)", k.uuid, k.ms, fd, gv, gok, wv, wok)
			}
		}
	}
	var xids int
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Fatalf("no recorded row for %s at %d", k.uuid, k.ms)
		}
		compare(k, w, g, nil)
		if v, _ := g.Values.Get(dcgmfield.XIDErrors); v != 0 {
			xids++
		}
	}
	if xids != 2 {
		t.Errorf("%d XIDs recorded, want 2", xids)
	}

	// The collector's series: the same, in DCGM's units, except what its
	// metrics do not carry as such: PCIe and NVLink rates come from byte
	// counters (blank at the first sample, within their truncation to whole
	// bytes), ECC counts from the collector's start, FB_TOTAL is added.
	firstDBE := map[string]float64{}
	for _, r := range leak[0] {
		firstDBE[r.UUID], _ = r.Values.Get(dcgmfield.ECCDBEVolTotal)
	}
	rates := map[dcgmfield.Field]bool{dcgmfield.PCIeTxBytes: true, dcgmfield.PCIeRxBytes: true, dcgmfield.NVLinkTxBytes: true, dcgmfield.NVLinkRxBytes: true}
	for k, w := range wantLeak {
		g, ok := got[k]
		if !ok {
			t.Fatalf("no recorded row for %s at %d", k.uuid, k.ms)
		}
		compare(k, w, g, func(fd dcgmfield.Field, wv, gv float64) bool {
			switch {
			case rates[fd]:
				if k.ms != 1767225600000 && math.Abs(wv-gv) > 0.1+1e-9*wv {
					t.Fatalf("%s at %d: %s = %v, want %v", k.uuid, k.ms, fd, gv, wv)
				}
				return true
			case fd == dcgmfield.ECCDBEVolTotal:
				if gv+firstDBE[k.uuid] != wv {
					t.Fatalf("%s at %d: %s = %v from the collector's start, want %v", k.uuid, k.ms, fd, gv, wv-firstDBE[k.uuid])
				}
				return true
			case fd == dcgmfield.FBTotal:
				return true
			}
			return false
		})
	}

	// The verdicts: those of the two traces, GPU by GPU and time by time.
	wantVerdicts := append(verdicts(t, gpureplay, traces+"serving-mixed-5s.csv"), verdicts(t, gpureplay, traces+"memory-leak-15s.csv")...)
	sort.Strings(wantVerdicts)
	gotVerdicts := verdicts(t, gpureplay, rec)
	if len(gotVerdicts) != len(wantVerdicts) {
		t.Fatalf("%d verdicts, want %d", len(gotVerdicts), len(wantVerdicts))
	}
	leakAlerts := 0
	for i := range wantVerdicts {
		if gotVerdicts[i] != wantVerdicts[i] {
			t.Fatalf("verdict %d:\n got %s\nwant %s", i, gotVerdicts[i], wantVerdicts[i])
		}
		if strings.Contains(wantVerdicts[i], "GPUMemoryLeak") {
			leakAlerts++
		}
	}
	if leakAlerts == 0 {
		t.Error("no GPUMemoryLeak verdict: the comparison would not show a lost leak")
	}
	t.Logf("%d verdicts identical, %d with GPUMemoryLeak", len(gotVerdicts), leakAlerts)

	// Through query_range at the scrape interval, one host's GPUs: the
	// steps fall on the samples, so the values are the same.
	step := filepath.Join(dir, "step.csv")
	out, err = exec.Command(gpurecord, "-prometheus", prom.url(), "-start", "1767225600", "-end", "1767226200", "-step", "5s",
		"-match", `{Hostname="gpu-node-00"}`, "-o", step).CombinedOutput()
	if err != nil {
		t.Fatalf("gpurecord -step: %v: %s", err, out)
	}
	stepped := rowsByGPUAt(readTraceFile(t, step))
	if len(stepped) != 121*8 {
		t.Fatalf("gpurecord -step 5s: %d rows, want 121 steps of gpu-node-00's 8 GPUs", len(stepped))
	}
	for k, g := range stepped {
		w, ok := want[k]
		if !ok || w.Host != "gpu-node-00" {
			t.Fatalf("gpurecord -step: a row for %s at %d", k.uuid, k.ms)
		}
		compare(k, w, g, nil)
	}
}
