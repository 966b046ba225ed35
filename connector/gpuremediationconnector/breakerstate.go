package gpuremediationconnector

// This file keeps the circuit breaker: the fleet its share is of, its
// opening reported once and recorded on the Lease, and a person's reset
// read back from there.

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"
)

// fleetHorizon is how recently a node must have reported to count in the
// fleet the circuit breaker's share is of.
func (r *remediator) fleetHorizon() time.Duration { return max(r.cfg.Breaker.Window, 15*time.Minute) }

func (r *remediator) fleet(now time.Time) int {
	n := 0
	for _, at := range r.seen {
		if now.Sub(at) < r.fleetHorizon() {
			n++
		}
	}
	return n
}

func (r *remediator) breakerReason() string {
	_, reason, _ := r.breaker.Open()
	return "circuit breaker open: " + reason
}

// tripped reports an open breaker once, and records it on the Lease (until
// that succeeds) so that only a person closes it.
func (r *remediator) tripped(ctx context.Context) {
	open, reason, _ := r.breaker.Open()
	if !open {
		return
	}
	if !r.announced {
		r.announced = true
		r.logger.Error("Circuit breaker open: all remediation stopped until a person resets it", zap.String("reason", reason))
		r.count("breaker", "open")
	}
	if r.persisted || r.api == nil || !r.cfg.LeaderElection.Enabled || r.cfg.DryRun {
		return
	}
	if err := r.api.SetBreaker(ctx, r.leaseNS, r.cfg.LeaderElection.LeaseName, reason); err != nil {
		r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
		r.reportLocked(fmt.Errorf("recording the open breaker on the Lease (retried at the next tick): %w", err))
		return
	}
	r.persisted = true
}

// syncBreaker follows the breaker annotation on the Lease: present, the
// breaker is open (after a restart or a change of leader); removed by a
// person, it closes.
func (r *remediator) syncBreaker(ctx context.Context, now time.Time) error {
	if r.api == nil || !r.cfg.LeaderElection.Enabled || r.cfg.DryRun || !r.leading {
		return nil
	}
	if open, _, _ := r.breaker.Open(); open && !r.persisted {
		r.tripped(ctx)
		return nil
	}
	ann, err := r.api.Breaker(ctx, r.leaseNS, r.cfg.LeaderElection.LeaseName)
	if err != nil {
		r.tb.ConnectorGpuRemediationAPIErrors.Add(ctx, 1)
		return fmt.Errorf("reading the breaker from the Lease: %w", err)
	}
	open, _, _ := r.breaker.Open()
	switch {
	case ann != "" && !open:
		r.breaker.Trip(ann, now)
		r.persisted = true
		r.tripped(ctx)
	case ann == "" && open:
		r.breaker.Reset()
		r.persisted, r.announced = false, false
		r.logger.Warn("Circuit breaker reset by a person (annotation removed from the Lease)")
		r.count("breaker", "reset")
	}
	return nil
}
