package trace

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

const nodeHead = "timestamp,uuid,host,pod,pci_bus_id,pod_uid,pod_cpu_limit,pod_cpu_periods,pod_cpu_throttled_periods,nic,nic_link_layer,nic_rate_gbps,nic_rx_bytes,nic_tx_bytes,nic_up,nic_symbol_error\n"

// TestNodeColumns: the node evidence columns are read per row, the bus ID
// as sysfs spells it; GPUs of one pod and of one NIC's rail carry the same
// cells.
func TestNodeColumns(t *testing.T) {
	batches, err := readAll(t, nodeHead+
		"100,GPU-a,h0,p0,00000000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5000,6000,1,3\n"+
		"100,GPU-b,h0,p0,0000:28:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5000,6000,1,3\n"+
		"100,GPU-c,h1,p1,,,,,,,,,,,,\n")
	require.NoError(t, err)
	a := batches[0][0].Node
	require.NotNil(t, a)
	require.Equal(t, "0000:18:00.0", a.BusID)
	require.Equal(t, "uid-0", a.PodUID)
	require.Equal(t, "mlx5_0:1", a.NIC)
	require.Equal(t, "infiniband", a.NICs.LinkLayer)
	require.Equal(t, 8.0, a.Pod.V[PodCPULimit])
	require.True(t, a.Pod.Has[PodCPUThrottledPeriods])
	require.False(t, a.Pod.Has[PodCPUSeconds])
	require.Equal(t, 6000.0, a.NICs.V[NICTxBytes])
	require.Equal(t, 3.0, a.NICs.V[NICFirstError], "symbol_error")
	require.Nil(t, batches[0][2].Node, "blank node cells: no evidence")

	s := batches[0][0].Sample(map[string]*gpu.Device{})
	require.Equal(t, "0000:18:00.0", s.Device.PCIBusID)
	require.Equal(t, []gpu.Process{{Owner: gpu.OwnerPod, PodUID: "uid-0", Pod: gpu.Pod{Name: "p0"}}}, s.Processes)
}

// TestNodeColumnErrors: a malformed node cell, a row whose node cells
// lack what they belong to, and GPUs of one NIC or pod that disagree at
// one timestamp are errors naming the line and column.
func TestNodeColumnErrors(t *testing.T) {
	for _, tc := range []struct{ name, rows, at, want string }{
		{"bus ID", "100,GPU-a,h0,p0,18-00,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n", "pci_bus_id", "pci_bus_id: want a PCI address"},
		{"negative", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,-1,30,mlx5_0:1,infiniband,400,5,6,1,0\n", "pod_cpu_periods", "pod_cpu_periods: want a non-negative number"},
		{"link layer", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,IB,400,5,6,1,0\n", "nic_link_layer", "nic_link_layer: want infiniband or ethernet"},
		{"up", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,2,0\n", "nic_up", "nic_up: want 1 (up) or 0 (down)"},
		{"no pod", "100,GPU-a,h0,p0,0000:18:00.0,,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n", "pod_uid", "pod_uid is blank"},
		{"no NIC", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,,infiniband,400,5,6,1,0\n", "nic", "nic is blank"},
		{"no bus ID", "100,GPU-a,h0,p0,,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n", "pci_bus_id", "pci_bus_id is blank"},
		{"no host", "100,GPU-a,,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n", "host", "host is blank"},
		{"one direction", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,,1,0\n", "nic_rx_bytes", "nic_rx_bytes and nic_tx_bytes come together"},
		{"NIC disagrees", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n" +
			"100,GPU-b,h0,p0,0000:28:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,9\n",
			"nic", "nic mlx5_0:1 on h0: its cells differ from line 2's at the same timestamp"},
		{"pod disagrees", "100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n" +
			"100,GPU-b,h0,p0,0000:28:00.0,uid-0,8,1000,31,mlx5_1:1,infiniband,400,5,6,1,0\n",
			"pod_uid", "pod uid-0 on h0: its cgroup cells differ from line 2's at the same timestamp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, nodeHead+tc.rows)
			// The line and column of the cell named by at (a column's
			// name), in the last row.
			rows := strings.Split(strings.TrimSuffix(tc.rows, "\n"), "\n")
			cells := strings.Split(rows[len(rows)-1], ",")
			k := slices.Index(strings.Split(strings.TrimSuffix(nodeHead, "\n"), ","), tc.at)
			require.GreaterOrEqual(t, k, 0, tc.at)
			col := len(strings.Join(cells[:k], ",")) + 1
			if k > 0 {
				col++
			}
			require.ErrorContains(t, err, fmt.Sprintf("t.csv:%d:%d: %s", len(rows)+1, col, tc.want))
		})
	}
	// The same NIC on two hosts, or at two timestamps, may differ.
	_, err := readAll(t, nodeHead+
		"100,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1000,30,mlx5_0:1,infiniband,400,5,6,1,0\n"+
		"100,GPU-b,h1,p1,0000:18:00.0,uid-1,8,1000,30,mlx5_0:1,infiniband,400,7,8,1,0\n"+
		"105,GPU-a,h0,p0,0000:18:00.0,uid-0,8,1050,31,mlx5_0:1,infiniband,400,9,9,1,0\n")
	require.NoError(t, err)
}

// TestUnknownNodeColumn: a column that looks like one but is not stays an
// error.
func TestUnknownNodeColumn(t *testing.T) {
	_, err := readAll(t, "timestamp,uuid,nic_crc_errors\n")
	require.ErrorContains(t, err, `t.csv:1:16: unknown column "nic_crc_errors"`)
}
