package cgroupstat

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const (
	uidA = "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c" // burstable, limited
	uidB = "8d1e4c2b-3a5f-4e6d-8c7b-9a0b1c2d3e4f" // besteffort, unlimited
	uidC = "5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d" // guaranteed
	cid  = "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
)

// tree writes files (path relative to root -> content) under root.
func tree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

func slice(uid string) string { return strings.ReplaceAll(uid, "-", "_") }

// v2Pod is a pod directory's files under cgroup v2.
func v2Pod(dir, cpuMax, memMax string) map[string]string {
	return map[string]string{
		dir + "/cpu.stat":        "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 100\nnr_throttled 7\nthrottled_usec 350000\n",
		dir + "/cpu.max":         cpuMax + "\n",
		dir + "/memory.current":  "104857600\n",
		dir + "/memory.max":      memMax + "\n",
		dir + "/cpu.pressure":    "some avg10=0.00 avg60=0.00 avg300=0.00 total=1500\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n",
		dir + "/memory.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=20\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=10\n",
		dir + "/io.pressure":     "some avg10=0.00 avg60=0.00 avg300=0.00 total=300\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=200\n",
		// A container below the pod: never read as a pod.
		dir + "/cri-containerd-" + cid + ".scope/cpu.stat": "usage_usec 1\n",
	}
}

// v1Pod is a pod directory's files under the v1 cpu, cpuacct and memory
// hierarchies (rel is the path below each hierarchy's root).
func v1Pod(rel, quota, memLimit string) map[string]string {
	return map[string]string{
		"cpu/" + rel + "/cpu.stat":                 "nr_periods 100\nnr_throttled 7\nthrottled_time 350000000\n",
		"cpu/" + rel + "/cpu.cfs_quota_us":         quota + "\n",
		"cpu/" + rel + "/cpu.cfs_period_us":        "100000\n",
		"cpuacct/" + rel + "/cpuacct.usage":        "2500000000\n",
		"memory/" + rel + "/memory.usage_in_bytes": "104857600\n",
		"memory/" + rel + "/memory.limit_in_bytes": memLimit + "\n",
		"cpu/" + rel + "/" + cid + "/cpu.stat":     "nr_periods 1\nnr_throttled 0\nthrottled_time 0\n",
	}
}

func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// readAll finds the pods under root and reads each, keyed by UID.
func readAll(t *testing.T, root string, want Layout) map[string]Stats {
	t.Helper()
	r, err := New(root)
	require.NoError(t, err)
	require.Equal(t, want, r.Layout())
	pods, err := r.Pods(nil)
	require.NoError(t, err)
	out := map[string]Stats{}
	for _, p := range pods {
		var s Stats
		require.NoError(t, r.ReadPod(p, &s), "pod %s", p.UID)
		out[p.UID] = s
	}
	return out
}

var (
	wantCPU = CPUStat{
		Usage: 2500 * time.Millisecond, HasUsage: true,
		Periods: 100, ThrottledPeriods: 7, Throttled: 350 * time.Millisecond, HasThrottling: true,
	}
	wantPSI = [3]PSI{
		{Stall{1500 * time.Microsecond, true}, Stall{1000 * time.Microsecond, true}},
		{Stall{20 * time.Microsecond, true}, Stall{10 * time.Microsecond, true}},
		{Stall{300 * time.Microsecond, true}, Stall{200 * time.Microsecond, true}},
	}
)

func checkLimited(t *testing.T, s Stats, psi bool) {
	t.Helper()
	require.Equal(t, wantCPU, s.CPU)
	require.Equal(t, CPULimit{CPUs: 0.5, Has: true}, s.Limit)
	require.Equal(t, Memory{Usage: 100 << 20, HasUsage: true, Limit: 1 << 30, HasLimit: true}, s.Memory)
	if psi {
		require.Equal(t, wantPSI, [3]PSI{s.CPUPressure, s.MemoryPressure, s.IOPressure})
	} else {
		require.Equal(t, [3]PSI{}, [3]PSI{s.CPUPressure, s.MemoryPressure, s.IOPressure}, "v1 has no PSI")
	}
}

func checkUnlimited(t *testing.T, s Stats) {
	t.Helper()
	require.False(t, s.Limit.Has, "no CPU limit must be reported as none")
	require.True(t, s.Memory.HasUsage)
	require.False(t, s.Memory.HasLimit, "no memory limit must be reported as none")
}

func TestV2Systemd(t *testing.T) {
	root := t.TempDir()
	k := "kubepods.slice/"
	tree(t, root, merge(
		map[string]string{"cgroup.controllers": "cpu memory io\n", "system.slice/cron.service/cpu.stat": "usage_usec 1\n"},
		v2Pod(k+"kubepods-burstable.slice/kubepods-burstable-pod"+slice(uidA)+".slice", "50000 100000", "1073741824"),
		v2Pod(k+"kubepods-besteffort.slice/kubepods-besteffort-pod"+slice(uidB)+".slice", "max 100000", "max"),
		v2Pod(k+"kubepods-pod"+slice(uidC)+".slice", "50000 100000", "1073741824"),
	))
	got := readAll(t, root, V2)
	require.Len(t, got, 3)
	checkLimited(t, got[uidA], true)
	checkUnlimited(t, got[uidB])
	checkLimited(t, got[uidC], true)
}

func TestV2Cgroupfs(t *testing.T) {
	root := t.TempDir()
	tree(t, root, merge(
		map[string]string{"cgroup.controllers": "cpu memory io\n"},
		v2Pod("kubepods/burstable/pod"+uidA, "50000 100000", "1073741824"),
		v2Pod("kubepods/besteffort/pod"+uidB, "max 100000", "max"),
		v2Pod("kubepods/pod"+uidC, "50000 100000", "1073741824"),
	))
	got := readAll(t, root, V2)
	require.Len(t, got, 3)
	checkLimited(t, got[uidA], true)
	checkUnlimited(t, got[uidB])
	checkLimited(t, got[uidC], true)
}

// The v1 kernel's "unlimited" memory limit, with 4 KiB pages.
const v1NoLimit = "9223372036854771712"

func TestV1Cgroupfs(t *testing.T) {
	root := t.TempDir()
	tree(t, root, merge(
		v1Pod("kubepods/burstable/pod"+uidA, "50000", "1073741824"),
		v1Pod("kubepods/besteffort/pod"+uidB, "-1", v1NoLimit),
		v1Pod("kubepods/pod"+uidC, "50000", "1073741824"),
	))
	got := readAll(t, root, V1)
	require.Len(t, got, 3)
	checkLimited(t, got[uidA], false)
	checkUnlimited(t, got[uidB])
	checkLimited(t, got[uidC], false)
}

// TestV1SystemdCombined: cpu and cpuacct mounted together, as most
// distributions do, with cpu and cpuacct symbolic links to cpu,cpuacct.
func TestV1SystemdCombined(t *testing.T) {
	root := t.TempDir()
	rel := "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + slice(uidA) + ".slice"
	files := v1Pod(rel, "50000", "1073741824")
	combined := map[string]string{}
	for k, v := range files {
		k = strings.Replace(k, "cpuacct/", "cpu,cpuacct/", 1)
		k = strings.Replace(k, "cpu/", "cpu,cpuacct/", 1)
		combined[k] = v
	}
	tree(t, root, combined)
	require.NoError(t, os.Symlink("cpu,cpuacct", filepath.Join(root, "cpu")))
	require.NoError(t, os.Symlink("cpu,cpuacct", filepath.Join(root, "cpuacct")))
	r, err := New(root)
	require.NoError(t, err)
	pods, err := r.Pods(nil)
	require.NoError(t, err)
	require.Len(t, pods, 1)
	require.Equal(t, pods[0].CPU, pods[0].CPUAcct, "one hierarchy walked once")
	var s Stats
	require.NoError(t, r.ReadPod(pods[0], &s))
	checkLimited(t, s, false)
}

// TestHybrid: v1 controllers, PSI from the pod's directory in unified/.
func TestHybrid(t *testing.T) {
	root := t.TempDir()
	rel := "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + slice(uidA) + ".slice"
	unified := v2Pod("unified/"+rel, "", "")
	for _, f := range []string{"cpu.stat", "cpu.max", "memory.current", "memory.max"} {
		delete(unified, "unified/"+rel+"/"+f) // no controllers in unified/
	}
	tree(t, root, merge(
		map[string]string{"unified/cgroup.controllers": ""},
		unified,
		v1Pod(rel, "50000", "1073741824"),
		// Only in v1: a pod the unified hierarchy does not have.
		v1Pod("kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod"+slice(uidB)+".slice", "-1", v1NoLimit),
	))
	got := readAll(t, root, Hybrid)
	require.Len(t, got, 2)
	checkLimited(t, got[uidA], true)
	checkUnlimited(t, got[uidB])
	require.Equal(t, PSI{}, got[uidB].CPUPressure)
}

// TestKind: kind's kubelet root kubelet.slice/kubelet-kubepods.slice.
func TestKind(t *testing.T) {
	root := t.TempDir()
	tree(t, root, merge(
		map[string]string{"cgroup.controllers": ""},
		v2Pod("kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod"+slice(uidA)+".slice", "50000 100000", "1073741824"),
	))
	got := readAll(t, root, V2)
	checkLimited(t, got[uidA], true)
}

func TestNoCgroups(t *testing.T) {
	_, err := New(t.TempDir())
	require.ErrorContains(t, err, "neither a cgroup2 root")
}

// TestGone: a pod deleted between Pods and ReadPod is ErrGone, which a
// scraper skips quietly.
func TestGone(t *testing.T) {
	root := t.TempDir()
	dir := "kubepods/pod" + uidA
	tree(t, root, merge(map[string]string{"cgroup.controllers": ""}, v2Pod(dir, "max 100000", "max")))
	r, err := New(root)
	require.NoError(t, err)
	pods, err := r.Pods(nil)
	require.NoError(t, err)
	require.NoError(t, os.RemoveAll(filepath.Join(root, dir)))
	var s Stats
	err = r.ReadPod(pods[0], &s)
	require.ErrorIs(t, err, ErrGone)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// TestMissingFiles: a pod whose directory holds no files (controllers
// not delegated) reports nothing, and is not gone.
func TestMissingFiles(t *testing.T) {
	dir := t.TempDir()
	var s Stats
	require.NoError(t, (&Reader{}).ReadPod(Pod{UID: uidA, Unified: dir}, &s))
	require.Equal(t, Stats{}, s)
}

// TestMalformed: a malformed file is an error naming the file and line;
// the pod's other figures are still read.
func TestMalformed(t *testing.T) {
	for file, tc := range map[string]struct{ content, want string }{
		"cpu.stat":       {"usage_usec 1\nnr_periods x\n", "cpu.stat:2: "},
		"cpu.max":        {"10000\n", "cpu.max:1: "},
		"memory.max":     {"lots\n", "memory.max:1: "},
		"io.pressure":    {"some avg10=0.00\n", "io.pressure:1: no total="},
		"memory.current": {"", "memory.current:1: "},
	} {
		t.Run(file, func(t *testing.T) {
			dir := t.TempDir()
			tree(t, dir, v2Pod(".", "50000 100000", "1073741824"))
			tree(t, dir, map[string]string{file: tc.content})
			var s Stats
			err := (&Reader{}).ReadPod(Pod{UID: uidA, Unified: dir}, &s)
			require.ErrorContains(t, err, filepath.Join(dir, tc.want))
			require.NotErrorIs(t, err, ErrGone)
			require.True(t, s.CPUPressure.Some.Has, "the other files still read")
		})
	}
}

// TestBadPodName: a kubelet-shaped directory without a UID is reported
// and skipped; the other pods are found.
func TestBadPodName(t *testing.T) {
	root := t.TempDir()
	tree(t, root, merge(
		map[string]string{"cgroup.controllers": "", "kubepods/burstable/podnot-a-uid/cpu.stat": ""},
		v2Pod("kubepods/burstable/pod"+uidA, "50000 100000", "1073741824"),
	))
	r, err := New(root)
	require.NoError(t, err)
	pods, err := r.Pods(nil)
	require.ErrorContains(t, err, `"not-a-uid" is not a pod UID`)
	require.Len(t, pods, 1)
	require.Equal(t, uidA, pods[0].UID)
}

func TestNodePressure(t *testing.T) {
	proc := t.TempDir()
	tree(t, proc, map[string]string{
		"pressure/cpu":    "some avg10=1.00 avg60=0.50 avg300=0.10 total=5386099879\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"pressure/memory": "some avg10=0.00 avg60=0.00 avg300=0.00 total=7\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=3\n",
	})
	var np NodePressure
	require.NoError(t, (&Reader{}).ReadNodePressure(proc, &np))
	require.Equal(t, Stall{5386099879 * time.Microsecond, true}, np.CPU.Some)
	require.Equal(t, Stall{0, true}, np.CPU.Full, "zero, and reported")
	require.Equal(t, Stall{7 * time.Microsecond, true}, np.Memory.Some)
	require.Equal(t, PSI{}, np.IO, "no io file: not reported")

	// A kernel without PSI: nothing reported, no error.
	require.NoError(t, (&Reader{}).ReadNodePressure(t.TempDir(), &np))
	require.Equal(t, NodePressure{}, np)
}

// TestPodsReusesSlice: Pods appends, so a scraper reuses one slice.
func TestPodsReusesSlice(t *testing.T) {
	root := t.TempDir()
	tree(t, root, merge(map[string]string{"cgroup.controllers": ""}, v2Pod("kubepods/pod"+uidA, "max 1", "max")))
	r, err := New(root)
	require.NoError(t, err)
	buf := make([]Pod, 0, 8)
	for range 3 {
		pods, err := r.Pods(buf[:0])
		require.NoError(t, err)
		require.Len(t, pods, 1)
	}
	allocs := testing.AllocsPerRun(10, func() {
		var s Stats
		_ = r.ReadPod(Pod{UID: uidA, Unified: filepath.Join(root, "kubepods/pod"+uidA)}, &s)
	})
	t.Logf("ReadPod: %.0f allocations", allocs)
}
