package cgroupstat

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// TestRealKernel makes a pod-shaped cgroup under the real hierarchy, caps
// it at 0.1 CPU, runs a busy loop in it and checks that the package finds
// the pod with its UID and reads the kernel's throttling. It needs root
// and a writable cgroup v1 cpu hierarchy (CI's machine mounts v1
// controllers plus unified/).
func TestRealKernel(t *testing.T) {
	const root = "/sys/fs/cgroup"
	if os.Geteuid() != 0 {
		sharedtest.Need(t, "root to make cgroups under %s (euid %d)", root, os.Geteuid())
	}
	r, err := New(root)
	if err != nil {
		sharedtest.Need(t, "no cgroup hierarchy: %v", err)
	}
	if r.Layout() == V2 || r.cpu == "" {
		sharedtest.Need(t, "%s is %v without a v1 cpu hierarchy; this test drives v1's cpu.cfs_quota_us", root, r.Layout())
	}

	uid := randomUID(t)
	rel := filepath.Join("kubepods", "burstable", "pod"+uid)
	hiers := []string{r.cpu, r.cpuacct, r.memory, r.unified}
	if r.cpuacct == r.cpu {
		hiers[1] = "" // the combined cpu,cpuacct hierarchy
	}
	var dirs []string // the pod's directory in each hierarchy made
	for _, h := range hiers {
		if h == "" {
			continue
		}
		d := filepath.Join(h, rel)
		if err := mkdirs(t, h, rel); err != nil {
			if h == r.unified {
				t.Logf("no pod directory in %s (%v): pressure not checked", h, err)
				continue
			}
			sharedtest.Need(t, "hierarchy %s not writable: %v", h, err)
		}
		dirs = append(dirs, d)
	}
	cpuDir := filepath.Join(r.cpu, rel)
	write(t, filepath.Join(cpuDir, "cpu.cfs_period_us"), "100000")
	write(t, filepath.Join(cpuDir, "cpu.cfs_quota_us"), "10000")

	busy := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(t, busy.Start())
	t.Cleanup(func() {
		_ = busy.Process.Kill()
		_ = busy.Wait()
	})
	for _, d := range dirs {
		write(t, filepath.Join(d, "cgroup.procs"), strconv.Itoa(busy.Process.Pid))
	}
	time.Sleep(1500 * time.Millisecond)

	pods, err := r.Pods(nil)
	require.NoError(t, err)
	var pod *Pod
	for i := range pods {
		if pods[i].UID == uid {
			pod = &pods[i]
		}
	}
	require.NotNil(t, pod, "pod %s not found among %d", uid, len(pods))
	var s Stats
	require.NoError(t, r.ReadPod(*pod, &s))
	t.Logf("pod %s: limit %.3f CPU, usage %v, periods %d, throttled %d for %v, memory %d B (limit reported %v), cpu pressure some %v",
		uid, s.Limit.CPUs, s.CPU.Usage, s.CPU.Periods, s.CPU.ThrottledPeriods, s.CPU.Throttled, s.Memory.Usage, s.Memory.HasLimit, s.CPUPressure.Some)
	require.True(t, s.Limit.Has)
	require.InDelta(t, 0.1, s.Limit.CPUs, 1e-9)
	require.True(t, s.CPU.HasThrottling)
	require.Positive(t, s.CPU.ThrottledPeriods)
	require.Positive(t, s.CPU.Throttled)
	if r.cpuacct != "" {
		require.True(t, s.CPU.HasUsage)
		require.Positive(t, s.CPU.Usage)
		// 0.1 CPU for ~1.5 s is ~0.15 s; a wide margin for a loaded host.
		require.Less(t, s.CPU.Usage, time.Second, "the quota held the loop")
	}
	if r.memory != "" {
		require.True(t, s.Memory.HasUsage)
		require.False(t, s.Memory.HasLimit, "no memory limit was set")
	}
	if pod.Unified != "" {
		require.True(t, s.CPUPressure.Some.Has, "PSI from unified/")
	}
}

// TestRealNodePressure reads the running kernel's /proc/pressure.
func TestRealNodePressure(t *testing.T) {
	if _, err := os.Stat("/proc/pressure/cpu"); err != nil {
		sharedtest.Need(t, "a kernel with PSI (not built without CONFIG_PSI, not booted with psi=0): %v", err)
	}
	var np NodePressure
	require.NoError(t, (&Reader{}).ReadNodePressure("/proc", &np))
	t.Logf("node pressure: cpu %+v memory %+v io %+v", np.CPU, np.Memory, np.IO)
	require.True(t, np.CPU.Some.Has)
	require.True(t, np.Memory.Some.Has && np.Memory.Full.Has)
	require.True(t, np.IO.Some.Has && np.IO.Full.Has)
}

// mkdirs makes rel under h one level at a time, removing in t.Cleanup
// (deepest first, as rmdir on cgroupfs requires) only what it made: on a
// real node kubepods/ already exists and is not the test's to remove.
func mkdirs(t *testing.T, h, rel string) error {
	d := h
	for _, part := range splitPath(rel) {
		d = filepath.Join(d, part)
		err := os.Mkdir(d, 0o750)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		made := d
		t.Cleanup(func() { rmdir(t, made) })
	}
	return nil
}

func splitPath(p string) []string {
	var parts []string
	for p != "." && p != "/" && p != "" {
		parts = append([]string{filepath.Base(p)}, parts...)
		p = filepath.Dir(p)
	}
	return parts
}

// rmdir removes a cgroup, retrying while the killed loop is still being
// accounted out of it (EBUSY).
func rmdir(t *testing.T, d string) {
	var err error
	for range 50 {
		if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("cleanup: %v", err)
}

func write(t *testing.T, name, v string) {
	t.Helper()
	require.NoError(t, os.WriteFile(name, []byte(v), 0o644))
}

func randomUID(t *testing.T) string {
	var b [16]byte
	_, err := rand.Read(b[:])
	require.NoError(t, err)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
