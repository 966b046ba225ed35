package ncclinspector

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParseIBCompletionIssue1405: RoCE retry-exceeded completions.
func TestParseIBCompletionIssue1405(t *testing.T) {
	var got []IBCompletion
	for line := range strings.Lines(string(realFile(t, "nccl_debug_ib_completion_error_nccl_issue1405.txt"))) {
		if c, ok := ParseIBCompletion(line); ok {
			got = append(got, c)
		}
	}
	require.Len(t, got, 2)
	assert.Equal(t, IBCompletion{
		Host: "kp-ddp-worker-0", PID: 3468, Device: 4,
		Peer: "10.216.210.236<54862>", Status: 12, StatusName: "IBV_WC_RETRY_EXC_ERR",
		Opcode: 0, Len: 0, VendorErr: 129, Direction: "Recv",
		LocalGID: "fd00:1148:9000:5000:4:200:3:ff22", RemoteGID: "fd00:1148:9000:5000:4:200:3:ff1f",
	}, got[0])
	assert.Equal(t, 32616, got[1].Opcode)
}

func TestParseIBCompletionForms(t *testing.T) {
	c, ok := ParseIBCompletion("h:1:2 [0] NCCL WARN NET/IB: Got completion from peer 10.0.0.1<1> with status=IBV_WC_REM_ACCESS_ERR(10) opcode=IBV_WC_RECV(128) vendor_err=136  hca mlx5_3")
	require.True(t, ok)
	assert.Equal(t, 10, c.Status)
	assert.Equal(t, "IBV_WC_REM_ACCESS_ERR", c.StatusName)
	assert.Equal(t, 128, c.Opcode)
	assert.Equal(t, -1, c.Len)
	assert.Equal(t, 136, c.VendorErr)
	assert.Empty(t, c.Direction)
	assert.Equal(t, "mlx5_3", c.HCA)

	c, ok = ParseIBCompletion("NET/IB/GIN: Got completion from peer p with status=5 opcode=1 len=8 vendor err 249 (Send) hca mlx5_0")
	require.True(t, ok)
	assert.Equal(t, "IBV_WC_WR_FLUSH_ERR", c.StatusName)
	assert.Equal(t, "Send", c.Direction)
	assert.Equal(t, -1, c.Device)

	_, ok = ParseIBCompletion("NCCL INFO transport/net.cc:1302 -> 6")
	assert.False(t, ok)
	assert.Equal(t, "IBV_WC_STATUS_99", IBVWCStatusName(99))
	assert.Equal(t, "IBV_WC_TM_RNDV_INCOMPLETE", IBVWCStatusName(23))
}
