// Package policy maps GPU faults to remediations: NVIDIA's XID catalogue
// as the default, overridable per XID, and escalation when the same
// application-level XID repeats on one GPU.
package policy

import (
	"fmt"
	"sort"
	"strconv"
	"time"
)

// Remediation is what a fault calls for, in rising order.
type Remediation int

const (
	// None: the fault is not critical; no node is touched.
	None Remediation = iota
	// RestartApp: the application restarts itself; an Event on the node
	// records it, nothing else.
	RestartApp
	// ResetGPU: the GPU must be reset: stop new work on it, move its pods
	// off, and ask the node's agent to reset it.
	ResetGPU
	// Drain: the node must be taken out of service and emptied.
	Drain
)

var names = [...]string{"none", "restart_app", "reset_gpu", "drain"}

func (r Remediation) String() string { return names[r] }

// Parse reads a remediation's name.
func Parse(s string) (Remediation, error) {
	for i, n := range names {
		if n == s {
			return Remediation(i), nil
		}
	}
	return None, fmt.Errorf("unknown action %q; want none, restart_app, reset_gpu or drain", s)
}

// Kind is the kind of evidence a fault comes from.
type Kind int

const (
	XID Kind = iota
	ECCUncorrectable
	RowRemapFailure
	GPUFaulted // the gpu_analyzer processor's verdict
)

// Fault is one piece of evidence that a GPU is broken.
type Fault struct {
	Kind Kind
	Code int // the XID, for Kind XID
}

func (f Fault) String() string {
	switch f.Kind {
	case XID:
		return "xid_" + strconv.Itoa(f.Code)
	case ECCUncorrectable:
		return "ecc_uncorrectable"
	case RowRemapFailure:
		return "row_remap_failure"
	default:
		return "gpu_faulted"
	}
}

// defaultXIDs is the default map, from the immediate-action bucket of
// NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors), as NVSentinel
// encodes it in its xiderrorsmapping.csv. RESTART_APP → restart_app;
// RESET_GPU → reset_gpu; RESTART_BM, RESTART_VM and the ECC, page or row
// retirement and NVLink workflows → drain. Codes NVIDIA marks IGNORE,
// unused, or report-an-issue are absent: they never touch a node.
//
// Where a reset alone does not return the GPU to service on a shared node
// (95 uncontained error, 119/120 GSP, 140 ECC escape: NVIDIA says reset the
// GPU, but the reset needs every process off it and, with NVLink, often
// off the node's other GPUs), the default is drain, the safer of the two.
var defaultXIDs = map[int]Remediation{
	// RESTART_APP: the application's own error, or contained to it.
	8: RestartApp, 11: RestartApp, 13: RestartApp, 25: RestartApp, 31: RestartApp,
	32: RestartApp, 39: RestartApp, 40: RestartApp, 41: RestartApp, 43: RestartApp,
	60: RestartApp, 68: RestartApp, 69: RestartApp, 70: RestartApp, 71: RestartApp,
	72: RestartApp, 75: RestartApp, 76: RestartApp, 77: RestartApp, 80: RestartApp,
	82: RestartApp, 83: RestartApp, 84: RestartApp, 85: RestartApp, 86: RestartApp,
	88: RestartApp, 89: RestartApp, 94: RestartApp, 96: RestartApp, 97: RestartApp,
	98: RestartApp, 99: RestartApp, 100: RestartApp, 101: RestartApp, 102: RestartApp,
	103: RestartApp, 104: RestartApp, 105: RestartApp, 126: RestartApp, 127: RestartApp,
	128: RestartApp, 129: RestartApp, 130: RestartApp, 131: RestartApp, 132: RestartApp,
	133: RestartApp, 134: RestartApp, 135: RestartApp, 139: RestartApp, 159: RestartApp,
	// RESET_GPU.
	46: ResetGPU, 62: ResetGPU, 109: ResetGPU, 110: ResetGPU, 136: ResetGPU,
	143: ResetGPU, 155: ResetGPU, 156: ResetGPU, 158: ResetGPU,
	// Drain: reboot, or the GPU's memory or links cannot be trusted.
	48: Drain, 63: Drain, 64: Drain, 74: Drain, 79: Drain, 95: Drain,
	119: Drain, 120: Drain, 140: Drain, 144: Drain, 145: Drain, 146: Drain,
	147: Drain, 148: Drain, 149: Drain, 150: Drain, 151: Drain, 160: Drain,
}

// DefaultXIDs returns a copy of the default XID map.
func DefaultXIDs() map[int]Remediation {
	m := make(map[int]Remediation, len(defaultXIDs))
	for k, v := range defaultXIDs {
		m[k] = v
	}
	return m
}

// Table lists the default map for documentation, in XID order.
func Table() [][2]string {
	codes := make([]int, 0, len(defaultXIDs))
	for c := range defaultXIDs {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	out := make([][2]string, len(codes))
	for i, c := range codes {
		out[i] = [2]string{strconv.Itoa(c), defaultXIDs[c].String()}
	}
	return out
}

// Policy decides a remediation for each fault.
type Policy struct {
	XIDs             map[int]Remediation
	ECCUncorrectable Remediation
	RowRemapFailure  Remediation
	GPUFaulted       Remediation
	// Escalation: the same RestartApp XID Count times on one GPU within
	// Window escalates to EscalateTo. Count 0 disables it.
	Count      int
	Window     time.Duration
	EscalateTo Remediation

	seen map[escalationKey][]time.Time
}

type escalationKey struct {
	gpu  string
	code int
}

// Decision is the policy's answer for one fault.
type Decision struct {
	Remediation Remediation
	// Escalated is set when repetition raised the remediation; Repeats is
	// then the count within the window.
	Escalated bool
	Repeats   int
}

// Decide returns the remediation for a fault on a GPU at time at. Faults
// must come in time order per GPU.
func (p *Policy) Decide(gpu string, f Fault, at time.Time) Decision {
	var r Remediation
	switch f.Kind {
	case XID:
		r = p.XIDs[f.Code]
	case ECCUncorrectable:
		r = p.ECCUncorrectable
	case RowRemapFailure:
		r = p.RowRemapFailure
	case GPUFaulted:
		r = p.GPUFaulted
	}
	if f.Kind != XID || r != RestartApp || p.Count <= 0 {
		return Decision{Remediation: r}
	}
	if p.seen == nil {
		p.seen = map[escalationKey][]time.Time{}
	}
	k := escalationKey{gpu, f.Code}
	times := p.seen[k]
	kept := times[:0]
	for _, t := range times {
		if at.Sub(t) < p.Window {
			kept = append(kept, t)
		}
	}
	kept = append(kept, at)
	p.seen[k] = kept
	if len(kept) >= p.Count && p.EscalateTo > r {
		// Start counting afresh: the next escalation needs Count more.
		delete(p.seen, k)
		return Decision{Remediation: p.EscalateTo, Escalated: true, Repeats: len(kept)}
	}
	return Decision{Remediation: r}
}

// Forget drops the escalation history of a GPU that is gone.
func (p *Policy) Forget(gpu string) {
	for k := range p.seen {
		if k.gpu == gpu {
			delete(p.seen, k)
		}
	}
}

// Remembered is the number of (GPU, XID) escalation histories kept.
func (p *Policy) Remembered() int { return len(p.seen) }
