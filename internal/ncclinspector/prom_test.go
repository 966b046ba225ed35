package ncclinspector

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParsePromReadme: the README's example, from node nvl72004-T01.
func TestParsePromReadme(t *testing.T) {
	got := ParseProm(realFile(t, "inspector_prometheus_example_from_readme.prom"))
	require.Len(t, got, 2)
	c := got[0]
	assert.Equal(t, "nvl72004-T01", c.Node)
	assert.Equal(t, 0, c.GPU)
	assert.Equal(t, "DP Group 0", c.Communicator)
	assert.Equal(t, 4, c.NRanks)
	assert.Equal(t, 1, c.NNodes)
	assert.Equal(t, "AllReduce", c.Collective)
	assert.False(t, c.P2P)
	assert.Equal(t, "4-5GB", c.MessageSize)
	assert.Equal(t, uint64(4<<30), c.MessageBytes)
	assert.Equal(t, "Ring_ll", c.AlgoProto)
	assert.True(t, c.HasBusBandwidth)
	assert.InDelta(t, 678.263e9, c.BusBandwidth, 1)
	assert.True(t, c.HasExecTime)
	assert.InDelta(t, 9498.47e-6, c.ExecTime, 1e-12)
	assert.Equal(t, -1, c.Rank)
	assert.True(t, c.Time.IsZero())

	p := got[1]
	assert.True(t, p.P2P)
	assert.Equal(t, "Send", p.Collective)
	assert.Equal(t, "512-513MB", p.MessageSize)
	assert.Empty(t, p.AlgoProto)
	assert.InDelta(t, 464.9e9, p.BusBandwidth, 1)
	assert.InDelta(t, 1154.87e-6, p.ExecTime, 1e-12)
}

func TestParsePromLine(t *testing.T) {
	for _, tc := range []struct {
		line   string
		labels map[string]string
		value  float64
		ts     int64
		bad    bool
	}{
		{line: `m{a="x\"y\\z\nw"} 1`, labels: map[string]string{"a": "x\"y\\z\nw"}, value: 1},
		{line: `m{a="}{,="} 2 1700000000000`, labels: map[string]string{"a": "}{,="}, value: 2, ts: 1700000000000},
		{line: `m{a="1",} 3`, labels: map[string]string{"a": "1"}, value: 3},
		{line: `m 4`, value: 4},
		{line: `m{} 5e3`, labels: map[string]string{}, value: 5000},
		{line: `m{a="\q"} 1`, labels: map[string]string{"a": `\q`}, value: 1},
		{line: `m{a="x} 1`, bad: true},
		{line: `m{a=x} 1`, bad: true},
		{line: `m{a="x"}`, bad: true},
		{line: `m{a="x"} one`, bad: true},
		{line: `m 1 2 3`, bad: true},
		{line: `m 1 t`, bad: true},
		{line: `9m 1`, bad: true},
		{line: `m-x 1`, bad: true},
		{line: `m{a="x\`, bad: true},
	} {
		got, err := ParsePromLine(tc.line)
		if tc.bad {
			assert.Error(t, err, tc.line)
			continue
		}
		require.NoError(t, err, tc.line)
		assert.Equal(t, "m", got.Name, tc.line)
		assert.Equal(t, tc.labels, got.Labels, tc.line)
		assert.Equal(t, tc.value, got.Value, tc.line)
		assert.Equal(t, tc.ts, got.Timestamp, tc.line)
	}
	for _, v := range []string{"NaN", "nan", "-nan"} {
		got, err := ParsePromLine("m " + v)
		require.NoError(t, err)
		assert.True(t, math.IsNaN(got.Value), v)
	}
	for _, v := range []string{"+Inf", "inf", "-Inf", "1e999"} {
		got, err := ParsePromLine("m " + v)
		require.NoError(t, err)
		assert.True(t, math.IsInf(got.Value, 0), v)
	}
}

// TestParsePromEdges: values the plugin writes when it has no figure, odd
// labels, and lines that are not Inspector's.
func TestParsePromEdges(t *testing.T) {
	const l = `{node="n\"1",gpu="GPU7",comm_name="tp\\0",collective="AllGather",message_size="1-2KB",algo_proto="Ring_Simple"}`
	data := "# HELP nccl_bus_bandwidth_gbs x\n# TYPE nccl_bus_bandwidth_gbs gauge\n" +
		"nccl_bus_bandwidth_gbs" + l + " NaN\n" +
		"nccl_collective_exec_time_microseconds" + l + " +Inf\n" +
		"nccl_bus_bandwidth_gbs{collective=\"Broadcast\"} 0 1700000000123\n" +
		"nccl_collective_exec_time_microseconds{collective=\"Broadcast\"} 12\n" +
		"nccl_collectives_total{gpu=\"GPU0\"} 5\n" +
		"garbage line\n" +
		"nccl_bus_bandwidth_gbs{gpu=\"GPUx\",collective=\"Reduce\"} 2.5"
	got := ParseProm([]byte(data))
	require.Len(t, got, 3)
	assert.Equal(t, `n"1`, got[0].Node)
	assert.Equal(t, 7, got[0].GPU)
	assert.Equal(t, `tp\0`, got[0].Communicator)
	assert.Equal(t, uint64(1024), got[0].MessageBytes)
	assert.False(t, got[0].HasBusBandwidth, "NaN is not a figure")
	assert.False(t, got[0].HasExecTime, "+Inf is not a figure")

	assert.Equal(t, -1, got[1].GPU, "no gpu label")
	assert.Empty(t, got[1].Node)
	assert.False(t, got[1].HasBusBandwidth, "0 is what the plugin writes for no bandwidth")
	assert.True(t, got[1].HasExecTime)
	assert.InDelta(t, 12e-6, got[1].ExecTime, 1e-15)
	assert.Equal(t, time.UnixMilli(1700000000123), got[1].Time)

	assert.Equal(t, -1, got[2].GPU, "GPUx")
	assert.InDelta(t, 2.5e9, got[2].BusBandwidth, 1)
}

func TestSizeBucket(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0B", 1: "1-2B", 1023: "1023-1024B", 1024: "1-2KB", 17179869184: "16-17GB",
		4<<30 + 1<<29: "4-5GB", 1 << 50: "1024-1025TB",
	} {
		assert.Equal(t, want, sizeBucket(n), n)
	}
	for label, want := range map[string]uint64{
		"4-5GB": 4 << 30, "512-513MB": 512 << 20, "0B": 0, "1-2B": 1, "x": 0, "1-2XB": 0, "-": 0,
	} {
		assert.Equal(t, want, bucketLowerBound(label), label)
	}
	assert.Equal(t, 3, gpuIndex("GPU3"))
	for _, s := range []string{"GPU", "GPU+1", "GPU-1", "gpu1", "unknown", "GPU1a"} {
		assert.Equal(t, -1, gpuIndex(s), s)
	}
}
