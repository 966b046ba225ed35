package amdsmibackend

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroup"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Per-process readings (Options.PerProcess). amdsmi_get_gpu_process_list
// lists a device's processes with, for each, the VRAM it holds and the
// time the graphics and encoder engines spent on its work since it opened
// the device, in ns. AMD SMI reads both from the process's DRM fdinfo; the
// utilization of an interval is the growth of that time over the interval's
// length, so a process seen for the first time, a PID now held by another
// process, or a time that went down has none until the next scrape.
//
// The fdinfo engine times count the work the kernel's DRM scheduler
// submits; the user-mode queues of ROCm's compute runtime (HIP) bypass it,
// and AMD SMI then reports 0 ns however busy the process is (ROCm/amdsmi
// issue 130). A process whose engine times have never been above zero is
// therefore given no utilization, rather than a zero that would read as
// idle; its memory still counts.
//
// PIDs are as the host sees them, and placed through /proc/PID/cgroup
// (internal/cgroup), as NVML's are: the collector must see the host's
// processes (hostPID: true in a pod).

// procSeen is what a device remembers of a process from one scrape to
// the next.
type procSeen struct {
	// start is the process's start time (internal/cgroup.StartTime), 0
	// if unknown; another start time under the same PID is another
	// process.
	start    uint64
	owner    gpu.Owner
	id       cgroup.Identity
	gfx, enc uint64
	at       time.Time
	// busy is set once either engine time was above zero.
	busy bool
	gen  uint64
}

// processes turns the device's reading into gpu.Process values, each
// PID's utilization the rate of its engine times since the previous
// scrape.
func (b *Backend) processes(d *device, now time.Time) []gpu.Process {
	list, truncated := d.r.processList(b.procScratch[:0])
	b.procScratch = list
	if truncated {
		b.warnOnce("process-list-truncated", "A GPU has more processes than are read per scrape; the rest are left out of the per-process series",
			zap.String("hw.id", d.dev.UUID), zap.Int("max", maxProcesses))
	}
	slices.SortFunc(list, func(a, b procInfo) int { return cmp.Compare(a.pid, b.pid) })
	if d.seen == nil {
		d.seen = map[uint32]*procSeen{}
	}
	d.gen++
	out := make([]gpu.Process, 0, len(list))
	for _, p := range list {
		e := d.seen[p.pid]
		if e != nil && e.gen == d.gen {
			continue // listed twice
		}
		start, startErr := cgroup.StartTime(b.opts.ProcRoot, p.pid)
		reused := e != nil && start != 0 && e.start != 0 && start != e.start
		if e == nil || reused || e.owner == gpu.OwnerUnknown {
			n := b.place(p.pid, start, startErr)
			if e != nil && !reused {
				// The same process, placed only now: its times compare.
				n.gfx, n.enc, n.at, n.busy = e.gfx, e.enc, e.at, e.busy
			}
			e = n
			d.seen[p.pid] = e
		}
		proc := gpu.Process{PID: p.pid, Owner: e.owner, PodUID: e.id.PodUID, ContainerID: e.id.ContainerID, Slurm: slurmOf(e.id),
			MemoryBytes: p.vram, HasMemory: true}
		e.busy = e.busy || p.gfx > 0 || p.enc > 0
		if dt := now.Sub(e.at); !e.at.IsZero() && dt > 0 && p.gfx >= e.gfx && p.enc >= e.enc && e.busy {
			proc.SMUtil = busyPercent(p.gfx-e.gfx, dt)
			proc.EncUtil = busyPercent(p.enc-e.enc, dt)
			proc.HasUtilization = true
		}
		e.gfx, e.enc, e.at, e.gen = p.gfx, p.enc, now, d.gen
		out = append(out, proc)
	}
	for pid, e := range d.seen {
		if e.gen != d.gen {
			delete(d.seen, pid) // gone: a PID seen again later is a new process
		}
	}
	return out
}

// busyPercent is ns of engine time over an interval, in percent of it. An
// engine time is the sum over the engine's rings, which a process can keep
// busy at once: the whole interval is the most.
func busyPercent(ns uint64, dt time.Duration) float64 {
	return min(100, float64(ns)/float64(dt.Nanoseconds())*100)
}

// place reads whose a process is. A process that could not be placed is
// OwnerUnknown, and tried again at the next scrape.
func (b *Backend) place(pid uint32, start uint64, startErr error) *procSeen {
	e := &procSeen{start: start, owner: gpu.OwnerUnknown}
	if startErr != nil {
		b.placeFailed("stat", pid, startErr)
		return e
	}
	id, err := cgroup.Read(b.opts.ProcRoot, pid)
	if err != nil {
		b.placeFailed("cgroup", pid, err)
		return e
	}
	e.id, e.owner = id, gpu.OwnerOf(id.InPod(), id.Slurm.InJob())
	return e
}

// placeFailed logs the first process of each kind of failure at warning
// level and the others at debug: a node with many short-lived processes
// must not repeat one warning at every scrape.
func (b *Backend) placeFailed(kind string, pid uint32, err error) {
	msg := "GPU process not attributed to a pod"
	why := "its cgroup is unreadable or in a form not understood"
	if errors.Is(err, fs.ErrNotExist) {
		why = fmt.Sprintf("it exited, or %s does not show the host's processes (a pod needs hostPID: true)", b.opts.ProcRoot)
	}
	key := "place/" + kind
	if b.warned[key] {
		b.logger.Debug(msg, zap.Uint32("pid", pid), zap.String("why", why), zap.Error(err))
		return
	}
	b.warned[key] = true
	b.logger.Warn(msg+"; further ones are logged at debug level", zap.Uint32("pid", pid), zap.String("why", why), zap.Error(err))
}

// slurmOf is the job and step a process's cgroup names. A job named by
// its SLUID only (Slurm 26.05's default cgroup v2 layout) has no job ID
// here: the receiver's mapping files or scontrol name it.
func slurmOf(id cgroup.Identity) gpu.SlurmJob {
	return gpu.SlurmJob{ID: id.Slurm.JobID, Step: id.Slurm.Step}
}
