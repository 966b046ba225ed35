// Package gpuhealth is the one place that decides what a GPU fault means:
// the action it calls for (NVIDIA's XID catalogue, the driver's recovery
// actions, AMD's RAS evidence) and the GPU's health state, as OpenTelemetry's
// hardware conventions name it (hw.state: ok, degraded, failed,
// predicted_failure). The gpu_analyzer processor reports the state as
// hw.status; the gpu_remediation connector acts on the same catalogue. Both
// go through State, so a dashboard and the remediation never disagree: a
// GPU is failed exactly when its fault calls for a reset, a drain or a
// replacement.
package gpuhealth

import (
	"fmt"
	"sort"
	"strconv"
)

// Action is what a fault calls for, in rising order.
type Action int

const (
	// None: no node is touched.
	None Action = iota
	// RestartApp: the application restarts itself; the GPU is fine.
	RestartApp
	// ResetGPU: the GPU must be reset before it does work again.
	ResetGPU
	// Drain: the node must be taken out of service and emptied.
	Drain
	// Replace: the GPU must be replaced; no reset or reboot repairs it.
	Replace
)

var actionNames = [...]string{"none", "restart_app", "reset_gpu", "drain", "replace"}

func (a Action) String() string {
	if a < 0 || int(a) >= len(actionNames) {
		return "action_" + strconv.Itoa(int(a))
	}
	return actionNames[a]
}

// ParseAction reads an action's name.
func ParseAction(s string) (Action, error) {
	for i, n := range actionNames {
		if n == s {
			return Action(i), nil
		}
	}
	return None, fmt.Errorf("unknown action %q; want none, restart_app, reset_gpu, drain or replace", s)
}

// State is a GPU's health, ordered by how bad it is.
type State int

const (
	OK State = iota
	// PredictedFailure: the GPU works, and a sign of wear says it may not
	// for long (NVIDIA's XID 92, a high single-bit ECC error rate; an AMD
	// GPU that has used up half its page-retirement budget).
	PredictedFailure
	// Degraded: the GPU works with reduced function or speed: a row
	// remapping waits for the next reset (XID 63, 94), a contained
	// uncorrectable error, a thermal or power-brake slowdown.
	Degraded
	// Failed: the GPU cannot be trusted with work until it is reset,
	// its node is rebooted, or it is replaced.
	Failed
	NumStates
)

var stateNames = [NumStates]string{"ok", "predicted_failure", "degraded", "failed"}

func (s State) String() string { return stateNames[s] }

// States lists every state, in the order hw.status reports them.
func States() []State { return []State{OK, Degraded, Failed, PredictedFailure} }

// Of is the one rule that ties the state to the action: a fault that calls
// for a reset, a drain or a replacement leaves the GPU failed; one that
// calls for less leaves the state its catalogue entry gives (ok, unless
// the entry says degraded or predicted_failure).
func Of(a Action, catalogued State) State {
	if a >= ResetGPU {
		return Failed
	}
	if catalogued == Failed {
		return Degraded // a failed GPU would call for an action
	}
	return catalogued
}

// Entry is the catalogue's word on one fault.
type Entry struct {
	Action Action
	State  State // by Of(Action, State)
}

func entry(a Action, s State) Entry { return Entry{a, Of(a, s)} }

// xids is NVIDIA's XID catalogue (docs.nvidia.com/deploy/xid-errors), by its
// immediate-action bucket, as NVSentinel encodes it in its
// xiderrorsmapping.csv: RESTART_APP → restart_app; RESET_GPU → reset_gpu;
// RESTART_BM, RESTART_VM and the ECC, page or row retirement failures and
// NVLink workflows → drain. Codes NVIDIA marks IGNORE, unused, or
// report-an-issue are absent: they never touch a node, and leave the GPU ok.
//
// Where a reset alone does not return the GPU to service on a shared node
// (95 uncontained error, 119/120 GSP, 140 ECC escape: NVIDIA says reset the
// GPU, but the reset needs every process off it and, with NVLink, often
// off the node's other GPUs), the action is drain, the safer of the two.
//
// Three entries touch no node but change the state:
//   - 63, a page retirement or row remapping recorded: the catalogue says
//     the GPU keeps running and is reset (row remapping) or rebooted (page
//     retirement) at the next convenient time. Degraded, no drain.
//   - 94, a contained ECC error: the application that hit it restarts; the
//     bad row is fenced until the remapping takes effect at the next reset.
//     Degraded.
//   - 92, a high single-bit ECC error rate: the memory corrects every
//     error, but the driver warns that it corrects many. Predicted failure:
//     it is the driver's own sign that a rising corrected-error rate is
//     more than noise; a corrected-error count alone is not one.
var xids = map[int]Entry{
	// RESTART_APP: the application's own error, or contained to it.
	8: entry(RestartApp, OK), 11: entry(RestartApp, OK), 13: entry(RestartApp, OK),
	25: entry(RestartApp, OK), 31: entry(RestartApp, OK), 32: entry(RestartApp, OK),
	39: entry(RestartApp, OK), 40: entry(RestartApp, OK), 41: entry(RestartApp, OK),
	43: entry(RestartApp, OK), 60: entry(RestartApp, OK), 68: entry(RestartApp, OK),
	69: entry(RestartApp, OK), 70: entry(RestartApp, OK), 71: entry(RestartApp, OK),
	72: entry(RestartApp, OK), 75: entry(RestartApp, OK), 76: entry(RestartApp, OK),
	77: entry(RestartApp, OK), 80: entry(RestartApp, OK), 82: entry(RestartApp, OK),
	83: entry(RestartApp, OK), 84: entry(RestartApp, OK), 85: entry(RestartApp, OK),
	86: entry(RestartApp, OK), 88: entry(RestartApp, OK), 89: entry(RestartApp, OK),
	94: entry(RestartApp, Degraded), 96: entry(RestartApp, OK), 97: entry(RestartApp, OK),
	98: entry(RestartApp, OK), 99: entry(RestartApp, OK), 100: entry(RestartApp, OK),
	101: entry(RestartApp, OK), 102: entry(RestartApp, OK), 103: entry(RestartApp, OK),
	104: entry(RestartApp, OK), 105: entry(RestartApp, OK), 126: entry(RestartApp, OK),
	127: entry(RestartApp, OK), 128: entry(RestartApp, OK), 129: entry(RestartApp, OK),
	130: entry(RestartApp, OK), 131: entry(RestartApp, OK), 132: entry(RestartApp, OK),
	133: entry(RestartApp, OK), 134: entry(RestartApp, OK), 135: entry(RestartApp, OK),
	139: entry(RestartApp, OK), 159: entry(RestartApp, OK),
	// XID 154, GPU recovery action changed: the action itself comes with
	// the recovery-action reading, which decides; without that reading
	// (a dcgm-exporter without the field), the least the driver can have
	// asked for is a reset.
	154: entry(ResetGPU, Failed),
	// RESET_GPU.
	46: entry(ResetGPU, Failed), 62: entry(ResetGPU, Failed), 109: entry(ResetGPU, Failed),
	110: entry(ResetGPU, Failed), 136: entry(ResetGPU, Failed), 143: entry(ResetGPU, Failed),
	155: entry(ResetGPU, Failed), 156: entry(ResetGPU, Failed), 158: entry(ResetGPU, Failed),
	// Drain: reboot, or the GPU's memory or links cannot be trusted.
	48: entry(Drain, Failed), 64: entry(Drain, Failed), 74: entry(Drain, Failed),
	79: entry(Drain, Failed), 95: entry(Drain, Failed), 119: entry(Drain, Failed),
	120: entry(Drain, Failed), 140: entry(Drain, Failed), 144: entry(Drain, Failed),
	145: entry(Drain, Failed), 146: entry(Drain, Failed), 147: entry(Drain, Failed),
	148: entry(Drain, Failed), 149: entry(Drain, Failed), 150: entry(Drain, Failed),
	151: entry(Drain, Failed), 160: entry(Drain, Failed),
	// No action, a state.
	63: entry(None, Degraded),
	92: entry(None, PredictedFailure),
}

// XID is the catalogue's entry for an XID; an XID it does not list calls
// for nothing and leaves the GPU ok.
func XID(code int) Entry { return xids[code] }

// XIDActions returns a copy of the catalogue's XID → action map, for a
// policy that lets settings override it.
func XIDActions() map[int]Action {
	m := make(map[int]Action, len(xids))
	for k, e := range xids {
		if e.Action != None {
			m[k] = e.Action
		}
	}
	return m
}

// XIDTable lists the catalogue for documentation, in XID order: code,
// action, state.
func XIDTable() [][3]string {
	codes := make([]int, 0, len(xids))
	for c := range xids {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	out := make([][3]string, len(codes))
	for i, c := range codes {
		out[i] = [3]string{strconv.Itoa(c), xids[c].Action.String(), xids[c].State.String()}
	}
	return out
}
