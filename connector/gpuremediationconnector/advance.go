package gpuremediationconnector

// This file works a plan through its steps (advance, do) and reports how
// it went: the cluster's side of a decision, apart from how remediator.go
// takes faults in and decides.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component/componentstatus"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
)

// advance works on a plan until it finishes, waits (a drain), or fails.
func (r *remediator) advance(ctx context.Context, p *plan, now time.Time) error {
	if now.Before(p.backoffUntil) {
		return nil
	}
	node := p.d.node
	if !p.started {
		var n *kube.Node
		if r.api != nil {
			var err error
			n, err = r.api.Node(ctx, node)
			switch {
			case err != nil && !r.dryRun():
				return r.fail(p, now, err)
			case err != nil:
				// A dry run writes nothing, so a node it cannot read (no
				// Slurm on this host, as in make run-slurm's simulated
				// fleet; an API server down) still gets its decision, as
				// without an API at all; the log says it was not read.
				r.logger.Info("Dry run: node not read, deciding without its state", zap.String("node", node), zap.Error(err))
			}
		}
		if n != nil {
			if r.cfg.OptOutLabel != "" && n.Labels[r.cfg.OptOutLabel] == "true" {
				r.finish(p, reasonOptOut, fmt.Sprintf("node carries %s=true", r.cfg.OptOutLabel))
				return nil
			}
			if p.touchesNode() && n.Owner != nil {
				ownFault := containsFault(n.Owner.Faults, p.d.gpu+"/"+p.d.fault.String())
				if ownFault && !p.d.fresh && n.Owner.Cordoned && !n.Unschedulable {
					r.finish(p, reasonPerson, "a person uncordoned the node and no new fault arrived")
					return nil
				}
			}
		}
		if open, _, _ := r.breaker.Open(); open {
			r.finish(p, reasonBreakerOpen, r.breakerReason())
			return nil
		}
		if p.touchesNode() {
			if !r.breaker.Allow(node, now, r.fleet(now)) {
				r.tripped(ctx)
				r.finish(p, reasonBreakerOpen, r.breakerReason())
				return nil
			}
			if r.drainsAt(p) && r.draining(p) >= r.cfg.Drain.MaxConcurrent {
				if !p.deferLogged {
					p.deferLogged = true
					r.decision(p.d, p.incident, p.rem, reasonDrainDeferred, fmt.Sprintf("%d nodes are draining (drain::max_concurrent)", r.cfg.Drain.MaxConcurrent))
				}
				return nil
			}
			r.breaker.Record(node, now)
		}
		p.started = true
		dry := r.dryRun()
		r.decision(p.d, p.incident, p.rem, p.reason, r.describe(p))
		if dry {
			devices := r.dryDeviceTaint(ctx, p)
			for _, s := range p.steps {
				if p.wrote(s) {
					r.count(s, reasonDryRun)
					r.actionLog(p, s, true, p.stepDetail(s, devices))
				}
			}
			p.next = len(p.steps)
			return nil
		}
	}
	for p.next < len(p.steps) {
		step := p.steps[p.next]
		n, detail, err := r.do(ctx, p, step, now)
		if err != nil {
			return r.fail(p, now, err)
		}
		if n == 0 {
			return nil // waiting: a drain, a reset, a reboot, a health check; or given up
		}
		for ; n > 0 && p.next < len(p.steps); n-- {
			if s := p.steps[p.next]; p.wrote(s) {
				r.count(s, p.reason)
				r.actionLog(p, s, false, detail)
			}
			p.next++
		}
		p.backoff = 0
	}
	return nil
}

func (r *remediator) dryRun() bool { return r.cfg.DryRun || r.api == nil }

func containsFault(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// drainsAt says whether the plan's next step is its drain.
func (r *remediator) drainsAt(p *plan) bool {
	for _, s := range p.steps {
		if s == stepDrain {
			return true
		}
	}
	return false
}

// draining counts the other nodes with a drain under way: started, and
// not yet past the drain step.
func (r *remediator) draining(self *plan) int {
	nodes := map[string]bool{}
	for _, p := range r.plans {
		if p != self && p.started && p.d.node != self.d.node && p.next <= slices.Index(p.steps, stepDrain) {
			nodes[p.d.node] = true
		}
	}
	return len(nodes)
}

// do runs one step and returns how many steps it completed: 0 while a
// drain waits, 2 when a taint and the cordon after it went in one write.
func (r *remediator) do(ctx context.Context, p *plan, step string, now time.Time) (int, string, error) {
	if p.d.nic != nil {
		return r.doFabric(ctx, p, step)
	}
	d := p.d
	fault := d.fault.String()
	switch step {
	case stepEvent:
		return 1, "", r.api.Event(ctx, d.node, corev1.EventTypeWarning, "GPUFault", fmt.Sprintf("GPU %s: %s; remediation %s (%s); incident %s", d.gpu, fault, p.rem, p.reason, p.incident))
	case stepCondition:
		return 1, "", r.api.SetCondition(ctx, d.node, false, conditionReason(d.fault), fmt.Sprintf("GPU %s: %s; remediation %s by otelcol-gpu; incident %s", d.gpu, fault, p.rem, p.incident))
	case stepTaint:
		if p.next+1 < len(p.steps) && p.steps[p.next+1] == stepCordon {
			// Taint and cordon in one write, with the ownership record.
			_, _, err := r.api.Quarantine(ctx, d.node, d.gpu, fault, p.incident, true, true)
			return 2, kube.TaintKey(d.gpu), err
		}
		_, _, err := r.api.Quarantine(ctx, d.node, d.gpu, fault, p.incident, true, false)
		return 1, kube.TaintKey(d.gpu), err
	case stepCordon:
		_, _, err := r.api.Quarantine(ctx, d.node, d.gpu, fault, p.incident, false, true)
		return 1, "", err
	case stepDeviceTaint:
		return r.deviceTaint(ctx, p)
	case stepAwait:
		return r.await(ctx, p, now)
	case stepVerify:
		return r.verify(ctx, p, now)
	case stepUncordon:
		return r.giveBack(ctx, p, now)
	case stepHold:
		return r.needsPerson(ctx, p, now, fault+": held for replacement, as AMD's service action for the fault is a new GPU")
	case stepDrain:
		if p.drainSince.IsZero() {
			p.drainSince = now
		}
		if r.personTookBack(ctx, p) {
			r.abort(p, reasonPerson, "a person uncordoned the node during the drain; drain stopped")
			return 0, "", nil
		}
		var only map[string]bool
		if r.cfg.Drain.OnlyGPUPods || p.rem == policy.ResetGPU {
			only = map[string]bool{}
			if d.pod != "" {
				only[d.pod] = true
			}
		}
		res, err := r.api.Drain(ctx, d.node, only, r.cfg.Drain.kubePolicy())
		if err != nil {
			return 0, "", err
		}
		if len(res.Refused) > 0 {
			r.decision(d, p.incident, p.rem, reasonDrainRefused, "drain refused as kubectl drain refuses it (nothing evicted, nothing requested): "+strings.Join(res.Refused, "; "))
			p.next = len(p.steps) // give up the drain and what follows it
			return 0, "", nil
		}
		for _, pod := range res.Evicted {
			r.logger.Info("Evicted", zap.String("node", d.node), zap.String("pod", pod))
		}
		if res.Remaining == 0 {
			return 1, "", nil
		}
		if now.Sub(p.drainSince) >= r.cfg.Drain.Timeout {
			r.decision(d, p.incident, p.rem, reasonDrainTimeout, fmt.Sprintf("drain not done after %v: %s; the node stays cordoned", r.cfg.Drain.Timeout, res.Waiting()))
			p.next = len(p.steps) // give up the drain and what follows it
		}
		return 0, "", nil
	case stepRequest:
		if p.rem == policy.ResetGPU {
			if err := r.api.RequestReset(ctx, d.node, d.gpu, p.incident); err != nil {
				return 0, "", err
			}
			p.requestedAt = now
			return 1, kube.ResetRequestAnnotation + "=" + d.gpu, nil
		}
		n, err := r.api.Node(ctx, d.node)
		if err != nil {
			return 0, "", err
		}
		v := now.UTC().Format(time.RFC3339)
		if err := r.api.Request(ctx, d.node, kube.RebootRequestAnnotation, v); err != nil {
			return 0, "", err
		}
		p.requestedAt, p.bootID = now, n.BootID
		return 1, kube.RebootRequestAnnotation + "=" + v, nil
	}
	return 1, "", nil
}

// personTookBack says whether the node this component cordoned is no
// longer cordoned: a person uncordoned it.
func (r *remediator) personTookBack(ctx context.Context, p *plan) bool {
	n, err := r.api.Node(ctx, p.d.node)
	return err == nil && n.Owner != nil && n.Owner.Cordoned && !n.Unschedulable
}

func (r *remediator) abort(p *plan, reason, why string) {
	r.decision(p.d, p.incident, p.rem, reason, why)
	p.next = len(p.steps)
	delete(r.handled, p.d.gpu)
}

func (r *remediator) finish(p *plan, reason, why string) {
	r.decision(p.d, p.incident, p.rem, reason, why)
	p.started, p.next = true, len(p.steps)
	if h := r.handled[p.d.gpu]; h != nil && h.incident == p.incident {
		delete(r.handled, p.d.gpu)
	}
}

// xidRecoveryAction is XID 154, "GPU recovery action changed".
const xidRecoveryAction = 154

// kindOrder orders the evidence of one GPU at one instant.
func kindOrder(k policy.Kind) int {
	if k == policy.RecoveryAction {
		return -1
	}
	return int(k)
}

// fail backs a plan off exponentially, from one interval up to 5 minutes;
// the step that failed wrote nothing and is tried again.
func (r *remediator) fail(p *plan, now time.Time, err error) error {
	r.tb.ConnectorGpuRemediationAPIErrors.Add(context.Background(), 1)
	p.backoff = min(max(2*p.backoff, r.cfg.Interval), 5*time.Minute)
	p.backoffUntil = now.Add(p.backoff)
	step := "start"
	if p.started && p.next < len(p.steps) {
		step = p.steps[p.next]
	}
	return fmt.Errorf("node %s, %s, step %s (retrying in %v): %w", p.d.node, p.d.fault, step, p.backoff, err)
}

func (r *remediator) reportLocked(err error) {
	r.logger.Warn("GPU remediation step failed; it is retried from where it stopped", zap.Error(err))
	r.healthy = false
	if r.host != nil {
		componentstatus.ReportStatus(r.host, componentstatus.NewRecoverableErrorEvent(err))
	}
}

func (r *remediator) describe(p *plan) string {
	if p.d.nic != nil {
		return r.describeFabric(p)
	}
	verb := "acting"
	if r.dryRun() {
		verb = "would act (dry run)"
	}
	why := fmt.Sprintf("%s on %s: GPU %s %s → %s (%s), incident %s: %s", verb, p.d.node, p.d.gpu, p.d.fault, p.rem, p.reason, p.incident, strings.Join(p.steps, ", "))
	if r.cfg.Slurm.Enabled && slices.Contains(p.steps, stepCordon) {
		// What sinfo -R will show, so that a dry run's reader sees the
		// drain as Slurm would get it.
		why += fmt.Sprintf("; Slurm: state=DRAIN reason=%q", drainReason(p.incident, p.d.fault.String(), p.d.gpu))
	}
	return why
}
