package analysis

import (
	"math"
	"slices"
)

// compare decides which of a group's GPUs in this batch deviate from their
// peers' medians.
func (a *Analyzer) compare(gr *group) {
	r := &a.cfg.Straggler
	// Peers are the members that reported within the latest sampling
	// interval: in a replay, the rows of this timestamp; live, the agents
	// that scraped since the slowest of this batch last did.
	// The interval is the members' usual one, learnt per GPU: at a scrape
	// every 60 s, agents scraped at other offsets within the minute are
	// still peers; a missed scrape does not stretch it.
	var now, interval int64
	for _, m := range gr.members {
		if m.inBatch {
			now = max(now, m.last)
			interval = max(interval, m.cadence.typical())
		}
	}
	if interval <= 0 {
		interval = int64(a.cfg.Rules.Window)
	}
	a.since = now - interval
	// GPUs waiting at low power (withoutProfiling) with another of their
	// job: a collective. With at least half the others waiting, a member
	// near idle by its utilization is the one they wait for.
	reporting, waiting, collective := 0, 0, 0
	for _, m := range gr.members {
		if m.last > a.since {
			reporting++
			if m.waiting {
				waiting++
			}
			if m.netCollective {
				collective++
			}
		}
	}
	// Symmetric PCIe traffic on half the job's GPUs or more, two at least:
	// an all-reduce across nodes through their NICs, not each GPU loading
	// its own data (which receives) or writing a checkpoint (which sends).
	network := collective >= 2 && 2*collective >= reporting
	peers := reporting >= r.MinGroupSize
	held := peers && waiting >= 2 && 2*waiting >= reporting-1
	gr.held = held
	var medSM, mad, medClock, medStep, medPower, madPower float64
	var hasSM, hasClock, hasStep, hasPower bool
	if peers {
		medSM, hasSM = a.median(gr, wSM, func(x float64) float64 { return x })
		mad, _ = a.median(gr, wSM, func(x float64) float64 { return math.Abs(x - medSM) })
		medClock, hasClock = a.median(gr, wClock, func(x float64) float64 { return x })
		medStep, hasStep = a.median(gr, wStep, func(x float64) float64 { return x })
		medPower, madPower, hasPower = a.powerSpread(gr)
	}
	for _, m := range gr.members {
		if !m.inBatch {
			continue
		}
		m.deviating, m.score = false, 0
		switch {
		case m.basis.Evidence == EvidenceNIC:
			// Its rail's NIC moving the collective (onRail) is the
			// measurement the PCIe symmetry infers: it stands.
		case m.netCollective && network:
			m.class, m.basis = CommunicationBound, Basis{Evidence: EvidencePCIe, Scope: ScopeNetwork}
		case m.waiting && waiting >= 2:
			m.class, m.basis = CommunicationBound, basis(EvidencePower)
		}
		if !peers {
			continue
		}
		if held {
			// Waiting peers are never stragglers for the one they wait on;
			// the holder is one, by the share of the others that wait.
			if !m.waiting && m.cur.n[wSM] == 0 && m.cur.n[wUtil] > 0 && m.cur.mean[wUtil]/100 < r.HolderUtil {
				m.holding = true
				m.score = 2 * float64(waiting) / float64(reporting-1)
				m.deviating = true
			}
			if m.waiting || m.holding {
				continue
			}
		}
		s := &m.cur
		score := 0.0
		if hasStep && s.n[wStep] > 0 && medStep > 0 {
			score = max(score, s.mean[wStep]/(r.StepRatio*medStep))
		}
		if hasClock && hasSM && medSM >= r.ClockMinGroupSM && s.n[wClock] > 0 && s.mean[wClock] > 0 {
			score = max(score, r.ClockRatio*medClock/s.mean[wClock])
		}
		if hasSM && s.n[wSM] > 0 {
			limit := max(r.MADThreshold*1.4826*mad, r.MinSMDeviation)
			score = max(score, math.Abs(s.mean[wSM]-medSM)/limit)
		}
		// Without profiling, the ranks of a synchronous job that finish
		// their step first spin in the collective at a fraction of their
		// power until the slowest arrives: the one they wait for is the
		// one that works while they draw less. Upward only: a member that
		// draws less than its peers waits more, or is throttled (a class
		// of its own).
		if ratio, ok := m.powerRatio(); ok && hasPower && s.n[wSM] == 0 && ratio >= a.cfg.Rules.WorkingPower {
			limit := max(r.MADThreshold*1.4826*madPower, r.MinPowerDeviation)
			score = max(score, (ratio-medPower)/limit)
		}
		m.score = score
		m.deviating = score >= 1
	}
}

// median is the median of f applied to a windowed reading's mean, over the
// group's reporting members that have the reading.
func (a *Analyzer) median(gr *group, reading int, f func(float64) float64) (float64, bool) {
	a.scratch = a.scratch[:0]
	for _, m := range gr.members {
		if m.last > a.since && m.cur.n[reading] > 0 {
			a.scratch = append(a.scratch, f(m.cur.mean[reading]))
		}
	}
	if len(a.scratch) == 0 {
		return 0, false
	}
	return medianOf(a.scratch), true
}

// powerSpread is the median and the median absolute deviation of the power
// ratios (powerRatio) of the group's reporting members without SM activity.
func (a *Analyzer) powerSpread(gr *group) (median, mad float64, ok bool) {
	a.scratch = a.scratch[:0]
	for _, m := range gr.members {
		if m.last <= a.since || m.cur.n[wSM] > 0 {
			continue
		}
		if ratio, ok := m.powerRatio(); ok {
			a.scratch = append(a.scratch, ratio)
		}
	}
	if len(a.scratch) == 0 {
		return 0, 0, false
	}
	median = medianOf(a.scratch)
	for i, x := range a.scratch {
		a.scratch[i] = math.Abs(x - median)
	}
	return median, medianOf(a.scratch), true
}

func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
