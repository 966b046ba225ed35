package gpuremediationconnector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
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

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/breaker"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubeauth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// nodeAPI is what remediation needs from Kubernetes (*kube.Client).
type nodeAPI interface {
	Node(ctx context.Context, name string) (*kube.Node, error)
	Quarantine(ctx context.Context, name, gpu, fault, incident string, taint, cordon bool) (bool, bool, error)
	SetCondition(ctx context.Context, name string, healthy bool, reason, message string) error
	SetNetworkCondition(ctx context.Context, name string, healthy bool, reason, message string) error
	Event(ctx context.Context, node, eventType, reason, message string) error
	Drain(ctx context.Context, node string, only map[string]bool, pol kube.DrainPolicy) (kube.DrainResult, error)
	Request(ctx context.Context, name, key, value string) error
	Restore(ctx context.Context, name, message string) (bool, error)
	RequestReset(ctx context.Context, name, gpu, incident string) error
	Breaker(ctx context.Context, ns, lease string) (string, error)
	SetBreaker(ctx context.Context, ns, lease, reason string) error
	LeaseAnnotation(ctx context.Context, ns, lease, key string) (string, error)
	SetLeaseAnnotation(ctx context.Context, ns, lease, key, value string) error
	draAPI
}

// Reasons: why an action was taken, or not.
const (
	reasonPolicy        = "policy"               // the map says so
	reasonEscalated     = "escalated"            // repetition raised it
	reasonNonCritical   = "non_critical"         // the map says none
	reasonBreakerOpen   = "breaker_open"         // the circuit breaker stops all actions
	reasonOptOut        = "opt_out"              // the node carries the opt-out label
	reasonAlready       = "already_remediating"  // the GPU is already being handled
	reasonPerson        = "uncordoned_by_person" // a person took the node back; no new fault
	reasonDrainDeferred = "drain_deferred"       // drain.max_concurrent nodes are draining
	reasonDrainTimeout  = "drain_timeout"        // PodDisruptionBudgets or terminating pods kept the drain past drain.timeout
	reasonHealthy       = "healthy"              // the GPU passed its health check
	reasonDryRun        = "dry_run"              // the metric's reason for an action not written
	reasonResetOK       = "reset_ok"             // the reset actor reset the GPU
	reasonResetFailed   = "reset_failed"         // the reset failed or was impossible: reboot instead
	reasonRebooted      = "rebooted"             // the node's boot ID changed
	reasonNeedsPerson   = "needs_person"         // recovery failed or timed out: a person must look
	reasonDrainRefused  = "drain_refused"        // pods a drain may not evict under the drain settings
)

// Steps of a remediation, in rising order.
const (
	stepEvent     = "event"
	stepCondition = "condition"
	stepTaint     = "taint"
	stepCordon    = "cordon"
	stepDrain     = "drain"
	stepRequest   = "request"
	// States after the request, not writes: waiting for the reset actor's
	// answer or the reboot, then for the GPU to prove healthy.
	stepAwait    = "await"
	stepVerify   = "verify"
	stepUncordon = "uncordon"
	// stepHold ends a replace: the node stays out for a person (needsPerson).
	stepHold = "hold"
)

// plan is the remediation of one fault on one GPU, worked through step by
// step; a failed step is retried, with back-off, from where it stopped.
type plan struct {
	d        detected
	incident string // the incident's id
	rem      policy.Remediation
	reason   string // policy, escalated or reset_failed
	steps    []string
	next     int
	started  bool
	// arrived is when this replica read the evidence: a standby taking
	// over starts only what arrived too recently for the old leader.
	arrived time.Time
	// drain
	drainSince  time.Time
	deferLogged bool
	// recovery
	requestedAt time.Time // the reset or reboot request
	bootID      string    // the node's boot ID at the reboot request
	verifySince time.Time // the reset or reboot done: health check from here
	devices     []string  // the DeviceTaintRules its device_taint wrote (or would, in dry run)
	// retries
	backoff      time.Duration
	backoffUntil time.Time
}

// handled is the last remediation of a GPU.
type handled struct {
	rem      policy.Remediation
	node     string
	incident string
	done     bool // its plan has finished
	// needsPerson: recovery failed; nothing more is done for this GPU
	// until a person takes the node back.
	needsPerson bool
}

type remediator struct {
	cfg     *Config
	logger  *zap.Logger
	tb      *metadata.TelemetryBuilder
	mb      *metadata.MetricsBuilder // guarded by mu
	policy  *policy.Policy
	breaker *breaker.Breaker

	mu         sync.Mutex
	metricsOut consumer.Metrics
	logsOut    consumer.Logs
	host       component.Host
	api        nodeAPI
	leaseNS    string
	leading    bool
	takeover   bool // leadership just gained: resume the predecessor's work
	running    bool
	cancel     context.CancelFunc
	done       chan struct{}
	electDone  <-chan struct{}
	healthy    bool
	persisted  bool // the open breaker is recorded on the Lease
	announced  bool // the open breaker has been logged

	gpus    map[string]*gpuState
	fab     fabricState          // NIC ports (fabric.go)
	seen    map[string]time.Time // node → last report: the fleet
	pending []detected
	plans   []*plan
	standby []*plan             // a follower's plans, kept for a takeover
	state   string              // the state last recorded on the Lease
	handled map[string]*handled // by GPU
	counts  map[[2]string]int64 // {action, reason} → count
	bad     rejected            // evidence not taken, in the batch being read
	firstTS pcommon.Timestamp
	logs    plog.Logs
	out     []offline.Decision // decisions of the current tick

	// newAPI builds the Kubernetes client at start; tests replace it.
	newAPI func(ctx context.Context) (nodeAPI, error)
	now    func() time.Time
}

func newRemediator(cfg *Config, set connector.Settings) (*remediator, error) {
	p, err := cfg.policy()
	if err != nil {
		return nil, err
	}
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	r := &remediator{
		cfg: cfg, logger: set.Logger, tb: tb, policy: p,
		mb:      metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set),
		breaker: &breaker.Breaker{MaxShare: cfg.Breaker.MaxShare, MaxNodes: cfg.Breaker.MaxNodes, Window: cfg.Breaker.Window},
		leading: !cfg.LeaderElection.Enabled,
		gpus:    map[string]*gpuState{}, seen: map[string]time.Time{}, handled: map[string]*handled{},
		counts: map[[2]string]int64{}, logs: plog.NewLogs(), now: time.Now,
	}
	r.newAPI = r.kubernetesAPI
	if cfg.Slurm.Enabled {
		r.newAPI = func(context.Context) (nodeAPI, error) { return newSlurmNodes(cfg.Slurm, r.gpuIndex), nil }
	}
	return r, nil
}

var routeKlog sync.Once

func (r *remediator) kubernetesAPI(ctx context.Context) (nodeAPI, error) {
	if r.cfg.Auth.Type == "none" {
		return nil, nil
	}
	routeKlog.Do(func() { klog.SetLogger(zapr.NewLogger(r.logger.Named("client-go"))) })
	rc, err := kubeauth.RESTConfig(r.cfg.Auth.Type, r.cfg.Auth.Kubeconfig, r.cfg.Auth.Context)
	if err != nil {
		return nil, err
	}
	c, err := kube.New(rc, r.cfg.APITimeout)
	if err != nil {
		return nil, err
	}
	if le := r.cfg.LeaderElection; le.Enabled {
		id := le.Identity
		if id == "" {
			id, _ = os.Hostname()
		}
		r.leaseNS = le.LeaseNamespace
		if r.leaseNS == "" {
			r.leaseNS = podNamespace()
		}
		done, err := kube.Elect(ctx, rc, kube.LeaseConfig{
			Name: le.LeaseName, Namespace: r.leaseNS, Identity: id,
			LeaseDuration: le.LeaseDuration, RenewDeadline: le.RenewDeadline, RetryPeriod: le.RetryPeriod,
		}, r.setLeading)
		if err != nil {
			return nil, err
		}
		r.electDone = done
	}
	return c, nil
}

func podNamespace() string {
	if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
		return strings.TrimSpace(string(b))
	}
	return "default"
}

func (r *remediator) setLeading(lead bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if lead != r.leading {
		r.logger.Info("Remediation leadership changed", zap.Bool("leader", lead))
		r.takeover = lead
	}
	r.leading = lead
}

// Start connects to the API server and starts the loop; sharedcomponent
// calls it once for all the connector's instances.
func (r *remediator) Start(_ context.Context, host component.Host) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.running = true
	r.host = host
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan struct{})
	api, err := r.newAPI(ctx)
	if err != nil {
		r.reportLocked(fmt.Errorf("Kubernetes API: %w", err)) //nolint:staticcheck // ST1005: a proper noun
	}
	r.api = api
	if r.cfg.DryRun {
		r.logger.Info("GPU remediation in dry run: decisions are logged and emitted, nothing is written to the cluster")
	}
	go r.loop(ctx)
	return nil
}

// Shutdown stops the loop, once the last of the connector's instances is
// shut down.
func (r *remediator) Shutdown(context.Context) error {
	r.mu.Lock()
	if !r.running {
		r.mu.Unlock()
		return nil
	}
	r.running = false
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	cancel()
	<-done
	if r.electDone != nil {
		<-r.electDone
	}
	r.tb.Shutdown()
	return nil
}

func (r *remediator) loop(ctx context.Context) {
	defer close(r.done)
	tick := time.NewTicker(r.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			r.tick(ctx, r.now())
		}
	}
}

// consume reads the faults of a batch; they are acted on at the next tick.
func (r *remediator) consume(ctx context.Context, md pmetric.Metrics) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	rms := md.ResourceMetrics()
	var found []detected
	for i := 0; i < rms.Len(); i++ {
		found = append(found, r.detect(rms.At(i))...)
	}
	arrived := r.now()
	for _, d := range append(found, r.speedFaults()...) {
		d.arrived = arrived
		r.pending = append(r.pending, d)
	}
	r.bad.record(ctx, r.tb)
	return nil
}

// tick decides on the faults seen since the last tick, works on the plans,
// and emits what happened.
func (r *remediator) tick(ctx context.Context, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.out = r.out[:0]
	var failures []error
	if err := r.syncBreaker(ctx, now); err != nil {
		failures = append(failures, err)
	}
	sort.SliceStable(r.pending, func(i, j int) bool {
		a, b := r.pending[i], r.pending[j]
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		if a.node != b.node {
			return a.node < b.node
		}
		if a.gpu != b.gpu {
			return a.gpu < b.gpu
		}
		// The driver's recovery action first: the XID 154 that announces
		// it joins its incident. Raw evidence before the analyzer's
		// verdict, which repeats it.
		if ra, rb := kindOrder(a.fault.Kind), kindOrder(b.fault.Kind); ra != rb {
			return ra < rb
		}
		return a.fault.Code < b.fault.Code
	})
	// A follower files the evidence into incidents and plans as the leader
	// does, so that its escalation counts are the leader's, but records and
	// writes nothing: it keeps its plans for a takeover.
	if r.follower() {
		for _, d := range r.pending {
			if p := r.decide(d, false); p != nil {
				r.standby = append(r.standby, p)
			}
		}
		r.pruneStandby(now)
	} else {
		if r.takeover {
			if err := r.resume(ctx, now); err != nil {
				failures = append(failures, err)
			}
		}
		// r.plans is rebuilt with the plans still under way: first those
		// from earlier ticks (a drain waiting on a PodDisruptionBudget, a
		// reset awaited, a retry), then the new incidents, each decided and
		// started in turn.
		work := func(p *plan) {
			if err := r.advance(ctx, p, now); err != nil {
				failures = append(failures, err)
			}
			if p.next < len(p.steps) {
				r.plans = append(r.plans, p)
			} else if h := r.handled[p.d.gpu]; h != nil && h.node == p.d.node && h.incident == p.incident {
				h.done = true
			}
		}
		plans := r.plans
		r.plans = nil
		for _, p := range plans {
			work(p)
		}
		for _, d := range r.pending {
			if p := r.decide(d, true); p != nil {
				work(p)
			}
		}
		if err := r.checkPeople(ctx); err != nil {
			failures = append(failures, err)
		}
		if err := r.persist(ctx, now); err != nil {
			failures = append(failures, err)
		}
	}
	r.pending = r.pending[:0]
	r.forget(now)
	if len(failures) > 0 {
		r.reportLocked(errors.Join(failures...))
	} else if !r.healthy && r.host != nil {
		r.healthy = true
		componentstatus.ReportStatus(r.host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
	r.emit(ctx, now)
}

// steps lists the actions a remediation takes, in rising order, as
// enabled by the actions settings.
func (r *remediator) steps(rem policy.Remediation) []string {
	a := r.cfg.Actions
	var s []string
	add := func(on bool, step string) {
		if !on {
			return
		}
		switch step {
		case stepEvent, stepCondition, stepDeviceTaint, stepTaint:
			if r.cfg.Slurm.Enabled {
				// Slurm has none of these; its drain (the cordon step)
				// keeps jobs off the node, with the incident as reason.
				return
			}
		}
		s = append(s, step)
	}
	switch rem {
	case policy.RestartApp:
		add(a.Event, stepEvent)
	case policy.ResetGPU:
		add(a.Event, stepEvent)
		add(a.Condition, stepCondition)
		add(a.DeviceTaint, stepDeviceTaint)
		add(a.Taint, stepTaint)
		add(a.Drain, stepDrain)
		add(a.Request, stepRequest)
	case policy.Drain, policy.Replace:
		add(a.Event, stepEvent)
		add(a.Condition, stepCondition)
		add(a.DeviceTaint, stepDeviceTaint)
		add(a.Taint, stepTaint)
		add(a.Cordon, stepCordon)
		add(a.Drain, stepDrain)
		// A GPU to be replaced is not rebooted: no reboot repairs it.
		add(a.Request && rem == policy.Drain, stepRequest)
		add(rem == policy.Replace, stepHold)
	}
	// A request is followed through: the reset or reboot awaited, the GPU
	// checked, the node given back. Without a request (or without a drain
	// to make the GPU idle first) nothing would reset the GPU, and the node
	// stays out until a person looks.
	if rem >= policy.ResetGPU && rem != policy.Replace && a.Request && a.Drain {
		s = append(s, stepAwait, stepVerify)
		add(r.cfg.Recovery.Uncordon, stepUncordon)
	}
	return s
}

// writes says whether a step writes to the cluster (and so counts as an
// action); await and verify only read.
func writes(step string) bool { return step != stepAwait && step != stepVerify }

// decide files one piece of evidence into its incident and, when it opens
// a new incident, applies the policy and makes a plan of it; nil when there
// is nothing to do. Evidence that joins an open incident decides nothing:
// a burst of lines from one fault is one decision. record false files and
// plans without recording decisions (a follower).
func (r *remediator) decide(d detected, record bool) *plan {
	if d.fault.Kind.Fabric() {
		return r.decideFabric(d, record)
	}
	note := func(rem policy.Remediation, inc, reason, why string) {
		if record {
			r.decision(d, inc, rem, reason, why)
		}
	}
	if d.fault.Kind == policy.GPUFaulted || (d.fault.Kind == policy.XID && d.fault.Code == xidRecoveryAction && r.gpus[d.gpu] != nil && r.gpus[d.gpu].recoveryKnown) {
		// The analyzer's verdict repeats the raw evidence, and an XID 154
		// announces the recovery action read beside it: each joins the
		// GPU's open incident, or the remediation under way.
		if inc := r.policy.Latest(d.gpu, d.at); inc != nil {
			inc.Evidence++
			return nil
		}
		if h := r.handled[d.gpu]; h != nil && (!h.done || h.needsPerson) {
			return nil
		}
	}
	inc, opened := r.policy.Observe(d.gpu, d.fault, d.at)
	if !opened {
		return nil
	}
	pd := r.policy.Decide(inc)
	if r.cfg.Slurm.Enabled && pd.Remediation == policy.ResetGPU {
		// Slurm cannot keep jobs off one GPU of a node, and no reset actor
		// answers there: the GPU is made idle and recovered by draining
		// the node and rebooting it.
		pd.Remediation = policy.Drain
	}
	reason := reasonPolicy
	if pd.Escalated {
		reason = reasonEscalated
	}
	if pd.Remediation == policy.None {
		note(pd.Remediation, inc.ID, reasonNonCritical, "not critical: no node is touched")
		return nil
	}
	if h := r.handled[d.gpu]; h != nil && pd.Remediation >= policy.ResetGPU {
		if h.needsPerson {
			note(pd.Remediation, inc.ID, reasonNeedsPerson, fmt.Sprintf("%s is out of service waiting for a person (incident %s); no automatic action until the node is taken back", d.gpu, h.incident))
			return nil
		}
		if h.rem >= pd.Remediation && (!h.done || r.api == nil || !d.fresh || d.fault.Kind == policy.GPUFaulted) {
			note(pd.Remediation, inc.ID, reasonAlready, fmt.Sprintf("%s is already under %s (incident %s)", d.gpu, h.rem, h.incident))
			return nil
		}
	}
	p := &plan{d: d, incident: inc.ID, rem: pd.Remediation, reason: reason, steps: r.steps(pd.Remediation), arrived: d.arrived}
	if pd.Escalated && record {
		r.logger.Info("Repeated XID escalated", zap.String("gpu", d.gpu), zap.String("fault", d.fault.String()),
			zap.Int("incidents", pd.Repeats), zap.String("incident", inc.ID))
	}
	if pd.Remediation >= policy.ResetGPU {
		r.handled[d.gpu] = &handled{rem: pd.Remediation, node: d.node, incident: inc.ID}
	}
	return p
}

// touchesNode says whether a plan changes the node beyond an Event.
func (p *plan) touchesNode() bool { return p.rem >= policy.ResetGPU || p.d.nic != nil }

// forget drops the state of GPUs silent for gpu_ttl (or reporting from a
// clock that far ahead), and of nodes silent beyond the fleet's horizon:
// under churn, new GPUs and pods keep coming and the old never report
// again. A GPU under an action this component took on the cluster stays,
// so that its node can be given back. Called with mu held.
func (r *remediator) forget(now time.Time) {
	ttl := r.cfg.GPUTTL
	for id, g := range r.gpus {
		if age := now.Sub(g.lastSeen); age <= ttl && age >= -ttl {
			continue
		}
		if r.handled[id] != nil && !r.dryRun() {
			continue
		}
		delete(r.gpus, id)
		delete(r.handled, id)
		r.policy.Forget(id)
	}
	for node, at := range r.seen {
		if now.Sub(at) > r.fleetHorizon() {
			delete(r.seen, node)
		}
	}
	r.forgetFabric(now)
	r.policy.Prune(now)
}
