package analysis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testConfig() Config {
	alert := func(f time.Duration) AlertRule { return AlertRule{Enabled: true, For: f} }
	c := Config{
		Rules: Rules{
			Window: 30 * time.Second, FaultLookback: 5 * time.Minute,
			CriticalXIDs: []uint32{48, 64, 74, 79, 95, 119, 120, 140}, ThrottleMask: 0xE8, ThrottleFraction: 0.5,
			IdleSMActive: 0.05, IdleGPUUtil: 0.05, MemoryBoundDRAM: 0.7, CommunicationSM: 0.5, CommunicationNVLink: 100e9,
			LaunchBoundSM: 0.5, LaunchBoundUtil: 0.8, InputBoundSM: 0.5,
			WaitingPower: 1.0 / 3, WorkingPower: 0.45, IdlePower: 0.15,
			ComputeTensor: 0.3, ComputePower: 0.7, LaunchPower: 0.5, CommunicationPCIe: 4e9,
			ThrottleClock: 0.75, PowerCap: 0.95, ThermalTemp: 85,
		},
		Hints: HintRules{BatchSizeSMActive: 0.8, BatchSizeOccupancy: 0.2, MixedPrecisionTensor: 0.05, DataLoadingPCIeRx: 1e9},
		Leak: LeakRules{Window: 30 * time.Minute, MinSpan: 15 * time.Minute, MinR2: 0.9, FullIn: 2 * time.Hour,
			ResolveR2: 0.5, ResolveIn: 4 * time.Hour},
		Straggler: StragglerRules{MinGroupSize: 4, StepRatio: 1.1, ClockRatio: 0.9, ClockMinGroupSM: 0.3, MADThreshold: 3.5, MinSMDeviation: 0.1, HolderUtil: 0.5, MinPowerDeviation: 0.1, Sustain: 10 * time.Second},
		MaxGPUs:   1000,
		TTL:       10 * time.Minute,
	}
	c.Alerts = [NumAlerts]AlertRule{alert(0), alert(60 * time.Second), alert(60 * time.Second), alert(60 * time.Second), alert(60 * time.Second), alert(600 * time.Second), alert(600 * time.Second)}
	c.Alerts[GPUOverheating].Threshold, c.Alerts[GPUOverheating].Resolve = 85, 80
	c.Alerts[GPUMemoryPressure].Threshold, c.Alerts[GPUMemoryPressure].Resolve = 0.95, 0.90
	return c
}

func sec(s float64) int64 { return int64(s * 1e9) }

// busy is a sample of a healthy, compute-bound GPU at time t (seconds).
func busy(t float64) Sample {
	return Sample{
		Time: sec(t), Has: HasSMActive | HasDRAMActive | HasGPUUtil | HasSMClock | HasTemp | HasMemRatio | HasReasons,
		SMActive: 0.9, DRAMActive: 0.3, GPUUtil: 0.99, SMClock: 1980e6, Temp: 60, MemRatio: 0.5,
	}
}

// run feeds one GPU a sample per second from t0 to t1 (inclusive), shaped
// by mod, and returns the last verdict.
func run(a *Analyzer, id string, t0, t1 float64, mod func(*Sample)) Verdict {
	var last Verdict
	for t := t0; t <= t1; t++ {
		s := busy(t)
		if mod != nil {
			mod(&s)
		}
		a.Ingest(id, &s)
		a.Evaluate(func(v *Verdict) { last = *v })
	}
	return last
}

func TestClasses(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*Sample)
		want Class
	}{
		{"compute bound", nil, ComputeBound},
		{"memory bound", func(s *Sample) { s.DRAMActive = 0.8 }, MemoryBound},
		{"launch bound", func(s *Sample) { s.SMActive, s.GPUUtil = 0.2, 0.95 }, LaunchBound},
		{"input bound", func(s *Sample) { s.SMActive, s.GPUUtil = 0.3, 0.40 }, InputBound},
		{"idle", func(s *Sample) { s.SMActive, s.GPUUtil = 0.01, 0 }, Idle},
		{"idle without profiling", func(s *Sample) { s.Has &^= HasSMActive | HasDRAMActive; s.GPUUtil = 0.02 }, Idle},
		{"busy without profiling is unknown", func(s *Sample) { s.Has &^= HasSMActive | HasDRAMActive; s.GPUUtil = 0.70 }, Unknown},
		{"copy-engine DRAM without SM activity is no guess", func(s *Sample) { s.Has &^= HasSMActive; s.DRAMActive, s.GPUUtil = 0.9, 0.90 }, Unknown},
		{"thermal throttle", func(s *Sample) { s.Reasons = 0x40 }, Throttled},
		{"power brake", func(s *Sample) { s.Reasons = 0x80 }, Throttled},
		{"routine software power capping is not throttling", func(s *Sample) { s.Reasons = 0x4 }, ComputeBound},
		{"row remap failure", func(s *Sample) { s.Has |= HasRowRemapFailure; s.RowRemapFail = 1 }, Faulted},
		{"nothing reported", func(s *Sample) { s.Has = 0 }, Unknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := New(testConfig())
			require.Equal(t, tt.want, run(a, "g", 0, 60, tt.mod).Class)
		})
	}
}

func TestWindowMean(t *testing.T) {
	a := New(testConfig())
	run(a, "g", 0, 60, nil)
	// One idle sample does not make an idle GPU: the window's mean decides.
	v := run(a, "g", 61, 61, func(s *Sample) { s.SMActive, s.GPUUtil = 0, 0 })
	require.Equal(t, ComputeBound, v.Class)
	// A throttle flag in half the window's samples is not enough; more is.
	v = run(a, "g", 62, 76, func(s *Sample) { s.Reasons = 0x20 })
	require.Equal(t, ComputeBound, v.Class, "15 of 30 samples")
	v = run(a, "g", 77, 77, func(s *Sample) { s.Reasons = 0x20 })
	require.Equal(t, Throttled, v.Class, "16 of 30 samples")
}

func TestFaults(t *testing.T) {
	t.Run("uncorrectable ECC increase", func(t *testing.T) {
		a := New(testConfig())
		dbe := func(n float64) func(*Sample) {
			return func(s *Sample) { s.Has |= HasDBE; s.DBE = Counter{Value: n, Start: sec(0)} }
		}
		require.Equal(t, ComputeBound, run(a, "g", 0, 10, dbe(0)).Class)
		require.Equal(t, Faulted, run(a, "g", 11, 11, dbe(1)).Class)
		require.Equal(t, Faulted, run(a, "g", 12, 300, dbe(1)).Class, "faulted for the lookback")
		require.Equal(t, ComputeBound, run(a, "g", 301, 320, dbe(1)).Class, "and not after")
	})
	t.Run("ECC counter reset is not an increase", func(t *testing.T) {
		a := New(testConfig())
		// Three errors from before the analyzer first saw the GPU (at 1 s).
		run(a, "g", 1, 10, func(s *Sample) { s.Has |= HasDBE; s.DBE = Counter{Value: 3, Start: sec(0)} })
		// The source reset: the counter restarts lower, with a new start time.
		v := run(a, "g", 11, 20, func(s *Sample) { s.Has |= HasDBE; s.DBE = Counter{Value: 0, Start: sec(10)} })
		require.Equal(t, ComputeBound, v.Class)
		// A value that goes down under the same start time is a reset too.
		v = run(a, "g", 21, 21, func(s *Sample) { s.Has |= HasDBE; s.DBE = Counter{Value: 0, Start: sec(0)} })
		require.Equal(t, ComputeBound, v.Class)
	})
	t.Run("errors counted before the analyzer watched are history", func(t *testing.T) {
		a := New(testConfig())
		v := run(a, "g", 100, 110, func(s *Sample) { s.Has |= HasDBE; s.DBE = Counter{Value: 5, Start: sec(0)} })
		require.Equal(t, ComputeBound, v.Class)
	})
	t.Run("critical XID", func(t *testing.T) {
		a := New(testConfig())
		run(a, "g", 0, 10, nil)
		v := run(a, "g", 11, 11, func(s *Sample) { s.XIDs = []XIDCount{{Code: 79, Counter: Counter{Value: 1, Start: sec(0)}}} })
		require.Equal(t, Faulted, v.Class)
		require.Equal(t, Firing, v.Alerts[GPUFaulted], "GPUFaulted has no for")
	})
	t.Run("non-critical XID", func(t *testing.T) {
		a := New(testConfig())
		run(a, "g", 0, 10, nil)
		v := run(a, "g", 11, 11, func(s *Sample) { s.XIDs = []XIDCount{{Code: 43, Counter: Counter{Value: 1, Start: sec(0)}}} })
		require.Equal(t, ComputeBound, v.Class)
	})
}

func TestAlertHysteresis(t *testing.T) {
	a := New(testConfig())
	hot := func(c float64) func(*Sample) { return func(s *Sample) { s.Temp = c } }
	run(a, "g", 0, 10, nil)
	// A transient shorter than `for` never fires.
	v := run(a, "g", 11, 50, hot(90))
	require.Equal(t, Pending, v.Alerts[GPUOverheating])
	v = run(a, "g", 51, 51, hot(84))
	require.Equal(t, Inactive, v.Alerts[GPUOverheating], "a pending alert needs its condition at every evaluation")
	// Held for 60 s, it fires ...
	v = run(a, "g", 52, 111, hot(86))
	require.Equal(t, Pending, v.Alerts[GPUOverheating])
	v = run(a, "g", 112, 112, hot(86))
	require.Equal(t, Firing, v.Alerts[GPUOverheating])
	// ... and stays firing between the resolve and fire thresholds.
	v = run(a, "g", 113, 200, hot(82))
	require.Equal(t, Firing, v.Alerts[GPUOverheating])
	v = run(a, "g", 201, 201, hot(79))
	require.Equal(t, Inactive, v.Alerts[GPUOverheating])
}

func TestIdleAlertNeedsAPod(t *testing.T) {
	idle := func(pod bool) func(*Sample) {
		return func(s *Sample) { s.SMActive, s.GPUUtil, s.PodAttributed = 0, 0, pod }
	}
	a := New(testConfig())
	require.Equal(t, Firing, run(a, "zombie", 0, 700, idle(true)).Alerts[GPUIdle])
	require.Equal(t, Inactive, run(a, "spare", 0, 700, idle(false)).Alerts[GPUIdle], "an unallocated idle GPU is capacity, not waste")
}

// job feeds n GPUs of one group a sample per second; mod shapes GPU i.
func job(a *Analyzer, n int, t0, t1 float64, mod func(i int, s *Sample)) map[string]Verdict {
	last := map[string]Verdict{}
	for t := t0; t <= t1; t++ {
		for i := range n {
			s := busy(t)
			s.Group = "ml/train"
			s.Has |= HasStep
			s.Step = 1.0
			if mod != nil {
				mod(i, &s)
			}
			a.Ingest(string(rune('a'+i)), &s)
		}
		a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
	}
	return last
}

func TestStragglers(t *testing.T) {
	for _, tt := range []struct {
		name string
		mod  func(*Sample)
	}{
		{"slow step", func(s *Sample) { s.Step = 1.2 }},
		{"slow clock", func(s *Sample) { s.SMClock = 1700e6 }},
		{"SM activity outlier", func(s *Sample) { s.SMActive = 0.6 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := New(testConfig())
			job(a, 8, 0, 30, nil)
			slow := func(i int, s *Sample) {
				if i == 3 {
					tt.mod(s)
				}
			}
			// Find when GPU d first deviates (score >= 1) and when it becomes
			// a straggler: the deviation must last the sustain time.
			deviated, straggler := -1.0, -1.0
			for at := 31.0; at <= 90; at++ {
				v := job(a, 8, at, at, slow)
				if deviated < 0 && v["d"].Score >= 1 {
					deviated = at
				}
				if straggler < 0 && v["d"].Straggler {
					straggler = at
				}
				for id, x := range v {
					if id != "d" {
						require.Falsef(t, x.Straggler, "%s at %v", id, at)
					}
				}
			}
			require.Positive(t, deviated, "never deviated")
			require.Equal(t, deviated+10, straggler, "a straggler once it deviated for 10 s")
			// It stops once it has not deviated for 10 s, when the window no
			// longer carries the slow samples.
			calm, ended := -1.0, -1.0
			for at := 91.0; at <= 140; at++ {
				v := job(a, 8, at, at, nil)
				if calm < 0 && v["d"].Score < 1 {
					calm = at
				}
				if ended < 0 && !v["d"].Straggler {
					ended = at
				}
			}
			require.Positive(t, calm, "never calm")
			require.Equal(t, calm+10, ended, "no longer a straggler once calm for 10 s")
		})
	}
}

func TestNoStragglersWithoutPeers(t *testing.T) {
	slow := func(i int, s *Sample) {
		if i == 0 {
			s.Step = 2
		}
	}
	a := New(testConfig())
	v := job(a, 3, 0, 60, slow)
	require.False(t, v["a"].Straggler, "a group of 3 has no stragglers")

	a = New(testConfig())
	v = job(a, 6, 0, 60, func(i int, s *Sample) {
		slow(i, s)
		s.Group = "" // no job attributes: no peers
	})
	require.False(t, v["a"].Straggler)
	require.Zero(t, v["a"].Score)
}

func TestGroupShrinks(t *testing.T) {
	a := New(testConfig())
	slow := func(i int, s *Sample) {
		if i == 0 {
			s.Step = 2
		}
	}
	v := job(a, 5, 0, 60, slow)
	require.True(t, v["a"].Straggler)
	// Two GPUs stop reporting: the three left are too few to compare.
	last := map[string]Verdict{}
	// 10 s without deviating ends it (the hysteresis).
	for t := 61.0; t <= 71; t++ {
		for i := range 3 {
			s := busy(t)
			s.Group, s.Has, s.Step = "ml/train", s.Has|HasStep, 1
			slow(i, &s)
			a.Ingest(string(rune('a'+i)), &s)
		}
		a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
	}
	require.False(t, last["a"].Straggler)
}

func TestBounds(t *testing.T) {
	c := testConfig()
	c.MaxGPUs = 2
	a := New(c)
	s := busy(0)
	require.Equal(t, Accepted, a.Ingest("a", &s))
	require.Equal(t, Accepted, a.Ingest("b", &s))
	require.Equal(t, Rejected, a.Ingest("c", &s))
	require.Equal(t, Flush, a.Ingest("a", &Sample{Time: sec(1)}), "a newer sample of a GPU already in the batch")
	a.Evaluate(func(*Verdict) {})
	require.Equal(t, OutOfOrder, a.Ingest("a", &Sample{Time: sec(0)}))
	require.Equal(t, 2, a.Tracked())

	// GPUs that stop reporting are forgotten after the TTL (data time).
	s = busy(1000)
	require.Equal(t, Accepted, a.Ingest("a", &s))
	a.Evaluate(func(*Verdict) {})
	require.Equal(t, 1, a.Tracked())
	require.Equal(t, int64(1), a.Counters().Evicted)
	require.Equal(t, int64(1), a.Counters().Rejected)
}

func TestClassSeconds(t *testing.T) {
	a := New(testConfig())
	run(a, "g", 0, 100, nil)
	v := run(a, "g", 101, 200, func(s *Sample) { s.SMActive, s.GPUUtil = 0, 0 })
	require.Equal(t, sec(0), v.ClassStart)
	total := 0.0
	for _, s := range v.ClassSeconds {
		total += s
	}
	require.InDelta(t, 200, total, 1e-9, "every second is counted once")
	require.Greater(t, v.ClassSeconds[Idle], 60.0)
	require.Greater(t, v.ClassSeconds[ComputeBound], 100.0)
}

func TestNotify(t *testing.T) {
	a := New(testConfig())
	var events []Event
	a.Notify = func(e Event) { events = append(events, e) }
	run(a, "g", 0, 100, func(s *Sample) { s.Temp = 90 })
	run(a, "g", 101, 101, func(s *Sample) { s.Temp = 70 })
	require.Len(t, events, 2)
	require.Equal(t, Event{ID: "g", Time: sec(60), Kind: AlertFiring, Alert: GPUOverheating, Class: ComputeBound}, events[0])
	require.Equal(t, AlertResolved, events[1].Kind)
}

// TestUtilizationAtThreshold: DCGM reports GPU utilization in whole percent
// and the receiver as a ratio. A window whose mean is exactly the launch-bound
// threshold (70, 70 and 100 %: 80 %) meets it, as the contract's
// "mean GPU_UTIL >= 80" says, although the same mean taken over the ratios
// in floating point would be 0.7999999999999999.
func TestUtilizationAtThreshold(t *testing.T) {
	pct := []float64{70, 70, 100}
	require.Less(t, (pct[0]/100+pct[1]/100+pct[2]/100)/3, 0.8, "the rounding this test is about")
	v := run(New(testConfig()), "g", 0, 2, func(s *Sample) {
		s.SMActive, s.GPUUtil = 0.2, pct[s.Time/1e9]/100
	})
	require.Equal(t, LaunchBound, v.Class)
}

// Full at max_gpus, with every GPU tracked gone: a batch of only new GPUs
// (churn) makes room by forgetting those past the TTL, instead of being
// refused for good.
func TestFullOfGoneGPUsMakesRoom(t *testing.T) {
	c := testConfig()
	c.MaxGPUs = 2
	a := New(c)
	for _, id := range []string{"a", "b"} {
		s := busy(0)
		require.Equal(t, Accepted, a.Ingest(id, &s))
	}
	a.Evaluate(func(*Verdict) {})
	s := busy(60)
	require.Equal(t, Rejected, a.Ingest("c", &s), "a and b are still within the TTL")
	a.Evaluate(func(*Verdict) {})
	s = busy(601)
	require.Equal(t, Accepted, a.Ingest("c", &s), "a and b are gone for longer than the TTL")
	s = busy(601)
	require.Equal(t, Accepted, a.Ingest("d", &s))
	a.Evaluate(func(*Verdict) {})
	require.Equal(t, int64(2), a.Counters().Evicted)
	require.Equal(t, 2, a.Tracked())
}
