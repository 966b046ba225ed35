package ncclinspector

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseRASMismatch: NCCL issue #1911, 4 nodes x 8 GPUs, two ranks one
// AllGather ahead of the other thirty.
func TestParseRASMismatch(t *testing.T) {
	rep := ParseRAS(realFile(t, "ras_mismatch_nccl_issue1911.txt"))
	assert.Equal(t, "2.26.2", rep.NCCLVersion)
	require.Len(t, rep.Groups, 1)
	assert.Equal(t, RASGroup{Group: 0, Comms: 1, NodesPerComm: 4, RanksPerNode: 8, RanksPerComm: 32, RanksInGroup: 32,
		Status: "RUNNING", Errors: []string{"MISMATCH"}}, rep.Groups[0])
	require.Len(t, rep.Communicators, 1)
	c := rep.Communicators[0]
	assert.Equal(t, "fa93daea854b060b", c.Hash)
	assert.Equal(t, "MISMATCH", c.Problem)
	assert.Equal(t, 32, c.NRanks)
	require.Len(t, c.Mismatches, 1)
	m := c.Mismatches[0]
	assert.Equal(t, "AllGather", m.Collective)
	assert.Equal(t, []RASOpCount{{30, 640}, {2, 641}}, m.Counts)
	require.Len(t, m.Ranks, 2)
	assert.Equal(t, RASRank{Rank: 12, GPU: "4", GPUIndex: 4, PID: 323032, Node: "10.137.190.124", Operation: 641, Relation: RelationAhead}, m.Ranks[0])
	assert.Equal(t, 13, m.Ranks[1].Rank)
	assert.Equal(t, RelationAhead, m.Ranks[1].Relation)
	lag := m.Lagging(c.NRanks)
	require.Len(t, lag, 30)
	assert.NotContains(t, lag, 12)
	assert.NotContains(t, lag, 13)
	assert.Equal(t, 0, lag[0])
	assert.Equal(t, 31, lag[29])
	assert.Nil(t, m.Lagging(0), "the complement needs the rank count")
}

// TestParseRASIncomplete: NCCL issue #1762 (cut short), an outlier node and
// a rank missing communicator data.
func TestParseRASIncomplete(t *testing.T) {
	rep := ParseRAS(realFile(t, "ras_incomplete_outlier_nccl_issue1762.partial.txt"))
	assert.Equal(t, "2.27.3", rep.NCCLVersion)
	assert.Equal(t, []RASNode{{Node: "10.4.109.13", PIDs: []int{60004, 60035}}}, rep.OutlierNodes)
	require.Len(t, rep.Groups, 3)
	assert.Equal(t, "INCOMPLETE", rep.Groups[0].Errors[0])
	assert.Equal(t, "NOCOMM", rep.Groups[2].Status)
	assert.Equal(t, []string{"INCOMPLETE", "MISMATCH"}, rep.Groups[2].Errors)
	assert.Equal(t, []RASProcess{{Problem: "INCOMPLETE", PID: 60004, Node: "10.4.109.13", GPUs: "0"}}, rep.Processes)
	require.Len(t, rep.Communicators, 1)
	c := rep.Communicators[0]
	assert.Equal(t, "INCOMPLETE", c.Problem)
	assert.Equal(t, 1, c.Missing)
	assert.Equal(t, 2, c.NRanks)
	assert.Equal(t, []RASRank{{Rank: 1, GPU: "0", GPUIndex: 0, PID: 60004, Node: "10.4.109.13", Operation: -1, Missing: true}}, c.Ranks)
}

// TestParseRASSynthetic: forms the fixtures lack, written as
// client_support.cc prints them.
func TestParseRASSynthetic(t *testing.T) {
	rep := ParseRAS([]byte(`Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors
    #  in group  per comm  per node  per comm  in group
    0         1         1         4         4         4   RUNNING  MISMATCH
    1         1         1         2         2         2   RUNNING  OK

#0-0 (00000000000000ab) MISMATCH
  Communicator ranks have different AllReduce operation counts
  3 ranks have launched up to operation 100
  Rank 2 has launched up to operation 98 -- GPU 2 managed by process 11 on node n1

  Communicator ranks have different Broadcast operation counts
  2 ranks have launched up to operation 5
  2 ranks have not launched any operations

#0-1 (00000000000000cd) ERROR
  Rank 0 reported ncclRemoteError -- [process information not found]
  Rank 1 has status ABORT -- GPU 1 managed by process 12 on node n2
unknown trailing line
`))
	assert.Empty(t, rep.Groups[1].Errors, "OK is no error")
	require.Len(t, rep.Communicators, 2)
	mm := rep.Communicators[0].Mismatches
	require.Len(t, mm, 2)
	assert.Equal(t, []RASOpCount{{3, 100}, {1, 98}}, mm[0].Counts)
	require.Len(t, mm[0].Ranks, 1)
	assert.Equal(t, RelationBehind, mm[0].Ranks[0].Relation)
	assert.Equal(t, []int{2}, mm[0].Lagging(4), "named behind; the majority is unnamed")
	assert.Equal(t, []RASOpCount{{2, 5}, {2, 0}}, mm[1].Counts)
	assert.Nil(t, mm[1].Lagging(4), "no rank named")
	e := rep.Communicators[1]
	require.Len(t, e.Ranks, 2)
	assert.Equal(t, "ncclRemoteError", e.Ranks[0].Status)
	assert.Equal(t, -1, e.Ranks[0].GPUIndex)
	assert.Equal(t, "ABORT", e.Ranks[1].Status)

	assert.Equal(t, RASReport{}, ParseRAS(nil))
	assert.Empty(t, ParseRAS([]byte("  Rank 3 -- GPU 1 managed by process 1 on node x\n#bad\n")).Communicators)
}
