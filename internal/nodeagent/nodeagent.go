// Package nodeagent is the contract between the gpu_remediation connector,
// which decides, and the node-local GPU reset actor in the agent, which
// resets: the annotations each writes on the node and what their values
// mean. Both sides read and write only through these names.
//
// The sequence for a GPU reset:
//
//  1. The connector drains the GPU's pods and, once they are gone, sets
//     ResetRequest to the GPUs' UUIDs (comma-separated) and the incident's
//     id in ResetIncident.
//  2. The actor on that node sees the request, checks that the GPUs are
//     idle (no processes), resets them, checks that each is visible again
//     with its UUID (and, where DCGM is the backend, runs a short
//     diagnostic), then writes ResetResult and removes ResetRequest in one
//     patch.
//  3. The connector reads ResetResult: "ok" starts the health check before
//     the node is given back; "failed" or "impossible" escalates the
//     incident to a drain of the node and a RebootRequest.
package nodeagent

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Prefix of every annotation, taint key and label this product writes on
// nodes.
const Prefix = "gpu-remediation.otelcol-gpu.io/"

// Annotations on the node.
const (
	// ResetRequest lists the UUIDs (comma-separated) of the GPUs to reset.
	ResetRequest = Prefix + "reset-gpu"
	// ResetIncident is the id of the incident the reset request is for.
	ResetIncident = Prefix + "reset-incident"
	// ResetResult is the actor's answer, a JSON Result.
	ResetResult = Prefix + "reset-result"
	// RebootRequest asks for the node to be rebooted once drained; its
	// value is the request's time (RFC 3339).
	RebootRequest = Prefix + "reboot"
)

// Outcomes of a reset.
const (
	// ResetOK: every GPU was reset and is visible again with its UUID (and
	// passed the diagnostic where one ran).
	ResetOK = "ok"
	// ResetFailed: the reset was tried and failed, or a GPU did not come
	// back, or the diagnostic failed.
	ResetFailed = "failed"
	// ResetImpossible: the reset was not tried: processes still hold a GPU,
	// a MIG or fabric state forbids it, or the actor cannot reset here.
	ResetImpossible = "impossible"
)

// Result is the value of ResetResult.
type Result struct {
	UUIDs    []string `json:"uuids"`
	Incident string   `json:"incident,omitempty"`
	Outcome  string   `json:"outcome"`
	// Detail says what happened, for a person: the command's error, the
	// processes found, the diagnostic's failing test.
	Detail string `json:"detail,omitempty"`
	// Diag is the diagnostic's verdict: "pass", "fail", or "" when none ran.
	Diag string    `json:"diag,omitempty"`
	Time time.Time `json:"time"`
}

// Encode renders r as the annotation's value.
func (r Result) Encode() string {
	b, _ := json.Marshal(r) // a struct of strings and a time: cannot fail
	return string(b)
}

// ParseResult reads ResetResult's value.
func ParseResult(s string) (Result, error) {
	var r Result
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		return Result{}, fmt.Errorf("annotation %s: %w", ResetResult, err)
	}
	switch r.Outcome {
	case ResetOK, ResetFailed, ResetImpossible:
	default:
		return Result{}, fmt.Errorf("annotation %s: unknown outcome %q; want %s, %s or %s", ResetResult, r.Outcome, ResetOK, ResetFailed, ResetImpossible)
	}
	return r, nil
}

// Answers reports whether r is the answer to the request of incident: a
// request whose incident already has its result is not acted on again
// (the actor restarted, or saw the request again before its own write).
// A request without an incident id is never taken as answered.
func (r Result) Answers(incident string) bool {
	return incident != "" && r.Incident == incident
}

// RequestedUUIDs reads ResetRequest's value: the UUIDs, in order, trimmed,
// each once. An empty or blank value lists none.
func RequestedUUIDs(value string) []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range strings.Split(value, ",") {
		u = strings.TrimSpace(u)
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, u)
	}
	return out
}

// ResultPatch is the actor's one write: a JSON merge patch that sets
// ResetResult to r and removes ResetRequest and ResetIncident, guarded by
// the resourceVersion of the node as read, so that a request changed
// since (the connector added a GPU) fails with 409 Conflict and nothing is
// written. r nil removes the request and leaves ResetResult as it is: the
// request of an incident already answered.
func ResultPatch(resourceVersion string, r *Result) []byte {
	ann := map[string]any{ResetRequest: nil, ResetIncident: nil}
	if r != nil {
		ann[ResetResult] = r.Encode()
	}
	b, _ := json.Marshal(map[string]any{ // strings and nils: cannot fail
		"metadata": map[string]any{"resourceVersion": resourceVersion, "annotations": ann},
	})
	return b
}
