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

// TestUsageFollowsActivity: a GPU is used when it is busy by the readings
// it has, whatever its class. Without profiling a busy GPU's class stays
// unknown and its time is used; a GPU that reports neither SM activity nor
// utilization is unknown; a faulted GPU at work is used, idle it is idle.
func TestUsageFollowsActivity(t *testing.T) {
	noProfiling := func(util float64) func(*Sample) {
		return func(s *Sample) {
			s.Has &^= HasSMActive | HasDRAMActive
			s.GPUUtil, s.PodAttributed = util, true
		}
	}
	for _, tc := range []struct {
		name  string
		mod   func(*Sample)
		class Class
		state UsageState
	}{
		{"busy without profiling", noProfiling(0.4), Unknown, Used},
		{"idle without profiling", noProfiling(0.02), Idle, WorkloadIdle},
		{"no activity reading", func(s *Sample) { s.Has = HasTemp | HasMemRatio }, Unknown, UsageUnknown},
		{"faulted at work", func(s *Sample) { s.Has |= HasRowRemapFailure; s.RowRemapFail = 1 }, Faulted, Used},
		{"faulted and idle", func(s *Sample) {
			s.Has |= HasRowRemapFailure
			s.RowRemapFail, s.SMActive, s.GPUUtil = 1, 0, 0
		}, Faulted, ClusterIdle},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := feed(t, New(testConfig()), "g", 0, 60, tc.mod)
			require.Equal(t, tc.class, v[60].Class)
			var want [NumUsageStates]float64
			want[tc.state] = 60
			require.Equal(t, want, seconds(v[60].Usage))
		})
	}
}

// feedEvery gives the GPU "g" a busy sample at each of times (seconds) and
// returns its verdicts by time.
func feedEvery(t *testing.T, a *Analyzer, times []float64, mod func(*Sample)) map[float64]Verdict {
	out := map[float64]Verdict{}
	for _, ts := range times {
		s := busy(ts)
		if mod != nil {
			mod(&s)
		}
		require.Equal(t, Accepted, a.Ingest("g", &s))
		a.Evaluate(func(v *Verdict) { out[ts] = *v })
	}
	return out
}

// TestCoarseSamplingIsSeen: a GPU scraped every 57 s (a real serving
// fleet's interval), with jitter and one missed scrape, never spends time
// unknown; only a silence of more than three of its own intervals does.
func TestCoarseSamplingIsSeen(t *testing.T) {
	a := New(testConfig())
	times := []float64{0, 57, 113, 171, 228, 342, 399, 457} // 285 missed
	v := feedEvery(t, a, times, nil)
	require.Equal(t, [NumUsageStates]float64{Used: 457}, seconds(v[457].Usage))
	require.Equal(t, 457.0, v[457].ClassSeconds[ComputeBound], "class time counts the same intervals")

	v = feedEvery(t, a, []float64{457 + 180, 457 + 237}, nil)
	require.Equal(t, [NumUsageStates]float64{Used: 457 + 57, UsageUnknown: 180}, seconds(v[457+237].Usage),
		"180 s is more than three of its intervals (a median of 58 s): a gap")
}

// TestFirstIntervalIsCadence: with no interval learnt yet, a GPU's first
// interval is taken as its cadence up to 60 s (dcgm-exporter scraped every
// minute), so its first minute is not lost; a first silence of more than
// three minutes is a gap.
func TestFirstIntervalIsCadence(t *testing.T) {
	v := feedEvery(t, New(testConfig()), []float64{0, 60}, nil)
	require.Equal(t, [NumUsageStates]float64{Used: 60}, seconds(v[60].Usage))
	v = feedEvery(t, New(testConfig()), []float64{0, 181}, nil)
	require.Equal(t, [NumUsageStates]float64{UsageUnknown: 181}, seconds(v[181].Usage))
}

// TestWindowHoldsTwoSamples: at 60 s sampling a 30 s window would hold the
// latest sample alone; it keeps the previous one, so a single odd reading
// is averaged with the one before. Once the previous sample is a gap away,
// it is not.
func TestWindowHoldsTwoSamples(t *testing.T) {
	sm := map[float64]float64{0: 0.9, 60: 0.9, 120: 0.2, 180: 0.2, 600: 0.2}
	mod := func(s *Sample) { s.SMActive = sm[float64(s.Time)/1e9] }
	v := feedEvery(t, New(testConfig()), []float64{0, 60, 120, 180, 600}, mod)
	require.Equal(t, ComputeBound, v[120].Class, "mean of 0.9 and 0.2")
	require.Equal(t, LaunchBound, v[180].Class, "mean of 0.2 and 0.2, utilization 99 %")
	require.Equal(t, LaunchBound, v[600].Class, "after a gap, the latest sample alone")
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

// TestCoarseUsageNotSmeared: the class reads a window widened to two
// samples, usage only the window itself. A GPU sampled every 60 s that
// alternates busy and idle samples was used half the time, not three
// quarters; a sample without an activity reading leaves the previous one to
// tell.
func TestCoarseUsageNotSmeared(t *testing.T) {
	var times []float64
	for ts := 0.0; ts <= 600; ts += 60 {
		times = append(times, ts)
	}
	mod := func(s *Sample) {
		s.Has &^= HasSMActive | HasDRAMActive
		switch ts := s.Time / sec(60); {
		case ts == 9:
			s.Has &^= HasGPUUtil
		case ts%2 == 0:
			s.GPUUtil = 0.6
		default:
			s.GPUUtil = 0
		}
	}
	v := feedEvery(t, New(testConfig()), times, mod)
	// Each interval takes the state of the sample that opens it: busy at
	// 0, 120, 240, 360 and 480, idle at 60, 180, 300 and 420; the sample at
	// 540 has no reading, so the one at 480 (busy) tells.
	got := seconds(v[600].Usage)
	require.Equal(t, 360.0, got[Used])
	require.Equal(t, 240.0, got[ClusterIdle])
	require.Equal(t, Unknown, v[120].Class, "busy without profiling")
}

// TestSharedUsage: a busy GPU shared by owners is split by their
// utilization, in proportion where it adds up to more than the whole (MPS),
// the rest idle on the GPU; every interval's parts add up to it in whole
// nanoseconds. An owner without a share is forgotten, and starts anew.
func TestSharedUsage(t *testing.T) {
	a := New(testConfig())
	shares := func(sh ...Share) func(*Sample) {
		return func(s *Sample) { s.Shares, s.PricePerHour = sh, 3.6 }
	}
	v := feed(t, a, "g", 0, 10, shares(Share{"a", 0.25}, Share{"b", 0.5}))
	last := v[10]
	require.True(t, last.Usage.Split)
	require.Len(t, last.Shares, 2)
	require.Equal(t, [NumUsageStates]float64{Used: 2.5}, seconds(Usage{Nanos: last.Shares[0].Nanos}))
	require.Equal(t, [NumUsageStates]float64{Used: 5}, seconds(Usage{Nanos: last.Shares[1].Nanos}))
	require.Equal(t, [NumUsageStates]float64{WorkloadIdle: 2.5}, seconds(last.Usage))
	require.InDelta(t, 0.005, last.Shares[1].Cost[Used], 1e-12)

	// Oversubscribed: 0.6 + 0.9 of each 1 s interval, scaled to 0.4 and 0.6.
	v = feed(t, a, "g", 11, 13, shares(Share{"a", 0.6}, Share{"b", 0.9}))
	require.Equal(t, int64(2.5e9+3*0.4e9), v[13].Shares[0].Nanos[Used])
	require.Equal(t, int64(5e9+3*0.6e9), v[13].Shares[1].Nanos[Used])
	require.Equal(t, int64(2.5e9), v[13].Usage.Nanos[WorkloadIdle], "nothing left idle")
	idleBefore := v[13].Usage.Nanos[WorkloadIdle]

	// Thirds of a second do not divide: the GPU keeps the remainder.
	v = feed(t, a, "g", 14, 14, shares(Share{"b", 1.0 / 3}, Share{"c", 1.0 / 3}, Share{"d", 1.0 / 3}))
	var sum int64
	for _, su := range v[14].Shares {
		sum += su.Nanos[Used] + su.Nanos[Waiting]
	}
	require.Len(t, v[14].Shares, 3, "a is gone")
	require.Equal(t, int64(5e9+3*0.6e9+333333333), v[14].Shares[0].Nanos[Used], "b goes on")
	require.Equal(t, int64(13e9), v[14].Shares[1].Start, "c starts with its first interval")
	total := sum - int64(5e9+3*0.6e9) + v[14].Usage.Nanos[WorkloadIdle] - idleBefore
	require.Equal(t, int64(1e9), total, "the interval, to the nanosecond")

	// Without shares, the GPU is whole again.
	v = feed(t, a, "g", 15, 15, nil)
	require.Empty(t, v[15].Shares)
	require.Equal(t, int64(1e9), v[15].Usage.Nanos[Used])
}
