package cause

import (
	"fmt"
	"sort"
)

// Straggler explains why a straggler is slower than its job's other GPUs,
// as stragglers are found: by comparison. Evidence the straggler shares
// with its peers explains nothing (a job whose every pod is throttled has
// no straggler by it); evidence only the straggler's node shows does. With
// no evidence on the straggler there is no cause; with evidence that does
// not set it apart, NoneFound, and the product says workload imbalance,
// never the hardware.
func Straggler(self *Evidence, host string, peers []Evidence, th *Thresholds) Finding {
	if !self.Any() {
		return Finding{}
	}
	// Its rail down or erring while the peers' rails are not.
	if f, ok := fabric(self.Rail, th); ok && median(peers, railErrors) < th.FabricErrors {
		return f
	}
	if p := &self.Pod; self.HasPod && p.HasThrottle && p.ThrottledFrac >= th.Throttled &&
		median(peers, throttled) < th.Throttled/2 {
		return Finding{Kind: CPUThrottled,
			Why: fmt.Sprintf("throttled in %s of periods at a %s-CPU limit; the job's other pods %s", pct(p.ThrottledFrac), num(p.LimitCPUs), pct(median(peers, throttled)))}
	}
	for _, r := range []struct {
		res  int
		kind Kind
		th   float64
		what string
	}{{CPU, CPUContention, th.CPUPressure, "CPU"}, {Memory, MemoryPressure, th.MemoryPressure, "memory"}, {IO, IOWait, th.IOPressure, "I/O"}} {
		own := stall(self, r.res)
		if own >= r.th && median(peers, func(e *Evidence) float64 { return stall(e, r.res) }) < r.th/2 {
			return Finding{Kind: r.kind,
				Why: fmt.Sprintf("%s pressure %s on %s, under %s on the job's other nodes", r.what, pct(own), host, pct(r.th/2))}
		}
	}
	if f, ok := saturated(self.Rail, th); ok && median(peers, railUtil) < th.Saturated {
		return f
	}
	return Finding{Kind: NoneFound,
		Why: fmt.Sprintf("nothing on %s differs from the job's other nodes: likely workload imbalance", host)}
}

// stall is the larger of the pod's and the node's pressure on res.
func stall(e *Evidence, res int) float64 {
	var s float64
	if e.HasPod && e.Pod.Stall.Has[res] {
		s = e.Pod.Stall.Some[res]
	}
	if e.HasNode && e.Node.Has[res] {
		s = max(s, e.Node.Some[res])
	}
	return s
}

func railErrors(e *Evidence) float64 {
	var n float64
	for _, r := range e.Rail {
		n = max(n, r.ErrorsPerMin)
	}
	return n
}

func railUtil(e *Evidence) float64 {
	var u float64
	for _, r := range e.Rail {
		u = max(u, r.Util)
	}
	return u
}

func throttled(e *Evidence) float64 {
	if e.HasPod && e.Pod.HasThrottle {
		return e.Pod.ThrottledFrac
	}
	return 0
}

// median of f over the peers; 0 without peers, so that a lone straggler's
// own evidence stands.
func median(peers []Evidence, f func(*Evidence) float64) float64 {
	if len(peers) == 0 {
		return 0
	}
	xs := make([]float64, len(peers))
	for i := range peers {
		xs[i] = f(&peers[i])
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}
