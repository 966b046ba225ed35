package trace

// Node evidence columns: the project's extension of the contract's trace
// format (docs/trace-node-evidence.md). Per GPU row, the GPU's PCI bus ID,
// its pod's cgroup counters and its rail NIC's counters, as the gpu_node
// receiver reads them. All optional; a trace without them reads as before.

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
)

// The numbers of a pod's cgroup, in PodCells.V.
const (
	PodCPULimit              = iota // CPUs (quota / period)
	PodCPUSeconds                   // cumulative CPU time, s
	PodCPUPeriods                   // cumulative CFS periods
	PodCPUThrottledPeriods          // cumulative throttled periods
	PodCPUThrottledSeconds          // cumulative throttled time, s
	PodMemoryBytes                  // memory in use, bytes
	PodMemoryLimitBytes             // memory limit, bytes
	PodCPUPressureSeconds           // cumulative time some task waited for a CPU (PSI), s
	PodMemoryPressureSeconds        // the same, stalled on memory
	PodIOPressureSeconds            // the same, stalled on I/O
	NumPodFields
)

// The numbers of a NIC port, in NICCells.V; from NICFirstError on, its
// error counters, named as the kernel names them.
const (
	NICRateGbps = iota // link rate, Gb/s
	NICRxBytes         // cumulative bytes received
	NICTxBytes         // cumulative bytes sent
	NICUp              // 1 up, 0 down
	NICFirstError
)

var podColumns = [NumPodFields]string{"pod_cpu_limit", "pod_cpu_seconds", "pod_cpu_periods", "pod_cpu_throttled_periods",
	"pod_cpu_throttled_seconds", "pod_memory_bytes", "pod_memory_limit_bytes", "pod_cpu_pressure_seconds",
	"pod_memory_pressure_seconds", "pod_io_pressure_seconds"}

// NICErrors are the error counters a trace can carry (column nic_NAME):
// InfiniBand port counters, then Ethernet statistics.
var NICErrors = [...]string{"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
	"port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
	"excessive_buffer_overrun_errors", "rx_errors", "tx_errors", "rx_dropped", "tx_dropped"}

// NumNICFields is the size of NICCells.V.
const NumNICFields = NICFirstError + len(NICErrors)

var nicColumns = func() [NumNICFields]string {
	c := [NumNICFields]string{"nic_rate_gbps", "nic_rx_bytes", "nic_tx_bytes", "nic_up"}
	for i, e := range NICErrors {
		c[NICFirstError+i] = "nic_" + e
	}
	return c
}()

// PodCells are a pod's cgroup cells in one row; Has[i] says V[i] was given.
type PodCells struct {
	V   [NumPodFields]float64
	Has [NumPodFields]bool
}

// NICCells are a NIC port's cells in one row. LinkLayer is netdev's
// spelling ("infiniband", "ethernet") or empty.
type NICCells struct {
	LinkLayer string
	V         [NumNICFields]float64
	Has       [NumNICFields]bool
}

// Node is a row's node evidence: nil on a row without any.
type Node struct {
	// BusID is the GPU's PCI bus ID as sysfs spells it (0000:18:00.0).
	BusID string
	// PodUID is the pod whose processes run on the GPU; Pod its cgroup.
	PodUID string
	Pod    PodCells
	// NIC is the port of the GPU's rail (mlx5_3:1, eth0); NICs its cells.
	NIC  string
	NICs NICCells
}

// The node columns' kinds, after the identity columns'.
const (
	colBusID column = iota + colStep + 1
	colPodUID
	colNIC
	colLinkLayer
	colPodValue // + PodCells index
	colNICValue = colPodValue + NumPodFields
)

var nodeColumns = func() map[string]column {
	m := map[string]column{"pci_bus_id": colBusID, "pod_uid": colPodUID, "nic": colNIC, "nic_link_layer": colLinkLayer}
	for i, n := range podColumns {
		m[n] = colPodValue + column(i)
	}
	for i, n := range nicColumns {
		m[n] = colNICValue + column(i)
	}
	return m
}()

// nodeCell reads one node cell into row; fail reports at the cell.
func nodeCell(row *Row, k column, name, cell string, fail func(string, ...any) error) error {
	if cell == "" {
		return nil
	}
	if row.Node == nil {
		row.Node = &Node{}
	}
	n := row.Node
	switch k {
	case colBusID:
		bus, ok := netdev.NormalizeBusID(cell)
		if !ok {
			return fail("pci_bus_id: want a PCI address such as 0000:18:00.0, got %q", cell)
		}
		n.BusID = bus
		return nil
	case colPodUID:
		n.PodUID = cell
		return nil
	case colNIC:
		n.NIC = cell
		return nil
	case colLinkLayer:
		if cell != netdev.LinkInfiniBand && cell != netdev.LinkEthernet {
			return fail("nic_link_layer: want %s or %s, got %q", netdev.LinkInfiniBand, netdev.LinkEthernet, cell)
		}
		n.NICs.LinkLayer = cell
		return nil
	}
	v, err := strconv.ParseFloat(cell, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fail("%s: want a non-negative number, got %q", name, cell)
	}
	if k >= colNICValue {
		i := int(k - colNICValue)
		if i == NICUp && v != 0 && v != 1 {
			return fail("nic_up: want 1 (up) or 0 (down), got %q", cell)
		}
		n.NICs.V[i], n.NICs.Has[i] = v, true
		return nil
	}
	i := int(k - colPodValue)
	n.Pod.V[i], n.Pod.Has[i] = v, true
	return nil
}

// nodeSeen is where a pod's or NIC's cells were first given at the
// current timestamp.
type nodeSeen struct {
	line int
	pod  PodCells
	nic  NICCells
}

// checkNode holds a row's node cells to the rules that need the whole
// row, and to the other rows of its timestamp: the GPUs of one pod, or of
// one NIC's rail, carry the same cells.
func (tr *Reader) checkNode(row *Row) error {
	n := row.Node
	if n == nil {
		return nil
	}
	at := func(name, format string, args ...any) error {
		col := 1
		if i := slices.Index(tr.names, name); i >= 0 {
			col = tr.cols[i]
		}
		return &Error{File: tr.name, Line: row.Line, Column: col, Msg: fmt.Sprintf(format, args...)}
	}
	pod, nic := n.Pod.Has != [NumPodFields]bool{}, n.NICs.Has != [NumNICFields]bool{} || n.NICs.LinkLayer != ""
	switch {
	case pod && n.PodUID == "":
		return at("pod_uid", "pod_uid is blank: a pod's cgroup columns need the pod")
	case nic && n.NIC == "":
		return at("nic", "nic is blank: a NIC's columns need the port's name")
	case n.NIC != "" && n.BusID == "":
		return at("pci_bus_id", "pci_bus_id is blank: the GPUs of nic %s's rail are known by their bus IDs", n.NIC)
	case (n.NIC != "" || n.PodUID != "") && row.Host == "":
		return at("host", "host is blank: node evidence is a host's")
	case n.NICs.Has[NICRxBytes] != n.NICs.Has[NICTxBytes]:
		return at("nic_rx_bytes", "nic_rx_bytes and nic_tx_bytes come together")
	}
	if tr.pods == nil {
		tr.pods, tr.nics = map[string]nodeSeen{}, map[string]nodeSeen{}
	}
	if n.PodUID != "" {
		k := row.Host + "\x00" + n.PodUID
		if first, ok := tr.pods[k]; !ok {
			tr.pods[k] = nodeSeen{line: row.Line, pod: n.Pod}
		} else if first.pod != n.Pod {
			return at("pod_uid", "pod %s on %s: its cgroup cells differ from line %d's at the same timestamp (the GPUs of one pod carry the same)", n.PodUID, row.Host, first.line)
		}
	}
	if n.NIC != "" {
		k := row.Host + "\x00" + n.NIC
		if first, ok := tr.nics[k]; !ok {
			tr.nics[k] = nodeSeen{line: row.Line, nic: n.NICs}
		} else if first.nic != n.NICs {
			return at("nic", "nic %s on %s: its cells differ from line %d's at the same timestamp (the GPUs of one rail carry the same)", n.NIC, row.Host, first.line)
		}
	}
	return nil
}
