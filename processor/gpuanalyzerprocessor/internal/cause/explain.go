package cause

import (
	"fmt"
	"math"
	"strings"
)

// Thresholds are where the evidence starts to explain a wait.
type Thresholds struct {
	// Throttled: a pod throttled in at least this share of its CFS
	// periods is held by its CPU limit.
	Throttled float64
	// CPUPressure, MemoryPressure, IOPressure: tasks stalled (PSI "some")
	// at least this share of the time.
	CPUPressure, MemoryPressure, IOPressure float64
	// Saturated: a NIC's busier direction at this share of its rate.
	Saturated float64
	// FabricErrors: a rail's error counters rising this much per minute.
	FabricErrors float64
	// RailCollective: a rail NIC moving this share of its rate each way
	// carries a collective (Store.RailCollective).
	RailCollective float64
}

// DefaultThresholds are the shipped thresholds. Why these values:
//   - 10 % of periods throttled: a data loader throttled one period in ten
//     loses a tenth of its CPU at every step, the point where Kubernetes
//     platform teams (and the kube-prometheus CPUThrottlingHigh alert, at
//     25 %) start to look.
//   - 20 % CPU and I/O pressure and 10 % memory pressure: PSI's "some"
//     share at which a loader's tasks lose a fifth of their time waiting;
//     memory stalls cost more (reclaim blocks the allocating thread).
//   - 80 % of the link rate: past it a NIC's queues build and collectives
//     take the tail of the transfer time.
//   - 10 errors a minute: a healthy link counts none; a marginal one
//     counts symbol errors or recoveries steadily.
//   - 20 % of the rate each way for a collective: a GPU's all-reduce over
//     a 400 Gb/s rail moves tens of Gb/s each way while it lasts; control
//     traffic and metrics move well under 1 %.
func DefaultThresholds() Thresholds {
	return Thresholds{Throttled: 0.10, CPUPressure: 0.20, MemoryPressure: 0.10, IOPressure: 0.20, Saturated: 0.80, FabricErrors: 10,
		RailCollective: 0.20}
}

// Explain puts the wait down to a cause by the GPU's evidence. A wait
// with no evidence at all has no cause (None): the product says nothing it
// cannot back.
func Explain(w Wait, e *Evidence, th *Thresholds) Finding {
	switch w {
	case ThermalWait:
		return Finding{Kind: Thermal, Why: "the GPU's temperature holds its clocks back"}
	case PowerWait:
		return Finding{Kind: PowerCap, Why: "the GPU runs at its power limit"}
	case NoWait, ThrottleWait:
		return Finding{}
	}
	if !e.Any() {
		return Finding{}
	}
	if w == NetworkWait {
		return network(e, th)
	}
	return input(e, th)
}

// input explains a GPU waiting for its host: the pod's CPU limit first
// (the cause a user fixes in one line), then the node's contention, memory,
// I/O, then a saturated NIC (a dataset read over the network).
func input(e *Evidence, th *Thresholds) Finding {
	if f, ok := host(e, th); ok {
		return f
	}
	nics := append(append([]NICRates(nil), e.Rail...), e.Others...)
	if f, ok := saturated(nics, th); ok {
		return f
	}
	if f, ok := shaped(nics); ok {
		return f
	}
	return Finding{Kind: NoneFound, Why: "no CPU limit reached, no pressure, no NIC near its rate: the data pipeline itself is slow"}
}

// host is a cause on the host: CPU limit, CPU, memory or I/O pressure.
func host(e *Evidence, th *Thresholds) (Finding, bool) {
	p := &e.Pod
	if e.HasPod && p.HasThrottle && p.ThrottledFrac >= th.Throttled {
		return Finding{Kind: CPUThrottled,
			Why: fmt.Sprintf("throttled in %s of periods at a %s-CPU limit", pct(p.ThrottledFrac), num(p.LimitCPUs))}, true
	}
	for _, r := range []struct {
		res  int
		kind Kind
		th   float64
		what string
	}{{CPU, CPUContention, th.CPUPressure, "waited for a CPU"}, {Memory, MemoryPressure, th.MemoryPressure, "stalled on memory"}, {IO, IOWait, th.IOPressure, "stalled on I/O"}} {
		if e.HasPod && p.Stall.Has[r.res] && p.Stall.Some[r.res] >= r.th {
			why := fmt.Sprintf("the pod's tasks %s %s of the time", r.what, pct(p.Stall.Some[r.res]))
			if r.res == CPU && p.HasThrottle {
				why += ", not throttled by its limit"
			}
			if r.res == Memory && p.MemoryLimit > 0 {
				why += fmt.Sprintf(" (%s of its %s limit)", gib(p.MemoryBytes), gib(p.MemoryLimit))
			}
			return Finding{Kind: r.kind, Why: why}, true
		}
		if e.HasNode && e.Node.Has[r.res] && e.Node.Some[r.res] >= r.th {
			return Finding{Kind: r.kind,
				Why: fmt.Sprintf("the node's tasks %s %s of the time", r.what, pct(e.Node.Some[r.res]))}, true
		}
	}
	return Finding{}, false
}

// network explains a GPU waiting in a collective over the network by its
// rail: down or erring, saturated, or fine (then its peers are slower).
func network(e *Evidence, th *Thresholds) Finding {
	nics := e.Rail
	if len(nics) == 0 {
		// No rail known: a node-wide fault or saturation still explains
		// it; a healthy NIC elsewhere on the node says nothing.
		nics = e.Others
	}
	if f, ok := fabric(nics, th); ok {
		return f
	}
	if f, ok := saturated(nics, th); ok {
		return f
	}
	if len(e.Rail) > 0 {
		r := busiest(e.Rail)
		why := r.Name + " healthy"
		if r.HasUtil {
			why = fmt.Sprintf("%s at %s of %s", r.Name, pct(r.Util), gbits(r.RateBytes))
		}
		return Finding{Kind: NoneFound, Why: why + ": the collective waits on a slower peer"}
	}
	return Finding{}
}

// fabric is a NIC down or counting errors.
func fabric(nics []NICRates, th *Thresholds) (Finding, bool) {
	for _, r := range nics {
		if r.HasUp && !r.Up {
			return Finding{Kind: FabricErrors, Why: r.Name + " is down"}, true
		}
	}
	var worst *NICRates
	for i := range nics {
		if nics[i].ErrorsPerMin >= th.FabricErrors && (worst == nil || nics[i].ErrorsPerMin > worst.ErrorsPerMin) {
			worst = &nics[i]
		}
	}
	if worst == nil {
		return Finding{}, false
	}
	return Finding{Kind: FabricErrors,
		Why: fmt.Sprintf("%s +%s/min on %s", errorName(worst.WorstError), count(worst.WorstPerMin), worst.Name)}, true
}

// saturated is the busiest NIC at or past the threshold.
func saturated(nics []NICRates, th *Thresholds) (Finding, bool) {
	r := busiest(nics)
	if !r.HasUtil || r.Util < th.Saturated {
		return Finding{}, false
	}
	return Finding{Kind: NetworkSaturated, Why: fmt.Sprintf("%s at %s of %s", r.Name, pct(r.Util), gbits(r.RateBytes))}, true
}

// shaped is a cloud allowance exceeded: the instance's traffic is shaped
// below the link rate.
func shaped(nics []NICRates) (Finding, bool) {
	for _, r := range nics {
		if r.AllowancePerMin > 0 {
			return Finding{Kind: NetworkSaturated,
				Why: fmt.Sprintf("%s: the instance's allowances exceeded %s times/min, most %s", r.Name, count(r.AllowancePerMin), r.WorstAllowance)}, true
		}
	}
	return Finding{}, false
}

func busiest(nics []NICRates) NICRates {
	var b NICRates
	for _, r := range nics {
		if r.HasUtil && (!b.HasUtil || r.Util > b.Util) {
			b = r
		}
	}
	if !b.HasUtil && len(nics) > 0 {
		b = nics[0]
	}
	return b
}

// errorName reads a counter's name as words: symbol_error -> symbol errors.
func errorName(n string) string {
	if n == "" {
		return "errors"
	}
	n = strings.ReplaceAll(n, "_", " ")
	if !strings.HasSuffix(n, "s") {
		n += "s"
	}
	return n
}

func pct(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) }

// num prints a CPU count without trailing zeros: 4, 0.5, 1.25.
func num(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func gib(b float64) string { return fmt.Sprintf("%.1f GiB", b/(1<<30)) }

// gbits prints a rate in bytes per second as the link's Gb/s.
func gbits(bytesPerSec float64) string {
	if bytesPerSec <= 0 {
		return "an unknown rate"
	}
	return num(math.Round(bytesPerSec*8/1e9*10)/10) + " Gb/s"
}

// count prints a rate with thousands separated: 1,200.
func count(f float64) string {
	s := fmt.Sprintf("%.0f", f)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
