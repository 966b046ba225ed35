package gpuautoscaleconnector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/zapr"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"k8s.io/klog/v2"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// scaleAPI is what the autoscaler needs from Kubernetes.
type scaleAPI interface {
	Current(ctx context.Context, ref kube.Ref) (int32, error)
	Set(ctx context.Context, ref kube.Ref, replicas int32) (int32, error)
}

// autoscaler is the connector's core, shared by its metrics-to-metrics and
// metrics-to-logs instances so that one component ID writes once.
type autoscaler struct {
	cfg    *Config
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder

	mu         sync.Mutex
	metricsOut consumer.Metrics
	logsOut    consumer.Logs
	host       component.Host
	targets    []*target
	api        scaleAPI
	leading    bool
	started    int
	cancel     context.CancelFunc
	done       chan struct{}
	healthy    bool

	// newAPI builds the Kubernetes client at start; tests replace it.
	newAPI func(ctx context.Context) (scaleAPI, error)
	now    func() time.Time
}

type target struct {
	cfg     *TargetConfig
	ref     kube.Ref
	match   map[string]string
	metric  string
	hpa     *hpa.Autoscaler
	gpus    map[string]gpuValue
	start   pcommon.Timestamp
	actions [2]int64 // up, down

	backoff      time.Duration
	backoffUntil time.Time

	// batchPods, in a replay, holds the pods of the current batch: the
	// target's replica count as recorded.
	batchPods map[string]struct{}
	last      evaluation
	// serving is the state of mode serving; nil in other modes.
	serving *servingTarget
}

type gpuValue struct {
	pod   string
	value float64
	at    time.Time
}

func newAutoscaler(cfg *Config, set connector.Settings) (*autoscaler, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	a := &autoscaler{cfg: cfg, logger: set.Logger, tb: tb, now: time.Now, leading: !cfg.LeaderElection.Enabled}
	for i := range cfg.Targets {
		t := &cfg.Targets[i]
		r := t.ScaleTargetRef
		a.targets = append(a.targets, &target{
			cfg:     t,
			ref:     kube.Ref{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name},
			match:   t.match(),
			metric:  t.metric(),
			hpa:     hpa.New(t.spec()),
			gpus:    map[string]gpuValue{},
			serving: newServingTarget(t),
		})
	}
	a.newAPI = a.kubernetesAPI
	return a, nil
}

// routeKlog sends client-go's own log lines (klog) to the collector's
// logger, once per process, instead of raw to stderr.
var routeKlog sync.Once

func (a *autoscaler) kubernetesAPI(ctx context.Context) (scaleAPI, error) {
	if a.cfg.Auth.Type == "none" {
		return nil, nil
	}
	routeKlog.Do(func() { klog.SetLogger(zapr.NewLogger(a.logger.Named("client-go"))) })
	rc, err := kube.RESTConfig(a.cfg.Auth.Type, a.cfg.Auth.Kubeconfig, a.cfg.Auth.Context)
	if err != nil {
		return nil, err
	}
	sc, err := kube.NewScaler(rc, a.cfg.APITimeout)
	if err != nil {
		return nil, err
	}
	if le := a.cfg.LeaderElection; le.Enabled {
		id := le.Identity
		if id == "" {
			id, _ = os.Hostname()
		}
		ns := le.LeaseNamespace
		if ns == "" {
			ns = podNamespace()
		}
		err := kube.Elect(ctx, rc, kube.LeaseConfig{
			Name: le.LeaseName, Namespace: ns, Identity: id,
			LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		}, a.setLeading)
		if err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// podNamespace is the collector pod's own namespace, where its Lease lives.
func podNamespace() string {
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return string(b)
	}
	return "default"
}

func (a *autoscaler) setLeading(lead bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if lead != a.leading {
		a.logger.Info("Autoscaler leadership changed", zap.Bool("leader", lead))
	}
	a.leading = lead
}

func (a *autoscaler) start(_ context.Context, host component.Host) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.started++
	if a.started > 1 {
		return nil
	}
	a.host = host
	ctx, cancel := context.WithCancel(context.Background())
	a.cancel, a.done = cancel, make(chan struct{})
	api, err := a.newAPI(ctx)
	if err != nil {
		// Not fatal: report, and keep computing decisions without writing.
		a.reportLocked(fmt.Errorf("Kubernetes API: %w", err))
	}
	a.api = api
	go a.loop(ctx)
	return nil
}

func (a *autoscaler) shutdown(context.Context) error {
	a.mu.Lock()
	if a.started == 0 {
		a.mu.Unlock()
		return nil
	}
	a.started--
	if a.started > 0 {
		a.mu.Unlock()
		return nil
	}
	cancel, done := a.cancel, a.done
	a.mu.Unlock()
	cancel()
	<-done
	a.tb.Shutdown()
	return nil
}

func (a *autoscaler) loop(ctx context.Context) {
	defer close(a.done)
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

// consume keeps the latest value of each target's GPUs.
func (a *autoscaler) consume(_ context.Context, md pmetric.Metrics) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		for _, t := range a.targets {
			if !matches(attrs, t.match) {
				continue
			}
			gpu := str(attrs, "hw.id")
			pod := str(attrs, "k8s.pod.name")
			if pod == "" {
				pod = gpu // without pod attribution each GPU counts as a pod
			}
			t.ingest(rm, gpu, pod)
			t.serving.ingest(rm, pod)
		}
	}
	return nil
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func matches(attrs pcommon.Map, want map[string]string) bool {
	for k, v := range want {
		if str(attrs, k) != v {
			return false
		}
	}
	return true
}

func (t *target) ingest(rm pmetric.ResourceMetrics, gpu, pod string) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() != t.metric {
				continue
			}
			dps, ok := metricpoints.Of(m)
			if !ok {
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				if !matches(dp.Attributes(), t.cfg.MetricAttributes) {
					continue
				}
				v := metricpoints.Value(dp)
				at := dp.Timestamp().AsTime()
				key := gpu
				if key == "" {
					key = pod
				}
				if prev, ok := t.gpus[key]; !ok || at.After(prev.at) {
					t.gpus[key] = gpuValue{pod: pod, value: v, at: at}
				}
			}
		}
	}
}

// podValues combines the fresh GPU values into one value per pod, and
// forgets GPUs that have been silent for long.
func (t *target) podValues(now time.Time, maxAge time.Duration) ([]float64, int) {
	type acc struct {
		sum, max float64
		n        int
	}
	pods := map[string]*acc{}
	for id, g := range t.gpus {
		age := now.Sub(g.at)
		if age > 10*maxAge {
			delete(t.gpus, id)
			continue
		}
		if age > maxAge || age < -maxAge {
			continue // stale, or from a clock far ahead: missing
		}
		p := pods[g.pod]
		if p == nil {
			p = &acc{max: g.value}
			pods[g.pod] = p
		}
		p.sum += g.value
		p.max = max(p.max, g.value)
		p.n++
	}
	names := make([]string, 0, len(pods))
	for name := range pods {
		names = append(names, name)
	}
	sort.Strings(names) // deterministic order
	out := make([]float64, 0, len(names))
	for _, name := range names {
		p := pods[name]
		if t.cfg.Aggregation == "max" {
			out = append(out, p.max)
		} else {
			out = append(out, p.sum/float64(p.n))
		}
	}
	return out, len(names)
}

// evaluate decides, and where it may, writes, for every target.
func (a *autoscaler) evaluate(ctx context.Context, now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	md := pmetric.NewMetrics()
	ld := plog.NewLogs()
	var failures []error
	for _, t := range a.targets {
		if err := a.evaluateTarget(ctx, now, t, md, ld); err != nil {
			failures = append(failures, err)
		}
	}
	if len(failures) > 0 {
		a.reportLocked(errors.Join(failures...))
	} else if !a.healthy && a.host != nil {
		a.healthy = true
		componentstatus.ReportStatus(a.host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
	if a.metricsOut != nil && md.ResourceMetrics().Len() > 0 {
		if err := a.metricsOut.ConsumeMetrics(ctx, md); err != nil {
			a.logger.Warn("Could not emit autoscaling metrics", zap.Error(err))
		}
	}
	if a.logsOut != nil && ld.LogRecordCount() > 0 {
		if err := a.logsOut.ConsumeLogs(ctx, ld); err != nil {
			a.logger.Warn("Could not emit autoscaling logs", zap.Error(err))
		}
	}
}

func (a *autoscaler) evaluateTarget(ctx context.Context, now time.Time, t *target, md pmetric.Metrics, ld plog.Logs) error {
	if now.Before(t.backoffUntil) {
		return nil
	}
	values, reporting := t.podValues(now, a.cfg.MetricMaxAge)
	current := int32(reporting)
	if t.batchPods != nil {
		current = int32(len(t.batchPods)) // replay: the pods of this batch
	}
	if a.api != nil {
		c, err := a.api.Current(ctx, t.ref)
		if err != nil {
			a.tb.ConnectorGpuAutoscaleAPIErrors.Add(ctx, 1)
			return t.fail(now, a.cfg.Interval, err)
		}
		current = c
	}
	var d hpa.Decision
	if t.serving != nil {
		d = t.serving.decide(t, now, a.cfg.MetricMaxAge, current, values)
	} else {
		d = t.hpa.Evaluate(hpa.Observation{Now: now, Current: current, Values: values})
	}
	a.tb.ConnectorGpuAutoscaleEvaluations.Add(ctx, 1)
	t.last = evaluation{Time: now, Target: t.ref.String(), Current: current, Desired: d.Desired, Reason: string(d.Reason), Metric: d.Metric}
	if d.Desired != current {
		switch {
		case a.api == nil:
			// No API (auth none, or a replay): decide as if it were applied.
			t.hpa.Record(now, current, d.Desired)
			a.logAction(ld, now, t, current, d, true)
		case t.cfg.DryRun:
			a.logAction(ld, now, t, current, d, true)
		case !a.leading:
			// Another replica holds the lease and writes.
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
				zap.Int32("to", d.Desired), zap.String("reason", string(d.Reason)), zap.Float64("metric", d.Metric))
		}
	}
	t.backoff = 0
	a.emitMetrics(md, now, t, current, reporting, d)
	return nil
}

// fail backs a target off exponentially, from one interval up to 5 minutes.
func (t *target) fail(now time.Time, interval time.Duration, err error) error {
	t.backoff = min(max(2*t.backoff, interval), 5*time.Minute)
	t.backoffUntil = now.Add(t.backoff)
	return fmt.Errorf("%s (retrying in %v): %w", t.ref, t.backoff, err)
}

func (a *autoscaler) reportLocked(err error) {
	a.logger.Warn("Autoscaling failed; nothing was written", zap.Error(err))
	a.healthy = false
	if a.host != nil {
		componentstatus.ReportStatus(a.host, componentstatus.NewRecoverableErrorEvent(err))
	}
}

func (a *autoscaler) emitMetrics(md pmetric.Metrics, now time.Time, t *target, current int32, reporting int, d hpa.Decision) {
	rm := md.ResourceMetrics().AppendEmpty()
	res := rm.Resource().Attributes()
	res.PutStr("k8s.namespace.name", t.ref.Namespace)
	res.PutStr("gpu.autoscale.target.kind", t.ref.Kind)
	res.PutStr("gpu.autoscale.target.name", t.ref.Name)
	if attr, ok := workloadAttribute[t.ref.Kind]; ok {
		res.PutStr(attr, t.ref.Name)
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()
	ts := pcommon.NewTimestampFromTime(now)
	if t.start == 0 {
		t.start = ts
	}
	gauge := func(name, unit, desc string, v float64, integer bool) pmetric.NumberDataPoint {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetUnit(unit)
		m.SetDescription(desc)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		if integer {
			dp.SetIntValue(int64(v))
		} else {
			dp.SetDoubleValue(v)
		}
		return dp
	}
	gauge("gpu.autoscale.replicas.desired", "{replica}", "Replicas the autoscaler wants.", float64(d.Desired), true)
	gauge("gpu.autoscale.replicas.current", "{replica}", "Replicas the target has (spec.replicas).", float64(current), true)
	gauge("gpu.autoscale.pods.reporting", "{pod}", "Pods with a fresh metric value.", float64(reporting), true)
	gauge("gpu.autoscale.metric.value", "1", "The metric's average per pod.", d.Metric, false).Attributes().PutStr("gpu.autoscale.metric", t.metric)
	gauge("gpu.autoscale.metric.target", "1", "The metric's target per pod.", t.cfg.TargetValue, false).Attributes().PutStr("gpu.autoscale.metric", t.metric)
	if t.cfg.Mode == "predictive" {
		gauge("gpu.autoscale.metric.forecast", "1", "The forecast average per current pod at the lead time.", d.Forecast, false).Attributes().PutStr("gpu.autoscale.metric", t.metric)
	}
	gauge("gpu.autoscale.decision", "{decision}", "1, with the reason that decided or limited the last evaluation.", 1, true).Attributes().PutStr("gpu.autoscale.reason", string(d.Reason))

	m := ms.AppendEmpty()
	m.SetName("gpu.autoscale.actions")
	m.SetUnit("{action}")
	m.SetDescription("Scale actions written, by direction.")
	sum := m.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	for i, dir := range []string{"up", "down"} {
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(t.start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(t.actions[i])
		dp.Attributes().PutStr("gpu.autoscale.direction", dir)
	}
}

// logAction adds one log record for a scale action (or, in dry run, the
// action it would have taken).
func (a *autoscaler) logAction(ld plog.Logs, now time.Time, t *target, before int32, d hpa.Decision, dry bool) {
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("k8s.namespace.name", t.ref.Namespace)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(now))
	lr.SetSeverityNumber(plog.SeverityNumberInfo)
	lr.SetSeverityText("INFO")
	verb := "scaled"
	if dry {
		verb = "would scale (dry run)"
	}
	lr.Body().SetStr(fmt.Sprintf("%s %s from %d to %d replicas: %s (%s %.3f, target %.3f)",
		verb, t.ref, before, d.Desired, d.Reason, t.metric, d.Metric, t.cfg.TargetValue))
	at := lr.Attributes()
	at.PutStr("gpu.autoscale.target", t.ref.String())
	at.PutInt("gpu.autoscale.replicas.before", int64(before))
	at.PutInt("gpu.autoscale.replicas.after", int64(d.Desired))
	at.PutStr("gpu.autoscale.reason", string(d.Reason))
	at.PutStr("gpu.autoscale.metric", t.metric)
	at.PutDouble("gpu.autoscale.metric.value", d.Metric)
	at.PutDouble("gpu.autoscale.metric.target", t.cfg.TargetValue)
	at.PutStr("gpu.autoscale.mode", modeOf(t.cfg))
	at.PutBool("gpu.autoscale.dry_run", dry)
	if t.cfg.Mode == "predictive" {
		at.PutDouble("gpu.autoscale.metric.forecast", d.Forecast)
	}
}

func modeOf(t *TargetConfig) string {
	if t.Mode == "" {
		return "reactive"
	}
	return t.Mode
}
