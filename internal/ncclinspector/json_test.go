package ncclinspector

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseJSONReadme: the README's pretty-printed v4.0 record.
func TestParseJSONReadme(t *testing.T) {
	data := realFile(t, "inspector_json_example_from_readme.json")
	got, used := ParseJSON(data)
	assert.Equal(t, len(data), used)
	require.Len(t, got, 1)
	s := got[0]
	assert.Equal(t, "example-hostname", s.Node)
	assert.Equal(t, -1, s.GPU, "JSON records do not name the device")
	assert.Equal(t, "0x7f8c496ae9f661", s.Communicator, "no comm_name: the hash")
	assert.Equal(t, "0x7f8c496ae9f661", s.CommID)
	assert.Equal(t, 2, s.Rank)
	assert.Equal(t, 8, s.NRanks)
	assert.Equal(t, 1, s.NNodes)
	assert.Equal(t, "AllReduce", s.Collective)
	assert.Equal(t, uint64(17179869184), s.MessageBytes)
	assert.Equal(t, "16-17GB", s.MessageSize)
	assert.InDelta(t, 485.119099e9, s.BusBandwidth, 1)
	assert.InDelta(t, 0.061974, s.ExecTime, 1e-12)
	assert.Equal(t, time.UnixMicro(1748030377748202), s.Time)
}

const (
	hdr  = `"header":{"id":"0xabc","comm_name":"tp","rank":3,"n_ranks":4,"nnodes":1}`
	meta = `"metadata":{"inspector_output_format_version":"v4.0","dump_timestamp_us":1000000,"hostname":"h1","pid":7}`
	coll = `"coll_perf":{"coll":"AllGather","coll_algo":"RING","coll_proto":"LL","coll_sn":1,"coll_msg_size_bytes":2048,"coll_exec_time_us":10,"coll_busbw_gbs":1.5}`
)

func TestParseJSONForms(t *testing.T) {
	v40 := `{` + hdr + `,` + meta + `,` + coll + `}`
	marker := `{` + hdr + `,` + strings.Replace(meta, "v4.0", "v4.3", 1) + `,"dump_stats":{"coll_records":2,"p2p_records":1}}`
	body := `{` + coll + `}`
	p2p := `{"p2p_perf":{"p2p":"Send","p2p_sn":4,"p2p_peer":1,"p2p_msg_size_bytes":1048576,"p2p_exec_time_us":5,"p2p_busbw_gbs":"nan"}}`
	for _, tc := range []struct {
		name  string
		in    string
		n     int
		trail int // bytes left unconsumed
	}{
		{"json lines", v40 + "\n" + v40 + "\n", 2, 0},
		{"concatenated", v40 + v40 + " " + v40, 3, 0},
		{"v4.3 marker and bodies", marker + "\n" + body + "\n" + body + "\n" + p2p + "\n", 3, 0},
		{"orphan body", body + "\n", 0, 0},
		{"truncated last record", v40 + "\n" + v40[:40], 1, 40},
		{"cut record then another", v40[:50] + "\n" + v40 + "\n", 1, 0},
		{"garbage line", "not json\n" + v40 + "\n]\n", 1, 0},
		{"undecodable object", `{"header":}` + "\n" + v40, 1, 0},
		{"dump_stats without context drops the old one", marker + "\n" + `{"dump_stats":{}}` + "\n" + body, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, used := ParseJSON([]byte(tc.in))
			assert.Len(t, got, tc.n)
			assert.Equal(t, len(tc.in)-tc.trail, used)
		})
	}
	got, _ := ParseJSON([]byte(marker + "\n" + body + "\n" + p2p))
	require.Len(t, got, 2)
	assert.Equal(t, "tp", got[0].Communicator)
	assert.Equal(t, 3, got[0].Rank)
	assert.Equal(t, "RING_LL", got[0].AlgoProto)
	assert.Equal(t, "2-3KB", got[0].MessageSize)
	assert.True(t, got[1].P2P)
	assert.Equal(t, "Send", got[1].Collective)
	assert.False(t, got[1].HasBusBandwidth, `"nan" is not a figure`)
	assert.InDelta(t, 5e-6, got[1].ExecTime, 1e-15)
}

// TestJSONParserResumes: a record split across two reads is taken whole
// once its end arrives, with the v4.3 context kept between the calls.
func TestJSONParserResumes(t *testing.T) {
	marker := `{` + hdr + `,` + meta + `,"dump_stats":{"coll_records":1,"p2p_records":0}}` + "\n"
	body := `{` + coll + `}` + "\n"
	var p JSONParser
	first := marker + body[:20]
	got, used := p.Parse([]byte(first))
	assert.Empty(t, got)
	assert.Equal(t, len(marker), used)
	got, used = p.Parse([]byte(first[used:] + body[20:]))
	require.Len(t, got, 1)
	assert.Equal(t, len(body), used)
	assert.Equal(t, "h1", got[0].Node)
}
