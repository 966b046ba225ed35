package simulated

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// levels are a phase's typical readings, as fractions where DCGM reports
// ratios, and as fractions of the model's maximum elsewhere.
type levels struct {
	sm, occupancy, tensor, dram float64
	gpuUtil                     float64 // percent
	power                       float64 // fraction of TDP above idle
	pcie, nvlink                float64 // bytes per second
	// symmetric: the GPU sends over PCIe as much as it receives (a
	// collective through the NIC); otherwise it sends 0.4 of it.
	symmetric bool
	fb        float64 // fraction of the frame buffer used
}

var phases = map[string]levels{
	ComputeBound: {sm: 0.92, occupancy: 0.55, tensor: 0.65, dram: 0.35, gpuUtil: 99, power: 0.85, pcie: 2e9, nvlink: 40e9, fb: 0.70},
	MemoryBound:  {sm: 0.72, occupancy: 0.45, tensor: 0.12, dram: 0.82, gpuUtil: 98, power: 0.75, pcie: 1e9, nvlink: 10e9, fb: 0.85},
	// Collectives: SM activity 0.3-0.5 at ~100 % utilization while NVLink
	// moves 150 GB/s each way; the frame buffer as in compute.
	CommunicationBound: {sm: 0.38, occupancy: 0.12, tensor: 0.15, dram: 0.25, gpuUtil: 99, power: 0.55, pcie: 1e9, nvlink: 150e9, fb: 0.70},
	InputBound:         {sm: 0.28, occupancy: 0.15, tensor: 0.10, dram: 0.12, gpuUtil: 45, power: 0.35, pcie: 8e9, nvlink: 1e9, fb: 0.50},
	LaunchBound:        {sm: 0.22, occupancy: 0.08, tensor: 0.02, dram: 0.06, gpuUtil: 96, power: 0.30, pcie: 3e8, nvlink: 2e8, fb: 0.40},
	Idle:               {sm: 0.01, occupancy: 0.01, tensor: 0, dram: 0.005, gpuUtil: 0, power: 0, pcie: 1e5, nvlink: 0, fb: 0.01},
}

// Fleet is the simulated backend.
type Fleet struct {
	cfg     Config
	rec     *recording // set when replaying a trace
	gpus    []*simGPU
	faults  []fault
	started bool
	t0      time.Time
	// processes makes samples carry per-process readings (EnableProcesses).
	processes bool
	// nodes are the hosts' pods and NICs (node.go), made at the first
	// Node.
	nodes []*simNode
}

type simGPU struct {
	dev       gpu.Device
	id        int // index in the fleet, for noise
	host, idx int
	model     model
	workload  *Workload
	phaseBase time.Duration // offset into the workload's phase cycle
	// shares are the pods using the GPU, each with its part of the
	// GPU's work: one holding the whole for an exclusive GPU, several
	// for a time-sliced one; none for an idle GPU.
	shares []share
	// migs are the GPU's MIG instances (a mig workload), each a device
	// with its own pod and part of the GPU's work.
	migs []*migInstance

	last               time.Time
	energyMJ           float64
	xgmiKB             float64 // an AMD GPU's traffic per XGMI link, each way
	thermalUS          float64
	sbe, dbe           float64
	firedXID, firedECC []bool // per fault index
}

type fault struct {
	Fault
	sel selector
	// slowed are the workloads a slow_rank fault holds back: those of the
	// GPUs it selects.
	slowed map[*Workload]bool
}

// share is one pod's process on a GPU.
type share struct {
	pod        gpu.Pod
	uid, ctrID string
	// slurm is the Slurm job of a Slurm workload's share; then pod, uid
	// and ctrID are empty.
	slurm gpu.SlurmJob
	pid   uint32
	part  float64 // of the GPU's work and memory
}

// New builds the fleet. cfg must be valid.
func New(cfg Config) (*Fleet, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	fl := &Fleet{cfg: cfg}
	if cfg.Trace != "" {
		rec, err := loadRecording(cfg.Trace)
		if err != nil {
			return nil, err
		}
		fl.rec = rec
		return fl, nil
	}
	for _, flt := range cfg.Faults {
		sel, _ := parseSelector(flt.GPUs)
		if flt.Kind == XID && flt.XID == 0 {
			flt.XID = 79
		}
		fl.faults = append(fl.faults, fault{Fault: flt, sel: sel})
	}
	rng := splitmix(uint64(cfg.Seed))
	jobs := slurmJobs{}
	for h := 0; h < cfg.Hosts; h++ {
		m := models[strings.ToLower(cfg.Models[h%len(cfg.Models)])]
		host := fmt.Sprintf("%s%d", cfg.HostPrefix, h)
		for i := 0; i < cfg.GPUsPerHost; i++ {
			g := &simGPU{
				id: len(fl.gpus), host: h, idx: i, model: m,
				firedXID: make([]bool, len(cfg.Faults)),
				firedECC: make([]bool, len(cfg.Faults)),
			}
			g.dev = gpu.Device{
				UUID:          uuid(&rng),
				Index:         i,
				Model:         m.name,
				DriverVersion: "550.90.07",
				PCIBusID:      fmt.Sprintf("00000000:%02X:00.0", 0x18+0x10*i),
				Host:          host,
			}
			if m.amd {
				amdDevice(&g.dev, i)
			}
			boardIdentity(&g.dev)
			for wi := range cfg.Workloads {
				w := &cfg.Workloads[wi]
				sel, _ := parseSelector(w.GPUs)
				if !sel.matches(h, i) {
					continue
				}
				g.workload = w
				g.phaseBase = 0
				g.dev.Pod = gpu.Pod{Namespace: w.Namespace, Container: "main"}
				switch w.Kind {
				case Training:
					g.dev.Pod.Name = fmt.Sprintf("%s-worker-%d", w.Name, h)
					g.dev.Pod.Container = "trainer"
					g.dev.Pod.Job = w.Name
				case TimeSliced:
					// Several pods (shares): the GPU is no one pod's.
				default:
					g.dev.Pod.Name = fmt.Sprintf("%s-%d-%d", w.Name, h, i)
					g.phaseBase = time.Duration(i) * phaseLen(w) / time.Duration(max(cfg.GPUsPerHost, 1))
				}
			}
			if g.workload != nil && g.workload.DRA && g.dev.Pod.Name != "" {
				g.dev.Pod.Claim = g.dev.Pod.Name + "-gpu"
			}
			g.shares = shares(uint64(cfg.Seed), g)
			if g.workload != nil && g.workload.Kind == TimeSliced {
				g.dev.Pod = gpu.Pod{} // as the receiver has a GPU several pods share
			}
			if g.workload != nil && g.workload.Kind == MIG {
				g.migs = migInstances(uint64(cfg.Seed), g)
				g.dev.Pod, g.shares = gpu.Pod{}, nil // the board is no one pod's
			}
			if g.workload != nil && g.workload.Kind == CPX {
				g.migs = cpxPartitions(uint64(cfg.Seed), g)
			}
			jobs.slurmize(g)
			fl.gpus = append(fl.gpus, g)
			for fi := range fl.faults {
				if flt := &fl.faults[fi]; slows(flt.Kind) && g.workload != nil && flt.sel.matches(h, i) {
					if flt.slowed == nil {
						flt.slowed = map[*Workload]bool{}
					}
					flt.slowed[g.workload] = true
				}
			}
		}
		if m.amd {
			numberProcessors(fl.gpus[len(fl.gpus)-cfg.GPUsPerHost:])
		}
	}
	return fl, nil
}

// shares places the pods using g: the pod it is allocated to, or for a
// time-sliced GPU its Pods pods, pod k of n doing (n-k) parts out of
// 1+2+…+n. UIDs, container IDs and PIDs are functions of the seed and
// the GPU, drawn apart from the sequence the GPU UUIDs come from, so that
// those stay as they were.
func shares(seed uint64, g *simGPU) []share {
	w := g.workload
	if w == nil {
		return nil
	}
	n := 1
	if w.Kind == TimeSliced {
		n = w.Pods
		if n == 0 {
			n = DefaultSharingPods
		}
	}
	out := make([]share, n)
	total := float64(n*(n+1)) / 2
	for k := range out {
		key := uint64(g.id)<<8 | uint64(k)
		p := g.dev.Pod
		switch w.Kind {
		case TimeSliced:
			p = gpu.Pod{Namespace: w.Namespace, Name: fmt.Sprintf("%s-%d-%d-%d", w.Name, g.host, g.idx, k), Container: "main"}
		case Training:
			// One pod, one container, on every GPU of its host.
			key = uint64(g.host)<<32 | 1<<63
		}
		rng := splitmix(seed ^ 0x5eed ^ key)
		a, b := rng.next(), rng.next()
		out[k] = share{
			pod:   p,
			uid:   fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", uint32(a>>32), uint16(a>>16), uint16(a)&0xfff, uint16(b>>48)&0xfff, b&0xffffffffffff),
			ctrID: fmt.Sprintf("%016x%016x%016x%016x", rng.next(), rng.next(), rng.next(), rng.next()),
			pid:   uint32(10_000 + 100*g.idx + k),
			part:  float64(n-k) / total,
		}
	}
	return out
}

// EnableProcesses makes every sample carry its GPU's processes: one per
// pod using it, with the pod's part of the GPU's utilization, memory
// controller utilization and memory (gpu.Sample.Processes).
func (fl *Fleet) EnableProcesses() { fl.processes = true }

// processes splits the sample's readings between the GPU's pods.
func (g *simGPU) processes(vs *f.Values) []gpu.Process {
	if len(g.shares) == 0 {
		return []gpu.Process{}
	}
	util, _ := vs.Get(f.GPUUtil)
	memCopy, _ := vs.Get(f.MemCopyUtil)
	used, _ := vs.Get(f.FBUsed)
	out := make([]gpu.Process, len(g.shares))
	for k := range g.shares {
		sh := &g.shares[k]
		out[k] = sh.process(used * sh.part)
		out[k].SMUtil, out[k].MemUtil, out[k].HasUtilization = util*sh.part, memCopy*sh.part, true
	}
	return out
}

// process is the pod's process holding usedMiB of the GPU's memory.
func (sh *share) process(usedMiB float64) gpu.Process {
	p := gpu.Process{
		PID: sh.pid, Owner: gpu.OwnerPod, PodUID: sh.uid, ContainerID: sh.ctrID, Pod: sh.pod,
		MemoryBytes: uint64(usedMiB * (1 << 20)), HasMemory: true,
	}
	if sh.slurm.Known() {
		// What a cgroup says of a Slurm job's process: its job and step.
		p.Owner, p.Slurm = gpu.OwnerSlurmJob, gpu.SlurmJob{ID: sh.slurm.ID, Step: sh.slurm.Step}
	}
	return p
}

func phaseLen(w *Workload) time.Duration {
	var d time.Duration
	for _, p := range w.Phases {
		d += p.Duration
	}
	return d
}

// Name implements backend.Backend.
func (*Fleet) Name() string { return "simulated" }

// Connect implements backend.Backend; the fleet is always there.
func (*Fleet) Connect(context.Context) error { return nil }

// Close implements backend.Backend.
func (*Fleet) Close() error { return nil }

// Devices returns the fleet's devices.
func (fl *Fleet) Devices() []*gpu.Device {
	if fl.rec != nil {
		return fl.rec.devices
	}
	ds := make([]*gpu.Device, 0, len(fl.gpus))
	for _, g := range fl.gpus {
		ds = append(ds, &g.dev)
		for _, m := range g.migs {
			ds = append(ds, &m.dev)
		}
	}
	return ds
}

// Collect implements backend.Backend. The fleet's clock starts at the
// first call; every value is a function of the seed, the configuration and
// the collection times.
func (fl *Fleet) Collect(_ context.Context, now time.Time, maxAge time.Duration) ([]gpu.Sample, error) {
	if !fl.started {
		fl.started, fl.t0 = true, now
	}
	if fl.rec != nil {
		return fl.rec.sampleAt(now.Sub(fl.t0), now, maxAge), nil
	}
	out := make([]gpu.Sample, 0, len(fl.gpus))
	for _, g := range fl.gpus {
		smp := fl.sample(g, now)
		out = append(out, smp)
		for _, m := range g.migs {
			if g.model.amd {
				out = append(out, fl.partitionSample(m, &smp, now))
				continue
			}
			out = append(out, fl.migSample(m, &smp.Values, now))
		}
	}
	return out, nil
}

// sample reads one simulated GPU at now.
func (fl *Fleet) sample(g *simGPU, now time.Time) gpu.Sample {
	elapsed := now.Sub(fl.t0)
	dt := 0.0
	if !g.last.IsZero() {
		dt = now.Sub(g.last).Seconds()
	}
	g.last = now
	c := fl.conditions(g, elapsed, dt)
	n := noise{seed: uint64(fl.cfg.Seed), gpu: uint64(g.id), tick: uint64(elapsed / (100 * time.Millisecond))}
	var vs f.Values
	if g.model.amd {
		smp := gpu.Sample{Device: &g.dev, Time: now, Epoch: 1, AMD: &gpu.AMDValues{}}
		amdValues(&smp.Values, smp.AMD, g, &c, dt, n)
		if fl.processes {
			smp.Processes = g.amdProcesses(&smp.Values)
		}
		return smp
	}
	deviceValues(&vs, g, &c, dt, n)
	if g.model.profiling {
		profilingValues(&vs, g.model, &c.lv, n)
	}
	smp := gpu.Sample{Device: &g.dev, Time: now, Values: vs, XIDs: c.xids, Epoch: 1}
	if fl.processes {
		smp.Processes = g.processes(&vs)
	}
	return smp
}

// xidRecoveryAction is the XID the driver logs when a GPU's recovery
// action changes.
const xidRecoveryAction = 154

// noise is the deterministic jitter of one GPU at one 100 ms tick.
type noise struct{ seed, gpu, tick uint64 }

// of returns a factor within 1 ± rel for the field.
func (n noise) of(field f.Field, rel float64) float64 {
	return 1 + rel*(2*unit(n.seed, n.gpu, uint64(field), n.tick)-1)
}

// conditions is what a GPU does at one instant: its phase's levels as the
// active faults change them.
type conditions struct {
	lv      levels
	smClock float64
	reasons int
	fbFrac  float64
	xids    []uint32 // XIDs that occurred since the previous sample
	// recovery is the driver's recovery action (DCGM_FI_DEV_GPU_RECOVERY_ACTION).
	recovery float64
}

// conditions applies the workload's phase and the faults active at elapsed
// to g, over the dt seconds since its previous sample: a fault's one-off
// events (ECC, XID) fire once, and throttling time accumulates.
func (fl *Fleet) conditions(g *simGPU, elapsed time.Duration, dt float64) conditions {
	phase := Idle
	if g.workload != nil {
		phase = phaseAt(g.workload, elapsed+g.phaseBase)
	}
	c := conditions{lv: phases[phase], smClock: g.model.maxSM}
	if phase == Idle {
		c.smClock, c.reasons = 345, f.ClocksEventGPUIdle
	}
	if phase == CommunicationBound && !g.model.nvlink {
		// No NVLink: the collective's traffic crosses PCIe both ways,
		// to the NIC (GPUDirect RDMA) or the peer GPUs.
		c.lv.pcie, c.lv.symmetric = pcieCollective, true
	}
	c.fbFrac = c.lv.fb
	for fi, flt := range fl.faults {
		if elapsed < flt.Start || (flt.Duration > 0 && elapsed >= flt.Start+flt.Duration) {
			continue
		}
		if !flt.sel.matches(g.host, g.idx) {
			if slows(flt.Kind) && flt.slowed[g.workload] && !g.model.profiling && phase != Idle {
				c.lv.power = peerWaitPower(c.lv.power)
			}
			continue
		}
		switch flt.Kind {
		case ThermalThrottle:
			c.smClock *= 0.7
			c.reasons = f.ClocksEventSWThermal | f.ClocksEventHWThermal
			c.lv.sm *= 0.85
			c.lv.power *= 0.8
			g.thermalUS += dt * 1e6
		case SlowClock:
			c.smClock *= 0.8
		case SlowRank, FabricErrors:
			// A rank on a degraded rail retransmits and waits on its
			// link: slow as a slow rank is.
			c.lv.sm *= slowRankSpeed
			c.lv.tensor *= slowRankSpeed
			c.lv.occupancy *= slowRankSpeed
		case ECC:
			if !g.firedECC[fi] {
				g.firedECC[fi] = true
				g.dbe++
				g.sbe += 3
				c.xids = append(c.xids, 48)
			}
		case XID:
			if !g.firedXID[fi] {
				g.firedXID[fi] = true
				c.xids = append(c.xids, flt.XID)
			}
			// The driver logs XID 154 when it changes the recovery action,
			// most often "from 0x0 (None) to 0x1 (GPU Reset Required)".
			// The fleet takes it so: the GPU needs a reset while the fault
			// lasts, and its end is the reset done.
			if flt.XID == xidRecoveryAction {
				c.recovery = f.RecoveryActionGPUReset
			}
		case MemoryGrowth:
			d := flt.Ramp
			if d <= 0 {
				d = 5 * time.Minute
			}
			p := math.Min(1, float64(elapsed-flt.Start)/float64(d))
			c.fbFrac = c.lv.fb + (0.99-c.lv.fb)*p
		}
	}
	return c
}

// A slow rank does its step at slowRankSpeed of its peers' pace (its SM
// activity scaled so on models with profiling), so its peers finish first
// and spin in the step's collective for the rest: busy by utilization, at
// spinPower above idle (an H100 waiting in NCCL draws about 150 W of its
// 700, the real recording in cmd/gpureplay/testdata/real).
const (
	slowRankSpeed = 0.6
	spinPower     = 0.13
)

// pcieCollective is the PCIe traffic each way, bytes per second, of a GPU
// without NVLink in a collective: ~60 % of a 100 Gb/s NIC's rate.
const pcieCollective = 7.5e9

// slows says a fault kind makes its GPUs slow ranks.
func slows(kind string) bool { return kind == SlowRank || kind == FabricErrors }

// peerWaitPower is the power (a fraction of TDP above idle) of a GPU whose
// job waits for a slow rank, from the power its phase draws working: the
// window's mean of work and spin. Only models without profiling are shaped
// so: on the others the slow rank shows in its own SM activity, and the
// peers' power, which the analyzer does not read there, is left as it was.
func peerWaitPower(working float64) float64 {
	return slowRankSpeed*working + (1-slowRankSpeed)*spinPower
}

// deviceValues sets the fields every GPU reports (utilization, memory,
// power and energy, temperatures, clocks, errors), integrating energy over
// dt seconds.
func deviceValues(vs *f.Values, g *simGPU, c *conditions, dt float64, n noise) {
	m := g.model
	power := (m.idleW + (m.tdp-m.idleW)*c.lv.power) * n.of(f.PowerUsage, 0.03)
	g.energyMJ += power * dt * 1000
	temp := 30 + 50*c.lv.power*n.of(f.GPUTemp, 0.02)
	if c.reasons&f.ClocksEventHWThermal != 0 {
		temp = 89 + 2*unit(n.seed, n.gpu, 999, n.tick)
	}

	vs.Set(f.GPUUtil, math.Round(math.Min(100, c.lv.gpuUtil*n.of(f.GPUUtil, 0.02))))
	vs.Set(f.MemCopyUtil, math.Round(math.Min(100, 100*c.lv.dram*n.of(f.MemCopyUtil, 0.05))))
	vs.Set(f.EncUtil, 0)
	vs.Set(f.DecUtil, 0)
	used := math.Round(m.fbMiB * math.Min(0.99, c.fbFrac))
	vs.Set(f.FBTotal, m.fbMiB)
	vs.Set(f.FBUsed, used)
	vs.Set(f.FBFree, m.fbMiB-used)
	vs.Set(f.FBReserved, 0)
	vs.Set(f.PowerUsage, math.Round(power*1000)/1000)
	vs.Set(f.EnforcedPowerLimit, m.tdp) // no administrator's cap: the board power
	vs.Set(f.TotalEnergy, math.Round(g.energyMJ))
	vs.Set(f.GPUTemp, math.Round(temp))
	vs.Set(f.MemoryTemp, math.Round(temp+4))
	vs.Set(f.SMClock, math.Round(c.smClock))
	vs.Set(f.MemClock, m.memClock)
	vs.Set(f.ClocksEventReasons, float64(c.reasons))
	vs.Set(f.PowerViolation, 0)
	vs.Set(f.ThermalViolation, math.Round(g.thermalUS))
	vs.Set(f.ECCSBEVolTotal, g.sbe)
	vs.Set(f.ECCDBEVolTotal, g.dbe)
	xidField := 0.0
	if len(c.xids) > 0 {
		xidField = float64(c.xids[len(c.xids)-1])
	}
	vs.Set(f.XIDErrors, xidField)
	vs.Set(f.RowRemapFailure, 0)
	vs.Set(f.RecoveryAction, c.recovery)
	vs.Set(f.CorrectableRemappedRows, 0)
	vs.Set(f.UncorrectableRemappedRows, g.dbe)
	vs.Set(f.PCIeReplayCounter, 0)
}

// profilingValues sets the profiling fields (DCGM's DCP metrics) of a
// model that has them.
func profilingValues(vs *f.Values, m model, lv *levels, n noise) {
	ratio := func(field f.Field, v float64) { vs.Set(field, round4(math.Min(1, v*n.of(field, 0.03)))) }
	ratio(f.GREngineActive, math.Min(1, lv.gpuUtil/100))
	ratio(f.SMActive, lv.sm)
	ratio(f.SMOccupancy, lv.occupancy)
	ratio(f.PipeTensorActive, lv.tensor)
	ratio(f.DRAMActive, lv.dram)
	ratio(f.PipeFP64Active, lv.sm*0.02)
	ratio(f.PipeFP32Active, lv.sm*0.25)
	ratio(f.PipeFP16Active, lv.sm*0.05)
	tx := 0.4
	if lv.symmetric {
		tx = 1
	}
	vs.Set(f.PCIeTxBytes, math.Round(lv.pcie*tx*n.of(f.PCIeTxBytes, 0.1)))
	vs.Set(f.PCIeRxBytes, math.Round(lv.pcie*n.of(f.PCIeRxBytes, 0.1)))
	if m.nvlink {
		vs.Set(f.NVLinkTxBytes, math.Round(lv.nvlink*n.of(f.NVLinkTxBytes, 0.1)))
		vs.Set(f.NVLinkRxBytes, math.Round(lv.nvlink*n.of(f.NVLinkRxBytes, 0.1)))
	}
}

func phaseAt(w *Workload, t time.Duration) string {
	if len(w.Phases) == 1 {
		return w.Phases[0].Kind
	}
	t %= phaseLen(w)
	for _, p := range w.Phases {
		if t < p.Duration {
			return p.Kind
		}
		t -= p.Duration
	}
	return w.Phases[len(w.Phases)-1].Kind
}

func round4(v float64) float64 { return math.Round(v*1e4) / 1e4 }

// splitmix is a tiny deterministic generator (SplitMix64).
type splitmix uint64

func (s *splitmix) next() uint64 {
	*s += 0x9e3779b97f4a7c15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// unit hashes its arguments to a number in [0, 1).
func unit(a, b, c, d uint64) float64 {
	s := splitmix(a*0x9e3779b97f4a7c15 ^ b*0xc2b2ae3d27d4eb4f ^ c*0x165667b19e3779f9 ^ d*0x27d4eb2f165667c5)
	return float64(s.next()>>11) / (1 << 53)
}

func uuid(s *splitmix) string {
	a, b := s.next(), s.next()
	return fmt.Sprintf("GPU-%08x-%04x-%04x-%04x-%012x", uint32(a>>32), uint16(a>>16), uint16(a), uint16(b>>48), b&0xffffffffffff)
}
