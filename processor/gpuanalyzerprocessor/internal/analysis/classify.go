package analysis

// classify is the GPU's bottleneck class from its window, with what it rests
// on (g.basis). The rules are tried in the contract's order; each class is
// told from the best evidence the GPU reports:
//
//   - SM activity, where profiling reports it: the contract's rules.
//   - Else the graphics engine's activity (dcgm-exporter's default
//     counters, MIG instances): an upper bound of SM activity, so an
//     engine busy under half the time waits as an SM would (launch or
//     input bound); a busy engine is working only where its tensor pipes
//     or its power say so, as one kernel resident on a few SMs keeps the
//     engine as busy as a full load.
//   - Else GPU utilization and power (withoutProfiling).
//
// DRAM activity alone decides memory bound, NVLink traffic a collective
// within the node; symmetric PCIe traffic makes a GPU that is not computing
// a candidate for a collective over the network, which its job's peers
// confirm (compare).
func (a *Analyzer) classify(g *gpuState) Class {
	r := &a.cfg.Rules
	s := &g.cur
	g.basis, g.netCollective = Basis{}, false
	sm, hasSM := s.mean[wSM], s.n[wSM] > 0
	gr, hasGR := s.mean[wGR], s.n[wGR] > 0 && g.grSlot
	// A mean of whole percents equal to a threshold's percent stays equal
	// to it as a ratio: x/100 is correctly rounded, as the ratio is.
	util, hasUtil := s.mean[wUtil]/100, s.n[wUtil] > 0
	switch {
	case g.hasFault && g.last-g.faultAt < int64(r.FaultLookback):
		return g.by(Faulted, EvidenceErrors)
	case s.nReasons > 0 && float64(s.nThrottled) > r.ThrottleFraction*float64(s.nReasons):
		return g.by(Throttled, EvidenceClockReasons)
	case s.nReasons == 0:
		if e := a.inferredThrottle(s); e != NoEvidence {
			return g.by(Throttled, e)
		}
	}
	switch {
	case hasSM && sm < r.IdleSMActive:
		return g.by(Idle, EvidenceSMActive)
	case !hasSM && hasGR && gr < r.IdleSMActive:
		return g.by(Idle, EvidenceGREngine)
	case !hasSM && !hasGR && hasUtil && util < r.IdleGPUUtil:
		return g.by(Idle, EvidenceUtilization)
	case !hasSM && !hasGR:
		// Without profiling, DRAM activity is a fallback from the copy
		// engine and SM activity is unknown: power is the evidence left.
		return a.withoutProfiling(g)
	case s.n[wDRAM] > 0 && s.mean[wDRAM] >= r.MemoryBoundDRAM:
		return g.by(MemoryBound, EvidenceDRAMActive)
	}
	if hasSM {
		return a.bySM(g, sm, util, hasUtil)
	}
	return a.byGREngine(g, gr, util, hasUtil)
}

// bySM is the contract's classes of a busy GPU that is not memory bound, by
// its SM activity; symmetric PCIe traffic makes one that waits a candidate
// for a collective over the network.
func (a *Analyzer) bySM(g *gpuState, sm, util float64, hasUtil bool) Class {
	r, s := &a.cfg.Rules, &g.cur
	if sm < r.CommunicationSM {
		if s.n[wNVLink] > 0 && s.mean[wNVLink] >= r.CommunicationNVLink {
			g.basis = Basis{Evidence: EvidenceNVLink, Scope: ScopeNVLink}
			return CommunicationBound
		}
		g.netCollective = collective(s)
	}
	switch {
	case sm < r.LaunchBoundSM && hasUtil && util >= r.LaunchBoundUtil:
		return g.by(LaunchBound, EvidenceSMActive)
	case sm < r.InputBoundSM:
		return g.by(InputBound, EvidenceSMActive)
	}
	return g.by(ComputeBound, EvidenceSMActive)
}

// byGREngine classes a busy GPU that is not memory bound by its graphics
// engine's activity. An engine active under half the time bounds SM activity
// under half: the GPU waits between kernels, as the contract's SM rules
// say. A busy engine works where its tensor pipes or its power say so, and
// has kernels resident doing little (launch bound) where both are low; in
// between, a collective over NVLink the counters do not carry and work on a
// few SMs read alike, and naming either would be a guess: unknown.
func (a *Analyzer) byGREngine(g *gpuState, gr, util float64, hasUtil bool) Class {
	r, s := &a.cfg.Rules, &g.cur
	busy := gr >= r.InputBoundSM
	// Tensor pipes at ComputeTensor or more, or power at ComputePower of
	// the reference or more, is work; both low (power under LaunchPower)
	// is kernels resident doing little.
	tensor := s.n[wTensor] > 0 && s.mean[wTensor] >= r.ComputeTensor
	ratio, hasPower := g.powerRatio()
	if busy && (tensor || hasPower && ratio >= r.ComputePower) {
		return g.by(ComputeBound, EvidenceGREngine)
	}
	if s.n[wNVLink] > 0 && s.mean[wNVLink] >= r.CommunicationNVLink {
		g.basis = Basis{Evidence: EvidenceNVLink, Scope: ScopeNVLink}
		return CommunicationBound
	}
	g.netCollective = collective(s)
	switch {
	case busy && hasPower && ratio < r.LaunchPower:
		return g.by(LaunchBound, EvidenceGREngine)
	case busy:
		return g.by(Unknown, NoEvidence)
	case hasUtil && util >= r.LaunchBoundUtil:
		return g.by(LaunchBound, EvidenceGREngine)
	}
	return g.by(InputBound, EvidenceGREngine)
}

// by sets the class's evidence and returns the class.
func (g *gpuState) by(c Class, e Evidence) Class {
	g.basis = basis(e)
	return c
}

// pcieSymmetry is how close the two directions of a collective's PCIe
// traffic are: a ring or tree all-reduce sends as much as it receives, where
// loading data or a model receives, and a checkpoint sends.
const pcieSymmetry = 0.5

// symmetricPCIe says a sample's PCIe traffic is a collective's through the
// GPU's link to the NIC (GPUDirect RDMA): limit or more each way, the smaller
// direction at least pcieSymmetry of the larger.
func symmetricPCIe(rx, tx, limit float64) bool {
	return limit > 0 && min(rx, tx) >= limit && min(rx, tx) >= pcieSymmetry*max(rx, tx)
}

// collective says most of the window's samples with both PCIe rates show a
// collective's traffic (symmetricPCIe).
func collective(s *stats) bool { return s.nPCIe > 0 && 2*s.nCollective > s.nPCIe }
