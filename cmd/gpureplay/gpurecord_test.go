package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
	"github.com/otelcol-gpu/otelcol-gpu/internal/promfake"
	"github.com/otelcol-gpu/otelcol-gpu/internal/record"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

type verdict struct {
	Time       float64  `json:"time"`
	UUID       string   `json:"uuid"`
	Bottleneck string   `json:"bottleneck"`
	Alerts     []string `json:"alerts"`
}

// recordAndReplay records with gpurecord's flags, replays the trace with
// gpureplay, and returns the last verdict of each GPU. Every trace row gets
// its verdict, in order.
func recordAndReplay(t *testing.T, env record.Env, args ...string) map[string]verdict {
	t.Helper()
	path := filepath.Join(t.TempDir(), "recorded.csv")
	var recErr bytes.Buffer
	code := record.Main(context.Background(), append(args, "-o", path), io.Discard, &recErr, env)
	require.Equal(t, record.ExitOK, code, recErr.String())

	out, stderr, code := runReplay(t, path)
	require.Equal(t, 0, code, stderr)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var rows []string
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "#") {
			rows = append(rows, line)
		}
	}
	rows = rows[1:] // the header
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, len(rows), "one verdict per recorded row")
	last := map[string]verdict{}
	for i, l := range lines {
		var v verdict
		require.NoError(t, json.Unmarshal([]byte(l), &v), l)
		cells := strings.SplitN(rows[i], ",", 3)
		require.Equal(t, cells[1], v.UUID, "verdicts in trace order")
		last[v.UUID] = v
	}
	return last
}

// TestReplayRecordedSimulated: a recording of the simulated fleet replays,
// and the analyzer finds in it what the fleet was told to do.
func TestReplayRecordedSimulated(t *testing.T) {
	fleet := filepath.Join(t.TempDir(), "fleet.yaml")
	require.NoError(t, os.WriteFile(fleet, []byte(`
hosts: 1
gpus_per_host: 4
workloads: [{name: train, kind: training, namespace: ml, gpus: "0/*", phases: [{kind: compute_bound}]}]
faults: [{kind: xid, gpus: "0/3", start: 0s, xid: 79}]
`), 0o644))
	last := recordAndReplay(t, record.Env{}, "-backend", "simulated", "-simulated", fleet, "-interval", "20ms", "-duration", "200ms")
	require.Len(t, last, 4)
	var faulted int
	for _, v := range last {
		if v.Bottleneck == "faulted" {
			faulted++
			require.Contains(t, v.Alerts, "GPUFaulted")
			continue
		}
		require.Equal(t, "compute_bound", v.Bottleneck)
	}
	require.Equal(t, 1, faulted, "the GPU with the XID")
}

// TestReplayRecordedNVML: a recording through NVML (go-nvml's mock) replays;
// the mock's XID and failed row remapping make two GPUs faulted.
func TestReplayRecordedNVML(t *testing.T) {
	srv := nvmlmock.New()
	last := recordAndReplay(t, record.Env{NVML: srv}, "-backend", "nvml", "-interval", "10ms", "-duration", "50ms")
	require.Len(t, last, 8)
	for i, d := range srv.Devices {
		uuid, _ := d.GetUUID()
		want := i == nvmlmock.XIDDevice || i == 3
		require.Equalf(t, want, last[uuid].Bottleneck == "faulted", "device %d: %+v", i, last[uuid])
	}
}

// TestReplayRecordedDCGM: a recording through the real go-dcgm code path,
// against the stand-in DCGM library, replays; the GPU with an XID 79 is
// faulted, the others are not.
func TestReplayRecordedDCGM(t *testing.T) {
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", t.TempDir()))
	state := filepath.Join(t.TempDir(), "state")
	require.NoError(t, dcgmstandin.State{GPUs: 3, NoProf: []int{2}, MIG: true, Connected: true, Epoch: 1,
		XIDs: []dcgmstandin.XID{{GPU: 1, Code: 79, TSMicros: time.Now().Add(time.Second).UnixMicro()}}}.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	last := recordAndReplay(t, record.Env{}, "-backend", "dcgm", "-interval", "100ms", "-duration", "2500ms")
	require.Len(t, last, 4, "3 GPUs and a MIG instance")
	require.Equal(t, "faulted", last["GPU-5ca1ab1e-0000-4000-8000-000000000001"].Bottleneck)
	require.Equal(t, "compute_bound", last["GPU-5ca1ab1e-0000-4000-8000-000000000000"].Bottleneck)
}

// sliceTrace writes the rows of a sample trace with from <= time < to to
// a new trace and returns its batches and path.
func sliceTrace(t *testing.T, name string, from, to float64) ([][]trace.Row, string) {
	t.Helper()
	f, err := os.Open(tracePath(name))
	require.NoError(t, err)
	defer f.Close()
	tr, err := trace.NewReader(f, name)
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), name+"-slice.csv")
	out, err := os.Create(path)
	require.NoError(t, err)
	defer out.Close()
	w, err := trace.NewWriter(out, dcgmfield.All())
	require.NoError(t, err)
	var batches [][]trace.Row
	for {
		b, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if b[0].Time < from || b[0].Time >= to {
			continue
		}
		for i := range b {
			require.NoError(t, w.Write(&b[i]))
		}
		batches = append(batches, b)
	}
	require.NoError(t, w.Flush())
	return batches, path
}

// sortedVerdicts replays a trace and returns its verdict lines sorted: a
// recorded trace orders a timestamp's rows by uuid, the sample traces by
// GPU.
func sortedVerdicts(t *testing.T, path string) []string {
	t.Helper()
	out, stderr, code := runReplay(t, path)
	require.Equal(t, 0, code, stderr)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	sort.Strings(lines)
	return lines
}

// TestReplayRecordedPrometheus: twenty minutes of a sample trace, with two
// XIDs and a GPUIdle alert, put into Prometheus as dcgm-exporter and as the
// collector's exporters would have written it, recorded back with
// gpurecord -prometheus, replay to the same verdicts as the trace itself.
func TestReplayRecordedPrometheus(t *testing.T) {
	const from, to = 1767226200, 1767227400
	batches, orig := sliceTrace(t, "serving-mixed-5s", from, to)
	want := sortedVerdicts(t, orig)
	var alerts int
	for _, l := range want {
		if !strings.Contains(l, `"alerts":[]`) {
			alerts++
		}
	}
	require.Positive(t, alerts, "the slice has alerts to find")

	collector, err := promfake.Collector(batches, true)
	require.NoError(t, err)
	for name, series := range map[string][]promfake.Series{"dcgm-exporter": promfake.DCGMExporter(batches), "collector": collector} {
		t.Run(name, func(t *testing.T) {
			prom := promfake.New()
			prom.AddSeries(series...)
			srv := httptest.NewServer(prom)
			defer srv.Close()
			path := filepath.Join(t.TempDir(), "recorded.csv")
			var stderr bytes.Buffer
			code := record.Main(context.Background(), []string{"-prometheus", srv.URL, "-start", strconv.Itoa(from), "-end", strconv.Itoa(to - 1), "-o", path},
				io.Discard, &stderr, record.Env{})
			require.Equal(t, record.ExitOK, code, stderr.String())
			require.Equal(t, want, sortedVerdicts(t, path))
		})
	}
}
