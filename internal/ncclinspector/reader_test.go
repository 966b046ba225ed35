package ncclinspector

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func promLine(metric, size string, v float64) string {
	return metric + `{node="n1",gpu="GPU1",comm_name="dp",n_nodes="1",nranks="8",collective="AllReduce",message_size="` + size + `",algo_proto="Ring_Simple"} ` + sprintf(v) + "\n"
}

func writeFile(t *testing.T, path, data string, mtime time.Time) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
	require.NoError(t, os.Chtimes(path, mtime, mtime))
}

func TestReaderProm(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "nccl_inspector_metrics_GPU-1.prom")
	t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
	writeFile(t, path,
		promLine(metricBusBW, "1-2MB", 10)+promLine(metricExecTime, "1-2MB", 100)+
			promLine(metricBusBW, "4-5GB", 400)+promLine(metricExecTime, "4-5GB", 9000), t0)
	r := NewReader([]string{filepath.Join(dir, "*.prom")}, 0)
	require.NoError(t, r.Read())
	got := r.Latest()
	require.Len(t, got, 1)
	assert.Equal(t, Key{Node: "n1", GPU: 1, Rank: -1, Communicator: "dp", Collective: "AllReduce"}, got[0].Key())
	assert.InDelta(t, 400e9, got[0].BusBandwidth, 1, "the largest message of the dump")
	assert.InDelta(t, 9e-3, got[0].ExecTime, 1e-12)
	assert.Equal(t, t0, got[0].Time, "no timestamps: the file's mtime")

	// Unchanged: not read again (a changed content with the same size and
	// mtime would show if it were).
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	writeFile(t, path, strings.Replace(string(data), "} 400", "} 500", 1), t0)
	require.NoError(t, r.Read())
	assert.InDelta(t, 400e9, r.Latest()[0].BusBandwidth, 1)

	// Rewritten by the next dump, mid-write: the cut last line is left.
	t1 := t0.Add(30 * time.Second)
	writeFile(t, path, promLine(metricBusBW, "1-2MB", 12)+promLine(metricExecTime, "1-2MB", 90)[:40], t1)
	require.NoError(t, r.Read())
	got = r.Latest()
	require.Len(t, got, 1)
	assert.InDelta(t, 12e9, got[0].BusBandwidth, 1, "newer dump wins over a larger message")
	assert.InDelta(t, 9e-3, got[0].ExecTime, 1e-12, "exec time not yet rewritten")
	assert.Equal(t, "1-2MB", got[0].MessageSize)

	// Gone: its figures go with it.
	require.NoError(t, os.Remove(path))
	require.NoError(t, r.Read())
	assert.Empty(t, r.Latest())
}

func TestReaderJSONAppendAndRotate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "h1-pid7.log")
	rec := func(bw float64, ts int) string {
		return `{"header":{"id":"0xabc","rank":3,"n_ranks":4,"nnodes":1},"metadata":{"dump_timestamp_us":` +
			sprintf(float64(ts)) + `,"hostname":"h1"},"coll_perf":{"coll":"AllReduce","coll_msg_size_bytes":1024,"coll_exec_time_us":10,"coll_busbw_gbs":` +
			sprintf(bw) + "}}\n"
	}
	now := time.Now()
	r := NewReader([]string{filepath.Join(dir, "*.log")}, time.Hour)
	r.now = func() time.Time { return now }
	nowUS := int(now.UnixMicro())
	full := rec(1, nowUS) + rec(2, nowUS+1)
	writeFile(t, path, full[:len(full)-10], now)
	require.NoError(t, r.Read())
	got := r.Latest()
	require.Len(t, got, 1)
	assert.Equal(t, Key{Node: "h1", GPU: -1, Rank: 3, Communicator: "0xabc", Collective: "AllReduce"}, got[0].Key())
	assert.InDelta(t, 1e9, got[0].BusBandwidth, 1, "the cut record is not read yet")
	off := r.files[path].offset
	assert.Equal(t, int64(len(rec(1, nowUS))), off)

	writeFile(t, path, full, now.Add(time.Second))
	require.NoError(t, r.Read())
	assert.InDelta(t, 2e9, r.Latest()[0].BusBandwidth, 1, "completed record read from the offset")

	// Rotated: a new, shorter file at the path.
	require.NoError(t, os.Rename(path, path+".1"))
	writeFile(t, path, rec(3, nowUS+2), now.Add(2*time.Second))
	require.NoError(t, r.Read())
	assert.InDelta(t, 3e9, r.Latest()[0].BusBandwidth, 1)
	assert.Equal(t, int64(len(rec(3, nowUS+2))), r.files[path].offset)

	// Truncated in place and regrown past the old offset (copytruncate):
	// the changed start of the file tells.
	writeFile(t, path, rec(4, nowUS+3)+rec(5, nowUS+4), now.Add(3*time.Second))
	require.NoError(t, r.Read())
	assert.InDelta(t, 5e9, r.Latest()[0].BusBandwidth, 1)

	// Too old: dropped.
	now = now.Add(2 * time.Hour)
	require.NoError(t, r.Read())
	assert.Empty(t, r.Latest())
}

func TestReaderBadPattern(t *testing.T) {
	r := NewReader([]string{"[", filepath.Join(t.TempDir(), "*")}, 0)
	assert.Error(t, r.Read())
	assert.Empty(t, r.Latest())
}

func sprintf(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TestReaderExpires: a rank whose file the plugin left behind when its job
// ended keeps its figures for maxAge after its last dump, then has none.
func TestReaderExpires(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Now().Add(-time.Minute).Truncate(time.Second)
	writeFile(t, filepath.Join(dir, "nccl_inspector_metrics_GPU-1.prom"),
		promLine(metricBusBW, "4-5GB", 400)+promLine(metricExecTime, "4-5GB", 9000), t0)
	r := NewReader([]string{filepath.Join(dir, "*.prom")}, 5*time.Minute)
	r.now = func() time.Time { return t0.Add(4 * time.Minute) }
	require.NoError(t, r.Read())
	require.Len(t, r.Latest(), 1, "4 minutes after the dump")
	r.now = func() time.Time { return t0.Add(6 * time.Minute) }
	require.NoError(t, r.Read())
	assert.Empty(t, r.Latest(), "6 minutes after the dump")
}
