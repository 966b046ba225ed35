package analysis

import (
	"math"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// nvlink makes a sample carry NVLink traffic at rate bytes per second, as
// the receiver reports it: a cumulative byte count.
func nvlink(rate float64) func(*Sample) {
	return func(s *Sample) {
		s.Has |= HasNVLink
		s.NVLink = Counter{Value: rate * float64(s.Time) / 1e9, Start: 0}
	}
}

func TestCommunicationBound(t *testing.T) {
	collectives := func(rate float64) func(*Sample) {
		return func(s *Sample) {
			s.SMActive, s.GPUUtil = 0.4, 0.99
			nvlink(rate)(s)
		}
	}
	a := New(testConfig())
	v := run(a, "g", 0, 60, collectives(150e9))
	require.Equal(t, CommunicationBound, v.Class, "few SMs busy while NVLink carries 150 GB/s")
	require.Equal(t, OverlapCommunication, v.Hint)

	a = New(testConfig())
	require.Equal(t, LaunchBound, run(a, "g", 0, 60, collectives(20e9)).Class, "little NVLink traffic: fake load")

	a = New(testConfig())
	require.Equal(t, LaunchBound, run(a, "g", 0, 60, func(s *Sample) { s.SMActive, s.GPUUtil = 0.4, 0.99 }).Class,
		"absent NVLink never matches")

	a = New(testConfig())
	require.Equal(t, ComputeBound, run(a, "g", 0, 60, func(s *Sample) { nvlink(300e9)(s) }).Class,
		"busy SMs with NVLink traffic are computing")

	// A counter reset (new start time) gives no rate for that sample, and
	// no negative one.
	a = New(testConfig())
	run(a, "g", 0, 30, collectives(150e9))
	v = run(a, "g", 31, 60, func(s *Sample) {
		collectives(150e9)(s)
		s.NVLink = Counter{Value: 150e9 * float64(s.Time-sec(31)) / 1e9, Start: sec(31)}
	})
	require.Equal(t, CommunicationBound, v.Class)
}

func TestHints(t *testing.T) {
	pcie := func(rate float64) func(*Sample) {
		return func(s *Sample) {
			s.SMActive, s.GPUUtil = 0.3, 0.40
			s.Has |= HasPCIeRx
			s.PCIeRx = Counter{Value: rate * float64(s.Time) / 1e9}
		}
	}
	for _, tt := range []struct {
		name string
		mod  func(*Sample)
		want Hint
	}{
		{"low occupancy", func(s *Sample) { s.Has |= HasOccupancy | HasTensor; s.Occupancy, s.Tensor = 0.1, 0.5 }, IncreaseBatchSize},
		{"tensor pipes idle", func(s *Sample) { s.Has |= HasOccupancy | HasTensor; s.Occupancy, s.Tensor = 0.5, 0.01 }, EnableMixedPrecision},
		{"tensor pipes busy", func(s *Sample) { s.Has |= HasOccupancy | HasTensor; s.Occupancy, s.Tensor = 0.5, 0.6 }, NoHint},
		{"no tensor pipes reported", nil, NoHint},
		{"input bound, PCIe busy", pcie(5e9), FixDataLoading},
		{"input bound, PCIe quiet", pcie(1e8), FixHostPreprocessing},
		{"input bound, PCIe unknown", func(s *Sample) { s.SMActive, s.GPUUtil = 0.3, 0.40 }, FixDataLoading},
		{"launch bound", func(s *Sample) { s.SMActive, s.GPUUtil = 0.2, 0.95 }, UseCUDAGraphs},
		{"memory bound", func(s *Sample) { s.DRAMActive = 0.8 }, ReduceMemoryTraffic},
		{"throttled", func(s *Sample) { s.Reasons = 0x40 }, CheckCoolingOrPower},
		{"faulted", func(s *Sample) { s.Has |= HasRowRemapFailure; s.RowRemapFail = 1 }, ReplaceOrDrain},
		{"idle", func(s *Sample) { s.SMActive, s.GPUUtil = 0.01, 0 }, NoHint},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := New(testConfig())
			require.Equal(t, tt.want, run(a, "g", 0, 60, tt.mod).Hint)
		})
	}
}

func TestClassChangeEvent(t *testing.T) {
	a := New(testConfig())
	var events []Event
	a.Notify = func(e Event) {
		if e.Kind == ClassChanged {
			events = append(events, e)
		}
	}
	run(a, "g", 0, 60, nil)
	v := run(a, "g", 61, 120, func(s *Sample) { s.SMActive, s.GPUUtil = 0.2, 0.95 })
	require.Len(t, events, 1, "one change, not one per sample")
	require.Equal(t, ComputeBound, events[0].Prev)
	require.Equal(t, LaunchBound, events[0].Class)
	require.Equal(t, UseCUDAGraphs, events[0].Hint)
	require.Equal(t, LaunchBound, v.PrevClass)
}

// fb makes frame buffer use follow used(t) MiB on an 80 GiB GPU.
func fb(used func(t float64) float64) func(*Sample) {
	return func(s *Sample) {
		u := used(float64(s.Time) / 1e9)
		s.Has |= HasFB
		s.FBUsed, s.FBFree = u*mib, (81920-u)*mib
	}
}

// runEvery is run with a sample every step seconds.
func runEvery(a *Analyzer, id string, t0, t1, step float64, mod func(*Sample)) (firing []float64, last Verdict) { //nolint:unparam // the GPU id, as Ingest takes it
	for t := t0; t <= t1; t += step {
		s := busy(t)
		mod(&s)
		a.Ingest(id, &s)
		a.Evaluate(func(v *Verdict) { last = *v })
		if last.Alerts[GPUMemoryLeak] == Firing {
			firing = append(firing, t)
		}
	}
	return firing, last
}

func TestMemoryLeak(t *testing.T) {
	// 20 GiB in use, growing 8 MiB/s: 60 GiB free fill in about 2.1 h at
	// first, within 2 h from t = 470 s.
	leak := func(t float64) float64 { return 20480 + 8*t }
	a := New(testConfig())
	firing, _ := runEvery(a, "g", 0, 3600, 15, fb(leak))
	require.NotEmpty(t, firing)
	// The fit needs 15 min of samples, then 10 min of `for`.
	require.Equal(t, 1500.0, firing[0], "fires 600 s after the condition first holds at 900 s")

	t.Run("no verdict before the samples span 15 min", func(t *testing.T) {
		a := New(testConfig())
		_, v := runEvery(a, "g", 0, 885, 15, fb(leak))
		require.Equal(t, Inactive, v.Alerts[GPUMemoryLeak])
	})
	t.Run("slow growth is no leak", func(t *testing.T) {
		a := New(testConfig())
		firing, _ := runEvery(a, "g", 0, 7200, 15, fb(func(t float64) float64 { return 20480 + 2*t }))
		require.Empty(t, firing, "full in about 8 h")
	})
	t.Run("a model load step is no leak", func(t *testing.T) {
		a := New(testConfig())
		firing, _ := runEvery(a, "g", 0, 7200, 15, fb(func(t float64) float64 {
			if t < 1200 {
				return 2048
			}
			return 70000
		}))
		require.Empty(t, firing)
	})
	t.Run("a sawtooth released every epoch is no leak", func(t *testing.T) {
		a := New(testConfig())
		firing, _ := runEvery(a, "g", 0, 7200, 15, fb(func(t float64) float64 { return 20480 + 40*math.Mod(t, 600) }))
		require.Empty(t, firing)
	})
	t.Run("resolves once memory is released", func(t *testing.T) {
		a := New(testConfig())
		firing, _ := runEvery(a, "g", 0, 1800, 15, fb(leak))
		require.NotEmpty(t, firing)
		_, v := runEvery(a, "g", 1815, 3600, 15, fb(func(float64) float64 { return 4096 }))
		require.Equal(t, Inactive, v.Alerts[GPUMemoryLeak])
	})
}

// TestLeakFitIsExact: the bucketed sums give the same line as least squares
// over every sample.
func TestLeakFitIsExact(t *testing.T) {
	l := newLeakFit(30 * time.Minute)
	var ts, ys []float64
	for i := range 1800 {
		t := float64(1767225600 + i)
		y := 1000 + 3*float64(i) + 50*math.Sin(float64(i)/37)
		l.add(int64(t*1e9), y, 80000-y)
		ts, ys = append(ts, t), append(ys, y)
	}
	// Keep what the fit keeps: buckets whose first sample is in the window.
	first := l.at(0).t0
	var n, st, sy, stt, sty, syy float64
	for i := range ts {
		if int64(ts[i]*1e9) < first {
			continue
		}
		x, y := ts[i]-ts[0], ys[i]
		n, st, sy, stt, sty, syy = n+1, st+x, sy+y, stt+x*x, sty+x*y, syy+y*y
	}
	vtt, vty, vyy := stt-st*st/n, sty-st*sy/n, syy-sy*sy/n
	slope, r2, span := l.fit()
	require.InDelta(t, vty/vtt, slope, 1e-9)
	require.InDelta(t, vty*vty/(vtt*vyy), r2, 1e-9)
	require.Greater(t, span, 29*time.Minute)
}

// TestStateSize: a GPU's state, with a full window and leak fit, stays
// within 8 KiB.
func TestStateSize(t *testing.T) {
	size := unsafe.Sizeof(gpuState{}) + maxWindowPoints*unsafe.Sizeof(point{}) + unsafe.Sizeof(leakFit{})
	t.Logf("state per GPU at most %d bytes", size)
	require.LessOrEqual(t, size, uintptr(8192))
}
