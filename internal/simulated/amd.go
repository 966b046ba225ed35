package simulated

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// amdDevice makes d, GPU i of its host, an AMD GPU as AMD SMI names it: a
// UUID without NVIDIA's GPU- prefix, a PCI address with a 4-digit domain,
// amdgpu's version, the SPX and NPS1 modes an MI300X ships in.
func amdDevice(d *gpu.Device, i int) {
	d.Vendor = gpu.VendorAMD
	d.UUID = strings.ToLower(strings.TrimPrefix(d.UUID, "GPU-"))
	d.PCIBusID = fmt.Sprintf("0000:%02x:00.0", 0x0c+0x16*i)
	d.DriverVersion = "6.10.5"
	d.AMD = &gpu.AMDDevice{PartitionID: -1}
	if strings.Contains(d.Model, "MI300") {
		d.AMD = &gpu.AMDDevice{ComputePartition: "SPX", MemoryPartition: "NPS1", PartitionID: 0}
	}
}

// cpxPartitions splits an MI300X into its CPX partitions. The first is the
// GPU's own device, which keeps the board's figures and its pod; the seven
// others are devices of their own, each with a pod, its share of the memory
// and its load (partition k of n is (n-k)/n as busy as the phase), and a
// PCI address whose function is the partition's index, as amdgpu gives.
func cpxPartitions(seed uint64, g *simGPU) []*migInstance {
	w := g.workload
	parent := g.dev.UUID
	g.dev.AMD = &gpu.AMDDevice{ComputePartition: "CPX", MemoryPartition: "NPS4", PartitionID: 0, ParentUUID: parent}
	out := make([]*migInstance, 0, CPXPartitions-1)
	for k := 1; k < CPXPartitions; k++ {
		rng := splitmix(seed ^ 0xa3d ^ (uint64(g.id)<<8 | uint64(k)))
		a, b := rng.next(), rng.next()
		pod := gpu.Pod{Namespace: w.Namespace, Name: fmt.Sprintf("%s-%d-%d-%d", w.Name, g.host, g.idx, k), Container: "main"}
		m := &migInstance{memMiB: g.model.fbMiB / CPXPartitions, load: float64(CPXPartitions-k) / CPXPartitions}
		m.dev = g.dev
		// amdgpu derives a partition's UUID from its GPU's, in the
		// first byte.
		first, _ := strconv.ParseUint(parent[:2], 16, 8)
		m.dev.UUID = fmt.Sprintf("%02x%s", (first-uint64(k))&0xff, parent[2:])
		m.dev.PCIBusID = strings.TrimSuffix(g.dev.PCIBusID, "0") + strconv.Itoa(k)
		m.dev.Pod = pod
		m.dev.TempLimits = nil // the board's, on the first partition
		m.dev.AMD = &gpu.AMDDevice{ComputePartition: "CPX", MemoryPartition: "NPS4", PartitionID: k, ParentUUID: parent}
		m.sh = share{pod: pod, uid: fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(b>>32), uint16(b>>16), uint16(b)&0xfff, uint16(a>>48)&0xfff, a&0xffffffffffff),
			ctrID: fmt.Sprintf("%016x%016x%016x%016x", rng.next(), rng.next(), rng.next(), rng.next()), pid: uint32(30_000 + 100*g.idx + k), part: 1}
		out = append(out, m)
	}
	return out
}

// numberProcessors numbers an AMD host's GPUs and partitions in AMD SMI's
// processor order: a GPU in CPX mode takes eight indexes.
func numberProcessors(gs []*simGPU) {
	next := 0
	for _, g := range gs {
		g.dev.Index = next
		next++
		for _, m := range g.migs {
			m.dev.Index = next
			next++
		}
	}
}

// amdValues sets what AMD SMI reads of an AMD GPU: the figures both
// vendors have in vs, in DCGM's units, the others in a.
func amdValues(vs *f.Values, a *gpu.AMDValues, g *simGPU, c *conditions, dt float64, n noise) {
	m := g.model
	power := (m.idleW + (m.tdp-m.idleW)*c.lv.power) * n.of(f.PowerUsage, 0.03)
	g.energyMJ += power * dt * 1000
	hotspot := 35 + 50*c.lv.power*n.of(f.GPUTemp, 0.02)
	if c.reasons&f.ClocksEventHWThermal != 0 {
		hotspot = 96 + 2*unit(n.seed, n.gpu, 999, n.tick)
	}
	fb := m.fbMiB
	if g.dev.AMD != nil && g.dev.AMD.ComputePartition == "CPX" {
		fb /= CPXPartitions
	}
	vs.Set(f.GPUUtil, math.Round(math.Min(100, c.lv.gpuUtil*n.of(f.GPUUtil, 0.02))))
	vs.Set(f.FBTotal, fb)
	vs.Set(f.FBUsed, math.Round(fb*math.Min(0.99, c.fbFrac)))
	vs.Set(f.PowerUsage, math.Round(power))
	vs.Set(f.TotalEnergy, math.Round(g.energyMJ))
	vs.Set(f.GPUTemp, math.Round(hotspot))
	vs.Set(f.PCIeTxBytes, math.Round(c.lv.pcie*0.4*n.of(f.PCIeTxBytes, 0.1)))
	vs.Set(f.PCIeRxBytes, math.Round(c.lv.pcie*n.of(f.PCIeRxBytes, 0.1)))
	vs.Set(f.ECCSBEVolTotal, g.sbe)
	vs.Set(f.ECCDBEVolTotal, g.dbe)

	a.Set(gpu.AMDUMCActivity, math.Round(math.Min(100, 100*c.lv.dram*n.of(f.MemCopyUtil, 0.05))))
	a.Set(gpu.AMDMMActivity, 0)
	if strings.Contains(m.name, "MI300") {
		a.Set(gpu.AMDPowerCurrent, math.Round(power))
		a.Set(gpu.AMDBadPageThreshold, 128)
	} else {
		a.Set(gpu.AMDPowerAverage, math.Round(power))
		a.Set(gpu.AMDTempEdge, math.Round(hotspot-12))
	}
	a.Set(gpu.AMDPowerCap, m.tdp)
	a.Set(gpu.AMDTempHotspot, math.Round(hotspot))
	a.Set(gpu.AMDTempVRAM, math.Round(hotspot-6))
	a.Set(gpu.AMDClockGFX, math.Round(c.smClock))
	a.Set(gpu.AMDClockMem, m.memClock)
	// Package power tracking holds a GPU near its cap back part of the
	// time; a thermal fault, the socket's thermal limit.
	a.Set(gpu.AMDViolationPower, math.Round(math.Max(0, c.lv.power-0.8)*100))
	thermal := 0.0
	if c.reasons&f.ClocksEventHWThermal != 0 {
		thermal = 60
	}
	a.Set(gpu.AMDViolationSocketThermal, thermal)
	a.Set(gpu.AMDViolationVRThermal, 0)
	a.Set(gpu.AMDViolationHBMThermal, 0)
	a.Set(gpu.AMDViolationProchot, 0)
	a.Set(gpu.AMDPCIeReplays, 0)
	// An uncorrectable error retires its page.
	a.Set(gpu.AMDBadPagesReserved, g.dbe)
	a.Set(gpu.AMDBadPagesPending, 0)
	a.Set(gpu.AMDBadPagesUnreservable, 0)
	a.Set(gpu.AMDProcesses, float64(len(g.shares)))
	a.ECC = append(a.ECC, gpu.ECCBlock{Block: "umc", Corrected: uint64(g.sbe), Uncorrected: uint64(g.dbe)})
	// Seven XGMI links to the other GPUs of the hive, sharing the
	// collective traffic.
	const links = 7
	g.xgmiKB += c.lv.nvlink * dt / links / 1024
	for l := range links {
		a.Links = append(a.Links, gpu.XGMILink{Index: l, ReadKB: uint64(g.xgmiKB), WriteKB: uint64(g.xgmiKB), MaxBandwidthGbps: 512})
	}
}

// amdProcesses is what AMD SMI says of an AMD GPU's processes: the VRAM
// each holds, and no utilization, since the simulated workloads are HIP
// compute, whose engine time AMD SMI does not count (the amdsmi backend
// then reports none rather than a zero).
func (g *simGPU) amdProcesses(vs *f.Values) []gpu.Process {
	used, _ := vs.Get(f.FBUsed)
	out := make([]gpu.Process, len(g.shares))
	for k := range g.shares {
		out[k] = g.shares[k].process(used * g.shares[k].part)
	}
	return out
}

// partitionSample reads CPX partition m of a GPU from the GPU's sample:
// its part of the work on its own memory. Power, temperature, clocks,
// errors and links are the board's, on the first partition's sample.
func (fl *Fleet) partitionSample(m *migInstance, board *gpu.Sample, now time.Time) gpu.Sample {
	var vs f.Values
	load := math.Min(1, m.load)
	if u, ok := board.Values.Get(f.GPUUtil); ok {
		vs.Set(f.GPUUtil, math.Round(u*load))
	}
	frac := 0.01
	if used, ok := board.Values.Get(f.FBUsed); ok {
		if total, ok := board.Values.Get(f.FBTotal); ok && total > 0 {
			frac = used / total
		}
	}
	used := math.Round(m.memMiB * math.Min(0.99, frac*(0.5+load/2)))
	vs.Set(f.FBTotal, m.memMiB)
	vs.Set(f.FBUsed, used)
	a := &gpu.AMDValues{}
	if u, ok := board.AMD.Get(gpu.AMDUMCActivity); ok {
		a.Set(gpu.AMDUMCActivity, math.Round(u*load))
	}
	a.Set(gpu.AMDProcesses, 1)
	smp := gpu.Sample{Device: &m.dev, Time: now, Values: vs, Epoch: 1, AMD: a}
	if fl.processes {
		// The partition's pod, its memory only (see amdProcesses).
		smp.Processes = []gpu.Process{m.sh.process(used)}
	}
	return smp
}
