package cause

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// realFile is a file of the shared real node data (its SOURCES.md names
// each one's origin and licence), read in place.
func realFile(t *testing.T, rel string) string {
	t.Helper()
	return sharedtest.Path(t, "realdata/node/"+rel)
}

// podFrom turns a pod's cgroup figures, as cgroupstat reads them, into the
// counters the gpu_node receiver sends and the analyzer keeps.
func podFrom(s *cgroupstat.Stats) PodCounters {
	c := PodCounters{CPUSeconds: s.CPU.Usage.Seconds(), Periods: float64(s.CPU.Periods), Throttled: float64(s.CPU.ThrottledPeriods),
		ThrottledSeconds: s.CPU.Throttled.Seconds(), MemoryBytes: float64(s.Memory.Usage)}
	if s.Limit.Has {
		c.LimitCPUs = s.Limit.CPUs
	}
	for r, psi := range []cgroupstat.PSI{s.CPUPressure, s.MemoryPressure, s.IOPressure} {
		if psi.Some.Has {
			c.Pressure.Some[r], c.Pressure.Full[r], c.Pressure.Has[r] = psi.Some.Total.Seconds(), psi.Full.Total.Seconds(), true
		}
	}
	return c
}

// TestRealCgroups reads each real cgroup fixture and explains an
// input-bound GPU of its pod by it. A fixture is one reading of counters
// since the cgroup was made: the first reading is the cgroup new (all
// zero), the second the fixture, nr_periods CFS periods of 100 ms later
// (the time the pod was runnable: the least its life can have been; a
// minute where it has no periods).
func TestRealCgroups(t *testing.T) {
	th := DefaultThresholds()
	for _, tc := range []struct {
		dir    string
		v1     bool
		want   Kind
		why    string
		reason string
	}{
		{"opsschool_v2_systemd_quota_20pct", false, CPUThrottled, "throttled in 100 % of periods at a 0.2-CPU limit",
			"a busy loop at CPUQuota=20 %: every period throttled"},
		{"coroot_v2_k8s_pod_cpu_limited", false, IOWait, "the pod's tasks stalled on I/O 22 % of the time",
			"throttled in 76 of 809,036 periods (0.01 %), not the cause; its I/O pressure total is 22 % of its periods' time"},
		{"coroot_v1_docker_cpu_throttled", true, NoneFound, "",
			"throttled in 1.5 % of periods over its life: under the 10 % threshold; v1 has no pressure files"},
		{"coroot_v2_docker_unlimited", false, NoneFound, "", "no CPU limit: never throttled, whatever it used"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := realFile(t, filepath.Join("cgroup", tc.dir))
			pod := cgroupstat.Pod{UID: "pod", Unified: dir}
			if tc.v1 {
				pod = cgroupstat.Pod{UID: "pod", CPU: dir, CPUAcct: dir}
			}
			var s cgroupstat.Stats
			require.NoError(t, (&cgroupstat.Reader{}).ReadPod(pod, &s))
			span := time.Minute
			if s.CPU.Periods > 0 {
				span = time.Duration(s.CPU.Periods) * 100 * time.Millisecond
			}
			st := NewStore(span, span)
			st.BindGPU("GPU-1", "n1", "pod")
			st.AddPod("n1", "pod", 1, PodCounters{LimitCPUs: podFrom(&s).LimitCPUs, Pressure: zeroPressure(podFrom(&s).Pressure)})
			st.AddPod("n1", "pod", 1+int64(span), podFrom(&s))
			e := st.Of(1+int64(span), "GPU-1", "n1", "")
			f := Explain(InputWait, &e, &th)
			assert.Equal(t, tc.want, f.Kind, "%s: %s", tc.reason, f.Why)
			if tc.why != "" {
				assert.Equal(t, tc.why, f.Why)
			}
		})
	}
}

// zeroPressure is a new cgroup's pressure: the same files, nothing stalled.
func zeroPressure(p Pressure) Pressure { return Pressure{Has: p.Has} }

// TestRealENAShaping: an AWS instance's ENA counters from a slowdown its
// owner put down to EC2's rate limiting. The allowance counters rising
// explain a data loader's wait as the network's.
func TestRealENAShaping(t *testing.T) {
	th := DefaultThresholds()
	data, err := os.ReadFile(realFile(t, "ethtool/ena_sliderule_issue518/ethtool_S_ens34.txt"))
	require.NoError(t, err)
	stats, err := netdev.ParseCounterDump(data)
	require.NoError(t, err)
	var p netdev.Port
	p.AddEthtool(stats)
	require.NotEmpty(t, p.Allowance)
	c := NICCounters{Allowance: map[string]float64{}}
	for _, a := range p.Allowance {
		c.Allowance[a.Name] = float64(a.Value)
	}
	st := NewStore(time.Hour, time.Hour)
	st.AddNIC("n1", "ens34", 0, NICCounters{}, nil)
	st.AddNIC("n1", "ens34", int64(time.Hour), c, nil)
	e := st.Of(int64(time.Hour), "GPU-1", "n1", "")
	f := Explain(InputWait, &e, &th)
	assert.Equal(t, NetworkSaturated, f.Kind)
	assert.Equal(t, "ens34: the instance's allowances exceeded 54,044 times/min, most bw_in", f.Why,
		"3,241,329 bw_in, 530 bw_out and 784 pps over the hour")
}
