// Package policy maps GPU faults to remediations: NVIDIA's XID catalogue
// as the default, overridable per XID; evidence grouped into incidents (a
// burst of log lines from one fault is one incident); and escalation when
// the same application-level XID recurs on one GPU in separate incidents.
package policy

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
)

// Remediation is what a fault calls for, in rising order: the catalogue's
// action (internal/gpuhealth), which also decides the GPU's hw.status.
type Remediation = gpuhealth.Action

const (
	// None: the fault is not critical; no node is touched.
	None = gpuhealth.None
	// RestartApp: the application restarts itself; an Event on the node
	// records it, nothing else.
	RestartApp = gpuhealth.RestartApp
	// ResetGPU: the GPU must be reset: stop new work on it, move its pods
	// off, and ask the node's agent to reset it.
	ResetGPU = gpuhealth.ResetGPU
	// Drain: the node must be taken out of service and emptied.
	Drain = gpuhealth.Drain
	// Replace: the GPU must be replaced: the node is taken out of service
	// and emptied as for a drain, and held for a person, with no reset or
	// reboot asked for (none would repair it).
	Replace = gpuhealth.Replace
)

// Parse reads a remediation's name.
func Parse(s string) (Remediation, error) { return gpuhealth.ParseAction(s) }

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
	// DCGMHealth: a subsystem of DCGM's health watches (Code, a
	// gpu.HealthSystem) failed, as the receiver's nvidia.gpu.health says.
	// A warning is no fault: it calls for no action (gpuhealth.DCGMHealth).
	DCGMHealth
	// Fabric faults: a NIC port (InfiniBand, RoCE, Ethernet) of a GPU
	// node, keyed by its node and port rather than a GPU. The connector
	// decides them by its fabric settings, not by Decide: each takes the
	// node's condition and taint, never a GPU reset or a drain.
	NICDown          // the port went down after having been up
	NICFlapping      // the port keeps going down (link_downed rising)
	NICErrors        // link error counters rising, sustained
	NICDegradedSpeed // the port runs below its peers' rate
)

// Fabric says whether a fault is a NIC port's.
func (k Kind) Fabric() bool { return k >= NICDown && k <= NICDegradedSpeed }

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
		return "recovery_" + gpuhealth.RecoveryName(f.Code)
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
	case DCGMHealth:
		return gpuhealth.DCGMHealthFault(gpu.HealthSystem(f.Code))
	case NICDown:
		return "nic_down"
	case NICFlapping:
		return "nic_flapping"
	case NICErrors:
		return "nic_errors"
	case NICDegradedSpeed:
		return "nic_degraded_speed"
	default:
		return "gpu_faulted"
	}
}

// DefaultDCGMHealth returns the catalogue's remediation of each DCGM
// health subsystem's failure.
func DefaultDCGMHealth() map[gpu.HealthSystem]Remediation { return gpuhealth.DCGMHealthActions() }

// DefaultXIDs returns a copy of the catalogue's XID map (internal/gpuhealth:
// NVIDIA's XID catalogue by its immediate-action bucket). An XID absent
// from it never touches a node.
func DefaultXIDs() map[int]Remediation { return gpuhealth.XIDActions() }

// Table lists the default map for documentation, in XID order: the XIDs
// that call for an action.
func Table() [][2]string {
	var out [][2]string
	for _, row := range gpuhealth.XIDTable() {
		if row[1] != gpuhealth.None.String() {
			out = append(out, [2]string{row[0], row[1]})
		}
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
	// DCGMHealth maps a failed DCGM health subsystem to its remediation;
	// one absent from it is a drain.
	DCGMHealth map[gpu.HealthSystem]Remediation
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
	case DCGMHealth:
		var ok bool
		if r, ok = p.DCGMHealth[gpu.HealthSystem(f.Code)]; !ok {
			r = Drain
		}
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
