package analysis

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// feed gives the GPU id one sample per second from t0 to t1 (inclusive)
// and returns its verdicts by second.
func feed(t *testing.T, a *Analyzer, id string, t0, t1 float64, mod func(*Sample)) map[float64]Verdict {
	out := map[float64]Verdict{}
	for ts := t0; ts <= t1; ts++ {
		s := busy(ts)
		if mod != nil {
			mod(&s)
		}
		require.Equal(t, Accepted, a.Ingest(id, &s))
		a.Evaluate(func(v *Verdict) {
			if v.ID == id {
				out[ts] = *v
			}
		})
	}
	return out
}

func idle(held bool, price float64) func(*Sample) {
	return func(s *Sample) {
		s.SMActive, s.GPUUtil, s.PodAttributed, s.PricePerHour = 0.01, 0, held, price
	}
}

func seconds(u Usage) [NumUsageStates]float64 {
	var out [NumUsageStates]float64
	for i, n := range u.Nanos {
		out[i] = float64(n) / 1e9
	}
	return out
}

// TestUsageStates follows one GPU through every state: idle while a pod
// holds it, idle once the pod is gone, busy, then forgotten after gpu_ttl
// and seen again. Each interval between samples belongs to the state at its
// start, so the class's 1 s lag on leaving idle (the window's mean) shows.
func TestUsageStates(t *testing.T) {
	a := New(testConfig())
	const price = 3.6 // per hour: 0.001 a second

	v := feed(t, a, "g", 0, 100, idle(true, price))
	require.Equal(t, WorkloadIdle, v[0].Usage.State)
	require.Equal(t, WorkloadIdle, v[0].Usage.PrevState)
	require.Equal(t, [NumUsageStates]float64{WorkloadIdle: 99}, seconds(v[99].Usage))

	v = feed(t, a, "g", 101, 200, idle(false, price))
	// The sample at 101 closes the last interval that began with the pod.
	require.Equal(t, ClusterIdle, v[101].Usage.State)
	require.Equal(t, WorkloadIdle, v[101].Usage.PrevState)
	require.Equal(t, [NumUsageStates]float64{WorkloadIdle: 101, ClusterIdle: 99}, seconds(v[200].Usage))

	v = feed(t, a, "g", 201, 300, func(s *Sample) { s.PricePerHour = price })
	// At 201 the window's mean SM activity (1 busy point in 31) is still
	// idle; at 202 it is not.
	require.Equal(t, ClusterIdle, v[201].Usage.State)
	require.Equal(t, Used, v[202].Usage.State)
	require.Equal(t, ClusterIdle, v[202].Usage.PrevState)
	u := v[300].Usage
	require.Equal(t, [NumUsageStates]float64{Used: 98, WorkloadIdle: 101, ClusterIdle: 101}, seconds(u))
	var total int64
	for _, n := range u.Nanos {
		total += n
	}
	require.Equal(t, sec(300), total, "the states add up to the wall time exactly")
	require.InDelta(t, 0.098, u.Cost[Used], 1e-12)
	require.InDelta(t, 0.101, u.Cost[WorkloadIdle], 1e-12)
	require.InDelta(t, 0.101, u.Cost[ClusterIdle], 1e-12)
	require.Equal(t, int64(0), v[300].ClassStart)

	// Another GPU moves data time on until "g" is forgotten.
	feed(t, a, "other", 301, 1200, nil)
	require.Equal(t, int64(1), a.Counters().Evicted)
	v = feed(t, a, "g", 1201, 1260, func(s *Sample) { s.PricePerHour = price })
	u = v[1260].Usage
	require.Equal(t, sec(1201), v[1260].ClassStart, "a new start time: the counters restart")
	require.Equal(t, [NumUsageStates]float64{Used: 59}, seconds(u))
	require.InDelta(t, 0.059, u.Cost[Used], 1e-12)
	require.Equal(t, Used, v[1201].Usage.PrevState, "the first sample after a restart closes no interval")
}

// TestUsageGapsAreUnknown: a GPU silent for longer than the window (but
// not long enough to be forgotten) spent that time unknown, at its price.
func TestUsageGapsAreUnknown(t *testing.T) {
	a := New(testConfig())
	feed(t, a, "g", 0, 10, func(s *Sample) { s.PricePerHour = 7.2 })
	v := feed(t, a, "g", 100, 110, func(s *Sample) { s.PricePerHour = 7.2 })
	require.Equal(t, UsageUnknown, v[100].Usage.PrevState)
	require.Equal(t, [NumUsageStates]float64{Used: 20, UsageUnknown: 90}, seconds(v[110].Usage))
	require.InDelta(t, 0.18, v[110].Usage.Cost[UsageUnknown], 1e-12)
}

// TestUsagePriceChanges: each interval is priced at its start's price.
func TestUsagePriceChanges(t *testing.T) {
	a := New(testConfig())
	feed(t, a, "g", 0, 10, func(s *Sample) { s.PricePerHour = 3.6 })
	v := feed(t, a, "g", 11, 20, func(s *Sample) { s.PricePerHour = 36 })
	// 0..11 at 3.6/h (the sample at 11 closes 10..11), 11..20 at 36/h.
	require.InDelta(t, 11*0.001+9*0.01, v[20].Usage.Cost[Used], 1e-12)
	require.Equal(t, 36.0, v[20].Usage.PricePerHour)
}

func TestStateOf(t *testing.T) {
	for c := range NumClasses {
		for _, held := range []bool{false, true} {
			want := Used
			switch {
			case c == Unknown:
				want = UsageUnknown
			case c == Idle && held:
				want = WorkloadIdle
			case c == Idle:
				want = ClusterIdle
			}
			require.Equal(t, want, StateOf(c, held), "%v held=%v", c, held)
		}
	}
	require.Equal(t, Used, StateOf(NumClasses, true), "a class this code does not know is used time")
}

// TestUsageReport: the counters are due at the first sample, at each change
// of state, and otherwise every UsageReport.
func TestUsageReport(t *testing.T) {
	cfg := testConfig()
	cfg.UsageReport = 30 * time.Second
	a := New(cfg)
	var due []float64
	collect := func(v map[float64]Verdict) {
		for ts, x := range v {
			if x.Usage.Report {
				due = append(due, ts)
			}
		}
	}
	collect(feed(t, a, "g", 0, 40, idle(true, 1)))
	collect(feed(t, a, "g", 41, 80, idle(false, 1)))
	slices.Sort(due)
	// 0: the first sample; 30: the interval; 41: the pod is gone, the
	// sample closes an interval of workload_idle and opens cluster_idle (a
	// change, both series sent); 71: the interval again.
	require.Equal(t, []float64{0, 30, 41, 71}, due)
}
