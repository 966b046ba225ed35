package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/record"
)

// phasedTrace records one simulated H100 for 4 minutes of trace time,
// compute-bound then idle, 60 s each, twice, and returns the trace's path
// and its first timestamp and UUID.
func phasedTrace(t *testing.T) (string, float64, string) {
	t.Helper()
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(fleet, []byte(`seed: 3
hosts: 1
gpus_per_host: 1
models: [h100]
workloads:
  - {name: check, kind: serving, namespace: ml, gpus: "0/0", phases: [{kind: compute_bound, duration: 60s}, {kind: idle, duration: 60s}]}
`), 0o600))
	path := filepath.Join(dir, "trace.csv")
	var recErr bytes.Buffer
	code := record.Main(context.Background(), []string{"-backend", "simulated", "-simulated", fleet,
		"-interval", "1s", "-duration", "4m", "-unpaced", "-o", path}, io.Discard, &recErr, record.Env{})
	require.Equal(t, record.ExitOK, code, recErr.String())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "timestamp") {
			continue
		}
		cells := strings.Split(line, ",")
		t0, err := strconv.ParseFloat(cells[0], 64)
		require.NoError(t, err)
		return path, t0, cells[1]
	}
	t.Fatal("no row in the trace")
	return "", 0, ""
}

// TestLabelsTable: -labels writes the verdicts to -o and prints one row per
// label, each window read from 32 s into the phase (the analyzer's 30 s
// window no longer holds the previous one) to 2 s before its end; a wrong
// label fails its row, not the run.
func TestLabelsTable(t *testing.T) {
	tr, t0, uuid := phasedTrace(t)
	dir := t.TempDir()
	labels := filepath.Join(dir, "labels.csv")
	var b strings.Builder
	b.WriteString("uuid,kind,value,start,end\n")
	for i, class := range []string{"compute_bound", "idle", "compute_bound", "launch_bound"} {
		start := t0 + 60*float64(i)
		fmt.Fprintf(&b, "%s,bottleneck,%s,%.3f,%.3f\n", uuid, class, start+32, start+58)
	}
	require.NoError(t, os.WriteFile(labels, []byte(b.String()), 0o600))
	verdicts := filepath.Join(dir, "verdicts.jsonl")
	out, stderr, code := runReplay(t, "-labels", labels, "-o", verdicts, tr)
	require.Equal(t, 0, code, stderr)
	require.Empty(t, stderr)
	rows := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, rows, 6, out)
	short := uuid[:12]
	require.Regexp(t, `^1  `+short+`  32-58 +bottleneck  compute_bound  compute_bound  100%  +26 +pass$`, rows[1])
	require.Regexp(t, `^2  `+short+`  92-118 +bottleneck  idle +idle +100%  +26 +pass$`, rows[2])
	require.Regexp(t, `^3 .* compute_bound  compute_bound .* pass$`, rows[3])
	require.Regexp(t, `^4 .* launch_bound +idle +100% .* FAIL$`, rows[4])
	require.Equal(t, "3 of 4 labels agree with the analyzer", rows[5])
	raw, err := os.ReadFile(verdicts)
	require.NoError(t, err)
	require.Equal(t, 240, bytes.Count(raw, []byte("\n")), "every row's verdict in -o")
}

// TestLabelsErrors: bad labels, or labels that match nothing in the trace,
// are errors naming the file; -labels needs -o and a verdict replay.
func TestLabelsErrors(t *testing.T) {
	tr, t0, uuid := phasedTrace(t)
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	verdicts := filepath.Join(dir, "v.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-labels", "x.csv", tr}, 2, "gpureplay: -labels prints its table on standard output: write the verdicts to -o FILE\n"},
		{[]string{"-labels", "x.csv", "-o", verdicts, "-remediate", "x.yaml", tr}, 2, "gpureplay: -labels reads verdicts: it goes with neither -autoscale nor -remediate, which print decisions\n"},
		{[]string{"-labels", filepath.Join(dir, "missing.csv"), "-o", verdicts, tr}, 1, "gpureplay: open " + filepath.Join(dir, "missing.csv") + ": no such file or directory\n"},
		{[]string{"-labels", write("typo.csv", "uuid,kind,value,start,end\n"+uuid+",bottleneck,computebound,1,2\n"+uuid+",bottleneck,idle,5,3\n"), "-o", verdicts, tr}, 1,
			"gpureplay: " + filepath.Join(dir, "typo.csv") + `: line 2: bottleneck label: unknown value "computebound"; want one of unknown, faulted, throttled, idle, memory_bound, communication_bound, launch_bound, input_bound, compute_bound; line 3: want start < end, got 5 and 3` + "\n"},
		{[]string{"-labels", write("short.csv", "uuid,kind,value,start,end\n"+uuid+",bottleneck,idle\n"), "-o", verdicts, tr}, 1,
			"gpureplay: " + filepath.Join(dir, "short.csv") + ": record on line 2: wrong number of fields\n"},
		{[]string{"-labels", write("empty.csv", "uuid,kind,value,start,end\n"), "-o", verdicts, tr}, 1,
			"gpureplay: " + filepath.Join(dir, "empty.csv") + ": no labels after the header\n"},
		{[]string{"-labels", write("other.csv", fmt.Sprintf("uuid,kind,value,start,end\nGPU-other,bottleneck,idle,%.3f,%.3f\n", t0, t0+60)), "-o", verdicts, tr}, 1,
			"gpureplay: " + filepath.Join(dir, "other.csv") + ": no verdict of " + tr + " falls in any label's window: do its uuids and times match the trace?\n"},
	} {
		out, stderr, code := runReplay(t, tc.args...)
		require.Equalf(t, tc.code, code, "%v: %s", tc.args, stderr)
		require.Equalf(t, tc.want, stderr, "%v", tc.args)
		if strings.Contains(tc.want, "no verdict of") {
			require.Contains(t, out, "NO DATA", "the table comes first, saying what is missing")
		} else {
			require.Empty(t, out, "%v", tc.args)
		}
	}
}
