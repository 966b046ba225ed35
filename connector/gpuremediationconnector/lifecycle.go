package gpuremediationconnector

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// This file follows an incident past its request: the reset or reboot
// awaited, the GPU's health checked, the node given back or a person
// asked; and carries the work in flight from one leader to the next.

// stateAnnotation on the Lease holds what a new leader needs to go on:
// the incidents under way and the nodes the breaker has counted.
const stateAnnotation = kube.Prefix + "state"

// state names where a plan stands, for the incident metric.
func (p *plan) state() string {
	if p.next >= len(p.steps) {
		return "done"
	}
	switch p.steps[p.next] {
	case stepDrain:
		return "draining"
	case stepAwait:
		if p.rem == policy.ResetGPU {
			return "awaiting_reset"
		}
		return "awaiting_reboot"
	case stepVerify:
		return "verifying"
	}
	return "acting"
}

// follower says whether another replica holds the Lease and acts.
func (r *remediator) follower() bool {
	return r.api != nil && r.cfg.LeaderElection.Enabled && !r.leading
}

// standbyHorizon is how far back a follower keeps its plans: evidence
// older than this reached the leader while it still held the Lease, and
// the leader has acted on it (and recorded on the Lease what is under
// way). A leader that dies has stopped renewing for up to a lease duration
// before another replica takes over, and reads its input once an interval.
func (r *remediator) standbyHorizon() time.Duration {
	le := r.cfg.LeaderElection
	return le.LeaseDuration + le.RetryPeriod + 2*r.cfg.Interval
}

func (r *remediator) pruneStandby(now time.Time) {
	kept := r.standby[:0]
	for _, p := range r.standby {
		if now.Sub(p.arrived) <= r.standbyHorizon() {
			kept = append(kept, p)
			continue
		}
		// The leader has acted on it; what is still under way it records on
		// the Lease, and a takeover reads it from there. Forget the GPU as
		// this replica's own, or it would stay "under remediation" here
		// forever.
		r.release(p)
	}
	clear(r.standby[len(kept):])
	r.standby = kept
}

// planRecord is a plan under way as recorded on the Lease.
type planRecord struct {
	Incident    string    `json:"incident"`
	Node        string    `json:"node"`
	GPU         string    `json:"gpu"`
	Pod         string    `json:"pod,omitempty"`
	Kind        int       `json:"kind"`
	Code        int       `json:"code,omitempty"`
	At          time.Time `json:"at"`
	Remediation string    `json:"remediation"`
	Reason      string    `json:"reason"`
	Steps       []string  `json:"steps"`
	Next        int       `json:"next"`
	DrainSince  time.Time `json:"drain_since,omitzero"`
	RequestedAt time.Time `json:"requested_at,omitzero"`
	BootID      string    `json:"boot_id,omitempty"`
	VerifySince time.Time `json:"verify_since,omitzero"`
}

type leaseState struct {
	Acted map[string]time.Time `json:"acted,omitempty"`
	Plans []planRecord         `json:"plans,omitempty"`
	// Waiting are the GPUs whose recovery failed, waiting for a person: a
	// new leader must not act on them either.
	Waiting []waitingRecord `json:"waiting,omitempty"`
}

type waitingRecord struct {
	GPU         string `json:"gpu"`
	Node        string `json:"node"`
	Incident    string `json:"incident"`
	Remediation string `json:"remediation"`
}

// persist records on the Lease the plans under way that write to nodes,
// and the nodes the breaker counts, when they changed: a replica that
// takes over resumes from there.
func (r *remediator) persist(ctx context.Context, now time.Time) error {
	if r.api == nil || !r.cfg.LeaderElection.Enabled || r.dryRun() {
		return nil
	}
	st := leaseState{Acted: r.breaker.Acted(now)}
	for _, p := range r.plans {
		if !p.started || !p.touchesNode() || p.d.nic != nil {
			continue // a fabric fault's plan is written in one tick or retried by the evidence's replica
		}
		st.Plans = append(st.Plans, planRecord{
			Incident: p.incident, Node: p.d.node, GPU: p.d.gpu, Pod: p.d.pod,
			Kind: int(p.d.fault.Kind), Code: p.d.fault.Code, At: p.d.at,
			Remediation: p.rem.String(), Reason: p.reason, Steps: p.steps, Next: p.next,
			DrainSince: p.drainSince, RequestedAt: p.requestedAt, BootID: p.bootID, VerifySince: p.verifySince,
		})
	}
	sort.Slice(st.Plans, func(i, j int) bool { return st.Plans[i].Incident < st.Plans[j].Incident })
	for gpu, h := range r.handled {
		if h.needsPerson {
			st.Waiting = append(st.Waiting, waitingRecord{GPU: gpu, Node: h.node, Incident: h.incident, Remediation: h.rem.String()})
		}
	}
	sort.Slice(st.Waiting, func(i, j int) bool { return st.Waiting[i].GPU < st.Waiting[j].GPU })
	v := ""
	if len(st.Acted) > 0 || len(st.Plans) > 0 || len(st.Waiting) > 0 {
		b, err := json.Marshal(st)
		if err != nil {
			return err
		}
		v = string(b)
	}
	if v == r.state {
		return nil
	}
	if err := r.api.SetLeaseAnnotation(ctx, r.leaseNS, r.cfg.LeaderElection.LeaseName, stateAnnotation, v); err != nil {
		r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
		return fmt.Errorf("recording the incidents under way on the Lease (retried at the next tick): %w", err)
	}
	r.state = v
	return nil
}

// resume runs once when this replica becomes the leader: the incidents its
// predecessor recorded as under way go on from the step they reached, and
// the nodes it acted on count in the breaker; this replica's own plans of
// evidence too recent for the predecessor to have acted on start now.
func (r *remediator) resume(ctx context.Context, now time.Time) error {
	raw, err := r.api.LeaseAnnotation(ctx, r.leaseNS, r.cfg.LeaderElection.LeaseName, stateAnnotation)
	if err != nil {
		r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
		return fmt.Errorf("reading the incidents under way from the Lease: %w", err)
	}
	r.takeover = false
	var st leaseState
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &st); err != nil {
			// Not ours to repair: start from what this replica knows.
			r.reportLocked(fmt.Errorf("the Lease's %s annotation is unreadable, ignored: %w", stateAnnotation, err))
		}
	}
	r.state = raw
	r.breaker.Merge(st.Acted)
	known := map[string]bool{}
	for _, p := range r.plans {
		known[p.incident] = true
	}
	for _, rec := range st.Plans {
		if known[rec.Incident] {
			continue
		}
		rem, err := policy.Parse(rec.Remediation)
		if err != nil || rec.Next > len(rec.Steps) {
			continue
		}
		d := detected{at: rec.At, node: rec.Node, gpu: rec.GPU, pod: rec.Pod, fault: policy.Fault{Kind: policy.Kind(rec.Kind), Code: rec.Code}, fresh: true, arrived: now}
		p := &plan{d: d, incident: rec.Incident, rem: rem, reason: rec.Reason, steps: rec.Steps, next: rec.Next, started: true, arrived: now,
			drainSince: rec.DrainSince, requestedAt: rec.RequestedAt, bootID: rec.BootID, verifySince: rec.VerifySince}
		r.plans = append(r.plans, p)
		known[rec.Incident] = true
		r.handled[rec.GPU] = &handled{rem: rem, node: rec.Node, incident: rec.Incident}
		if g := r.gpus[rec.GPU]; g == nil {
			r.gpus[rec.GPU] = &gpuState{node: rec.Node, counters: map[string]counter{}, firstSeen: -1, lastSeen: now}
		}
		r.logger.Info("Resuming an incident the previous leader started", zap.String("incident", rec.Incident), zap.String("node", rec.Node), zap.String("step", stepName(rec.Steps, rec.Next)))
	}
	for _, w := range st.Waiting {
		rem, err := policy.Parse(w.Remediation)
		if err != nil {
			continue
		}
		r.handled[w.GPU] = &handled{rem: rem, node: w.Node, incident: w.Incident, done: true, needsPerson: true}
		if g := r.gpus[w.GPU]; g == nil {
			r.gpus[w.GPU] = &gpuState{node: w.Node, counters: map[string]counter{}, firstSeen: -1, lastSeen: now}
		}
	}
	for _, p := range r.standby {
		if r.handled[p.d.gpu] != nil && r.handled[p.d.gpu].needsPerson {
			continue
		}
		if !known[p.incident] && now.Sub(p.arrived) <= r.standbyHorizon() {
			r.plans = append(r.plans, p)
			known[p.incident] = true
		}
	}
	r.standby = nil
	return nil
}

func stepName(steps []string, next int) string {
	if next < len(steps) {
		return steps[next]
	}
	return "done"
}

// await waits for the reset actor's answer or for the node to reboot.
func (r *remediator) await(ctx context.Context, p *plan, now time.Time) (int, string, error) {
	n, err := r.api.Node(ctx, p.d.node)
	if err != nil {
		return 0, "", err
	}
	if p.rem == policy.ResetGPU {
		raw := n.Annotations[nodeagent.ResetResult]
		if raw != "" {
			res, err := nodeagent.ParseResult(raw)
			switch {
			case err != nil:
				return r.resetFailed(ctx, p, now, fmt.Sprintf("unreadable answer: %v", err))
			case res.Incident != "" && res.Incident != p.incident:
				// Another incident's answer: not ours yet.
			case res.Outcome == nodeagent.ResetOK:
				p.verifySince = now
				r.stateChange(p, now, "", reasonResetOK, fmt.Sprintf("GPU %s reset by the node's actor (%s); checking its health for %v", p.d.gpu, res.Detail, r.cfg.Recovery.HealthyFor))
				return 1, "", nil
			default:
				return r.resetFailed(ctx, p, now, fmt.Sprintf("%s: %s", res.Outcome, res.Detail))
			}
		}
		if now.Sub(p.requestedAt) >= r.cfg.Recovery.Timeout {
			return r.needsPerson(ctx, p, now, fmt.Sprintf("no answer to the reset request within %v (recovery::timeout): is the gpu_reset extension running on the node?", r.cfg.Recovery.Timeout))
		}
		return 0, "", nil
	}
	if n.BootID != "" && n.BootID != p.bootID {
		p.verifySince = now
		r.stateChange(p, now, "", reasonRebooted, fmt.Sprintf("node %s rebooted (boot ID %s); checking GPU %s's health for %v", p.d.node, n.BootID, p.d.gpu, r.cfg.Recovery.HealthyFor))
		return 1, "", nil
	}
	if now.Sub(p.requestedAt) >= r.cfg.Recovery.Timeout {
		return r.needsPerson(ctx, p, now, fmt.Sprintf("node not rebooted within %v of the request (recovery::timeout)", r.cfg.Recovery.Timeout))
	}
	return 0, "", nil
}

// resetFailed falls back from a GPU reset to a drain of the node and a
// reboot request, within the same incident: NVSentinel's lesson (a reset
// that cannot be done must not leave the GPU in limbo).
func (r *remediator) resetFailed(ctx context.Context, p *plan, now time.Time, why string) (int, string, error) {
	if !r.breaker.Allow(p.d.node, now, r.fleet(now)) {
		r.tripped(ctx)
		return r.needsPerson(ctx, p, now, "reset failed ("+why+") and "+r.breakerReason())
	}
	r.breaker.Record(p.d.node, now)
	p.rem, p.reason = policy.Drain, reasonResetFailed
	steps := r.steps(policy.Drain)
	// The Event was written for the incident already; the rest of the
	// drain's steps are idempotent and start from the condition.
	if len(steps) > 0 && steps[0] == stepEvent {
		steps = steps[1:]
	}
	p.steps, p.next = steps, 0
	p.drainSince, p.requestedAt, p.verifySince = time.Time{}, time.Time{}, time.Time{}
	if h := r.handled[p.d.gpu]; h != nil && h.incident == p.incident {
		h.rem = policy.Drain
	}
	r.decision(p.d, p.incident, policy.Drain, reasonResetFailed, fmt.Sprintf("GPU %s could not be reset (%s): draining node %s for a reboot", p.d.gpu, why, p.d.node))
	return 0, "", nil
}

// verify passes once the GPU has reported again with its UUID and shown no
// new fault for recovery::healthy_for, and the driver, where it says,
// asks for no recovery action; a new fault, silence, or a pending action
// asks a person.
func (r *remediator) verify(ctx context.Context, p *plan, now time.Time) (int, string, error) {
	g := r.gpus[p.d.gpu]
	if g != nil && g.lastFault.After(p.verifySince) {
		return r.needsPerson(ctx, p, now, fmt.Sprintf("GPU %s faulted again during its health check", p.d.gpu))
	}
	if now.Sub(p.verifySince) < r.cfg.Recovery.HealthyFor {
		return 0, "", nil
	}
	if g == nil || !g.lastSeen.After(p.verifySince) {
		return r.needsPerson(ctx, p, now, fmt.Sprintf("GPU %s has not reported with its UUID since it was reset or rebooted", p.d.gpu))
	}
	if g.recoveryKnown && g.recovery != gpuhealth.RecoveryNone {
		return r.needsPerson(ctx, p, now, fmt.Sprintf("the driver still asks for a recovery action on GPU %s: %s", p.d.gpu, gpuhealth.RecoveryName(g.recovery)))
	}
	if !slices.Contains(p.steps, stepUncordon) {
		r.stateChange(p, now, "", reasonHealthy, fmt.Sprintf("GPU %s healthy for %v; left out of service for a person (recovery::uncordon is false)", p.d.gpu, r.cfg.Recovery.HealthyFor))
	}
	return 1, "", nil
}

// giveBack undoes what this component did to the node once no other
// incident holds it.
func (r *remediator) giveBack(ctx context.Context, p *plan, now time.Time) (int, string, error) {
	if err := r.untaintDevices(ctx, p); err != nil {
		return 0, "", err
	}
	for _, o := range r.plans {
		if o != p && o.d.node == p.d.node && o.started && o.next < len(o.steps) {
			// Another incident still holds the node: it gives it back.
			r.stateChange(p, now, stepUncordon, reasonHealthy, fmt.Sprintf("GPU %s healthy; node %s stays out for incident %s", p.d.gpu, p.d.node, o.incident))
			r.release(p)
			return 1, "", nil
		}
	}
	for gpu, h := range r.handled {
		if gpu != p.d.gpu && h.node == p.d.node && h.needsPerson {
			r.stateChange(p, now, stepUncordon, reasonHealthy, fmt.Sprintf("GPU %s healthy; node %s stays out: GPU %s waits for a person", p.d.gpu, p.d.node, gpu))
			r.release(p)
			return 1, "", nil
		}
	}
	done, err := r.api.Restore(ctx, p.d.node, fmt.Sprintf("GPU %s healthy for %v after incident %s; returned to service by otelcol-gpu", p.d.gpu, r.cfg.Recovery.HealthyFor, p.incident))
	if err != nil {
		return 0, "", err
	}
	if done {
		r.stateChange(p, now, stepUncordon, reasonHealthy, fmt.Sprintf("GPU %s healthy for %v: node %s returned to service", p.d.gpu, r.cfg.Recovery.HealthyFor, p.d.node))
	}
	for gpu, h := range r.handled {
		if h.node == p.d.node && !h.needsPerson {
			delete(r.handled, gpu)
		}
	}
	return 1, "", nil
}

func (r *remediator) release(p *plan) {
	if h := r.handled[p.d.gpu]; h != nil && h.incident == p.incident {
		delete(r.handled, p.d.gpu)
	}
}

// needsPerson ends an incident's automatic handling: the node stays out
// of service, its condition and an Event say why and that a person must
// look, and no further automatic action is taken on the GPU until a
// person takes the node back. Recovery never loops.
func (r *remediator) needsPerson(ctx context.Context, p *plan, now time.Time, why string) (int, string, error) {
	msg := fmt.Sprintf("GPU %s, incident %s: %s; a person must look: otelcol-gpu will not act on this GPU again until the node is uncordoned (or its taint removed)", p.d.gpu, p.incident, why)
	if err := r.api.SetCondition(ctx, p.d.node, false, "NeedsPerson", msg); err != nil {
		return 0, "", err
	}
	if err := r.api.Event(ctx, p.d.node, corev1.EventTypeWarning, "GPURemediationNeedsPerson", msg); err != nil {
		return 0, "", err
	}
	r.stateChange(p, now, "", reasonNeedsPerson, msg)
	if h := r.handled[p.d.gpu]; h != nil && h.incident == p.incident {
		h.needsPerson, h.done = true, true
	} else {
		r.handled[p.d.gpu] = &handled{rem: p.rem, node: p.d.node, incident: p.incident, done: true, needsPerson: true}
	}
	p.next = len(p.steps)
	return 0, "", nil
}

// checkPeople lets go of GPUs waiting for a person once the person took
// the node back: uncordoned it (for a drain) or removed the GPU's taint
// (for a reset).
func (r *remediator) checkPeople(ctx context.Context) error {
	if r.api == nil || r.dryRun() {
		return nil
	}
	gpus := make([]string, 0)
	for gpu, h := range r.handled {
		if h.needsPerson {
			gpus = append(gpus, gpu)
		}
	}
	sort.Strings(gpus)
	for _, gpu := range gpus {
		h := r.handled[gpu]
		n, err := r.api.Node(ctx, h.node)
		if err != nil {
			r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
			return fmt.Errorf("node %s, checking whether a person took it back: %w", h.node, err)
		}
		tainted := slices.ContainsFunc(n.Taints, func(t corev1.Taint) bool { return t.Key == kube.TaintKey(gpu) })
		if !tainted && h.rem != policy.Drain {
			// A reset may have tainted the device instead of the node.
			if tainted, err = r.deviceStillTainted(ctx, gpu); err != nil {
				r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
				return fmt.Errorf("GPU %s, checking whether a person deleted its DeviceTaintRules: %w", gpu, err)
			}
		}
		if (h.rem == policy.Drain && !n.Unschedulable) || (h.rem != policy.Drain && !tainted) {
			delete(r.handled, gpu)
			d := detected{at: r.now(), node: h.node, gpu: gpu}
			r.decisionNamed(d, h.incident, "", "", reasonPerson, "a person took the node back; new faults are acted on again", r.dryRun())
		}
	}
	return nil
}

// stateChange records a change of an incident's state: one line in the
// decision stream.
func (r *remediator) stateChange(p *plan, now time.Time, action, reason, why string) {
	if action == "" {
		action = p.rem.String()
	}
	r.count(action, reason)
	d := p.d
	d.at = now
	r.decisionNamed(d, p.incident, p.d.fault.String(), action, reason, why, r.dryRun())
}
