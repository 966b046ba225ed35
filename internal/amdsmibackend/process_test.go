package amdsmibackend_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

const (
	mi300x  = "ccff74a1-0000-1000-80e0-c6d49f5b0d86"
	podUID  = "aaaaaaaa-0000-4000-8000-000000000001"
	scrapeS = 10
)

// fakeProc writes pid into the /proc tree root, started at start ticks
// after boot, in a pod's container if pod is set, else on the host.
func fakeProc(t *testing.T, root string, pid uint32, start uint64, pod string) {
	t.Helper()
	dir := filepath.Join(root, strconv.FormatUint(uint64(pid), 10))
	require.NoError(t, os.MkdirAll(dir, 0o700))
	stat := fmt.Sprintf("%d (python3) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, start)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600))
	cg := "0::/system.slice/sshd.service"
	if pod != "" {
		cg = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(pod, "-", "_") +
			".slice/cri-containerd-" + strings.Repeat("a", 64) + ".scope"
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cg+"\n"), 0o600))
}

// processesAt collects at the k-th scrape, scrapeS seconds apart, and
// returns the MI300X's processes by PID.
func processesAt(t *testing.T, b *amdsmibackend.Backend, k int) (map[uint32]gpu.Process, gpu.Sample) {
	t.Helper()
	samples, err := b.Collect(context.Background(), time.Unix(1767225600+int64(k*scrapeS), 0), scrapeS*time.Second)
	require.NoError(t, err)
	for _, s := range samples {
		if s.Device.UUID == mi300x {
			out := map[uint32]gpu.Process{}
			for _, p := range s.Processes {
				require.NotContains(t, out, p.PID, "each PID once")
				out[p.PID] = p
			}
			return out, s
		}
	}
	t.Fatalf("no sample of %s", mi300x)
	return nil, gpu.Sample{}
}

// procFleet is the fleet with three processes on the MI300X in SPX mode:
// 100 in a pod, busy 4 s of each 10 s scrape on the graphics engine and
// 1 s on the encoder; 101 on the host with no engine time (a ROCm compute
// process as AMD SMI shows it); 102, which is not in /proc.
func procFleet() amdsmistandin.State {
	st := amdsmistandin.Fleet()
	st.Procs = []amdsmistandin.Proc{
		{GPU: 0, PID: 100, VRAMBytes: 8 << 30, GFXNs: 7e9, StepNs: 4e9, EncStepNs: 1e9},
		{GPU: 0, PID: 101, VRAMBytes: 2 << 30},
		{GPU: 0, PID: 102, VRAMBytes: 1 << 20, StepNs: 1e9},
	}
	return st
}

func TestProcessesRateFromEngineTime(t *testing.T) {
	path := withState(t, procFleet())
	root := t.TempDir()
	fakeProc(t, root, 100, 5000, podUID)
	fakeProc(t, root, 101, 5001, "")
	b := connect(t, amdsmibackend.Options{PerProcess: true, ProcRoot: root})

	ps, s := processesAt(t, b, 0)
	require.Len(t, ps, 3)
	p := ps[100]
	require.Equal(t, gpu.OwnerPod, p.Owner)
	require.Equal(t, podUID, p.PodUID)
	require.Equal(t, strings.Repeat("a", 64), p.ContainerID)
	require.True(t, p.HasMemory)
	require.Equal(t, uint64(8<<30), p.MemoryBytes)
	require.False(t, p.HasUtilization, "first sight: no interval to rate over")
	require.Equal(t, gpu.OwnerHost, ps[101].Owner)
	require.Equal(t, gpu.OwnerUnknown, ps[102].Owner, "not in /proc")
	count, ok := s.AMD.Get(gpu.AMDProcesses)
	require.True(t, ok)
	require.Equal(t, 3.0, count)

	ps, _ = processesAt(t, b, 1)
	p = ps[100]
	require.True(t, p.HasUtilization)
	require.InDelta(t, 40, p.SMUtil, 1e-9, "4 s of graphics engine time in 10 s")
	require.InDelta(t, 10, p.EncUtil, 1e-9)
	require.Zero(t, p.MemUtil, "AMD SMI has no per-process memory activity")
	require.False(t, ps[101].HasUtilization, "an engine time never above zero is not a reading of idle")
	require.Equal(t, uint64(2<<30), ps[101].MemoryBytes)
	require.True(t, ps[102].HasUtilization, "unplaced, its own rate still")
	require.InDelta(t, 10, ps[102].SMUtil, 1e-9)

	// PID 100 is now another process (another start time): no rate at
	// its first sight, a rate again after.
	fakeProc(t, root, 100, 9000, podUID)
	ps, _ = processesAt(t, b, 2)
	require.False(t, ps[100].HasUtilization, "a reused PID starts over")
	ps, _ = processesAt(t, b, 3)
	require.InDelta(t, 40, ps[100].SMUtil, 1e-9)

	// Its engine time goes down (the driver's counter restarted): no
	// rate for that interval, not a negative or a wrapped one.
	st := procFleet()
	st.Procs[0].GFXNs = 1e9
	require.NoError(t, st.Write(path))
	ps, _ = processesAt(t, b, 4)
	require.False(t, ps[100].HasUtilization)
	ps, _ = processesAt(t, b, 5)
	require.InDelta(t, 40, ps[100].SMUtil, 1e-9)

	// Gone for a scrape and back: a new sight.
	st.Procs = st.Procs[1:]
	require.NoError(t, st.Write(path))
	ps, _ = processesAt(t, b, 6)
	require.NotContains(t, ps, uint32(100))
	st = procFleet()
	st.Procs[0].GFXNs = 1e9
	require.NoError(t, st.Write(path))
	ps, _ = processesAt(t, b, 7)
	require.False(t, ps[100].HasUtilization, "forgotten while away")
}

func TestProcessesOffReadsTheCountOnly(t *testing.T) {
	withState(t, procFleet())
	b := connect(t, amdsmibackend.Options{})
	ps, s := processesAt(t, b, 0)
	require.Empty(t, ps)
	require.Nil(t, s.Processes)
	count, ok := s.AMD.Get(gpu.AMDProcesses)
	require.True(t, ok)
	require.Equal(t, 3.0, count)
}

func TestProcessListFailureLeavesProcessesOut(t *testing.T) {
	st := procFleet()
	st.Fails = []amdsmistandin.Fail{{Call: "amdsmi_get_gpu_process_list", GPU: 0, Status: 7}}
	withState(t, st)
	core, logs := observer.New(zap.WarnLevel)
	b := connect(t, amdsmibackend.Options{PerProcess: true, ProcRoot: t.TempDir(), Logger: zap.New(core)})
	for k := range 3 {
		_, s := processesAt(t, b, k)
		require.Nil(t, s.Processes, "no processes rather than none")
		require.False(t, s.AMD.Has(gpu.AMDProcesses), "no count rather than zero")
	}
	require.Equal(t, 1, logs.FilterField(zap.String("call", "amdsmi_get_gpu_process_list")).Len())
}

func TestProcessListIsBounded(t *testing.T) {
	st := amdsmistandin.Fleet()
	for pid := range uint32(200) {
		st.Procs = append(st.Procs, amdsmistandin.Proc{GPU: 0, PID: 1000 + pid, VRAMBytes: 1 << 20})
	}
	withState(t, st)
	core, logs := observer.New(zap.WarnLevel)
	b := connect(t, amdsmibackend.Options{PerProcess: true, ProcRoot: t.TempDir(), Logger: zap.New(core)})
	for k := range 2 {
		ps, s := processesAt(t, b, k)
		require.Len(t, ps, 128)
		count, _ := s.AMD.Get(gpu.AMDProcesses)
		require.Equal(t, 200.0, count, "the count is the library's total")
	}
	require.Equal(t, 1, logs.FilterMessageSnippet("more processes than are read").Len())
}
