package cause

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sec = int64(time.Second)

// feed records two readings of a pod and the node a minute apart, the
// second from the first by the given increments.
type podStep struct {
	limit                      float64
	periods, throttled         float64
	cpuSome, memSome, ioSome   float64 // share of the minute
	nodeCPU, nodeMem, nodeIO   float64
	memBytes, memLimit         float64
	noPressure, noNodePressure bool
}

func storeWith(t *testing.T, p podStep) *Store {
	t.Helper()
	s := NewStore(time.Minute, 2*time.Minute)
	s.BindGPU("GPU-1", "n1", "pod-a")
	for i, t0 := range []int64{0, 60 * sec} {
		f := float64(i)
		c := PodCounters{CPUSeconds: 100 + 60*f, LimitCPUs: p.limit, Periods: 1000 + p.periods*f, Throttled: 10 + p.throttled*f,
			MemoryBytes: p.memBytes, MemoryLimit: p.memLimit}
		if !p.noPressure {
			c.Pressure = pressure(f*60, p.cpuSome, p.memSome, p.ioSome)
		}
		s.AddPod("n1", "pod-a", t0, c)
		if !p.noNodePressure {
			s.AddNode("n1", t0, pressure(f*60, p.nodeCPU, p.nodeMem, p.nodeIO))
		}
	}
	return s
}

func pressure(secs, cpu, mem, io float64) Pressure {
	var p Pressure
	for r, share := range []float64{cpu, mem, io} {
		p.Some[r], p.Full[r], p.Has[r] = 1000+share*secs, 500, true
	}
	return p
}

func TestInputCauses(t *testing.T) {
	th := DefaultThresholds()
	for _, tc := range []struct {
		name string
		step podStep
		want Kind
		why  string
	}{
		{"throttled at its limit", podStep{limit: 4, periods: 600, throttled: 228}, CPUThrottled, "throttled in 38 % of periods at a 4-CPU limit"},
		{"throttled a little: not the cause", podStep{limit: 4, periods: 600, throttled: 30}, NoneFound, ""},
		{"no limit: never throttled", podStep{periods: 0, throttled: 0, cpuSome: 0.05}, NoneFound, ""},
		{"pod waits for CPU without throttling", podStep{limit: 8, periods: 600, throttled: 6, cpuSome: 0.31}, CPUContention, "the pod's tasks waited for a CPU 31 % of the time, not throttled by its limit"},
		{"node oversubscribed", podStep{nodeCPU: 0.45}, CPUContention, "the node's tasks waited for a CPU 45 % of the time"},
		{"node CPU pressure under the threshold", podStep{nodeCPU: 0.15}, NoneFound, ""},
		{"memory stalls at the limit", podStep{memSome: 0.12, memBytes: 31 << 30, memLimit: 32 << 30}, MemoryPressure, "the pod's tasks stalled on memory 12 % of the time (31.0 GiB of its 32.0 GiB limit)"},
		{"memory stalls under the threshold", podStep{memSome: 0.05}, NoneFound, ""},
		{"I/O stalls", podStep{ioSome: 0.40}, IOWait, "the pod's tasks stalled on I/O 40 % of the time"},
		{"node I/O stalls", podStep{nodeIO: 0.25}, IOWait, "the node's tasks stalled on I/O 25 % of the time"},
		{"throttling comes first", podStep{limit: 2, periods: 600, throttled: 300, ioSome: 0.5}, CPUThrottled, "throttled in 50 % of periods at a 2-CPU limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := storeWith(t, tc.step)
			e := s.Of(60*sec, "GPU-1", "n1", "")
			f := Explain(InputWait, &e, &th)
			assert.Equal(t, tc.want, f.Kind, f.Why)
			if tc.why != "" {
				assert.Equal(t, tc.why, f.Why)
			}
		})
	}
}

func TestNoEvidenceNoCause(t *testing.T) {
	th := DefaultThresholds()
	s := NewStore(time.Minute, 2*time.Minute)
	for _, w := range []Wait{InputWait, NetworkWait} {
		e := s.Of(60*sec, "GPU-1", "n1", "0000:18:00.0")
		assert.Equal(t, None, Explain(w, &e, &th).Kind)
	}
	// Evidence too old to speak for the minute.
	s = storeWith(t, podStep{limit: 1, periods: 600, throttled: 600})
	e := s.Of(10*60*sec, "GPU-1", "n1", "")
	assert.Equal(t, None, Explain(InputWait, &e, &th).Kind)
	// A pod on another host is not this GPU's.
	e = s.Of(60*sec, "GPU-1", "n2", "")
	assert.False(t, e.HasPod)
}

// nicStore records a NIC on GPU 0000:18:00.0's rail and one elsewhere,
// a minute apart.
func nicStore(util float64, errsPerMin float64, up bool, otherUtil float64) *Store {
	s := NewStore(time.Minute, 2*time.Minute)
	rate := 50e9 // 400 Gb/s
	for i, t0 := range []int64{0, 60 * sec} {
		f := float64(i)
		s.AddNIC("n1", "mlx5_3", t0, NICCounters{RxBytes: 1e12 + f*util*rate*60, TxBytes: 1e12, HasBytes: true, RateBytes: rate, Up: up || i == 0, HasUp: true,
			Errors: []Count{{"symbol_error", 5 + f*errsPerMin}, {"link_downed", 1}}}, []string{"00000000:18:00.0"})
		s.AddNIC("n1", "eth0", t0, NICCounters{RxBytes: f * otherUtil * 12.5e9 * 60, HasBytes: true, RateBytes: 12.5e9, Up: true, HasUp: true}, nil)
	}
	return s
}

func TestNetworkCauses(t *testing.T) {
	th := DefaultThresholds()
	for _, tc := range []struct {
		name       string
		util, errs float64
		up         bool
		want       Kind
		why        string
	}{
		{"saturated rail", 0.92, 0, true, NetworkSaturated, "mlx5_3 at 92 % of 400 Gb/s"},
		{"erring rail", 0.3, 1200, true, FabricErrors, "symbol errors +1,200/min on mlx5_3"},
		{"rail down", 0, 0, false, FabricErrors, "mlx5_3 is down"},
		{"a few errors: not the cause", 0.3, 3, true, NoneFound, "mlx5_3 at 30 % of 400 Gb/s: the collective waits on a slower peer"},
		{"healthy rail", 0.12, 0, true, NoneFound, "mlx5_3 at 12 % of 400 Gb/s: the collective waits on a slower peer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := nicStore(tc.util, tc.errs, tc.up, 0.95)
			e := s.Of(60*sec, "GPU-1", "n1", "00000000:18:00.0")
			require.Len(t, e.Rail, 1)
			require.Len(t, e.Others, 1)
			f := Explain(NetworkWait, &e, &th)
			assert.Equal(t, tc.want, f.Kind)
			assert.Equal(t, tc.why, f.Why)
		})
	}
	// Another GPU's saturated NIC does not explain this one's collective
	// when its own rail is known...
	s := nicStore(0.1, 0, true, 0.95)
	e := s.Of(60*sec, "GPU-1", "n1", "0000:18:00.0")
	assert.Equal(t, NoneFound, Explain(NetworkWait, &e, &th).Kind)
	// ...but a saturated NIC does explain a data loader's wait.
	assert.Equal(t, Finding{Kind: NetworkSaturated, Why: "eth0 at 95 % of 100 Gb/s"}, Explain(InputWait, &e, &th))
	// Without a rail, the node's NICs are the evidence.
	e = s.Of(60*sec, "GPU-1", "n1", "")
	assert.Equal(t, NetworkSaturated, Explain(NetworkWait, &e, &th).Kind)
}

func TestShapedByTheCloud(t *testing.T) {
	th := DefaultThresholds()
	s := NewStore(time.Minute, 2*time.Minute)
	for i, t0 := range []int64{0, 60 * sec} {
		s.AddNIC("n1", "ens34", t0, NICCounters{HasBytes: true, RateBytes: 12.5e9, RxBytes: float64(i) * 1e9,
			Allowance: map[string]float64{"bw_in": 3241329 + float64(i)*900, "pps": 784}}, nil)
	}
	e := s.Of(60*sec, "GPU-1", "n1", "")
	f := Explain(InputWait, &e, &th)
	assert.Equal(t, Finding{Kind: NetworkSaturated, Why: "ens34: the instance's allowances exceeded 900 times/min, most bw_in"}, f)
}

func TestThrottleCauses(t *testing.T) {
	th := DefaultThresholds()
	var e Evidence
	assert.Equal(t, Thermal, Explain(ThermalWait, &e, &th).Kind)
	assert.Equal(t, PowerCap, Explain(PowerWait, &e, &th).Kind)
	assert.Equal(t, None, Explain(ThrottleWait, &e, &th).Kind)
	assert.Equal(t, None, Explain(NoWait, &e, &th).Kind)
}

func TestCounterReset(t *testing.T) {
	s := NewStore(time.Minute, 2*time.Minute)
	s.BindGPU("GPU-1", "n1", "pod-a")
	s.AddPod("n1", "pod-a", 0, PodCounters{CPUSeconds: 500, LimitCPUs: 1, Periods: 9000, Throttled: 9000})
	// The pod restarted: its counters start again, and the minute before
	// must not read as a negative rate.
	s.AddPod("n1", "pod-a", 30*sec, PodCounters{CPUSeconds: 1, LimitCPUs: 1, Periods: 10, Throttled: 0})
	e := s.Of(30*sec, "GPU-1", "n1", "")
	assert.False(t, e.HasPod, "one reading since the reset is no rate")
	s.AddPod("n1", "pod-a", 60*sec, PodCounters{CPUSeconds: 20, LimitCPUs: 1, Periods: 310, Throttled: 150})
	e = s.Of(60*sec, "GPU-1", "n1", "")
	require.True(t, e.HasPod)
	assert.InDelta(t, 0.5, e.Pod.ThrottledFrac, 1e-9)
}

func TestWindowSpansAMinute(t *testing.T) {
	s := NewStore(time.Minute, 2*time.Minute)
	s.BindGPU("GPU-1", "n1", "pod-a")
	// Throttled for the first two minutes, not at all for the last one:
	// the minute's window reads the last minute.
	for i := int64(0); i <= 12; i++ {
		thr := float64(min(i, 8)) * 100
		s.AddPod("n1", "pod-a", i*15*sec, PodCounters{LimitCPUs: 1, Periods: float64(i) * 150, Throttled: thr})
	}
	e := s.Of(180*sec, "GPU-1", "n1", "")
	require.True(t, e.HasPod)
	assert.InDelta(t, 0, e.Pod.ThrottledFrac, 1e-9)
	e = s.Of(180*sec, "GPU-1", "n1", "")
	assert.True(t, e.Pod.HasThrottle)
}

func TestNormBusID(t *testing.T) {
	assert.Equal(t, "0000:18:00.0", NormBusID("00000000:18:00.0"))
	assert.Equal(t, "0000:af:00.0", NormBusID("0000:AF:00.0"))
	assert.Equal(t, "0001:18:00.0", NormBusID("00000001:18:00.0"))
}

func TestSweep(t *testing.T) {
	s := nicStore(0.5, 0, true, 0)
	s.BindGPU("GPU-1", "n1", "pod-a")
	s.AddPod("n1", "pod-a", 60*sec, PodCounters{})
	s.Sweep(60 * sec)
	assert.Len(t, s.nics, 2)
	s.Sweep(60*sec + 21*60*sec)
	assert.Empty(t, s.nics)
	assert.Empty(t, s.pods)
	assert.Empty(t, s.rails)
	assert.Empty(t, s.byHost)
	assert.Empty(t, s.gpuPod)
}

// TestRailCollective: a rail NIC moving as much each way carries a
// collective; one moving one way (a dataset read) does not, nor does a
// busy NIC on another GPU's rail.
func TestRailCollective(t *testing.T) {
	const bus = "00000000:18:00.0"
	for _, tc := range []struct {
		name   string
		rx, tx float64 // shares of the rate
		want   bool
	}{
		{"all-reduce", 0.55, 0.52, true},
		{"dataset read", 0.70, 0.02, false},
		{"too little", 0.05, 0.05, false},
		{"lopsided", 0.60, 0.25, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(time.Minute, 2*time.Minute)
			for i, t0 := range []int64{0, 60 * sec} {
				f := float64(i)
				s.AddNIC("n1", "mlx5_0", t0, NICCounters{RxBytes: f * tc.rx * 50e9 * 60, TxBytes: f * tc.tx * 50e9 * 60, HasBytes: true, RateBytes: 50e9}, []string{bus})
			}
			r, ok := s.RailCollective(60*sec, "n1", bus, DefaultThresholds().RailCollective)
			assert.Equal(t, tc.want, ok)
			if ok {
				assert.Equal(t, "mlx5_0", r.Name)
			}
			_, ok = s.RailCollective(60*sec, "n1", "00000000:19:00.0", DefaultThresholds().RailCollective)
			assert.False(t, ok, "another GPU's rail")
		})
	}
}

// TestOneNICReading: a NIC read once is no evidence yet (no rate), unless
// its link is down.
func TestOneNICReading(t *testing.T) {
	th := DefaultThresholds()
	s := NewStore(time.Minute, 2*time.Minute)
	s.AddNIC("n1", "eth0", 0, NICCounters{RxBytes: 5, TxBytes: 5, HasBytes: true, RateBytes: 12.5e9, Up: true, HasUp: true}, nil)
	e := s.Of(0, "GPU-1", "n1", "")
	assert.Equal(t, None, Explain(InputWait, &e, &th).Kind, "no none_found from a first reading")
	s.AddNIC("n1", "eth1", 0, NICCounters{HasUp: true}, nil)
	e = s.Of(0, "GPU-1", "n1", "")
	assert.Equal(t, Finding{Kind: FabricErrors, Why: "eth1 is down"}, Explain(NetworkWait, &e, &th))
}

// TestAddNICKeepsItsOwnErrors: the store does not keep the caller's error
// counts (the analyzer reuses that slice for the next NIC), and a reading
// whose counts did not move shares the last one's without changing them.
func TestAddNICKeepsItsOwnErrors(t *testing.T) {
	s := NewStore(time.Minute, 2*time.Minute)
	scratch := []Count{{"symbol_error", 5}, {"link_downed", 1}}
	add := func(sec int64) {
		s.AddNIC("n1", "mlx5_0:1", sec*1e9, NICCounters{HasUp: true, Up: true, Errors: scratch}, []string{"0000:18:00.0"})
	}
	add(0)
	add(30) // unchanged: shares the first reading's counts
	scratch[0].Value = 5 + 600
	add(60)
	scratch[0].Value, scratch[1].Value = -1, -1 // the caller's next use of its buffer
	e := s.Of(60e9, "GPU-a", "n1", "0000:18:00.0")
	if len(e.Rail) != 1 {
		t.Fatalf("rail %+v", e.Rail)
	}
	if r := e.Rail[0]; r.WorstError != "symbol_error" || r.ErrorsPerMin != 600 || r.WorstPerMin != 600 {
		t.Errorf("rates %+v, want symbol_error +600/min", r)
	}
}
