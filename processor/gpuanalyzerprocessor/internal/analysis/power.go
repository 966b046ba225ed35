package analysis

import "math"

// Power is the evidence of work where profiling fields are absent. GPU
// utilization reads 100 % as long as one kernel is resident, so a GPU that
// spins in a collective waiting for a peer reads as busy as one that works;
// its power tells them apart. On 8 H100s training Llama-3.1-8B (the real
// recording in cmd/gpureplay/testdata/real), the ranks waiting for a
// checkpoint read 100 % utilization at 146-161 W, a fifth of the 700 W
// board power; training, 84-97 % at 530-570 W, about four fifths; idle with
// nothing loaded, 70-74 W, a tenth.

// powerRef is what a GPU draws at full work, and what it has drawn.
type powerRef struct {
	// given is the reference the sample brought: the GPU's enforced power
	// limit, or its model's board power (the processor's table).
	given float64
	// low and high are the least and most it has drawn while reporting.
	low, high float64
	seen      bool
}

// learnSpread is how much more than its lowest draw a GPU must have drawn
// before its highest is taken as its reference: a GPU that has only ever
// idled or waited (H100: 70 W idle, 160 W waiting, 2.3 times) has not shown
// what work draws, and its power tells nothing; one that has worked (530 W,
// 7.5 times its idle draw) has.
const learnSpread = 3

func (p *powerRef) observe(s *Sample) {
	if s.RefPower > 0 && !math.IsInf(s.RefPower, 0) {
		p.given = s.RefPower
	}
	if s.Has&HasPower == 0 || s.Power <= 0 {
		return
	}
	if !p.seen {
		p.low, p.high, p.seen = s.Power, s.Power, true
		return
	}
	p.low, p.high = min(p.low, s.Power), max(p.high, s.Power)
}

// reference is the power at full work: the given one, else the most the
// GPU has drawn once it has drawn learnSpread times its least; 0 when it
// cannot be known.
func (p *powerRef) reference() float64 {
	switch {
	case p.given > 0:
		return p.given
	case p.seen && p.high >= learnSpread*p.low:
		return p.high
	}
	return 0
}

// powerRatio is the window's mean power over the reference.
func (g *gpuState) powerRatio() (float64, bool) { return g.powerRatioOf(&g.cur) }

// powerRatioOf is the mean power of s over the reference.
func (g *gpuState) powerRatioOf(s *stats) (float64, bool) {
	ref := g.power.reference()
	if ref <= 0 || s.n[wPower] == 0 {
		return 0, false
	}
	return s.mean[wPower] / ref, true
}

// withoutProfiling classes a GPU that reports no SM activity and is not idle
// by its utilization: by its power, against its reference.
//
//   - Busy by utilization (at least the launch-bound threshold) at under
//     WaitingPower of its reference: it waits, kernels resident and doing
//     little. launch_bound for now; compare makes it communication_bound
//     when peers of its job wait with it (a collective).
//   - At WorkingPower or more, busy by utilization or reporting none: it
//     works. Its class stays unknown: power tells work from waiting, not
//     whether compute or memory bounds the work, and naming one would be a
//     guess (the contract's rule for GPUs without profiling). Its usage is
//     used (activityOf), which is what tells it from a waiting GPU.
//   - Power only, under IdlePower: idle.
//   - Anything else, or no power, or no reference: unknown.
//
// An AMD GPU, which has no SM activity either, says more of its work: its
// memory controllers' activity (umc) is its memory traffic, and its XGMI
// links' throughput against what they carry its communication. Once power
// has not found it waiting or idle, these class it memory or communication
// bound, in the order the profiled rules try them (classify).
func (a *Analyzer) withoutProfiling(g *gpuState) Class {
	r, s := &a.cfg.Rules, &g.cur
	ratio, hasPower := g.powerRatio()
	util, hasUtil := s.mean[wUtil]/100, s.n[wUtil] > 0
	switch {
	case hasPower && hasUtil && util >= r.LaunchBoundUtil && ratio < r.WaitingPower:
		g.waiting = true
		return g.by(LaunchBound, EvidencePower)
	case hasPower && !hasUtil && ratio < r.IdlePower:
		return g.by(Idle, EvidencePower)
	case s.n[wUMC] > 0 && !g.grSlot && s.mean[wUMC] >= r.MemoryBoundUMC:
		return g.by(MemoryBound, EvidenceUMCActivity)
	case g.xgmiCap > 0 && s.n[wNVLink] > 0 && s.mean[wNVLink] >= r.CommunicationXGMI*g.xgmiCap:
		g.basis = Basis{Evidence: EvidenceXGMI, Scope: ScopeXGMI}
		return CommunicationBound
	}
	g.netCollective = collective(s)
	return g.by(Unknown, NoEvidence)
}

// fbHeldBytes is the frame buffer in use above which a GPU holds a
// workload's memory: more than a CUDA context alone (about half a GiB), less
// than any model's weights.
const fbHeldBytes = 1 << 30
