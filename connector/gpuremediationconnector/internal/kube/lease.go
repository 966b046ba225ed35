package kube

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
// when this replica becomes the leader and lead(false) when it stops. The
// elector's goroutine has ended when done is closed.
func Elect(ctx context.Context, cfg *rest.Config, lc LeaseConfig, lead func(bool)) (done <-chan struct{}, err error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: lc.Name, Namespace: lc.Namespace},
		Client:     cs.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: lc.Identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: lc.LeaseDuration, RenewDeadline: lc.RenewDeadline, RetryPeriod: lc.RetryPeriod,
		ReleaseOnCancel: true, Name: lc.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { lead(true) },
			OnStoppedLeading: func() { lead(false) },
		},
	})
	if err != nil {
		return nil, err
	}
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		for ctx.Err() == nil {
			le.Run(ctx) // returns when leadership is lost; try again
		}
	}()
	return ch, nil
}

// Breaker reads the breaker annotation of the Lease: "" when closed (or
// when there is no Lease yet).
func (c *Client) Breaker(ctx context.Context, ns, lease string) (string, error) {
	return c.LeaseAnnotation(ctx, ns, lease, BreakerAnnotation)
}

// SetBreaker records an open breaker on the Lease, so that neither a
// restart nor a new leader closes it.
func (c *Client) SetBreaker(ctx context.Context, ns, lease, reason string) error {
	return c.SetLeaseAnnotation(ctx, ns, lease, BreakerAnnotation, reason)
}
