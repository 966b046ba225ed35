package analysis

// UsageState is what a GPU's wall time was spent on, for cost accounting.
// Every nanosecond between a GPU's first and last sample is in exactly one.
type UsageState uint8

// The usage states.
const (
	// Used: the class was neither idle nor unknown.
	Used UsageState = iota
	// WorkloadIdle: idle while a pod held the GPU (a zombie allocation).
	WorkloadIdle
	// ClusterIdle: idle and no pod held the GPU (unallocated capacity).
	ClusterIdle
	// UsageUnknown: the class was unknown, or the GPU did not report for
	// longer than the window.
	UsageUnknown
	NumUsageStates
)

var usageStateNames = [NumUsageStates]string{"used", "workload_idle", "cluster_idle", "unknown"}

func (s UsageState) String() string { return usageStateNames[s] }

// UsageStates lists every usage state.
func UsageStates() []UsageState {
	return []UsageState{Used, WorkloadIdle, ClusterIdle, UsageUnknown}
}

// StateOf is the usage state of a GPU in class c; podHeld says a pod holds
// it. Any class other than idle and unknown counts as used, so classes added
// later are used time without a change here.
func StateOf(c Class, podHeld bool) UsageState {
	switch {
	case c == Unknown:
		return UsageUnknown
	case c == Idle && podHeld:
		return WorkloadIdle
	case c == Idle:
		return ClusterIdle
	default:
		return Used
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
}

// accountUsage attributes the interval from the GPU's previous sample to this
// one, s at time t: all of it to the state the GPU was in at the previous
// sample (its class and pod then), at the price it had then. An interval
// longer than maxGap is time the analyzer did not see: unknown. Called
// before the sample's readings replace the previous ones. A GPU restored
// after a restart is not yet seen: its usage counters, not kept across the
// restart, start at its first sample after it.
func (g *gpuState) accountUsage(s *Sample, t, maxGap int64) {
	u := &g.usage
	if g.seen {
		interval := t - g.last
		st := StateOf(g.class, g.podAttributed)
		if interval > maxGap {
			st = UsageUnknown
		}
		u.nanos[st] += interval
		u.cost[st] += float64(interval) / 3.6e12 * u.price
		u.prev, u.counted = st, true
	}
	u.price = s.PricePerHour
}

// usageVerdict is the GPU's Usage after its evaluation; every is
// Config.UsageReport.
func (g *gpuState) usageVerdict(every int64) Usage {
	u := &g.usage
	st := StateOf(g.class, g.podAttributed)
	prev := u.prev
	if !u.counted {
		prev = st
	}
	report := !u.counted || prev != st || g.last-u.reported >= every
	if report {
		u.reported = g.last
	}
	return Usage{Nanos: u.nanos, Cost: u.cost, State: st, PrevState: prev, PricePerHour: u.price, Report: report}
}
