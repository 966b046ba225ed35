package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaseConfig names the Leases and their timings.
type LeaseConfig struct {
	// Prefix starts every Lease's name; the target's names end it.
	Prefix, Namespace, Identity               string
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// Leases holds one Lease per target, each competed for only while this
// replica wants it: while it has fresh values for that target. So the
// replica that writes a target is one that sees it.
type Leases struct {
	client kubernetes.Interface
	cfg    LeaseConfig

	mu    sync.Mutex
	held  map[string]*lease
	wg    sync.WaitGroup
	onLog func(name string, leading bool)
}

type lease struct {
	cancel  context.CancelFunc
	leading atomic.Bool
}

// NewLeases returns the Lease holder; onChange, if set, hears every change
// of leadership.
func NewLeases(cfg *rest.Config, lc LeaseConfig, onChange func(name string, leading bool)) (*Leases, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return NewLeasesForClient(cs, lc, onChange), nil
}

// NewLeasesForClient is NewLeases with a client at hand.
func NewLeasesForClient(cs kubernetes.Interface, lc LeaseConfig, onChange func(name string, leading bool)) *Leases {
	return &Leases{client: cs, cfg: lc, held: map[string]*lease{}, onLog: onChange}
}

// Name is the Lease of a target: the prefix and the target's namespace,
// kind and name, lower-cased, as a valid object name (shortened with a hash
// when long).
func (l *Leases) Name(r Ref) string { return LeaseName(l.cfg.Prefix, r) }

// LeaseName is the name of a target's Lease.
func LeaseName(prefix string, r Ref) string {
	raw := strings.ToLower(prefix + "-" + r.Namespace + "-" + r.Kind + "-" + r.Name)
	b := []byte(raw)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			b[i] = '-'
		}
	}
	name := strings.Trim(string(b), "-.")
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(raw))
		name = strings.TrimRight(name[:52], "-.") + "-" + hex.EncodeToString(sum[:])[:10]
	}
	return name
}

// Want competes for a target's Lease while want is true; when it turns
// false, this replica stops competing and releases the Lease if it held it.
func (l *Leases) Want(r Ref, want bool) {
	name := l.Name(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, ok := l.held[name]
	switch {
	case want && !ok:
		if l.held == nil {
			return // stopped
		}
		ctx, cancel := context.WithCancel(context.Background())
		ls := &lease{cancel: cancel}
		l.held[name] = ls
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			l.run(ctx, name, ls)
		}()
	case !want && ok:
		cur.cancel()
		delete(l.held, name)
	}
}

// Leading says whether this replica holds the target's Lease now.
func (l *Leases) Leading(r Ref) bool {
	l.mu.Lock()
	ls, ok := l.held[l.Name(r)]
	l.mu.Unlock()
	return ok && ls.leading.Load()
}

// Stop releases every Lease held and waits until that is done.
func (l *Leases) Stop() {
	l.mu.Lock()
	for _, ls := range l.held {
		ls.cancel()
	}
	l.held = nil
	l.mu.Unlock()
	l.wg.Wait()
}

func (l *Leases) run(ctx context.Context, name string, ls *lease) {
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Name: name, Namespace: l.cfg.Namespace},
		Client:     l.client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: l.cfg.Identity},
	}
	set := func(v bool) {
		if ls.leading.Swap(v) != v && l.onLog != nil {
			l.onLog(name, v)
		}
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.cfg.LeaseDuration,
		RenewDeadline:   l.cfg.RenewDeadline,
		RetryPeriod:     l.cfg.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { set(true) },
			OnStoppedLeading: func() { set(false) },
		},
	})
	if err != nil {
		return // the timings were validated with the configuration
	}
	for ctx.Err() == nil {
		le.Run(ctx) // returns when leadership is lost; compete again
	}
	set(false)
}
