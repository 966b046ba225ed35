package simulated

// The fleet's nodes as the gpu_node receiver reads them: each pod's cgroup
// (CPU time, limit and throttling, memory, pressure), the node's pressure,
// and its NIC ports with the GPUs of their rails. The same workloads drive
// them as drive the GPUs: a data loader in an input_bound phase is held by
// its CPU limit, a multi-host job's collectives fill its rails, and a
// fabric_errors fault makes its rail count link errors.

import (
	"fmt"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
)

// NodeEvidence is one host's evidence at one time.
type NodeEvidence struct {
	Host     string
	Pods     []PodEvidence
	Pressure cgroupstat.NodePressure
	NICs     []NICEvidence
}

// PodEvidence is one pod's cgroup, by its UID (the UID its GPU processes
// carry), with the namespace and name a real node's kubelet log
// directories give it.
type PodEvidence struct {
	UID             string
	Namespace, Name string
	Stats           cgroupstat.Stats
}

// NICEvidence is one NIC port with the GPUs it serves.
type NICEvidence struct {
	Port netdev.Port
	Rail netdev.Rail
}

// simNode is one host's cumulative counters.
type simNode struct {
	name string
	pods []*simPod
	nics []*simNIC
	psi  [3]float64 // seconds some task stalled: cpu, memory, io
	last time.Time
}

type simPod struct {
	uid  string
	pod  gpu.Pod // its namespace and name, as the kubelet's log directory names them
	w    *Workload
	gpu  *simGPU // the first GPU it uses: its phase
	n    int     // GPUs it uses
	key  uint64  // for noise
	cpu  float64 // seconds
	per  float64 // CFS periods
	thr  float64 // throttled periods
	thrS float64 // throttled seconds
	psi  [3]float64
}

type simNIC struct {
	port    netdev.Port // the static fields
	rail    []*simGPU
	busIDs  []string
	by      string
	key     uint64
	multi   bool    // carries a multi-host job's collectives
	rx, tx  float64 // bytes
	errs    []float64
	wait    float64
	downed  []bool // per fault: its link_downed counted
	errKind []string
}

// The error counters a simulated port has, by kind, in emission order.
var (
	ibErrors  = []string{"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors", "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors", "excessive_buffer_overrun_errors"}
	ethErrors = []string{"rx_errors", "tx_errors", "rx_dropped", "tx_dropped"}
)

// A degraded rail's error rates, per second: symbol errors ~1,200/min and
// receive errors ~250/min on InfiniBand (rx_errors and rx_dropped on
// Ethernet), a link recovery every 20 s.
var fabricRates = map[string]float64{
	"symbol_error": 20, "port_rcv_errors": 4, "link_error_recovery": 0.05,
	"rx_errors": 20, "rx_dropped": 4,
}

// CFS period, and the shares of periods a pod is throttled in: a third or
// so where its limit binds, a few percent where it does not.
const (
	cfsPeriod      = 100 * time.Millisecond
	throttledBound = 0.30
	throttledFree  = 0.01
)

// cpuDemand is the CPUs a pod without a limit uses per GPU in a phase.
var cpuDemand = map[string]float64{
	ComputeBound: 2, MemoryBound: 2, CommunicationBound: 1.5, InputBound: 6, LaunchBound: 1.1, Idle: 0.05,
}

// Node is every host's evidence at now, its counters advanced from the
// previous call. Its clock is the fleet's, started by the first Collect
// or Node: a fleet the gpu_node receiver reads, made from the same
// configuration as the dcgm receiver's, shows the same phases and faults
// at the same wall-clock times to within a collection interval. A
// replayed trace has no node evidence: nil.
func (fl *Fleet) Node(now time.Time) []NodeEvidence {
	if !fl.started {
		fl.started, fl.t0 = true, now
	}
	if fl.rec != nil {
		return nil
	}
	if fl.nodes == nil {
		fl.nodes = fl.buildNodes()
	}
	elapsed := now.Sub(fl.t0)
	out := make([]NodeEvidence, len(fl.nodes))
	for i, nd := range fl.nodes {
		dt := 0.0
		if !nd.last.IsZero() {
			dt = max(0, now.Sub(nd.last).Seconds())
		}
		nd.last = now
		out[i] = fl.nodeAt(nd, elapsed, dt)
	}
	return out
}

// buildNodes places the pods and NICs of every host.
func (fl *Fleet) buildNodes() []*simNode {
	var nodes []*simNode
	byHost := map[int]*simNode{}
	pods := map[string]*simPod{}
	for _, g := range fl.gpus {
		nd, ok := byHost[g.host]
		if !ok {
			nd = &simNode{name: g.dev.Host}
			byHost[g.host] = nd
			nodes = append(nodes, nd)
		}
		shs := append([]share(nil), g.shares...)
		for _, m := range g.migs {
			shs = append(shs, m.sh)
		}
		for _, sh := range shs {
			if sh.uid == "" {
				continue // a Slurm job's: no pod, no pod cgroup
			}
			if p, ok := pods[sh.uid]; ok {
				p.n++
				continue
			}
			p := &simPod{uid: sh.uid, pod: sh.pod, w: g.workload, gpu: g, n: 1, key: uint64(len(pods)) + 1<<40}
			pods[sh.uid] = p
			nd.pods = append(nd.pods, p)
		}
	}
	multi := fl.multiHost()
	for h, nd := range nodes {
		gs := fl.gpus[h*fl.cfg.GPUsPerHost : (h+1)*fl.cfg.GPUsPerHost]
		nd.nics = fl.nics(h, gs)
		for _, n := range nd.nics {
			for _, g := range n.rail {
				if multi[g.workload] {
					n.multi = true
				}
			}
		}
	}
	return nodes
}

// multiHost are the training workloads that span hosts: their collectives
// cross the network.
func (fl *Fleet) multiHost() map[*Workload]bool {
	hosts := map[*Workload]int{}
	seen := map[*Workload]map[int]bool{}
	for _, g := range fl.gpus {
		if w := g.workload; w != nil && w.Kind == Training {
			if seen[w] == nil {
				seen[w] = map[int]bool{}
			}
			if !seen[w][g.host] {
				seen[w][g.host] = true
				hosts[w]++
			}
		}
	}
	out := map[*Workload]bool{}
	for w, n := range hosts {
		out[w] = n > 1
	}
	return out
}

// network is host h's NICs: its configured entry, or its model's default.
func (fl *Fleet) network(h int, m model) Network {
	var n Network
	switch {
	case len(fl.cfg.Networks) > 0:
		n = fl.cfg.Networks[h%len(fl.cfg.Networks)]
	case m.nvlink:
		n.Kind = InfiniBand
	default:
		n.Kind = Ethernet
	}
	gpus := fl.cfg.GPUsPerHost
	if n.RateGbps == 0 {
		n.RateGbps = 400
		if n.Kind == Ethernet {
			n.RateGbps = 100
		}
	}
	if n.NICs == 0 {
		n.NICs = gpus
		if n.Kind == Ethernet {
			n.NICs = min(2, gpus)
		}
	}
	return n
}

// nics are host h's ports, GPU j of the host on port j*NICs/GPUsPerHost:
// an InfiniBand port on the GPU's PCIe switch, an Ethernet NIC on its NUMA
// node (the first half of the GPUs on node 0).
func (fl *Fleet) nics(h int, gs []*simGPU) []*simNIC {
	net := fl.network(h, gs[0].model)
	per := len(gs)
	out := make([]*simNIC, net.NICs)
	for j := range out {
		n := &simNIC{key: uint64(h)<<16 | uint64(j)}
		for i, g := range gs {
			if i*net.NICs/per == j {
				n.rail = append(n.rail, g)
				bus, _ := netdev.NormalizeBusID(g.dev.PCIBusID) // always well formed here
				n.busIDs = append(n.busIDs, bus)
			}
		}
		first := n.rail[0].idx
		numa := 0
		if 2*first >= per {
			numa = 1
		}
		p := netdev.Port{Physical: true, NUMA: numa, Up: true, HasUp: true, Vendor: "Mellanox", Driver: "mlx5_core",
			RateBytesPerSec: net.RateGbps * 1e9 / 8, HasBytes: true, HasPackets: true}
		bus := 0x18 + 0x10*first + 2 // beside its first GPU
		p.PCI = fmt.Sprintf("0000:%02x:00.0", bus)
		if net.Kind == InfiniBand {
			p.Device, p.Port, p.Kind, p.LinkLayer = fmt.Sprintf("mlx5_%d", j), 1, netdev.KindIB, netdev.LinkInfiniBand
			p.ID, p.Netdev, p.State = p.Device+":1", fmt.Sprintf("ibp%ds0", bus), "ACTIVE"
			p.Model, p.HasXmitWait = "MT4129", true // ConnectX-7
			n.errKind, n.by = ibErrors, netdev.RailByPCIeSwitch
		} else {
			p.Device, p.Kind, p.LinkLayer = fmt.Sprintf("eth%d", j), netdev.KindNetdev, netdev.LinkEthernet
			p.ID, p.Netdev, p.State = p.Device, p.Device, "up"
			n.errKind, n.by = ethErrors, netdev.RailByNUMANode
		}
		n.port = p
		n.errs = make([]float64, len(n.errKind))
		n.downed = make([]bool, len(fl.faults))
		out[j] = n
	}
	return out
}

// nodeAt advances nd's counters over dt seconds at elapsed and reads them.
func (fl *Fleet) nodeAt(nd *simNode, elapsed time.Duration, dt float64) NodeEvidence {
	seed, tick := uint64(fl.cfg.Seed), uint64(elapsed/cfsPeriod)
	ev := NodeEvidence{Host: nd.name, Pods: make([]PodEvidence, 0, len(nd.pods)), NICs: make([]NICEvidence, 0, len(nd.nics))}
	for _, p := range nd.pods {
		ev.Pods = append(ev.Pods, PodEvidence{UID: p.uid, Namespace: p.pod.Namespace, Name: p.pod.Name, Stats: p.advance(phaseAt(p.w, elapsed+p.gpu.phaseBase), dt, seed, tick)})
	}
	// The node's own pressure: a little CPU and I/O, next to no memory.
	for r, share := range []float64{0.03, 0.002, 0.01} {
		nd.psi[r] += share * dt * (1 + 0.3*(2*unit(seed, uint64(r), 0x9512, tick)-1))
	}
	ev.Pressure = cgroupstat.NodePressure{CPU: psi(nd.psi[0], 0.1), Memory: psi(nd.psi[1], 0.5), IO: psi(nd.psi[2], 0.5)}
	for _, n := range nd.nics {
		ev.NICs = append(ev.NICs, fl.advanceNIC(n, elapsed, dt, tick))
	}
	return ev
}

// psi is a pressure file's totals: some, and full at a share of it.
func psi(some, full float64) cgroupstat.PSI {
	return cgroupstat.PSI{Some: cgroupstat.Stall{Total: seconds(some), Has: true}, Full: cgroupstat.Stall{Total: seconds(some * full), Has: true}}
}

// advance runs the pod for dt seconds in phase and returns its cgroup.
func (p *simPod) advance(phase string, dt float64, seed, tick uint64) cgroupstat.Stats {
	jitter := func(field uint64, rel float64) float64 { return 1 + rel*(2*unit(seed, p.key, field, tick)-1) }
	limit := 0.0
	if p.w != nil {
		limit = p.w.CPULimit
	}
	demand := cpuDemand[phase] * float64(p.n) * jitter(1, 0.1)
	var st cgroupstat.Stats
	if limit > 0 {
		// A limited pod is active in every period; where its loader
		// wants more than its limit it uses all of it and is throttled
		// in 30-40 % of them, elsewhere it stays under 60 % of it.
		frac := throttledFree + 0.02*unit(seed, p.key, 2, tick)
		used := min(demand, 0.6*limit)
		if phase == InputBound {
			frac = throttledBound + 0.10*unit(seed, p.key, 2, tick)
			used = limit * (0.95 + 0.04*unit(seed, p.key, 3, tick))
		}
		periods := dt / cfsPeriod.Seconds()
		p.per += periods
		p.thr += periods * frac
		p.thrS += periods * frac * 0.035 // the last ~35 ms of a throttled period
		p.cpu += used * dt
		p.psi[0] += (0.02 + 0.5*frac) * dt
		st.Limit = cgroupstat.CPULimit{CPUs: limit, Has: true}
		st.CPU = cgroupstat.CPUStat{Periods: uint64(p.per), ThrottledPeriods: uint64(p.thr), Throttled: seconds(p.thrS), HasThrottling: true}
		lim := uint64(limit * 4 * (1 << 30)) // 4 GiB per CPU
		st.Memory = cgroupstat.Memory{Usage: uint64(float64(lim) * 0.55 * jitter(4, 0.05)), HasUsage: true, Limit: lim, HasLimit: true}
	} else {
		p.cpu += demand * dt
		p.psi[0] += 0.02 * dt
		st.Memory = cgroupstat.Memory{Usage: uint64(6 * float64(p.n) * (1 << 30) * jitter(4, 0.05)), HasUsage: true}
	}
	io := 0.01
	if phase == InputBound {
		io = 0.05
	}
	p.psi[1] += 0.002 * dt
	p.psi[2] += io * dt
	st.CPU.Usage, st.CPU.HasUsage = seconds(p.cpu), true
	st.CPUPressure, st.MemoryPressure, st.IOPressure = psi(p.psi[0], 0.2), psi(p.psi[1], 0.5), psi(p.psi[2], 0.5)
	return st
}

// advanceNIC carries the rail's traffic for dt seconds: a multi-host
// job's collectives at 50-70 % of the rate in its communication phase and
// a little while it computes, a dataset read in an input-bound phase; and
// counts the errors of a fabric_errors fault on one of the rail's GPUs.
func (fl *Fleet) advanceNIC(n *simNIC, elapsed time.Duration, dt float64, tick uint64) NICEvidence {
	seed := uint64(fl.cfg.Seed)
	multi := n.multi
	var rx, tx float64 // shares of the rate
	for _, g := range n.rail {
		if g.workload == nil {
			continue
		}
		ph := phaseAt(g.workload, elapsed+g.phaseBase)
		r, t := 0.002, 0.002
		switch {
		case ph == CommunicationBound && multi && g.workload.Kind == Training:
			r = 0.50 + 0.20*unit(seed, n.key, 1, tick)
			t = r * (0.97 + 0.03*unit(seed, n.key, 2, tick))
		case (ph == ComputeBound || ph == MemoryBound) && multi && g.workload.Kind == Training:
			r, t = 0.06, 0.06
		case ph == InputBound:
			r, t = 0.04, 0.004
		}
		rx, tx = max(rx, r), max(tx, t)
	}
	rate := n.port.RateBytesPerSec
	n.rx += rx * rate * dt
	n.tx += tx * rate * dt
	n.wait += rx * rx * 2e6 * dt
	for fi := range fl.faults {
		flt := &fl.faults[fi]
		if flt.Kind != FabricErrors || elapsed < flt.Start || (flt.Duration > 0 && elapsed >= flt.Start+flt.Duration) || !n.serves(flt.sel) {
			continue
		}
		for k, name := range n.errKind {
			n.errs[k] += fabricRates[name] * dt * (1 + 0.2*(2*unit(seed, n.key, uint64(10+k), tick)-1))
			if name == "link_downed" && !n.downed[fi] {
				n.downed[fi] = true
				n.errs[k]++
			}
		}
	}
	p := n.port
	mtu := 4096.0
	if p.Kind == netdev.KindNetdev {
		mtu = 9000
	}
	p.RxBytes, p.TxBytes = uint64(n.rx), uint64(n.tx)
	p.RxPackets, p.TxPackets = uint64(n.rx/mtu), uint64(n.tx/mtu)
	p.XmitWait = uint64(n.wait)
	p.Errors = make([]netdev.Counter, len(n.errKind))
	for k, name := range n.errKind {
		p.Errors[k] = netdev.Counter{Name: name, Class: netdev.ClassError, Value: uint64(n.errs[k])}
	}
	return NICEvidence{Port: p, Rail: netdev.Rail{GPUs: append([]string(nil), n.busIDs...), By: n.by}}
}

// serves says a GPU on the NIC's rail is one sel selects.
func (n *simNIC) serves(sel selector) bool {
	for _, g := range n.rail {
		if sel.matches(g.host, g.idx) {
			return true
		}
	}
	return false
}
