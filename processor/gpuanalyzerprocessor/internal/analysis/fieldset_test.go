package analysis

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// defaultCounters shapes a sample as dcgm-exporter's default counters give
// it: graphics engine, tensor and DRAM activity, utilization, power, SM clock
// and temperature; no SM activity, NVLink bytes or clock event reasons. An
// H100's reference power (700 W) and maximum SM clock (1,980 MHz).
func defaultCounters(util, gr, tensor, dram, watts float64) func(*Sample) {
	return func(s *Sample) {
		s.Has = HasGPUUtil | HasGREngine | HasTensor | HasDRAMActive | HasPower | HasSMClock | HasTemp | HasFBUsed
		s.GPUUtil, s.GREngine, s.Tensor, s.DRAMActive, s.Power, s.RefPower = util, gr, tensor, dram, watts, 700
		s.SMClock, s.MaxSMClock, s.Temp, s.FBUsed = 1950e6, 1980e6, 65, 40<<30
		s.SMActive, s.Reasons = 0, 0
	}
}

// TestGraphicsEngineClasses: without SM activity, the graphics engine's
// activity tells idle, input and launch bound as SM activity would (it bounds
// it from above); a busy engine computes only where its tensor pipes or its
// power say so, has kernels resident doing little where both are low, and is
// unknown in between. Each verdict names its evidence.
func TestGraphicsEngineClasses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		mod      func(*Sample)
		class    Class
		evidence Evidence
	}{
		{"compute: tensor and power", defaultCounters(0.98, 0.92, 0.6, 0.35, 620), ComputeBound, EvidenceGREngine},
		{"compute: FP32, by power alone", defaultCounters(0.98, 0.92, 0.01, 0.35, 600), ComputeBound, EvidenceGREngine},
		{"memory: DRAM alone", defaultCounters(0.99, 0.93, 0.14, 0.85, 550), MemoryBound, EvidenceDRAMActive},
		{"input: engine busy under half the time", defaultCounters(0.35, 0.3, 0.12, 0.1, 290), InputBound, EvidenceGREngine},
		{"launch: engine waits, utilization high", defaultCounters(0.9, 0.3, 0.05, 0.1, 290), LaunchBound, EvidenceGREngine},
		{"launch: engine busy, tensor idle, low power", defaultCounters(0.97, 0.96, 0.03, 0.08, 280), LaunchBound, EvidenceGREngine},
		{"between: a collective over NVLink reads so", defaultCounters(0.99, 0.97, 0.07, 0.24, 400), Unknown, NoEvidence},
		{"idle by the engine", defaultCounters(0.02, 0.01, 0, 0, 72), Idle, EvidenceGREngine},
		{"no power: tensor decides", func(s *Sample) { defaultCounters(0.98, 0.92, 0.6, 0.35, 0)(s); s.Has &^= HasPower }, ComputeBound, EvidenceGREngine},
		{"no power, no tensor: no guess", func(s *Sample) { defaultCounters(0.98, 0.92, 0.02, 0.35, 0)(s); s.Has &^= HasPower }, Unknown, NoEvidence},
		{"MIG instance: engine, no utilization", func(s *Sample) {
			defaultCounters(0, 0.99, 0.93, 0.69, 0)(s)
			s.Has &^= HasGPUUtil | HasPower
		}, ComputeBound, EvidenceGREngine},
		{"SM activity wins", func(s *Sample) {
			defaultCounters(0.97, 0.96, 0.03, 0.08, 280)(s)
			s.Has |= HasSMActive
			s.SMActive = 0.9
		}, ComputeBound, EvidenceSMActive},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := feed(t, New(testConfig()), "g", 0, 60, tc.mod)
			require.Equal(t, tc.class, v[60].Class)
			require.Equal(t, tc.evidence, v[60].Basis.Evidence)
		})
	}
}

// TestInferredThrottle: without clock event reasons, an SM clock far below
// the model's maximum is a throttle where the GPU draws its power limit
// (power_cap: the real T4 page, 68 W of 70 W at 660 MHz of 1,590) or runs at
// 85 °C or more (thermal); not where the clock is near its maximum at the
// limit (routine power capping), nor where it is low and cool (idle clocks),
// nor where the GPU reports reasons, which then say all.
func TestInferredThrottle(t *testing.T) {
	t4 := func(watts, mhz, temp float64) func(*Sample) {
		return func(s *Sample) {
			defaultCounters(0.91, 0.16, 0.006, 0.09, watts)(s)
			s.RefPower, s.MaxSMClock, s.SMClock, s.Temp = 70, 1590e6, mhz*1e6, temp
		}
	}
	for _, tc := range []struct {
		name     string
		mod      func(*Sample)
		class    Class
		evidence Evidence
	}{
		{"power cap: the real T4", t4(68.2, 660, 74), Throttled, EvidencePowerCap},
		{"thermal", t4(40, 1100, 89), Throttled, EvidenceThermal},
		{"at the cap, clock near its maximum", t4(68.2, 1500, 74), LaunchBound, EvidenceGREngine},
		{"low clock, cool, below the cap", t4(30, 600, 40), LaunchBound, EvidenceGREngine},
		{"reasons reported, none set", func(s *Sample) { t4(68.2, 660, 74)(s); s.Has |= HasReasons }, LaunchBound, EvidenceGREngine},
		{"reasons reported, thermal set", func(s *Sample) { t4(68.2, 660, 74)(s); s.Has |= HasReasons; s.Reasons = 0x40 }, Throttled, EvidenceClockReasons},
		{"maximum learnt, not given", func(s *Sample) { t4(68.2, 660, 74)(s); s.MaxSMClock = 0 }, LaunchBound, EvidenceGREngine},
		{"AMD violation status reported, none over residency", func(s *Sample) {
			t4(68.2, 660, 74)(s)
			s.Has |= HasViolation
			s.ViolationPresent = 1 << ViolationPower
		}, LaunchBound, EvidenceGREngine},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := feed(t, New(testConfig()), "g", 0, 60, tc.mod)
			require.Equal(t, tc.class, v[60].Class)
			require.Equal(t, tc.evidence, v[60].Basis.Evidence)
		})
	}

	// A maximum learnt at full clock tells a later cap as the table would.
	a := New(testConfig())
	feed(t, a, "g", 0, 60, func(s *Sample) { t4(60, 1590, 60)(s); s.MaxSMClock = 0 })
	v := feed(t, a, "g", 61, 120, func(s *Sample) { t4(68.2, 660, 74)(s); s.MaxSMClock = 0 })
	require.Equal(t, Throttled, v[120].Class)
	require.Equal(t, EvidencePowerCap, v[120].Basis.Evidence)
}

// TestNetworkCollective: symmetric PCIe traffic (GPUDirect RDMA to the NIC)
// on half a job's GPUs or more is a collective over the network, with SM
// activity and without; one GPU alone, one without peers, and traffic one
// way (loading data, writing a checkpoint) are not.
func TestNetworkCollective(t *testing.T) {
	allReduce := func(rx, tx float64, profiled bool) func(s *Sample, t float64) {
		return func(s *Sample, ts float64) {
			if profiled {
				s.Has |= HasSMActive
				s.SMActive, s.GPUUtil = 0.12, 1
			} else {
				defaultCounters(1, 0.97, 0.02, 0.08, 260)(s)
			}
			s.Has |= HasPCIeRx | HasPCIeTx
			s.PCIeRx, s.PCIeTx = Counter{Value: rx * ts}, Counter{Value: tx * ts}
		}
	}
	for _, tc := range []struct {
		name      string
		group     string
		colliding int // GPUs of the 8 in the all-reduce; the others compute
		rx, tx    float64
		profiled  bool
		want      Class
	}{
		{"profiled, 8 of 8", "ml/llm", 8, 11e9, 11e9, true, CommunicationBound},
		{"default counters, 8 of 8", "ml/llm", 8, 11e9, 11e9, false, CommunicationBound},
		{"4 of 8", "ml/llm", 4, 11e9, 11e9, true, CommunicationBound},
		{"one GPU of 8", "ml/llm", 1, 11e9, 11e9, true, LaunchBound},
		{"no peers", "", 8, 11e9, 11e9, true, LaunchBound},
		{"mostly one way: loading data", "ml/llm", 8, 11e9, 4.5e9, true, LaunchBound},
		{"below the rate", "ml/llm", 8, 2e9, 2e9, true, LaunchBound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := New(testConfig())
			last := map[string]Verdict{}
			for ts := 0.0; ts <= 60; ts++ {
				for i := range 8 {
					s := busy(ts)
					s.Group = tc.group
					if i < tc.colliding {
						allReduce(tc.rx, tc.tx, tc.profiled)(&s, ts)
					}
					require.Equal(t, Accepted, a.Ingest(strconv.Itoa(i), &s))
				}
				a.Evaluate(func(v *Verdict) { last[v.ID] = *v })
			}
			v := last["0"]
			require.Equal(t, tc.want, v.Class)
			if tc.want == CommunicationBound {
				require.Equal(t, Basis{Evidence: EvidencePCIe, Scope: ScopeNetwork}, v.Basis)
			}
			if tc.colliding < 8 {
				require.Equal(t, ComputeBound, last["7"].Class, "a peer that computes")
			}
		})
	}
}
