package nvmlbackend

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroup"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Per-process readings. For each GPU:
//
//   - nvmlDeviceGetComputeRunningProcesses: the processes with a compute
//     context and the frame buffer memory each holds, and
//     nvmlDeviceGetMPSComputeRunningProcesses: those with an MPS compute
//     context (nvml.h documents it for MPS clients on Volta and newer; the
//     first call's documentation does not say whether it lists them), merged
//     by PID;
//   - nvmlDeviceGetProcessUtilization(lastSeenTimeStamp): per process that
//     was busy, the SM, memory-controller, encoder and decoder utilization
//     of the driver's samples newer than the previous call's. NOT_FOUND
//     means no new sample: every process was idle since. nvml.h: not
//     supported on MIG-enabled GPUs.
//
// Each PID is placed through /proc/PID/cgroup (internal/cgroup). NVML
// reports PIDs as the host sees them, so the collector must see the host's
// processes (hostPID: true in a pod).

// usedMemoryUnknown is NVML_VALUE_NOT_AVAILABLE in an unsigned long long:
// the driver does not know the process's memory (nvml.h, usedGpuMemory).
const usedMemoryUnknown = math.MaxUint64

// procTable places PIDs in pods and remembers them for one collection
// more, so that the utilization of a process that exited since is its
// own, and a PID reused since is told from its previous holder.
type procTable struct {
	root   string
	logger *zap.Logger
	// bootUS is when the host booted, in µs since the epoch, or 0 if
	// unknown; with a start time it gives when a process started, on the
	// clock of NVML's sample timestamps (CPU time in µs).
	bootUS uint64
	gen    uint64
	byPID  map[uint32]*procEntry
	warned map[string]bool
}

type procEntry struct {
	owner gpu.Owner
	id    cgroup.Identity
	// start is the start time in ticks after boot (0 if the process was
	// never read); startUS the same in µs since the epoch, 0 if unknown.
	start, startUS uint64
	// gen is the collection that last placed it.
	gen uint64
	// prev is the process that held the PID in the previous collection,
	// when another holds it now.
	prev *procEntry
}

func newProcTable(root string, logger *zap.Logger) *procTable {
	t := &procTable{root: root, logger: logger, byPID: map[uint32]*procEntry{}, warned: map[string]bool{}}
	if bt, err := cgroup.BootTime(root); err == nil && bt > 0 {
		t.bootUS = uint64(bt) * 1e6
	} else {
		// Without it a reused PID's earlier samples go to its new holder.
		logger.Warn("Host boot time unreadable; utilization of a reused PID goes to its new process", zap.Error(err))
	}
	return t
}

// begin starts a collection.
func (t *procTable) begin() { t.gen++ }

// end forgets the processes no GPU reported in this collection.
func (t *procTable) end() {
	for pid, e := range t.byPID {
		if e.gen != t.gen {
			delete(t.byPID, pid)
		} else {
			e.prev = nil
		}
	}
}

// place returns who holds pid now, reading /proc once per collection.
func (t *procTable) place(pid uint32) *procEntry {
	old := t.byPID[pid]
	if old != nil && old.gen == t.gen {
		return old
	}
	e := t.read(pid, old)
	e.gen = t.gen
	t.byPID[pid] = e
	return e
}

// read reads pid's start time and cgroup. A process gone since the
// previous collection keeps the place it had then; one that started and
// exited in between has none.
func (t *procTable) read(pid uint32, old *procEntry) *procEntry {
	start, err := cgroup.StartTime(t.root, pid)
	if err != nil {
		if old != nil && errors.Is(err, fs.ErrNotExist) {
			return old
		}
		t.warn("stat", pid, err)
		return &procEntry{owner: gpu.OwnerUnknown}
	}
	id, err := cgroup.Read(t.root, pid)
	if err != nil {
		if old != nil && old.start == start && errors.Is(err, fs.ErrNotExist) {
			return old // exited between the two reads
		}
		t.warn("cgroup", pid, err)
		return &procEntry{owner: gpu.OwnerUnknown, start: start, startUS: t.toUS(start)}
	}
	e := &procEntry{owner: gpu.OwnerOf(id.InPod(), id.Slurm.InJob()), id: id, start: start, startUS: t.toUS(start)}
	if old != nil && old.start != start && old.start != 0 {
		e.prev = old // the PID was reused since the previous collection
	}
	return e
}

func (t *procTable) toUS(ticks uint64) uint64 {
	if t.bootUS == 0 {
		return 0
	}
	return t.bootUS + ticks*(1e6/cgroup.TicksPerSecond)
}

// warn logs the first problem of each kind at warning level and the
// rest at debug: a node with a hundred short-lived processes must not
// repeat the same warning a hundred times a scrape.
func (t *procTable) warn(kind string, pid uint32, err error) {
	msg := "GPU process not attributed to a pod"
	hint := "its cgroup is unreadable or in a form not understood"
	if errors.Is(err, fs.ErrNotExist) {
		hint = fmt.Sprintf("it exited, or %s does not show the host's processes (a pod needs hostPID: true)", t.root)
	}
	if t.warned[kind] {
		t.logger.Debug(msg, zap.Uint32("pid", pid), zap.String("why", hint), zap.Error(err))
		return
	}
	t.warned[kind] = true
	t.logger.Warn(msg+"; further ones are logged at debug level", zap.Uint32("pid", pid), zap.String("why", hint), zap.Error(err))
}

// utilSum accumulates a PID's utilization samples: nvml.h returns one
// sample per busy process, but should a driver return several for one PID
// (several sample periods), their mean is the interval's.
type utilSum struct {
	sm, mem, enc, dec float64
	n                 int
}

func (u *utilSum) add(s *nvml.ProcessUtilizationSample) {
	u.sm += float64(s.SmUtil)
	u.mem += float64(s.MemUtil)
	u.enc += float64(s.EncUtil)
	u.dec += float64(s.DecUtil)
	u.n++
}

func (u *utilSum) into(p *gpu.Process) {
	p.HasUtilization = true
	if u == nil || u.n == 0 {
		return // idle over the interval
	}
	n := float64(u.n)
	p.SMUtil, p.MemUtil, p.EncUtil, p.DecUtil = u.sm/n, u.mem/n, u.enc/n, u.dec/n
}

// readProcesses reads the device's processes into s.Processes. Only a lost
// GPU is an error; any other failure leaves out what it would have read.
func (b *Backend) readProcesses(d *device, s *gpu.Sample) error {
	h := d.h
	mem := map[uint32]uint64{}
	for _, get := range []func() ([]nvml.ProcessInfo, nvml.Return){h.GetComputeRunningProcesses, h.GetMPSComputeRunningProcesses} {
		list, ret := get()
		if lost(ret) {
			return fmt.Errorf("GPU %s: running processes: %v", d.dev.UUID, nvml.ErrorString(ret))
		}
		if ret != nvml.SUCCESS {
			continue // no MPS, or no permission: the other list still counts
		}
		for _, p := range list {
			// A process with both kinds of context is listed twice.
			if m, ok := mem[p.Pid]; !ok || m == usedMemoryUnknown {
				mem[p.Pid] = p.UsedGpuMemory
			}
		}
	}

	samples, ret := h.GetProcessUtilization(d.lastSeen)
	hasUtil := false
	switch {
	case ret == nvml.SUCCESS:
		hasUtil = true
		for i := range samples {
			d.lastSeen = max(d.lastSeen, samples[i].TimeStamp)
		}
	case ret == nvml.ERROR_NOT_FOUND:
		hasUtil = true // nothing new: every process was idle
	case lost(ret):
		return fmt.Errorf("GPU %s: process utilization: %v", d.dev.UUID, nvml.ErrorString(ret))
	default:
		if !d.utilWarned {
			d.utilWarned = true
			b.opts.Logger.Info("Per-process utilization unavailable on this GPU; per-process memory only",
				zap.String("uuid", d.dev.UUID), zap.String("error", nvml.ErrorString(ret)))
		}
	}

	// Utilization by the process it belongs to: a sample taken before a
	// reused PID's new process started is its previous holder's.
	now := map[uint32]*utilSum{}
	before := map[uint32]*utilSum{}
	if ret == nvml.SUCCESS {
		for i := range samples {
			smp := &samples[i]
			e := b.procs.place(smp.Pid)
			into := now
			if e.prev != nil && e.startUS != 0 && smp.TimeStamp < e.startUS {
				into = before
			}
			u := into[smp.Pid]
			if u == nil {
				u = &utilSum{}
				into[smp.Pid] = u
			}
			u.add(smp)
		}
	}

	pids := make([]uint32, 0, len(mem)+len(now))
	for pid := range mem {
		pids = append(pids, pid)
	}
	for pid := range now {
		if _, ok := mem[pid]; !ok {
			pids = append(pids, pid) // busy during the interval, exited since
		}
	}
	slices.Sort(pids)
	out := make([]gpu.Process, 0, len(pids)+len(before))
	for _, pid := range pids {
		e := b.procs.place(pid)
		p := e.process(pid)
		if m, ok := mem[pid]; ok && m != usedMemoryUnknown {
			p.MemoryBytes, p.HasMemory = m, true
		}
		if hasUtil {
			now[pid].into(&p)
		}
		out = append(out, p)
	}
	for _, pid := range sortedKeys(before) {
		p := b.procs.place(pid).prev.process(pid)
		before[pid].into(&p)
		out = append(out, p)
	}
	s.Processes = out
	return nil
}

func (e *procEntry) process(pid uint32) gpu.Process {
	return gpu.Process{PID: pid, Owner: e.owner, PodUID: e.id.PodUID, ContainerID: e.id.ContainerID, Slurm: slurmOf(e.id)}
}

func sortedKeys(m map[uint32]*utilSum) []uint32 {
	keys := make([]uint32, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// slurmOf is the job and step a process's cgroup names. A job named by
// its SLUID only (Slurm 26.05's default cgroup v2 layout) has no job ID
// here: the receiver's mapping files or scontrol name it.
func slurmOf(id cgroup.Identity) gpu.SlurmJob {
	return gpu.SlurmJob{ID: id.Slurm.JobID, Step: id.Slurm.Step}
}
