package simulated

// MIG instances of a simulated GPU: each its own device under its MIG UUID,
// with one pod and its part of the GPU's work.

import (
	"fmt"
	"math"
	"strings"
	"time"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// migInstance is one MIG instance of a simulated GPU.
type migInstance struct {
	dev    gpu.Device
	sh     share
	memMiB float64
	// load scales the GPU's phase for this instance: instance k of n is
	// (n-k)/n as busy as the phase.
	load float64
}

// migInstances splits g into its workload's instances, one pod each.
// Their UUIDs and pods' identities are drawn apart from the GPU UUIDs'
// sequence, as shares does, so that those stay as they were.
func migInstances(seed uint64, g *simGPU) []*migInstance {
	w := g.workload
	prof := migProfiles[w.Instances]
	n := w.Instances
	var gb int
	_, _ = fmt.Sscanf(prof.name[strings.Index(prof.name, ".")+1:], "%dgb", &gb)
	out := make([]*migInstance, n)
	for k := range out {
		rng := splitmix(seed ^ 0x3197 ^ (uint64(g.id)<<8 | uint64(k)))
		a, b := rng.next(), rng.next()
		pod := gpu.Pod{Namespace: w.Namespace, Name: fmt.Sprintf("%s-%d-%d-%d", w.Name, g.host, g.idx, k), Container: "main"}
		if w.DRA {
			pod.Claim = pod.Name + "-gpu"
		}
		m := &migInstance{memMiB: float64(gb*1024 - 512), load: float64(n-k) / float64(n)}
		m.dev = g.dev
		m.dev.UUID = fmt.Sprintf("MIG-%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
		m.dev.Pod = pod
		m.dev.TempLimits = nil // the board's, on the GPU
		// GPU instance IDs as nvidia-smi numbers those of one size.
		m.dev.MIG = &gpu.MIG{ParentUUID: g.dev.UUID, GPUInstance: 1 + k*prof.slices, ComputeInstance: 0, Profile: prof.name}
		m.sh = share{pod: pod, uid: fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(b>>32), uint16(b>>16), uint16(b)&0xfff, uint16(a>>48)&0xfff, a&0xffffffffffff),
			ctrID: fmt.Sprintf("%016x%016x%016x%016x", rng.next(), rng.next(), rng.next(), rng.next()), pid: uint32(20_000 + 100*g.idx + k), part: 1}
		out[k] = m
	}
	return out
}

// migSample reads instance m of g, from the GPU's sample vs: its part of
// the GPU's work on its own memory. Power, temperature, clocks and
// errors are the board's, on the GPU's own sample.
func (fl *Fleet) migSample(m *migInstance, vs *f.Values, now time.Time) gpu.Sample {
	var mv f.Values
	load := math.Min(1, m.load)
	if u, ok := vs.Get(f.GPUUtil); ok {
		mv.Set(f.GPUUtil, math.Round(u*load))
	}
	for _, field := range []f.Field{f.SMActive, f.GREngineActive, f.DRAMActive, f.SMOccupancy, f.PipeTensorActive} {
		if v, ok := vs.Get(field); ok {
			mv.Set(field, round4(v*load))
		}
	}
	frac := 0.01
	if used, ok := vs.Get(f.FBUsed); ok {
		if total, ok := vs.Get(f.FBTotal); ok && total > 0 {
			frac = used / total
		}
	}
	used := math.Round(m.memMiB * math.Min(0.99, frac*(0.5+load/2)))
	mv.Set(f.FBTotal, m.memMiB)
	mv.Set(f.FBUsed, used)
	mv.Set(f.FBFree, m.memMiB-used)
	smp := gpu.Sample{Device: &m.dev, Time: now, Values: mv, Epoch: 1}
	if fl.processes {
		// NVML has no per-process utilization on a MIG instance: its
		// pod's processes say their memory only.
		smp.Processes = []gpu.Process{m.sh.process(used)}
	}
	return smp
}
