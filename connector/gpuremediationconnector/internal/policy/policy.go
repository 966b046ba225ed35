// Package policy maps GPU faults to remediations: NVIDIA's XID catalogue
// as the default, overridable per XID; evidence grouped into incidents (a
// burst of log lines from one fault is one incident); and escalation when
// the same application-level XID recurs on one GPU in separate incidents.
package policy

import (
	"fmt"
	"hash/fnv"
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
	// Replace: the GPU must be replaced: the node is taken out of service
	// and emptied as for a drain, and held for a person, with no reset or
	// reboot asked for (none would repair it).
	Replace
)

var names = [...]string{"none", "restart_app", "reset_gpu", "drain", "replace"}

func (r Remediation) String() string { return names[r] }

// Parse reads a remediation's name.
func Parse(s string) (Remediation, error) {
	for i, n := range names {
		if n == s {
			return Remediation(i), nil
		}
	}
	return None, fmt.Errorf("unknown action %q; want none, restart_app, reset_gpu, drain or replace", s)
}

// Kind is the kind of evidence a fault comes from.
type Kind int

const (
	XID Kind = iota
	ECCUncorrectable
	RowRemapFailure
	GPUFaulted // the gpu_analyzer processor's verdict
	// RecoveryAction: the driver asks for a recovery action (Code, one of
	// NVML's nvmlDeviceGpuRecoveryAction_t values), as XID 154 announces.
	RecoveryAction
	// AMD GPUs: corrected and deferred ECC errors (a deferred error is an
	// uncorrectable one not yet consumed), a fatal or a non-fatal
	// uncorrected CPER record (Code: the AMD Field ID it carries, 0 for
	// none), and retired pages at the driver's threshold.
	ECCCorrectable
	ECCDeferred
	CPERFatal
	CPERUncorrected
	BadPageThreshold
)

// The driver's recovery actions (NVML's nvmlDeviceGpuRecoveryAction_t,
// field NVML_FI_DEV_GET_GPU_RECOVERY_ACTION; DCGM field 1523), since
// driver R565.
const (
	ActionNone          = 0
	ActionGPUReset      = 1
	ActionNodeReboot    = 2
	ActionDrainP2P      = 3
	ActionDrainAndReset = 4
	// ActionRecoverIMEX: the multi-node NVLink domain (IMEX) must be
	// recovered; no GPU reset does it.
	ActionRecoverIMEX = 5
)

var actionNames = map[int]string{
	ActionGPUReset: "gpu_reset", ActionNodeReboot: "node_reboot",
	ActionDrainP2P: "drain_p2p", ActionDrainAndReset: "drain_and_reset",
	ActionRecoverIMEX: "recover_imex_domain",
}

// ActionName names a recovery action, e.g. gpu_reset; action_N for one
// this version does not know.
func ActionName(code int) string {
	if n, ok := actionNames[code]; ok {
		return n
	}
	return "action_" + strconv.Itoa(code)
}

// ParseAction reads a recovery action's name.
func ParseAction(s string) (int, bool) {
	for c, n := range actionNames {
		if n == s {
			return c, true
		}
	}
	return 0, false
}

// defaultActions maps the driver's recovery actions to remediations:
// a GPU reset, and a drain and reset (the GPU's work moved off first),
// are our reset_gpu, which evicts the GPU's pods before asking for the
// reset; a node reboot is a drain and a reboot; so is draining
// peer-to-peer traffic, since the peers are the node's other GPUs, and so
// is recovering the IMEX domain, which no reset of one GPU does. An
// action this version does not know is a drain: the driver said the GPU
// needs one, and a person reads the Event.
var defaultActions = map[int]Remediation{
	ActionGPUReset: ResetGPU, ActionDrainAndReset: ResetGPU,
	ActionNodeReboot: Drain, ActionDrainP2P: Drain, ActionRecoverIMEX: Drain,
}

// DefaultActions returns a copy of the default recovery-action map.
func DefaultActions() map[int]Remediation {
	m := make(map[int]Remediation, len(defaultActions))
	for k, v := range defaultActions {
		m[k] = v
	}
	return m
}

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
	case RecoveryAction:
		return "recovery_" + ActionName(f.Code)
	case ECCCorrectable:
		return "ecc_correctable"
	case ECCDeferred:
		return "ecc_deferred"
	case CPERFatal:
		return "cper_fatal_afid_" + strconv.Itoa(f.Code)
	case CPERUncorrected:
		return "cper_uncorrected_afid_" + strconv.Itoa(f.Code)
	case BadPageThreshold:
		return "bad_page_threshold"
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
	// XID 154, GPU recovery action changed: the action itself comes with
	// the recovery-action reading (Kind RecoveryAction), which decides;
	// an XID 154 then joins its incident. Without that reading (a
	// dcgm-exporter without the field), the least the driver can have
	// asked for is a reset.
	154: ResetGPU,
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

// Policy groups the evidence of each GPU into incidents and decides a
// remediation for each incident.
type Policy struct {
	XIDs             map[int]Remediation
	ECCUncorrectable Remediation
	RowRemapFailure  Remediation
	GPUFaulted       Remediation
	// Actions maps the driver's recovery actions; an action absent from
	// it is a drain.
	Actions map[int]Remediation
	// AMD GPUs. AFIDs maps an AMD Field ID a CPER record carries to its
	// remediation; a record whose AFID is absent (or that has none) takes
	// CPERFatal or CPERUncorrected by its severity.
	ECCCorrectable, ECCDeferred Remediation
	CPERFatal, CPERUncorrected  Remediation
	BadPageThreshold            Remediation
	AFIDs                       map[int]Remediation
	// IncidentWindow: evidence of the same fault on one GPU within this
	// long of an incident's first evidence is that incident, not a new one.
	// A driver logs one application fault as a burst of lines (XID 13
	// sixteen times within 3 ms, then XID 43), and a scrape can split a
	// burst in two.
	IncidentWindow time.Duration
	// Escalation: the same RestartApp XID in Count incidents on one GPU
	// within Window escalates to EscalateTo. Count 0 disables it.
	Count      int
	Window     time.Duration
	EscalateTo Remediation

	open map[incidentKey]*Incident
	seen map[incidentKey][]time.Time // first evidence of each incident, for escalation
}

type incidentKey struct {
	gpu   string
	fault Fault
}

// Incident is one fault on one GPU: every piece of evidence of the same
// fault within the incident window of the first.
type Incident struct {
	// ID names the incident in every decision, Event, log record and
	// metric about it. It is derived from the GPU, the fault and the time
	// of the first evidence, so that two replicas fed the same evidence
	// name it alike and a replay gives the same ids.
	ID       string
	GPU      string
	Fault    Fault
	First    time.Time
	Last     time.Time
	Evidence int // pieces of evidence: log lines, counter increments
}

// IncidentID names the incident of fault on gpu first seen at first.
func IncidentID(gpu string, f Fault, first time.Time) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s|%d", gpu, f, first.UnixNano())
	return fmt.Sprintf("%s-%08x", f, h.Sum32())
}

// Observe files one piece of evidence of fault f on gpu at time at, in
// time order per GPU, and returns its incident; opened is true when the
// evidence opens a new incident, which calls for a decision.
func (p *Policy) Observe(gpu string, f Fault, at time.Time) (inc *Incident, opened bool) {
	if p.open == nil {
		p.open = map[incidentKey]*Incident{}
	}
	k := incidentKey{gpu, f}
	if inc := p.open[k]; inc != nil && at.Sub(inc.First) < p.IncidentWindow && !at.Before(inc.First) {
		inc.Evidence++
		if at.After(inc.Last) {
			inc.Last = at
		}
		return inc, false
	}
	inc = &Incident{ID: IncidentID(gpu, f, at), GPU: gpu, Fault: f, First: at, Last: at, Evidence: 1}
	p.open[k] = inc
	return inc, true
}

// Latest returns the GPU's most recent incident whose window is still
// open at at, of any fault; nil if none. The analyzer's faulted verdict
// repeats raw evidence and joins its incident.
func (p *Policy) Latest(gpu string, at time.Time) *Incident {
	var latest *Incident
	for k, inc := range p.open {
		if k.gpu == gpu && at.Sub(inc.First) < p.IncidentWindow && (latest == nil || inc.First.After(latest.First)) {
			latest = inc
		}
	}
	return latest
}

// Decision is the policy's answer for one incident.
type Decision struct {
	Remediation Remediation
	// Escalated is set when repetition raised the remediation; Repeats is
	// then the number of incidents within the window.
	Escalated bool
	Repeats   int
}

// Decide returns the remediation for a newly opened incident. Incidents
// must come in time order per GPU.
func (p *Policy) Decide(inc *Incident) Decision {
	f := inc.Fault
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
	case RecoveryAction:
		var ok bool
		if r, ok = p.Actions[f.Code]; !ok {
			r = Drain
		}
	case ECCCorrectable:
		r = p.ECCCorrectable
	case ECCDeferred:
		r = p.ECCDeferred
	case CPERFatal, CPERUncorrected:
		var ok bool
		if r, ok = p.AFIDs[f.Code]; !ok || f.Code == 0 {
			r = p.CPERUncorrected
			if f.Kind == CPERFatal {
				r = p.CPERFatal
			}
		}
	case BadPageThreshold:
		r = p.BadPageThreshold
	}
	if f.Kind != XID || r != RestartApp || p.Count <= 0 {
		return Decision{Remediation: r}
	}
	if p.seen == nil {
		p.seen = map[incidentKey][]time.Time{}
	}
	k := incidentKey{inc.GPU, f}
	times := p.seen[k]
	kept := times[:0]
	for _, t := range times {
		if inc.First.Sub(t) < p.Window {
			kept = append(kept, t)
		}
	}
	kept = append(kept, inc.First)
	p.seen[k] = kept
	if len(kept) >= p.Count && p.EscalateTo > r {
		// Start counting afresh: the next escalation needs Count more.
		delete(p.seen, k)
		return Decision{Remediation: p.EscalateTo, Escalated: true, Repeats: len(kept)}
	}
	return Decision{Remediation: r}
}

// Prune drops incidents whose window has closed by now and escalation
// history older than the escalation window, so that state stays bounded.
func (p *Policy) Prune(now time.Time) {
	for k, inc := range p.open {
		if now.Sub(inc.First) >= p.IncidentWindow {
			delete(p.open, k)
		}
	}
	for k, times := range p.seen {
		if len(times) == 0 || now.Sub(times[len(times)-1]) >= p.Window {
			delete(p.seen, k)
		}
	}
}

// Forget drops the escalation history of a GPU that is gone.
func (p *Policy) Forget(gpu string) {
	for k := range p.seen {
		if k.gpu == gpu {
			delete(p.seen, k)
		}
	}
	for k := range p.open {
		if k.gpu == gpu {
			delete(p.open, k)
		}
	}
}

// Remembered is the number of escalation histories and open incidents kept.
func (p *Policy) Remembered() int { return len(p.seen) + len(p.open) }
