package gpuhealth

import (
	"strconv"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// The driver's recovery actions (NVML's nvmlDeviceGpuRecoveryAction_t),
// as the dcgm receiver reads them.
const (
	RecoveryNone          = dcgmfield.RecoveryActionNone
	RecoveryGPUReset      = dcgmfield.RecoveryActionGPUReset
	RecoveryNodeReboot    = dcgmfield.RecoveryActionNodeReboot
	RecoveryDrainP2P      = dcgmfield.RecoveryActionDrainP2P
	RecoveryDrainAndReset = dcgmfield.RecoveryActionDrainAndReset
	// RecoveryIMEX: the multi-node NVLink domain (IMEX) must be
	// recovered; no GPU reset does it.
	RecoveryIMEX = dcgmfield.RecoveryActionRecoverIMEXDomain
)

var recoveryNames = map[int]string{
	RecoveryGPUReset: "gpu_reset", RecoveryNodeReboot: "node_reboot",
	RecoveryDrainP2P: "drain_p2p", RecoveryDrainAndReset: "drain_and_reset",
	RecoveryIMEX: "recover_imex_domain",
}

// RecoveryName names a recovery action, e.g. gpu_reset; action_N for one
// this version does not know.
func RecoveryName(code int) string {
	if n, ok := recoveryNames[code]; ok {
		return n
	}
	return "action_" + strconv.Itoa(code)
}

// ParseRecovery reads a recovery action's name.
func ParseRecovery(s string) (int, bool) {
	for c, n := range recoveryNames {
		if n == s {
			return c, true
		}
	}
	return 0, false
}

// recoveries maps the driver's recovery actions to actions: a GPU reset,
// and a drain and reset (the GPU's work moved off first), are a reset,
// which moves the GPU's pods off before it; a node reboot is a drain; so
// is draining peer-to-peer traffic, since the peers are the node's other
// GPUs, and so is recovering the IMEX domain, which no reset of one GPU
// does. Every one leaves the GPU failed until it is done.
var recoveries = map[int]Action{
	RecoveryGPUReset: ResetGPU, RecoveryDrainAndReset: ResetGPU,
	RecoveryNodeReboot: Drain, RecoveryDrainP2P: Drain, RecoveryIMEX: Drain,
}

// Recovery is the catalogue's entry for a recovery action the driver asks
// for. RecoveryNone is ok; an action this version does not know is a
// drain: the driver said the GPU needs something, and a person reads why.
func Recovery(code int) Entry {
	if code == RecoveryNone {
		return Entry{}
	}
	a, ok := recoveries[code]
	if !ok {
		a = Drain
	}
	return entry(a, Failed)
}

// RecoveryActions returns a copy of the recovery-action map.
func RecoveryActions() map[int]Action {
	m := make(map[int]Action, len(recoveries))
	for k, v := range recoveries {
		m[k] = v
	}
	return m
}

// The catalogue's entries for the evidence that is not an XID. The
// remediation's settings default to these actions (its Config); the states
// follow by Of.
var (
	// ECCUncorrectable: a double-bit (uncorrectable) ECC error on an
	// NVIDIA GPU: its memory cannot be trusted until a row is remapped.
	ECCUncorrectable = entry(Drain, Failed)
	// RowRemapFailure: a row could not be remapped; the GPU needs a
	// person (and, past the remapper's reserve, replacing).
	RowRemapFailure = entry(Drain, Failed)
	// GPUFaulted: the gpu_analyzer processor's faulted verdict.
	GPUFaulted = entry(Drain, Failed)
	// ECCCorrectable: an AMD GPU's corrected errors are the ECC working.
	ECCCorrectable = entry(None, OK)
	// ECCDeferred: an AMD GPU's deferred error is an uncorrectable one
	// the hardware has poisoned and not yet consumed: the work that reads
	// it fails, the GPU goes on.
	ECCDeferred = entry(None, Degraded)
	// CPERFatal: an AMD GPU's fatal RAS record.
	CPERFatal = entry(Drain, Failed)
	// CPERUncorrected: a non-fatal uncorrected RAS record: contained by
	// the hardware, as a deferred error.
	CPERUncorrected = entry(None, Degraded)
	// BadPageThreshold: an AMD GPU whose retired pages reached the
	// driver's threshold: retiring can repair no more.
	BadPageThreshold = entry(Replace, Failed)
)

// BadPages is the state of an AMD GPU with retired (or pending) pages out
// of the driver's threshold: failed at it, predicted_failure from half of
// it (half the budget the driver allows is spent: the memory is wearing),
// ok below or when the threshold is unknown (0).
func BadPages(pages, threshold float64) State {
	switch {
	case threshold <= 0:
		return OK
	case pages >= threshold:
		return BadPageThreshold.State
	case 2*pages >= threshold:
		return PredictedFailure
	default:
		return OK
	}
}
