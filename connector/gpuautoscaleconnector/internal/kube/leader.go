package kube

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseConfig names the Lease and its timings.
type LeaseConfig struct {
	Name, Namespace, Identity                 string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Elect runs leader election on a Lease until ctx ends, calling lead(true)
// when this replica becomes the leader and lead(false) when it stops being
// one. Losing the lease is not fatal: the replica keeps trying.
func Elect(ctx context.Context, cfg *rest.Config, lc LeaseConfig, lead func(bool)) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metaOf(lc),
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: lc.Identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   lc.LeaseDuration,
		RenewDeadline:   lc.RenewDeadline,
		RetryPeriod:     lc.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            lc.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { lead(true) },
			OnStoppedLeading: func() { lead(false) },
		},
	})
	if err != nil {
		return err
	}
	go func() {
		for ctx.Err() == nil {
			le.Run(ctx) // returns when leadership is lost; try again
		}
	}()
	return nil
}
