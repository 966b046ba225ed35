package gpuresetextension

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/go-logr/zapr"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubeauth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// fieldManager names this component's writes in the node's managedFields.
const fieldManager = "otelcol-gpu-reset"

// actor is the extension: one loop that reads its node and answers each
// reset request once.
type actor struct {
	cfg    *Config
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder

	// What tests replace: the NVML library (nil: the real one), the DCGM
	// diagnostic, the API client, and how fast failures are retried.
	nvml   nvml.Interface
	diag   func(dcgmbackend.DiagOptions, []string) (dcgmbackend.DiagResult, error)
	newAPI func() (kubernetes.Interface, error)
	// retryBase is the first back-off after a failure; it doubles up to
	// poll_interval. attempts is how often NVML or DCGM is tried within
	// one request before the request is answered without it.
	retryBase time.Duration
	attempts  int

	mu      sync.Mutex
	host    component.Host
	cancel  context.CancelFunc
	done    chan struct{}
	healthy bool
	// wake is poked by the watch when the node carries a request.
	wake chan struct{}

	// pending is an answer computed but not written yet (the API failed,
	// or the node changed since it was read). It is written before
	// anything else is done, so that a failed write does not repeat a
	// reset; it is dropped if the request it answers changes.
	pending *answer
}

type answer struct {
	request, incident string // the annotations it answers, as read
	// result nil: only remove a request whose incident was answered before.
	result *nodeagent.Result
}

func newActor(cfg *Config, set extension.Settings) (*actor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	a := &actor{
		cfg: cfg, logger: set.Logger, tb: tb,
		diag:      dcgmbackend.RunDiag,
		retryBase: time.Second,
		attempts:  5,
		wake:      make(chan struct{}, 1),
	}
	a.newAPI = a.kubernetesAPI
	return a, nil
}

var routeKlog sync.Once

func (a *actor) kubernetesAPI() (kubernetes.Interface, error) {
	// client-go's informer logs through klog; send it to the collector's log.
	routeKlog.Do(func() { klog.SetLogger(zapr.NewLogger(a.logger.Named("client-go"))) })
	rc, err := kubeauth.RESTConfig(a.cfg.Auth.Type, a.cfg.Auth.Kubeconfig, a.cfg.Auth.Context)
	if err != nil {
		return nil, err
	}
	// No client-wide timeout: it would cut the watch. Each get and patch
	// carries api_timeout instead.
	return kubernetes.NewForConfig(rc)
}

// Start starts the loop. Nothing here fails the collector: an API that
// cannot be reached is a recoverable status, retried.
func (a *actor) Start(_ context.Context, host component.Host) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.host = host
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	a.logger.Info("GPU reset actor started: answers reset requests on its node", zap.String("node", a.cfg.Node),
		zap.String("backend", a.cfg.Backend), zap.Strings("command", a.cfg.Reset.Command))
	go a.run(ctx)
	return nil
}

// Shutdown stops the loop. A reset command under way is not killed (a GPU
// left half reset is worse than a late shutdown): it runs to its end or
// to reset::timeout, and its request is answered after the next start.
func (a *actor) Shutdown(ctx context.Context) error {
	a.mu.Lock()
	cancel, done := a.cancel, a.done
	a.cancel = nil
	a.mu.Unlock()
	if cancel != nil {
		cancel()
		select {
		case <-done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	a.tb.Shutdown()
	return nil
}

// errConflict: the node changed between the read and the write; read it
// again at once, no failure.
var errConflict = errors.New("the node changed since it was read")

func (a *actor) run(ctx context.Context) {
	defer close(a.done)
	var (
		cs        kubernetes.Interface
		watchDone chan struct{}
		backoff   time.Duration
	)
	defer func() {
		if watchDone != nil {
			<-watchDone
		}
	}()
	for {
		err := func() error {
			if cs == nil {
				c, err := a.newAPI()
				if err != nil {
					return fmt.Errorf("Kubernetes API: %w", err) //nolint:staticcheck // ST1005: a proper noun
				}
				cs, watchDone = c, a.watch(ctx, c)
			}
			return a.step(ctx, cs)
		}()
		if ctx.Err() != nil {
			return
		}
		var wake <-chan struct{}
		wait := a.cfg.PollInterval
		switch {
		case errors.Is(err, errConflict):
			wait, wake = 0, nil
		case err != nil:
			a.failed(err)
			backoff = min(max(2*backoff, a.retryBase), a.cfg.PollInterval)
			// Watch events do not cut a back-off short: a failing API or
			// library is not hammered by a busy node.
			wait, wake = backoff, nil
		default:
			a.recovered()
			backoff, wake = 0, a.wake
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// watch pokes the loop whenever its node carries a reset request. Every
// step reads the node from the API again, so the watch only saves waiting
// for poll_interval; a broken watch (retried by the informer) delays a
// request by at most that.
func (a *actor) watch(ctx context.Context, cs kubernetes.Interface) chan struct{} {
	lw := cache.NewListWatchFromClient(cs.CoreV1().RESTClient(), "nodes", metav1.NamespaceAll,
		fields.OneTermEqualSelector("metadata.name", a.cfg.Node))
	inf := cache.NewSharedIndexInformer(lw, &corev1.Node{}, 0, cache.Indexers{})
	// Keep only what the handler reads: a node object's status (images,
	// conditions) is most of its size.
	_ = inf.SetTransform(func(obj any) (any, error) {
		n, ok := obj.(*corev1.Node)
		if !ok {
			return obj, nil
		}
		keep := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n.Name, ResourceVersion: n.ResourceVersion}}
		if v, ok := n.Annotations[nodeagent.ResetRequest]; ok {
			keep.Annotations = map[string]string{nodeagent.ResetRequest: v}
		}
		return keep, nil
	})
	poke := func(obj any) {
		if n, ok := obj.(*corev1.Node); ok && hasRequest(n) {
			select {
			case a.wake <- struct{}{}:
			default:
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    poke,
		UpdateFunc: func(_, obj any) { poke(obj) },
	})
	_ = inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *cache.Reflector, err error) {
		a.logger.Debug("Watch of the node failed; the informer retries, and the node is read every poll_interval meanwhile", zap.Error(err))
		cache.DefaultWatchErrorHandler(ctx, r, err)
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		inf.RunWithContext(ctx)
	}()
	return done
}

func hasRequest(n *corev1.Node) bool {
	_, ok := n.Annotations[nodeagent.ResetRequest]
	return ok
}

// step reads the node and, where it carries a request, answers it.
func (a *actor) step(ctx context.Context, cs kubernetes.Interface) error {
	n, err := a.getNode(ctx, cs)
	if err != nil {
		return fmt.Errorf("read node %s: %w", a.cfg.Node, err)
	}
	request, requested := n.Annotations[nodeagent.ResetRequest]
	incident := n.Annotations[nodeagent.ResetIncident]
	if p := a.pending; p != nil && (!requested || p.request != request || p.incident != incident) {
		a.logger.Warn("The reset request changed before its answer was written; the answer is dropped and the new request, if any, is handled",
			zap.String("answered", p.request), zap.String("incident", p.incident), zap.String("now", request))
		a.pending = nil
	}
	if !requested {
		return nil
	}
	if a.pending == nil {
		prev, perr := nodeagent.ParseResult(n.Annotations[nodeagent.ResetResult])
		if perr == nil && prev.Answers(incident) {
			a.logger.Info("Reset request for an incident already answered; removing it without acting",
				zap.String("incident", incident), zap.String("outcome", prev.Outcome))
			a.pending = &answer{request: request, incident: incident}
		} else {
			res, err := a.reset(ctx, request, incident)
			if err != nil {
				return err
			}
			a.tb.ExtensionGpuResetAttempts.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", res.Outcome)))
			log := a.logger.Warn
			if res.Outcome == nodeagent.ResetOK {
				log = a.logger.Info
			}
			log("GPU reset answered", zap.Strings("uuids", res.UUIDs), zap.String("incident", incident),
				zap.String("outcome", res.Outcome), zap.String("detail", res.Detail), zap.String("diag", res.Diag))
			a.pending = &answer{request: request, incident: incident, result: &res}
		}
	}
	err = a.patchNode(ctx, cs, nodeagent.ResultPatch(n.ResourceVersion, a.pending.result))
	if apierrors.IsConflict(err) {
		return errConflict
	}
	if err != nil {
		return fmt.Errorf("answer the reset request on node %s: %w", a.cfg.Node, err)
	}
	a.pending = nil
	return nil
}

func (a *actor) getNode(ctx context.Context, cs kubernetes.Interface) (*corev1.Node, error) {
	ctx, cancel := context.WithTimeout(ctx, a.cfg.APITimeout)
	defer cancel()
	return cs.CoreV1().Nodes().Get(ctx, a.cfg.Node, metav1.GetOptions{})
}

// patchNode writes the answer. It is not cut short by a shutdown: a reset
// done is better answered than done again after the restart.
func (a *actor) patchNode(ctx context.Context, cs kubernetes.Interface, patch []byte) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.APITimeout)
	defer cancel()
	_, err := cs.CoreV1().Nodes().Patch(ctx, a.cfg.Node, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: fieldManager})
	return err
}

// failed reports a failure that is retried: a log line, the error
// counter, and a recoverable status.
func (a *actor) failed(err error) {
	a.tb.ExtensionGpuResetErrors.Add(context.Background(), 1)
	a.logger.Warn("GPU reset actor: retrying after a failure", zap.Error(err))
	a.mu.Lock()
	defer a.mu.Unlock()
	a.healthy = false
	if a.host != nil {
		componentstatus.ReportStatus(a.host, componentstatus.NewRecoverableErrorEvent(err))
	}
}

func (a *actor) recovered() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.healthy && a.host != nil {
		a.healthy = true
		componentstatus.ReportStatus(a.host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

// retry calls fn up to a.attempts times, backing off between calls and
// reporting each failure; it returns fn's last error, or ctx's.
func (a *actor) retry(ctx context.Context, what string, fn func() error) error {
	wait := a.retryBase
	var err error
	for i := 0; i < a.attempts; i++ {
		if err = fn(); err == nil {
			return nil
		}
		a.failed(fmt.Errorf("%s (try %d of %d): %w", what, i+1, a.attempts, err))
		if i == a.attempts-1 {
			break
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, a.cfg.PollInterval)
	}
	return err
}
