package nvmlbackend

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

const (
	podA = "aaaaaaaa-1111-4111-8111-aaaaaaaaaaaa"
	podB = "bbbbbbbb-2222-4222-8222-bbbbbbbbbbbb"
	// btime of the fake host: a process's start time in ticks is
	// btime + ticks/100 s.
	btime = 1_767_225_000
)

var (
	ctrA = strings.Repeat("a1", 32)
	ctrB = strings.Repeat("b2", 32)
)

// fakeProc is a /proc tree: /proc/stat with btime, and per PID a stat
// file (its start time) and a cgroup file.
type fakeProc struct {
	t    *testing.T
	root string
}

func newFakeProc(t *testing.T) *fakeProc {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "stat"), fmt.Appendf(nil, "cpu 1 2 3\nbtime %d\n", btime), 0o600))
	return &fakeProc{t: t, root: root}
}

// run puts pid in the tree, started start ticks after boot, in the
// container ctr of pod (a systemd-driver path), or on the host if pod is
// empty.
func (p *fakeProc) run(pid uint32, start uint64, pod, ctr string) {
	p.t.Helper()
	dir := filepath.Join(p.root, strconv.FormatUint(uint64(pid), 10))
	require.NoError(p.t, os.MkdirAll(dir, 0o700))
	stat := fmt.Sprintf("%d (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, start)
	require.NoError(p.t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600))
	line := "0::/system.slice/cron.service"
	if pod != "" {
		line = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
			strings.ReplaceAll(pod, "-", "_") + ".slice/cri-containerd-" + ctr + ".scope"
	}
	require.NoError(p.t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(line+"\n"), 0o600))
}

func (p *fakeProc) exit(pid uint32) {
	p.t.Helper()
	require.NoError(p.t, os.RemoveAll(filepath.Join(p.root, strconv.FormatUint(uint64(pid), 10))))
}

// startUS is when a process started start ticks after boot, on NVML's
// sample clock.
func startUS(start uint64) uint64 { return btime*1e6 + start*10_000 }

// gpu0 answers device 0's per-process calls from the test's variables,
// and records the lastSeenTimeStamp of each utilization call.
type gpu0 struct {
	running, mps []nvml.ProcessInfo
	util         []nvml.ProcessUtilizationSample
	utilRet      nvml.Return
	lastSeen     []uint64
}

func (g *gpu0) install(d *dgxa100.Device) {
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return g.running, nvml.SUCCESS }
	d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return g.mps, nvml.SUCCESS }
	d.GetProcessUtilizationFunc = func(last uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		g.lastSeen = append(g.lastSeen, last)
		var out []nvml.ProcessUtilizationSample
		for _, s := range g.util {
			if s.TimeStamp > last {
				out = append(out, s)
			}
		}
		if g.utilRet != nvml.SUCCESS {
			return nil, g.utilRet
		}
		if len(out) == 0 {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return out, nvml.SUCCESS
	}
}

func newProcBackend(t *testing.T, srv *dgxa100.Server, root string) (*Backend, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	b := New(Options{Lib: srv, PerProcess: true, ProcRoot: root, Logger: zap.New(core)})
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b, logs
}

func collect(t *testing.T, b *Backend, sec int64) []gpu.Sample {
	t.Helper()
	samples, err := b.Collect(context.Background(), time.Unix(sec, 0), time.Second)
	require.NoError(t, err)
	return samples
}

// TestNVMLProcesses: the processes of a GPU, from both lists, placed in
// their pods or on the host, with their memory and the utilization of the
// samples since the previous collection; then NOT_FOUND, nothing new: the
// same processes, idle.
func TestNVMLProcesses(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	proc.run(200, 600, "", "")
	proc.run(300, 700, podB, ctrB)
	g := &gpu0{
		running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 8 << 30}, {Pid: 200, UsedGpuMemory: 512 << 20}},
		// An MPS client, listed only by the MPS call, and 100 again.
		mps: []nvml.ProcessInfo{{Pid: 300, UsedGpuMemory: 2 << 30}, {Pid: 100, UsedGpuMemory: 8 << 30}},
		util: []nvml.ProcessUtilizationSample{
			{Pid: 100, TimeStamp: startUS(800), SmUtil: 60, MemUtil: 30, EncUtil: 0, DecUtil: 5},
			{Pid: 300, TimeStamp: startUS(900), SmUtil: 20, MemUtil: 10},
		},
	}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, _ := newProcBackend(t, srv, proc.root)

	samples := collect(t, b, 100)
	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, MemoryBytes: 8 << 30, HasMemory: true,
			SMUtil: 60, MemUtil: 30, DecUtil: 5, HasUtilization: true},
		{PID: 200, Owner: gpu.OwnerHost, MemoryBytes: 512 << 20, HasMemory: true, HasUtilization: true},
		{PID: 300, Owner: gpu.OwnerPod, PodUID: podB, ContainerID: ctrB, MemoryBytes: 2 << 30, HasMemory: true,
			SMUtil: 20, MemUtil: 10, HasUtilization: true},
	}, samples[0].Processes)
	require.Empty(t, samples[1].Processes, "no process on GPU 1")
	require.NotNil(t, samples[1].Processes, "but read: an empty list, not nil")

	// Nothing new since: NOT_FOUND, every process idle.
	samples = collect(t, b, 110)
	require.Equal(t, []uint64{0, startUS(900)}, g.lastSeen, "the second call asks for samples after the newest seen")
	for _, p := range samples[0].Processes {
		require.Truef(t, p.HasUtilization, "pid %d", p.PID)
		require.Zerof(t, p.SMUtil+p.MemUtil+p.EncUtil+p.DecUtil, "pid %d", p.PID)
		require.Truef(t, p.HasMemory, "pid %d", p.PID)
	}
	require.Len(t, samples[0].Processes, 3)
}

// TestNVMLProcessExited: a process that exits between two collections
// keeps the pod it had: its utilization since the previous collection is
// reported as its own, without memory; the collection after forgets it.
func TestNVMLProcessExited(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	proc.run(101, 510, podB, ctrB)
	g := &gpu0{running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 1 << 30}, {Pid: 101, UsedGpuMemory: 3 << 30}}}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, _ := newProcBackend(t, srv, proc.root)
	require.Len(t, collect(t, b, 100)[0].Processes, 2)

	// 101 worked, then exited: it is gone from /proc and from the running
	// list, but its last samples are in the utilization buffer.
	proc.exit(101)
	g.running = g.running[:1]
	g.util = []nvml.ProcessUtilizationSample{
		{Pid: 100, TimeStamp: startUS(1000), SmUtil: 10},
		{Pid: 101, TimeStamp: startUS(1001), SmUtil: 70, MemUtil: 40},
	}
	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, MemoryBytes: 1 << 30, HasMemory: true, SMUtil: 10, HasUtilization: true},
		{PID: 101, Owner: gpu.OwnerPod, PodUID: podB, ContainerID: ctrB, SMUtil: 70, MemUtil: 40, HasUtilization: true},
	}, collect(t, b, 110)[0].Processes)

	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, MemoryBytes: 1 << 30, HasMemory: true, HasUtilization: true},
	}, collect(t, b, 120)[0].Processes)
	require.NotContains(t, b.procs.byPID, uint32(101), "forgotten once no GPU reports it")
}

// TestNVMLProcessPIDReuse: between two collections a PID's process exits
// and a new one, in another pod, gets the PID. The new start time tells
// them apart: samples taken before the new process started are the old
// one's (its pod, no memory), the rest and the memory the new one's. A
// process whose cgroup changed with the same start time (moved) is placed
// anew.
func TestNVMLProcessPIDReuse(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	g := &gpu0{running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 1 << 30}}}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, _ := newProcBackend(t, srv, proc.root)
	require.Equal(t, podA, collect(t, b, 100)[0].Processes[0].PodUID)

	proc.run(100, 900, podB, ctrB)
	g.running = []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 5 << 30}}
	g.util = []nvml.ProcessUtilizationSample{
		{Pid: 100, TimeStamp: startUS(850), SmUtil: 40}, // the old process, before it exited
		{Pid: 100, TimeStamp: startUS(950), SmUtil: 90}, // the new one
	}
	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerPod, PodUID: podB, ContainerID: ctrB, MemoryBytes: 5 << 30, HasMemory: true, SMUtil: 90, HasUtilization: true},
		{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, SMUtil: 40, HasUtilization: true},
	}, collect(t, b, 110)[0].Processes)

	// Same start time, another cgroup: the same process, moved.
	proc.run(100, 900, "", "")
	p := collect(t, b, 120)[0].Processes
	require.Len(t, p, 1)
	require.Equal(t, gpu.OwnerHost, p[0].Owner)
	require.Empty(t, p[0].PodUID)
}

// TestNVMLProcessUnplaced: a PID that is not in the /proc tree (the
// collector without hostPID, or a process gone before it was ever read)
// and one whose cgroup is in a form not understood are owned by no one
// known; each kind of problem is warned about once.
func TestNVMLProcessUnplaced(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	require.NoError(t, os.WriteFile(filepath.Join(proc.root, "100", "cgroup"), []byte("0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"+strings.ReplaceAll(podA, "-", "_")+".slice/kata-"+ctrA+".scope\n"), 0o600))
	g := &gpu0{running: []nvml.ProcessInfo{
		{Pid: 100, UsedGpuMemory: 1 << 30},
		{Pid: 4001, UsedGpuMemory: usedMemoryUnknown},
		{Pid: 4002, UsedGpuMemory: 2 << 30},
	}}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, logs := newProcBackend(t, srv, proc.root)
	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerUnknown, MemoryBytes: 1 << 30, HasMemory: true, HasUtilization: true},
		{PID: 4001, Owner: gpu.OwnerUnknown, HasUtilization: true},
		{PID: 4002, Owner: gpu.OwnerUnknown, MemoryBytes: 2 << 30, HasMemory: true, HasUtilization: true},
	}, collect(t, b, 100)[0].Processes, "NVML's 'not available' memory is no reading")

	warns := logs.FilterLevelExact(zapcore.WarnLevel).FilterMessageSnippet("GPU process not attributed").All()
	require.Len(t, warns, 2, "one per kind: the unreadable cgroup, the missing PID")
	var whys []string
	for _, w := range warns {
		whys = append(whys, w.ContextMap()["why"].(string)+" / "+w.ContextMap()["error"].(string))
	}
	require.Contains(t, strings.Join(whys, "\n"), "hostPID: true")
	require.Contains(t, strings.Join(whys, "\n"), filepath.Join(proc.root, "100", "cgroup")+":1:")
	require.Equal(t, 1, logs.FilterMessageSnippet("GPU process not attributed").FilterLevelExact(zapcore.DebugLevel).Len(), "the second missing PID at debug level")
}

// TestNVMLProcessUtilizationUnsupported: a GPU without per-process
// utilization (a MIG-enabled GPU, per nvml.h) reports memory only, and
// says so once.
func TestNVMLProcessUtilizationUnsupported(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	g := &gpu0{running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 1 << 30}}, utilRet: nvml.ERROR_NOT_SUPPORTED}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, logs := newProcBackend(t, srv, proc.root)
	for sec := range int64(2) {
		p := collect(t, b, 100+sec)[0].Processes
		require.Equal(t, []gpu.Process{{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, MemoryBytes: 1 << 30, HasMemory: true}}, p)
	}
	require.Equal(t, 1, logs.FilterMessageSnippet("Per-process utilization unavailable").Len())
}

// TestNVMLProcessGPULost: a GPU lost in a per-process call is lost, as in
// any other read; a refused call (no permission) is not.
func TestNVMLProcessGPULost(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	d := srv.Devices[3].(*dgxa100.Device)
	d.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
	b, _ := newProcBackend(t, srv, proc.root)
	collect(t, b, 100)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
	_, err := b.Collect(context.Background(), time.Unix(110, 0), time.Second)
	require.ErrorContains(t, err, d.UUID)
	require.ErrorContains(t, err, "running processes")
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }
	_, err = b.Collect(context.Background(), time.Unix(120, 0), time.Second)
	require.ErrorContains(t, err, "process utilization")
}

// TestNVMLProcessesOff: without per_process no per-process call is made
// and samples carry no processes.
func TestNVMLProcessesOff(t *testing.T) {
	srv := nvmlmock.New()
	for _, dev := range srv.Devices {
		d := dev.(*dgxa100.Device)
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { panic("per-process read with per_process off") }
		d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			panic("per-process read with per_process off")
		}
	}
	b := New(Options{Lib: srv})
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	for _, s := range collect(t, b, 100) {
		require.Nil(t, s.Processes)
	}
}

// TestNVMLProcessMean: should a driver return several samples for one PID
// (several sample periods), the process's utilization is their mean.
func TestNVMLProcessMean(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, podA, ctrA)
	g := &gpu0{
		running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: math.MaxUint64}},
		util: []nvml.ProcessUtilizationSample{
			{Pid: 100, TimeStamp: startUS(600), SmUtil: 20, EncUtil: 10},
			{Pid: 100, TimeStamp: startUS(700), SmUtil: 60, EncUtil: 30},
		},
	}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, _ := newProcBackend(t, srv, proc.root)
	p := collect(t, b, 100)[0].Processes
	require.Equal(t, []gpu.Process{{PID: 100, Owner: gpu.OwnerPod, PodUID: podA, ContainerID: ctrA, SMUtil: 40, EncUtil: 20, HasUtilization: true}}, p)
}
