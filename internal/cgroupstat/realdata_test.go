package cgroupstat

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// realDir returns a fixture directory of the shared real data (read in
// place: the opsschool files' licence is not confirmed).
func realDir(t *testing.T, name string) string {
	t.Helper()
	return filepath.Join(sharedtest.Path(t, "realdata/node/cgroup"), name)
}

// TestRealV2PodCPULimited: coroot's Kubernetes container at 0.1 CPU.
func TestRealV2PodCPULimited(t *testing.T) {
	dir := realDir(t, "coroot_v2_k8s_pod_cpu_limited")
	var s Stats
	require.NoError(t, (&Reader{}).ReadPod(Pod{UID: "8712f785-1a3e-41ec-a00b-e2dcc77431cb", Unified: dir}, &s))
	require.Equal(t, CPULimit{CPUs: 0.1, Has: true}, s.Limit)
	require.Equal(t, CPUStat{
		Usage: 3795681254 * time.Microsecond, HasUsage: true,
		Periods: 809036, ThrottledPeriods: 76, Throttled: 363166 * time.Microsecond, HasThrottling: true,
	}, s.CPU)
	require.InDelta(t, 0.363166, s.CPU.Throttled.Seconds(), 1e-9)
	require.Equal(t, Memory{Usage: 48648192, HasUsage: true}, s.Memory, "memory.max is max: no limit")
	require.Equal(t, PSI{Stall{465907442 * time.Microsecond, true}, Stall{463529433 * time.Microsecond, true}}, s.CPUPressure)
	require.Equal(t, PSI{Stall{6937313991 * time.Microsecond, true}, Stall{6934649214 * time.Microsecond, true}}, s.MemoryPressure)
	require.Equal(t, PSI{Stall{17657662684 * time.Microsecond, true}, Stall{17636951020 * time.Microsecond, true}}, s.IOPressure)
}

// TestRealV1DockerThrottled: coroot's v1 container at 1.5 CPU, with v1's
// nanosecond throttled_time.
func TestRealV1DockerThrottled(t *testing.T) {
	dir := realDir(t, "coroot_v1_docker_cpu_throttled")
	var s Stats
	require.NoError(t, (&Reader{}).ReadPod(Pod{UID: "x", CPU: dir, CPUAcct: dir}, &s))
	require.Equal(t, CPULimit{CPUs: 1.5, Has: true}, s.Limit)
	require.Equal(t, CPUStat{
		Periods: 380975143, ThrottledPeriods: 5583849, Throttled: 254005032764376, HasThrottling: true,
	}, s.CPU, "no cpuacct.usage in the fixture: usage not reported")
	require.InDelta(t, 254005.032764376, s.CPU.Throttled.Seconds(), 1e-6)
	require.Equal(t, Memory{}, s.Memory)
}

// TestRealV2DockerUnlimited: no CPU limit is reported as none, not as a
// limit of 0, and its zero throttling comes with it for the caller to
// withhold.
func TestRealV2DockerUnlimited(t *testing.T) {
	dir := realDir(t, "coroot_v2_docker_unlimited")
	var s Stats
	require.NoError(t, (&Reader{}).ReadPod(Pod{UID: "x", Unified: dir}, &s))
	require.False(t, s.Limit.Has)
	require.Equal(t, 5531521992*time.Microsecond, s.CPU.Usage)
	require.Equal(t, uint64(0), s.CPU.Periods)
	require.Equal(t, Memory{Usage: 131047424, HasUsage: true, Limit: 4294967296, HasLimit: true}, s.Memory)
	require.Equal(t, PSI{}, s.CPUPressure, "no pressure files in the fixture")
}

// TestRealSystemdQuota20pct: a 20 % quota with a busy loop, every period
// throttled; the kernel ≥5.14 fields (nice_usec, nr_bursts, burst_usec)
// are skipped.
func TestRealSystemdQuota20pct(t *testing.T) {
	dir := realDir(t, "opsschool_v2_systemd_quota_20pct")
	var s Stats
	require.NoError(t, (&Reader{}).ReadPod(Pod{UID: "x", Unified: dir}, &s))
	require.Equal(t, CPULimit{CPUs: 0.2, Has: true}, s.Limit)
	require.Equal(t, uint64(50), s.CPU.Periods)
	require.Equal(t, s.CPU.Periods, s.CPU.ThrottledPeriods)
	require.Equal(t, 3938134*time.Microsecond, s.CPU.Throttled)
	require.Equal(t, 1023799*time.Microsecond, s.CPU.Usage)
}

// TestRealEveryFile: every cpu.stat and pressure file of the shared
// directory parses, so a fixture added there is read at least once.
func TestRealEveryFile(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(realDir(t, "."), "*", "*"))
	require.NoError(t, err)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		switch filepath.Ext(f) {
		case ".pressure":
			_, err = ParsePressure(f, data)
			n++
		case ".stat":
			if filepath.Base(f) == "cpu.stat" {
				_, err = ParseCPUStat(f, data)
				n++
			}
		}
		require.NoError(t, err)
	}
	require.GreaterOrEqual(t, n, 7)
}
