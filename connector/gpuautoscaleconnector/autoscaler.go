package gpuautoscaleconnector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/zapr"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"k8s.io/klog/v2"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubeauth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// cluster is what the autoscaler needs from Kubernetes: the target's scale
// (spec.replicas and its pods' selector), its pods, and a way to write.
type cluster interface {
	Scale(ctx context.Context, ref kube.Ref) (kube.Scale, error)
	Pods(ctx context.Context, namespace, selector string) ([]hpa.Pod, error)
	Set(ctx context.Context, ref kube.Ref, replicas int32) (int32, error)
}

// autoscaler is the connector's core, shared by its metrics-to-metrics and
// metrics-to-logs instances so that one component ID writes once.
//
// Two locks, neither held across a Kubernetes API call or a downstream
// Consume call: mu guards the values the pipeline delivers (held only to
// store or copy them), and evalMu makes evaluations one at a time (it
// guards each target's history, back-off and counters, and the client).
type autoscaler struct {
	cfg    *Config
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder
	// mb builds the evaluations' metrics; guarded by evalMu.
	mb *metadata.MetricsBuilder

	mu         sync.Mutex
	metricsOut consumer.Metrics
	logsOut    consumer.Logs
	host       component.Host
	started    bool
	cancel     context.CancelFunc
	done       chan struct{}

	evalMu  sync.Mutex
	targets []*target
	healthy bool
	// The Kubernetes client has three states: not wanted (auth none, or a
	// replay: noCluster), built (api, and leases with leader election), or
	// failed to build (apiErr: reported, and rebuilt with back-off until it
	// builds; no target is evaluated meanwhile).
	noCluster  bool
	api        cluster
	leases     *kube.Leases
	apiErr     error
	apiBackoff time.Duration
	apiRetryAt time.Time

	// newAPI builds the Kubernetes client; tests replace it.
	newAPI func() (cluster, *kube.Leases, error)
	now    func() time.Time

	// replayedAt is the data time of a replay's latest evaluation.
	replayedAt time.Time

	// id names the component to the storage extension; store keeps the
	// serving mode's state across restarts (persist.go), nil without
	// one; saved is when it was last written. Guarded by evalMu.
	id    component.ID
	store storage.Client
	saved time.Time
}

type target struct {
	cfg     *TargetConfig
	ref     kube.Ref
	match   map[string]string
	metrics []MetricConfig
	hpa     *hpa.Autoscaler
	start   pcommon.Timestamp
	actions [2]int64 // up, down

	// series holds the latest value of each data point series, per metric;
	// guarded by autoscaler.mu.
	series []map[string]seriesValue

	backoff      time.Duration
	backoffUntil time.Time

	// sim, in a replay, is the target's state as the replay says it is.
	sim  *simState
	last offline.Evaluation
	// serving is the state of mode serving; nil in other modes.
	serving *servingTarget
}

// seriesValue is the latest value of one series (a GPU, or one attribute
// set of a metric) of one pod.
type seriesValue struct {
	pod   string
	value float64
	at    time.Time
}

type simState struct {
	replicas int32
	pods     []hpa.Pod
}

func newAutoscaler(cfg *Config, set connector.Settings) (*autoscaler, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	a := &autoscaler{
		cfg: cfg, logger: set.Logger, tb: tb, now: time.Now, noCluster: cfg.Auth.Type == "none",
		mb: metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set), id: set.ID,
	}
	for i := range cfg.Targets {
		t := &cfg.Targets[i]
		tg := &target{
			cfg:     t,
			ref:     t.ScaleTargetRef,
			match:   t.match(),
			metrics: t.metrics(),
			hpa:     hpa.New(t.spec()),
			serving: newServingTarget(t),
		}
		for range tg.metrics {
			tg.series = append(tg.series, map[string]seriesValue{})
		}
		a.targets = append(a.targets, tg)
	}
	a.newAPI = a.kubernetesAPI
	return a, nil
}

// routeKlog sends client-go's own log lines (klog) to the collector's
// logger, once per process, instead of raw to stderr.
var routeKlog sync.Once

func (a *autoscaler) kubernetesAPI() (cluster, *kube.Leases, error) {
	routeKlog.Do(func() { klog.SetLogger(zapr.NewLogger(a.logger.Named("client-go"))) })
	rc, err := kubeauth.RESTConfig(a.cfg.Auth.Type, a.cfg.Auth.Kubeconfig, a.cfg.Auth.Context)
	if err != nil {
		return nil, nil, err
	}
	sc, err := kube.NewScaler(rc, a.cfg.APITimeout)
	if err != nil {
		return nil, nil, err
	}
	le := a.cfg.LeaderElection
	if !le.Enabled {
		return sc, nil, nil
	}
	id := le.Identity
	if id == "" {
		id, _ = os.Hostname()
	}
	ns := le.LeaseNamespace
	if ns == "" {
		ns = podNamespace()
	}
	leases, err := kube.NewLeases(rc, kube.LeaseConfig{
		Prefix: le.LeaseName, Namespace: ns, Identity: id,
		LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
	}, func(name string, leading bool) {
		a.logger.Info("Autoscaler leadership changed", zap.String("lease", name), zap.Bool("leader", leading))
	})
	if err != nil {
		return nil, nil, err
	}
	return sc, leases, nil
}

// podNamespace is the collector pod's own namespace, where its Leases live.
func podNamespace() string {
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return string(b)
	}
	return "default"
}

// Start starts the evaluation loop; sharedcomponent calls it once for all
// the connector's instances.
func (a *autoscaler) Start(ctx context.Context, host component.Host) error {
	if err := a.openStorage(ctx, host); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started = true
	a.host = host
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	go a.loop(ctx)
	return nil
}

// Shutdown stops the loop and releases the Leases, once the last of the
// connector's instances is shut down.
func (a *autoscaler) Shutdown(context.Context) error {
	a.mu.Lock()
	if !a.started {
		a.mu.Unlock()
		return nil
	}
	a.started = false
	cancel, done := a.cancel, a.done
	a.mu.Unlock()
	cancel()
	<-done
	a.evalMu.Lock()
	if a.leases != nil {
		a.leases.Stop() // release the Leases held, so another replica takes over at once
	}
	a.closeStorage()
	a.evalMu.Unlock()
	a.tb.Shutdown()
	return nil
}

func (a *autoscaler) loop(ctx context.Context) {
	defer close(a.done)
	a.evalMu.Lock()
	a.connect(a.now())
	a.evalMu.Unlock()
	tick := time.NewTicker(a.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			a.evaluate(ctx, a.now())
		}
	}
}

// connect builds the Kubernetes client if it is wanted and not built yet,
// no sooner than the back-off allows. Called with evalMu held.
func (a *autoscaler) connect(now time.Time) {
	if a.noCluster || a.api != nil || now.Before(a.apiRetryAt) {
		return
	}
	api, leases, err := a.newAPI()
	if err != nil {
		a.apiBackoff = min(max(2*a.apiBackoff, a.cfg.Interval), 5*time.Minute)
		a.apiRetryAt = now.Add(a.apiBackoff)
		a.apiErr = fmt.Errorf("Kubernetes API client (retrying in %v): %w", a.apiBackoff, err) //nolint:staticcheck // ST1005: a proper noun
		a.report(a.apiErr)
		return
	}
	a.api, a.leases, a.apiErr, a.apiBackoff = api, leases, nil, 0
}

// without it, so the pipeline keeps flowing through a slow API server.
func (a *autoscaler) evaluate(ctx context.Context, now time.Time) {
	a.evalMu.Lock()
	md, ld := a.evaluateLocked(ctx, now)
	a.checkpoint(ctx, now)
	a.evalMu.Unlock()
	a.mu.Lock()
	metricsOut, logsOut := a.metricsOut, a.logsOut
	a.mu.Unlock()
	if metricsOut != nil && md.ResourceMetrics().Len() > 0 {
		if err := metricsOut.ConsumeMetrics(ctx, md); err != nil {
			a.logger.Warn("Could not emit autoscaling metrics", zap.Error(err))
		}
	}
	if logsOut != nil && ld.LogRecordCount() > 0 {
		if err := logsOut.ConsumeLogs(ctx, ld); err != nil {
			a.logger.Warn("Could not emit autoscaling logs", zap.Error(err))
		}
	}
}

func (a *autoscaler) evaluateLocked(ctx context.Context, now time.Time) (pmetric.Metrics, plog.Logs) {
	md := pmetric.NewMetrics()
	ld := plog.NewLogs()
	a.connect(now)
	if a.apiErr != nil {
		// No client: nothing can be read or written. Say so, every time.
		a.report(a.apiErr)
		return md, ld
	}
	values := make([][]map[string]float64, len(a.targets))
	a.mu.Lock()
	for i, t := range a.targets {
		values[i] = t.podValues(now, a.cfg.MetricMaxAge)
		t.serving.snapshot(now, a.cfg.MetricMaxAge)
	}
	a.mu.Unlock()
	var failures []error
	for i, t := range a.targets {
		if err := a.evaluateTarget(ctx, now, t, values[i], md, ld); err != nil {
			failures = append(failures, err)
		}
	}
	if len(failures) > 0 {
		a.report(errors.Join(failures...))
	} else {
		a.reportOK()
	}
	return md, ld
}

func (a *autoscaler) evaluateTarget(ctx context.Context, now time.Time, t *target, values []map[string]float64, md pmetric.Metrics, ld plog.Logs) error {
	reporting := reportingPods(values)
	if now.Before(t.backoffUntil) {
		if a.leases != nil && len(reporting) == 0 {
			a.leases.Want(t.ref, false) // stale: let a replica with values take over
		}
		return nil
	}
	o := hpa.Observation{Now: now, Values: values}
	switch {
	case a.api != nil:
		sc, err := a.api.Scale(ctx, t.ref)
		if err == nil {
			o.Pods, err = a.api.Pods(ctx, t.ref.Namespace, sc.Selector)
		}
		if err != nil {
			a.tb.ConnectorGpuAutoscaleAPIErrors.Add(ctx, 1)
			return t.fail(now, a.cfg.Interval, err)
		}
		o.Current = sc.Replicas
	case t.sim != nil:
		o.Current, o.Pods = t.sim.replicas, t.sim.pods
	default:
		// No cluster: the pods are those that report, all running; in
		// serving mode, also those reporting only their server's metrics.
		names := reporting
		if t.serving != nil {
			names = slices.Clone(reporting)
			for name := range t.serving.fresh {
				if !slices.Contains(reporting, name) {
					names = append(names, name)
				}
			}
			slices.Sort(names)
		}
		for _, name := range names {
			o.Pods = append(o.Pods, hpa.Pod{Name: name, Phase: hpa.Running})
		}
		o.Current = int32(len(o.Pods))
	}
	if a.leases != nil {
		// Compete for the target's Lease only while holding fresh values for
		// it, and give it up when they go stale, so that a replica that has
		// them takes over. Outside [min, max] the HPA corrects the count
		// without metrics; so does any replica that sees it.
		outside := o.Current != 0 && (o.Current < t.cfg.MinReplicas || o.Current > t.cfg.MaxReplicas)
		a.leases.Want(t.ref, len(reporting) > 0 || outside)
	}
	d := t.decide(o)
	a.tb.ConnectorGpuAutoscaleEvaluations.Add(ctx, 1)
	t.last = offline.Evaluation{Time: now, Target: t.ref.String(), Current: o.Current, Desired: d.Desired, Reason: string(d.Reason), Metric: d.Metric, Value: d.Value}
	if t.serving != nil {
		t.last.Serving = servingDetail(t.serving.last)
	}
	if d.Desired != o.Current {
		switch {
		case t.cfg.DryRun:
			if a.api == nil {
				// Without a cluster (auth none, a replay) the decision is taken
				// as applied, so that the policies see it.
				t.hpa.Record(now, o.Current, d.Desired)
			}
			a.logAction(ld, now, t, o.Current, d, true)
		case a.api == nil:
			// Unreachable: configuration validation makes every target dry
			// run without a cluster.
		case a.leases != nil && !a.leases.Leading(t.ref):
			// Another replica holds the target's Lease and writes.
		default:
			before, err := a.api.Set(ctx, t.ref, d.Desired)
			if err != nil {
				a.tb.ConnectorGpuAutoscaleAPIErrors.Add(ctx, 1)
				return t.fail(now, a.cfg.Interval, err)
			}
			a.tb.ConnectorGpuAutoscaleScaleActions.Add(ctx, 1)
			t.hpa.Record(now, before, d.Desired)
			if d.Desired > before {
				t.actions[0]++
			} else {
				t.actions[1]++
			}
			a.logAction(ld, now, t, before, d, false)
			a.logger.Info("Scaled", zap.String("target", t.ref.String()), zap.Int32("from", before),
				zap.Int32("to", d.Desired), zap.String("reason", string(d.Reason)), zap.String("metric", d.Metric), zap.Float64("value", d.Value))
		}
	}
	t.backoff = 0
	a.emitMetrics(md, now, t, o.Current, len(reporting), d)
	return nil
}

// fail backs a target off exponentially, from one interval up to 5 minutes.
func (t *target) fail(now time.Time, interval time.Duration, err error) error {
	t.backoff = min(max(2*t.backoff, interval), 5*time.Minute)
	t.backoffUntil = now.Add(t.backoff)
	return fmt.Errorf("%s (retrying in %v): %w", t.ref, t.backoff, err)
}

func (a *autoscaler) report(err error) {
	a.logger.Warn("Autoscaling failed; nothing was written", zap.Error(err))
	a.healthy = false
	if h := a.statusHost(); h != nil {
		componentstatus.ReportStatus(h, componentstatus.NewRecoverableErrorEvent(err))
	}
}

func (a *autoscaler) reportOK() {
	if a.healthy {
		return
	}
	if h := a.statusHost(); h != nil {
		a.healthy = true
		componentstatus.ReportStatus(h, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}

func (a *autoscaler) statusHost() component.Host {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.host
}
