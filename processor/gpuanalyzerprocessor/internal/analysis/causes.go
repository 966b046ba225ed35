package analysis

import "github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"

// Explainer finds the cause of a wait from evidence beyond the GPU (its
// pod, node and rail), which the analyzer does not hold: the processor
// keeps it as it arrives.
type Explainer interface {
	// Explain is called once per verdict of a GPU that waits (q.Wait) or
	// straggles. Peers are the IDs of the straggler's group, itself
	// excluded; valid only during the call.
	Explain(q *CauseQuery) cause.Finding
	// RailCollective says whether the GPU's rail NIC carries a
	// collective at time t (data time, ns).
	RailCollective(id string, t int64) bool
}

// CauseQuery is what Explain is asked of one GPU.
type CauseQuery struct {
	ID  string
	Seq int // as Verdict.Seq
	// Time is the verdict's (data time, ns): the evidence must be of it.
	Time int64
	// Wait is the kind of wait by the GPU's class and basis.
	Wait      cause.Wait
	Straggler bool
	Peers     []string
}

// The hints that follow a cause: where the node's evidence names the
// reason for a wait, the next step is there, not in the GPU's code.
var causeHints = [cause.NumKinds]Hint{
	cause.CPUThrottled:     RaiseCPULimit,
	cause.CPUContention:    SpreadCPULoad,
	cause.MemoryPressure:   RaiseMemoryLimit,
	cause.IOWait:           SpeedUpStorage,
	cause.NetworkSaturated: AddNetworkBandwidth,
	cause.FabricErrors:     CheckFabric,
	cause.Thermal:          CheckCoolingOrPower,
	cause.PowerCap:         CheckCoolingOrPower,
}

// waitOf is the kind of wait a class is, for the causes looked for.
func (g *gpuState) waitOf() cause.Wait {
	switch g.class {
	case InputBound:
		return cause.InputWait
	case CommunicationBound:
		if g.basis.Scope == ScopeNVLink || g.basis.Scope == ScopeXGMI {
			return cause.NoWait // within the node: no NIC or host to blame
		}
		return cause.NetworkWait
	case Throttled:
		switch g.basis.Evidence {
		case EvidenceThermal:
			return cause.ThermalWait
		case EvidencePowerCap:
			return cause.PowerWait
		}
		return cause.ThrottleWait
	}
	if g.netCollective {
		return cause.NetworkWait
	}
	return cause.NoWait
}

// explain looks for the cause of the GPU's wait or straggling, and lets
// the hint follow it. A GPU that neither waits nor straggles keeps no
// cause.
func (a *Analyzer) explain(g *gpuState) cause.Finding {
	g.prevCause, g.cause = g.cause, cause.None
	if a.cfg.Causes == nil {
		return cause.Finding{}
	}
	// One query, reused: passed to the Explainer it would escape, one
	// allocation per waiting GPU per batch.
	q := &a.query
	*q = CauseQuery{ID: g.id, Seq: g.seq, Time: g.last, Wait: g.waitOf(), Straggler: g.straggler}
	if q.Wait == cause.NoWait && !q.Straggler {
		return cause.Finding{}
	}
	if q.Straggler && g.group != nil {
		q.Peers = a.peerIDs[:0]
		for _, m := range g.group.members {
			if m != g {
				q.Peers = append(q.Peers, m.id)
			}
		}
		a.peerIDs = q.Peers
	}
	f := a.cfg.Causes.Explain(q)
	g.cause = f.Kind
	if h := causeHints[f.Kind]; h != NoHint {
		g.hint = h
	}
	if a.Notify != nil && g.cause != g.prevCause && g.cause != cause.None {
		a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: CauseChanged, Class: g.class, Hint: g.hint, Cause: f, Straggler: g.straggler})
	}
	return f
}

// onRail reads a GPU that waits while its rail carries a collective as
// communication bound over the network: a GPU whose counters alone say
// launch or input bound, or nothing (no profiling, no PCIe fields), waits
// in the collective its NIC is moving. Only with node evidence: without
// it the class stands.
func (a *Analyzer) onRail(g *gpuState) {
	switch g.class {
	case LaunchBound, InputBound, Unknown:
	default:
		return
	}
	if a.cfg.Causes != nil && a.cfg.Causes.RailCollective(g.id, g.last) {
		g.class, g.basis = CommunicationBound, Basis{Evidence: EvidenceNIC, Scope: ScopeNetwork}
	}
}
