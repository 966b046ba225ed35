package analysis

// Throttling without clock event reasons. dcgm-exporter's default counters
// carry neither DCGM_FI_DEV_CLOCKS_EVENT_REASONS nor the violation counters,
// so a GPU held back by its power limit or its temperature says so only
// through its clocks: its SM clock far below what the model reaches, while
// it draws its limit (a power cap) or runs in the slowdown range (thermal).
// A GPU that reports reasons is judged by them alone: there, a clock below
// its maximum with no reason set is a choice (an application clock, a
// power-saving governor), not a limit. So is an AMD GPU that reports its
// violation status: its package power tracking holds it at its cap under
// any full load, which is routine (the analyzer's AMD rules).

// clockRef is the most a GPU's SM clock reaches.
type clockRef struct {
	// given is the model's maximum SM clock (the processor's table), Hz.
	given float64
	// high is the most the GPU has reported, Hz.
	high float64
}

func (c *clockRef) observe(s *Sample) {
	if s.MaxSMClock > 0 {
		c.given = s.MaxSMClock
	}
	if s.Has&HasSMClock != 0 {
		c.high = max(c.high, s.SMClock)
	}
}

// reference is the maximum SM clock in MHz, the window's unit; 0 if unknown.
func (c *clockRef) reference() float64 { return max(c.given, c.high) / 1e6 }

// throttleFlags are the point's flags of a sample without clock event
// reasons: pClocked where its SM clock and the maximum are known, with
// pCapped where the clock is at most ThrottleClock of the maximum while the
// GPU draws PowerCap of its reference power or more, else pHot where it is
// while the GPU runs at ThermalTemp or hotter (a GPU at its cap and hot is
// held by the cap: the one limit a sample counts for). A window decides by majority, as it
// does with reasons (classify), so that a throttle is named as long as it
// holds most of the window, and not for a sample's dip.
func (a *Analyzer) throttleFlags(g *gpuState, s *Sample) uint8 {
	r := &a.cfg.Rules
	ref := g.clocks.reference()
	if s.Has&(HasReasons|HasViolation) != 0 || s.Has&HasSMClock == 0 || ref <= 0 || r.ThrottleClock <= 0 {
		return 0
	}
	flags := pClocked
	if s.SMClock/1e6 > r.ThrottleClock*ref {
		return flags
	}
	switch p := g.power.reference(); {
	case p > 0 && s.Has&HasPower != 0 && s.Power >= r.PowerCap*p:
		flags |= pCapped
	case s.Has&HasTemp != 0 && r.ThermalTemp > 0 && s.Temp >= r.ThermalTemp:
		flags |= pHot
	}
	return flags
}

// inferredThrottle is the evidence of a limit holding the clock down in more
// than ThrottleFraction of the window's samples that tell (throttleFlags):
// power_cap where the power cap held it at least as often as heat did,
// thermal otherwise; NoEvidence where it did not.
func (a *Analyzer) inferredThrottle(s *stats) Evidence {
	if s.nClocked == 0 || float64(s.nCapped+s.nHot) <= a.cfg.Rules.ThrottleFraction*float64(s.nClocked) {
		return NoEvidence
	}
	if s.nCapped >= s.nHot {
		return EvidencePowerCap
	}
	return EvidenceThermal
}
