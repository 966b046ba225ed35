package kube

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	l, err := c.cs.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return l.Annotations[BreakerAnnotation], nil
}

// SetBreaker records an open breaker on the Lease, so that neither a
// restart nor a new leader closes it.
func (c *Client) SetBreaker(ctx context.Context, ns, lease, reason string) error {
	for attempt := 0; attempt < 3; attempt++ {
		gctx, cancel := c.ctx(ctx)
		l, err := c.cs.CoordinationV1().Leases(ns).Get(gctx, lease, metav1.GetOptions{})
		cancel()
		if err != nil {
			return err
		}
		l = l.DeepCopy()
		if l.Annotations == nil {
			l.Annotations = map[string]string{}
		}
		l.Annotations[BreakerAnnotation] = reason
		uctx, cancel := c.ctx(ctx)
		_, err = c.cs.CoordinationV1().Leases(ns).Update(uctx, l, metav1.UpdateOptions{FieldManager: Component})
		cancel()
		if !apierrors.IsConflict(err) {
			return err
		}
	}
	return fmt.Errorf("lease %s/%s kept changing; breaker not recorded", ns, lease)
}
