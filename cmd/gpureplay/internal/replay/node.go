package replay

// A trace's node evidence columns (internal/trace/node.go) turned into what
// the gpu_node receiver reads on each host: one pod cgroup per pod UID, one
// NIC port per NIC with the bus IDs of the GPUs whose rows name it (its
// rail). The receiver's own mapping makes the metrics of them, sent to the
// analyzer as the receiver's batch just before the GPUs' batch of the same
// time, as a collector running both receivers would.

import (
	"context"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/consumer"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// nodeEvidence is the batch's evidence by host, in the order the rows
// first name each host, pod and NIC; nil for a batch without any.
func nodeEvidence(batch []trace.Row) []simulated.NodeEvidence {
	var out []simulated.NodeEvidence
	hostIdx := map[string]int{}
	pods, nics := map[string]bool{}, map[string]int{}
	for i := range batch {
		r := &batch[i]
		n := r.Node
		if n == nil || (n.PodUID == "" && n.NIC == "") {
			continue
		}
		h, ok := hostIdx[r.Host]
		if !ok {
			h = len(out)
			hostIdx[r.Host] = h
			out = append(out, simulated.NodeEvidence{Host: r.Host})
		}
		ev := &out[h]
		if k := r.Host + "\x00" + n.PodUID; n.PodUID != "" && !pods[k] {
			pods[k] = true
			ev.Pods = append(ev.Pods, simulated.PodEvidence{UID: n.PodUID, Stats: podStats(&n.Pod)})
		}
		if n.NIC == "" {
			continue
		}
		k := r.Host + "\x00" + n.NIC
		j, ok := nics[k]
		if !ok {
			j = len(ev.NICs)
			nics[k] = j
			ev.NICs = append(ev.NICs, simulated.NICEvidence{Port: nicPort(n.NIC, &n.NICs)})
		}
		if rail := &ev.NICs[j].Rail; !slices.Contains(rail.GPUs, n.BusID) {
			rail.GPUs = append(rail.GPUs, n.BusID)
		}
	}
	return out
}

func secs(s float64) time.Duration { return time.Duration(s * 1e9) }

// podStats is a pod's cells as the cgroup reader reads its files.
func podStats(c *trace.PodCells) cgroupstat.Stats {
	var st cgroupstat.Stats
	if c.Has[trace.PodCPULimit] {
		st.Limit = cgroupstat.CPULimit{CPUs: c.V[trace.PodCPULimit], Has: true}
	}
	if c.Has[trace.PodCPUSeconds] {
		st.CPU.Usage, st.CPU.HasUsage = secs(c.V[trace.PodCPUSeconds]), true
	}
	if c.Has[trace.PodCPUPeriods] {
		st.CPU.HasThrottling = true
		st.CPU.Periods = uint64(c.V[trace.PodCPUPeriods])
		st.CPU.ThrottledPeriods = uint64(c.V[trace.PodCPUThrottledPeriods])
		st.CPU.Throttled = secs(c.V[trace.PodCPUThrottledSeconds])
	}
	if c.Has[trace.PodMemoryBytes] {
		st.Memory.Usage, st.Memory.HasUsage = uint64(c.V[trace.PodMemoryBytes]), true
	}
	if c.Has[trace.PodMemoryLimitBytes] {
		st.Memory.Limit, st.Memory.HasLimit = uint64(c.V[trace.PodMemoryLimitBytes]), true
	}
	for _, p := range []struct {
		psi *cgroupstat.PSI
		col int
	}{{&st.CPUPressure, trace.PodCPUPressureSeconds}, {&st.MemoryPressure, trace.PodMemoryPressureSeconds}, {&st.IOPressure, trace.PodIOPressureSeconds}} {
		if c.Has[p.col] {
			p.psi.Some = cgroupstat.Stall{Total: secs(c.V[p.col]), Has: true}
		}
	}
	return st
}

// nicPort is a NIC's cells as the NIC reader reads a port: an RDMA port
// is named device:port (mlx5_3:1), a netdev by its name.
func nicPort(id string, c *trace.NICCells) netdev.Port {
	p := netdev.Port{ID: id, Device: id, Kind: netdev.KindNetdev, LinkLayer: c.LinkLayer, Physical: true}
	if dev, _, ok := strings.Cut(id, ":"); ok {
		p.Device, p.Kind = dev, netdev.KindIB
	}
	if c.Has[trace.NICRateGbps] {
		p.RateBytesPerSec = c.V[trace.NICRateGbps] * 1e9 / 8
	}
	if c.Has[trace.NICRxBytes] {
		p.RxBytes, p.TxBytes, p.HasBytes = uint64(c.V[trace.NICRxBytes]), uint64(c.V[trace.NICTxBytes]), true
	}
	if c.Has[trace.NICUp] {
		p.Up, p.HasUp = c.V[trace.NICUp] == 1, true
	}
	for i, name := range trace.NICErrors {
		if c.Has[trace.NICFirstError+i] {
			p.Errors = append(p.Errors, netdev.Counter{Name: name, Class: netdev.ClassError, Value: uint64(c.V[trace.NICFirstError+i])})
		}
	}
	return p
}

// nodeFeed sends each batch's node evidence to the analyzer.
type nodeFeed struct {
	rcv offline.NodeReceiver // made at the first batch with evidence
}

// consume maps the batch's evidence, if any, and feeds it to proc as the
// gpu_node receiver's batch at now, which writes no verdict line.
func (f *nodeFeed) consume(ctx context.Context, proc consumer.Metrics, w *writer, batch []trace.Row, now time.Time) error {
	ev := nodeEvidence(batch)
	if len(ev) == 0 {
		return nil
	}
	if f.rcv == nil {
		r, err := components.NodeReceiver()
		if err != nil {
			return err
		}
		f.rcv = r
	}
	w.evidence = true
	defer func() { w.evidence = false }()
	return proc.ConsumeMetrics(ctx, f.rcv.MapNodes(now, ev))
}

// withPod counts the rows that name their GPU's pod: each has a
// per-process resource after the devices'.
func withPod(batch []trace.Row) int {
	n := 0
	for i := range batch {
		if batch[i].Node != nil && batch[i].Node.PodUID != "" {
			n++
		}
	}
	return n
}
