// Package cause says why a GPU waits, from evidence beyond the GPU: its
// pod's cgroup (CPU limit and throttling, pressure), its node's pressure and
// the NIC of its rail. The analyzer classes a GPU by its own counters; a
// cause is the next question a platform engineer asks of an input-bound,
// communication-bound, throttled or straggling GPU, answered only where the
// node's evidence answers it: without evidence there is no cause, and with
// evidence that explains nothing the cause is NoneFound, never a guess at
// the hardware.
package cause

// Kind is what a wait is put down to.
type Kind uint8

// The causes.
const (
	// None: no cause was looked for, or there was no evidence to look at.
	None Kind = iota
	// CPUThrottled: the pod's CPU limit stops it (CFS throttling).
	CPUThrottled
	// CPUContention: the pod's or the node's tasks wait for a CPU
	// (pressure) without the pod being throttled: the node is
	// oversubscribed.
	CPUContention
	// MemoryPressure: the pod's or the node's tasks stall on memory
	// (reclaim, swap) at its limit.
	MemoryPressure
	// IOWait: the pod's or the node's tasks stall on block I/O (a slow
	// dataset read, a checkpoint written).
	IOWait
	// NetworkSaturated: the NIC carrying the GPU's traffic runs near its
	// link rate, or the cloud's allowance for the instance is exceeded.
	NetworkSaturated
	// FabricErrors: the GPU's rail is down, flapping or counting link
	// errors.
	FabricErrors
	// Thermal and PowerCap: a throttled GPU held back by its temperature
	// or its power limit.
	Thermal
	PowerCap
	// NoneFound: the node's evidence was read and explains nothing.
	NoneFound
	NumKinds
)

var kindNames = [NumKinds]string{"", "cpu_throttled", "cpu_contention", "memory_pressure", "io_wait",
	"network_saturated", "fabric_errors", "thermal", "power_cap", "none_found"}

// String is the cause's name; empty for None.
func (k Kind) String() string { return kindNames[k] }

// Kinds lists the causes other than None.
func Kinds() []Kind {
	out := make([]Kind, 0, NumKinds-1)
	for k := None + 1; k < NumKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Finding is a cause with what it rests on.
type Finding struct {
	Kind Kind
	// Why is the evidence in a person's words, e.g. "throttled in 38 % of
	// periods at a 4-CPU limit"; empty for None.
	Why string
}

// Wait is the kind of verdict a cause is looked for.
type Wait uint8

// The verdicts that get a cause.
const (
	// NoWait: a verdict no cause is looked for (idle, compute bound...).
	NoWait Wait = iota
	// InputWait: input bound: the GPU waits for its host.
	InputWait
	// NetworkWait: communication bound over the network (or a collective
	// inferred from PCIe): the GPU waits for its rail or its peers.
	NetworkWait
	// ThermalWait and PowerWait: throttled, by temperature or by power.
	ThermalWait
	PowerWait
	// ThrottleWait: throttled by clock reasons that name neither.
	ThrottleWait
)
