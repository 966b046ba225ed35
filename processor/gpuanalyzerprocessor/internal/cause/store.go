package cause

// The store keeps the node evidence as it arrives (from the gpu_node
// receiver, in batches of its own) and turns counters into rates over a
// window, so that a verdict evaluated later reads the evidence of its
// minute, not of one 15-second scrape.

// Pressure is a PSI reading: the totals of time some and all tasks stalled,
// in seconds, per resource.
type Pressure struct {
	Some, Full [NumResources]float64
	Has        [NumResources]bool
}

// The pressure resources, in the kernel's order.
const (
	CPU = iota
	Memory
	IO
	NumResources
)

// PodCounters are one pod's cgroup figures at one time.
type PodCounters struct {
	// CPUSeconds is the CPU time used; Periods, Throttled and
	// ThrottledSeconds the CFS bandwidth counters (zero without a limit).
	CPUSeconds, ThrottledSeconds float64
	Periods, Throttled           float64
	// LimitCPUs is the CPU limit; 0 without one.
	LimitCPUs float64
	// MemoryBytes and MemoryLimit (0 without one).
	MemoryBytes, MemoryLimit float64
	Pressure                 Pressure
}

// NICCounters are one NIC port's figures at one time.
type NICCounters struct {
	RxBytes, TxBytes float64
	HasBytes         bool
	// RateBytes is the link's rate in bytes per second; 0 unknown.
	RateBytes float64
	// Up and HasUp: the link state, where reported.
	Up, HasUp bool
	// Errors are the error counters by name (symbol_error, ...), one
	// each, in the order the receiver sent them. A slice, not a map: a
	// gateway keeps a window of readings of every rail of its fleet, and
	// an RDMA port has a dozen error counters.
	Errors []Count
	// Allowance is the cloud's shaping counters by allowance (bw_in, ...).
	Allowance map[string]float64
}

// Count is one named counter's value.
type Count struct {
	Name  string
	Value float64
}

// countOf is the value of the counter name in cs, looked for first at i:
// two readings of one port list their counters in the same order.
func countOf(cs []Count, i int, name string) (float64, bool) {
	if i < len(cs) && cs[i].Name == name {
		return cs[i].Value, true
	}
	for _, c := range cs {
		if c.Name == name {
			return c.Value, true
		}
	}
	return 0, false
}

// Rates are a pod's, node's or NIC's evidence over the window.
type PodRates struct {
	// ThrottledFrac is the share of CFS periods throttled; HasThrottle says
	// the pod has a CPU limit and ran periods.
	ThrottledFrac float64
	HasThrottle   bool
	LimitCPUs     float64
	// UsedCPUs is the CPU time used per second.
	UsedCPUs                 float64
	MemoryBytes, MemoryLimit float64
	Stall                    Stalls
}

// Stalls is the share of time some tasks stalled, per resource.
type Stalls struct {
	Some [NumResources]float64
	Has  [NumResources]bool
}

// NICRates are a NIC port's evidence over the window.
type NICRates struct {
	Name string
	// Util is the busier direction's bytes against the link's rate; HasUtil
	// says both were known.
	Util    float64
	HasUtil bool
	// RxUtil and TxUtil are each direction's share of the rate: a
	// collective moves as much each way, a dataset read one way.
	RxUtil, TxUtil float64
	RateBytes      float64
	Up, HasUp      bool
	// ErrorsPerMin is the sum of the error counters' increase per minute;
	// WorstError the counter that rose most and WorstPerMin its rise.
	ErrorsPerMin, WorstPerMin float64
	WorstError                string
	// AllowancePerMin is the cloud shaping counters' rise per minute,
	// WorstAllowance the one that rose most.
	AllowancePerMin float64
	WorstAllowance  string
}
