package analysis

import "slices"

// UsageState is what a GPU's wall time was spent on, for cost accounting.
// Every nanosecond between a GPU's first and last sample is in exactly one.
type UsageState uint8

// The usage states.
const (
	// Used: the GPU was busy (SM activity, or GPU utilization without
	// profiling, at or above the idle class's threshold).
	Used UsageState = iota
	// Waiting: busy by utilization at a small fraction of its reference
	// power, without profiling: kernels resident, little done, typically
	// waiting in a collective for a peer. Paid for and not working.
	Waiting
	// WorkloadIdle: idle while a pod held the GPU (a zombie allocation).
	WorkloadIdle
	// ClusterIdle: idle and no pod held the GPU (unallocated capacity).
	ClusterIdle
	// UsageUnknown: the GPU reported neither reading, or did not report
	// for a gap (a few of its own sampling intervals).
	UsageUnknown
	NumUsageStates
)

var usageStateNames = [NumUsageStates]string{"used", "waiting", "workload_idle", "cluster_idle", "unknown"}

func (s UsageState) String() string { return usageStateNames[s] }

// UsageStates lists every usage state.
func UsageStates() []UsageState {
	return []UsageState{Used, Waiting, WorkloadIdle, ClusterIdle, UsageUnknown}
}

// activity is whether a GPU works, by the readings it has: whatever its
// bottleneck class, which may stay unknown (no profiling) or name something
// else (a faulted GPU may still work, or not).
type activity uint8

const (
	// activityUnknown: the window has neither SM activity nor GPU
	// utilization.
	activityUnknown activity = iota
	activityIdle
	activityBusy
	activityWaiting
)

// activityOf reads a window's means by the idle class's own thresholds: SM
// activity where profiling is reported, else GPU utilization. A GPU busy by
// these is used, unless its power says it waits (withoutProfiling's rule); one
// that is not is idle, the class's rule exactly. With power alone, it is
// the class's power rule: working, idle, or unknown between.
func (a *Analyzer) activityOf(g *gpuState, s *stats) activity {
	r := &a.cfg.Rules
	switch {
	case s.n[wSM] > 0:
		if s.mean[wSM] < r.IdleSMActive {
			return activityIdle
		}
		return activityBusy
	case s.n[wUtil] > 0:
		util := s.mean[wUtil] / 100
		ratio, hasPower := g.powerRatioOf(s)
		switch {
		case util < r.IdleGPUUtil:
			return activityIdle
		case util >= r.LaunchBoundUtil && hasPower && ratio < r.WaitingPower:
			return activityWaiting
		}
		return activityBusy
	}
	if ratio, ok := g.powerRatioOf(s); ok {
		switch {
		case ratio >= r.WorkingPower:
			return activityBusy
		case ratio < r.IdlePower:
			return activityIdle
		}
	}
	return activityUnknown
}

// stateOf is the usage state of a GPU whose activity is act; podHeld says a
// pod holds it. Whether a GPU is used does not depend on knowing why: a busy
// GPU without profiling fields (class unknown) is used.
func stateOf(act activity, podHeld bool) UsageState {
	switch {
	case act == activityBusy:
		return Used
	case act == activityWaiting:
		return Waiting
	case act == activityIdle && podHeld:
		return WorkloadIdle
	case act == activityIdle:
		return ClusterIdle
	default:
		return UsageUnknown
	}
}

// Usage is a GPU's wall time and cost per usage state, cumulative since the
// analyzer first saw the GPU (Verdict.UsageStart).
type Usage struct {
	// Nanos is the wall time in each state. Integer nanoseconds, so that the
	// states add up to the time from the first to the last sample exactly.
	Nanos [NumUsageStates]int64
	// Cost is the price of that time, in the configured currency.
	Cost [NumUsageStates]float64
	// State is the state from this sample on; PrevState the state of the
	// interval this sample closed (equal to State unless it just changed).
	State, PrevState UsageState
	// PricePerHour is the GPU's price at this sample.
	PricePerHour float64
	// Report says the counters are due to be sent: at the GPU's first
	// sample, when its state changes, and at least every
	// Config.UsageReport. Cumulative counters lose nothing when sent less
	// often than sampled; sending each GPU's twice more metrics at every
	// sample would cost a quarter more allocations.
	Report bool
	// Split says the GPU is shared and these counters are what its
	// owners did not use: any state may have changed, not only State and
	// PrevState.
	Split bool
}

// ShareUsage is one owner's part of a shared GPU's wall time and cost, per
// usage state, since Start.
type ShareUsage struct {
	Key   string
	Nanos [NumUsageStates]int64
	Cost  [NumUsageStates]float64
	Start int64
}

// usage is what a GPU keeps for Usage between samples.
type usage struct {
	nanos [NumUsageStates]int64
	cost  [NumUsageStates]float64
	prev  UsageState
	// price is the price per hour at the latest sample.
	price   float64
	counted bool
	// reported is when Report was last true.
	reported int64
	// split is set once the GPU had owners' shares.
	split bool
}

// accountUsage attributes the interval from the GPU's previous sample to
// this one, at time t: all of it to the state the GPU was in at the previous
// sample (its activity and pod then), at the price it had then. A gap is
// time the analyzer did not see: unknown. Called for a GPU already seen,
// before the sample's readings replace the previous ones. A GPU restored
// after a restart is not yet seen: its usage counters, not kept across the
// restart, start at its first sample after it.
//
// A shared GPU's interval is split first: each owner gets the part its
// processes kept the GPU busy (in proportion, where their parts add up to
// more than the whole, as MPS's overlapping kernels can), as used, or as
// waiting where the GPU waited; what is left stays the GPU's, idle while
// the owners hold it. In whole nanoseconds, so that the owners' time and
// the GPU's add up to the interval exactly.
func (g *gpuState) accountUsage(t int64, gap bool, shares []Share) {
	u := &g.usage
	interval := t - g.last
	st := stateOf(g.activity, g.podAttributed)
	if gap {
		st = UsageUnknown
	}
	left := interval
	if len(shares) > 0 && !gap {
		left = g.splitUsage(interval, st, shares)
		u.split = true
		if st != UsageUnknown {
			st = WorkloadIdle
		}
	} else {
		g.shareUsage = g.shareUsage[:0]
		clear(g.owners)
	}
	u.nanos[st] += left
	u.cost[st] += float64(left) / 3.6e12 * u.price
	u.prev, u.counted = st, true
}

// splitUsage gives each owner its part of the interval that this sample
// closes and returns what is left. Owners without a share in this sample
// are forgotten: their counters were sent with their last share.
func (g *gpuState) splitUsage(interval int64, st UsageState, shares []Share) int64 {
	var total float64
	for _, sh := range shares {
		total += min(max(sh.Util, 0), 1)
	}
	scale := 1.0
	if total > 1 {
		scale = 1 / total
	}
	ownerState := Used
	if st == Waiting {
		ownerState = Waiting
	}
	if g.owners == nil {
		g.owners = map[string]*ShareUsage{}
	}
	g.shareUsage = g.shareUsage[:0]
	left := interval
	for _, sh := range shares {
		o := g.owners[sh.Key]
		if o == nil {
			// An owner's time starts with the interval of its first share.
			o = &ShareUsage{Key: sh.Key, Start: g.last}
			g.owners[sh.Key] = o
		}
		n := min(int64(float64(interval)*min(max(sh.Util, 0), 1)*scale), left)
		left -= n
		o.Nanos[ownerState] += n
		o.Cost[ownerState] += float64(n) / 3.6e12 * g.usage.price
		g.shareUsage = append(g.shareUsage, *o)
	}
	if len(g.owners) > len(shares) {
		for k := range g.owners {
			if !slices.ContainsFunc(shares, func(sh Share) bool { return sh.Key == k }) {
				delete(g.owners, k)
			}
		}
	}
	return left
}

// usageVerdict is the GPU's Usage after its evaluation; every is
// Config.UsageReport.
func (g *gpuState) usageVerdict(every int64) Usage {
	u := &g.usage
	st := stateOf(g.activity, g.podAttributed)
	prev := u.prev
	if !u.counted {
		prev = st
	}
	// A shared GPU's counters go out with its owners', at every sample:
	// an owner's are sent whenever it has a share, as it may be gone at
	// the next, and the GPU's are the rest of the same time.
	report := !u.counted || prev != st || g.last-u.reported >= every || len(g.shareUsage) > 0
	if report {
		u.reported = g.last
	}
	return Usage{Nanos: u.nanos, Cost: u.cost, State: st, PrevState: prev, PricePerHour: u.price, Report: report, Split: u.split}
}
