package whatif

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// Options are the model's parameters.
type Options struct {
	Startup time.Duration // from request to ready; default 180 s
	Scale   float64       // multiplies the demand; default 1
	Sample  time.Duration // how often ready pods report; default 5 s
	SLOWait time.Duration // the longest acceptable wait; default 2 s
	// Cold starts at min_replicas, none ready (spec section 2's -cold);
	// the default is the warm start.
	Cold bool
	// CycleLength and CyclePeriod, when set, replace the demand by
	// Demand.Cycled(CycleLength, CyclePeriod).
	CycleLength, CyclePeriod time.Duration
	// Cache, when set, is where -table and -holdout keep each scenario's
	// frontier and foresight points (cache.go). It changes no figure.
	Cache string
}

// demand applies the cycle options to a series.
func (o Options) demand(d *Demand) *Demand {
	if o.CycleLength > 0 && o.CyclePeriod > 0 {
		return d.Cycled(o.CycleLength, o.CyclePeriod)
	}
	return d
}

func (o Options) withDefaults() Options {
	if o.Startup == 0 {
		o.Startup = 180 * time.Second
	}
	if o.Scale == 0 {
		o.Scale = 1
	}
	if o.Sample == 0 {
		o.Sample = 5 * time.Second
	}
	if o.SLOWait == 0 {
		o.SLOWait = 2 * time.Second
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Startup < 0:
		return fmt.Errorf("-startup must not be negative, got %v", o.Startup)
	case !(o.Scale > 0) || math.IsInf(o.Scale, 0):
		return fmt.Errorf("-scale must be positive, got %v", o.Scale)
	case o.Sample < time.Second || o.Sample%time.Second != 0:
		return fmt.Errorf("-sample must be a whole number of seconds, got %v", o.Sample)
	case o.SLOWait < 0:
		return fmt.Errorf("-slo-wait must not be negative, got %v", o.SLOWait)
	case (o.CycleLength > 0) != (o.CyclePeriod > 0) || o.CycleLength < 0 || o.CyclePeriod < 0:
		return fmt.Errorf("-cycle wants LENGTH,PERIOD, both positive, got %v,%v", o.CycleLength, o.CyclePeriod)
	}
	return nil
}

// Summary holds the figures of a run (spec section 4).
type Summary struct {
	GPUHours            float64 `json:"gpu_hours"`
	SLOViolationMinutes float64 `json:"slo_violation_minutes"`
	// SLOBreaches is how many stretches of consecutive steps violate the
	// SLO, LongestSLOBreachMinutes the longest one. The same minutes call
	// for different remedies: many breaches shorter than a start-up are
	// bursts that only headroom covers, a few long ones are steps no
	// forecast saw or a backlog drained too slowly.
	SLOBreaches             int     `json:"slo_breaches"`
	LongestSLOBreachMinutes float64 `json:"longest_slo_breach_minutes"`
	BacklogPodHours         float64 `json:"backlog_pod_hours"`
	PeakReplicas            int32   `json:"peak_replicas"`
	ScaleUps                int     `json:"scale_ups"`
	ScaleDowns              int     `json:"scale_downs"`
	IdealGPUHours           float64 `json:"ideal_gpu_hours"`
	// GPUHoursOverIdeal is gpu_hours / ideal_gpu_hours, which section 4
	// also prints: how far from a clairvoyant autoscaler a run is.
	GPUHoursOverIdeal float64 `json:"gpu_hours_over_ideal"`
	// Start is "warm" or "cold" and InitialReplicas the replicas requested
	// at t = 0 (section 2), so that a cold figure is never read as a warm
	// one.
	Start           string `json:"start"`
	InitialReplicas int32  `json:"initial_replicas"`
}

// Evaluation is one line of the output: one evaluation of the connector.
type Evaluation struct {
	Time    int64   `json:"time"` // seconds from the start of the series
	Current int32   `json:"current"`
	Desired int32   `json:"desired"`
	Reason  string  `json:"reason"`
	Metric  string  `json:"metric,omitempty"` // the metric that decided
	Value   float64 `json:"value"`            // its average per pod
	// Serving is what serving mode's rules found: forecast, capacity
	// estimate, the SLO rule's replicas and the rule that decided.
	Serving *offline.ServingDetail `json:"serving,omitempty"`
}

// LoadSettings reads the connector's settings (the keys under
// `connectors: gpu_autoscale:`) from a YAML file.
func LoadSettings(path string) (component.Config, error) {
	m, err := components.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	cfg, err := components.AutoscaleSettings(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// Simulation times count from this instant (2026-01-01T00:00:00Z), so that
// timestamps are realistic and the output does not depend on the wall clock.
var epoch = time.Unix(1767225600, 0).UTC()

// Run simulates the demand under the settings and returns the figures. When
// out is not nil, it gets one JSON line per evaluation and the summary last.
func Run(settings component.Config, demand *Demand, opts Options, out io.Writer) (Summary, error) {
	return run(settings, demand, opts, out, nil)
}

// run is Run; tap, when not nil, sees every batch the pods report, before
// the connector does (the tests read the model's metrics there).
func run(settings component.Config, demand *Demand, opts Options, out io.Writer, tap func(pmetric.Metrics)) (Summary, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return Summary{}, err
	}
	cfg, ok := settings.(*gpuautoscaleconnector.Config)
	if !ok || len(cfg.Targets) != 1 {
		return Summary{}, errors.New("targets: a what-if scales exactly one target")
	}
	target := cfg.Targets[0]
	// Section 2: warm, the replicas the demand at t = 0 needs at 80 % load,
	// all ready: a service that has been running, the same for every
	// setting compared. Cold (-cold), min_replicas requested at t = 0 and,
	// like any replica requested, ready a start-up later.
	var (
		initial = warmReplicas(target.MinReplicas, target.MaxReplicas, demand.Pods[0]*opts.Scale)
		readyAt time.Duration
		start   = "warm"
	)
	if opts.Cold {
		initial, readyAt, start = target.MinReplicas, opts.Startup, "cold"
	}
	dep := NewDeployment(target.ScaleTargetRef.Name, initial, opts.Startup, readyAt)
	sim, err := components.SimulateAutoscaler(cfg, dep)
	if err != nil {
		return Summary{}, err
	}
	defer sim.Close()
	var w *bufio.Writer
	if out != nil {
		w = bufio.NewWriterSize(out, 1<<16)
	}
	pods := podEmitter{ns: target.ScaleTargetRef.Namespace, name: target.ScaleTargetRef.Name}

	const dt = time.Second
	var (
		q          queue
		row        int
		m          meter
		nextSample time.Duration
		lastEval   time.Duration
		interval   = sim.Interval()
		slo        = opts.SLOWait.Seconds()
	)
	for now := time.Duration(0); now < demand.End; now += dt {
		dep.now = now
		d := demand.At(now, &row) * opts.Scale
		ready := dep.ready()
		c := len(ready)
		u := q.step(d, c, dt.Seconds())
		dep.generate(ready, u, dt.Seconds())

		// Section 4: the requested replicas are paid for, starting ones
		// too; the ideal is max(min_replicas, ceil(demand)) with no delay.
		m.step(dep.Replicas(), target.MinReplicas, d, &q, c, slo, dt.Seconds())

		// Section 3: every sample interval each ready pod reports the
		// step's values, stamped with the step's time; pods not ready
		// report nothing.
		if now >= nextSample {
			nextSample = now + opts.Sample
			if c > 0 {
				md := pods.batch(now, dep.replicas, ready, u, q.backlog)
				if tap != nil {
					tap(md)
				}
				if err := sim.ConsumeMetrics(md); err != nil {
					return Summary{}, err
				}
			}
		}
		if now > 0 && now-lastEval >= interval {
			lastEval = now
			e := sim.Evaluate(epoch.Add(now))[0]
			if w != nil {
				line, _ := json.Marshal(Evaluation{
					Time: int64(now / time.Second), Current: e.Current, Desired: e.Desired,
					Reason: e.Reason, Metric: e.Metric, Value: round(e.Value), Serving: rounded(e.Serving),
				})
				w.Write(line)
				w.WriteByte('\n')
			}
		}
	}
	sum := m.summary(dep, start, initial)
	if w != nil {
		line, _ := json.Marshal(sum)
		w.Write(line)
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			return sum, err
		}
	}
	return sum, nil
}

// meter sums section 4's figures over a run's steps.
type meter struct {
	gpuSec, idealSec, sloSec, backlogSec float64
	breaches                             int
	breachSec, longestSec                float64 // the breach under way (0: none), the longest
}

// step adds one step of dt seconds: the replicas requested (starting ones
// are paid for), the ideal's max(min_replicas, ceil(demand)), whether new
// work would wait past the SLO, and the backlog.
func (m *meter) step(replicas, minReplicas int32, demand float64, q *queue, ready int, slo, dt float64) {
	m.gpuSec += float64(replicas) * dt
	m.idealSec += math.Max(float64(minReplicas), ceil(demand)) * dt
	if q.wait(ready) > slo {
		m.sloSec += dt
		if m.breachSec == 0 {
			m.breaches++
		}
		m.breachSec += dt
		m.longestSec = math.Max(m.longestSec, m.breachSec)
	} else {
		m.breachSec = 0
	}
	m.backlogSec += q.backlog * dt
}

// summary is the run's figures, rounded.
func (m *meter) summary(dep *Deployment, start string, initial int32) Summary {
	sum := Summary{
		GPUHours: round(m.gpuSec / 3600), IdealGPUHours: round(m.idealSec / 3600),
		SLOViolationMinutes: round(m.sloSec / 60), BacklogPodHours: round(m.backlogSec / 3600),
		SLOBreaches: m.breaches, LongestSLOBreachMinutes: round(m.longestSec / 60),
		PeakReplicas: dep.peak, ScaleUps: dep.ups, ScaleDowns: dep.downs,
		Start: start, InitialReplicas: initial,
	}
	if m.idealSec > 0 {
		sum.GPUHoursOverIdeal = round(m.gpuSec / m.idealSec)
	}
	return sum
}

// rounded is the detail with its figures rounded as round does.
func rounded(d *offline.ServingDetail) *offline.ServingDetail {
	if d == nil {
		return nil
	}
	r := *d
	for _, x := range []*float64{&r.Served, &r.Arrival, &r.Backlog, &r.Capacity, &r.Need, &r.Forecast, &r.Headroom, &r.Seasonal, &r.StartupSeconds} {
		*x = round(*x)
	}
	if d.WaitSeconds != nil {
		w := round(*d.WaitSeconds)
		r.WaitSeconds = &w
	}
	return &r
}

// round keeps six decimals, so that the output reads well and float noise
// in the last bits does not show.
func round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return math.Round(x*1e6) / 1e6
}

// podEmitter builds the metrics the ready pods report.
type podEmitter struct {
	ns, name string
}

// batch is one sample of every ready pod (spec section 3), one resource
// per pod. The five load signals are gauges, as section 3's table has
// them and as vLLM exposes them (the connector's load metrics and its
// serving queue read gauges); the token counter is a cumulative monotonic
// sum whose start time is the pod's readiness, which is how a Prometheus
// counter such as vLLM's reaches the collector.
func (p podEmitter) batch(now time.Duration, replicas []replica, ready []int, u, backlog float64) pmetric.Metrics {
	ts := pcommon.NewTimestampFromTime(epoch.Add(now))
	size := requestSize(now)
	perPod := backlog / math.Max(float64(len(ready)), 1)
	values := []struct {
		name  string
		value float64
		task  bool
	}{
		{metricnames.NvidiaGPUSMActive, 0.95 * u, false},
		{metricnames.HWGPUUtilization, math.Min(1, u/0.15), true},
		{"vllm:num_requests_waiting", perPod / size, false},
		{"vllm:num_requests_running", u / size * 0.5, false},
		{"vllm:kv_cache_usage_perc", math.Min(1, 0.9*u+0.1*math.Min(1, perPod/10)), false},
	}
	md := pmetric.NewMetrics()
	for _, i := range ready {
		r := replicas[i]
		rm := md.ResourceMetrics().AppendEmpty()
		attrs := rm.Resource().Attributes()
		attrs.PutStr(metricnames.AttrK8sNamespaceName, p.ns)
		attrs.PutStr(metricnames.AttrK8sDeploymentName, p.name)
		attrs.PutStr(metricnames.AttrK8sPodName, p.name+"-"+strconv.Itoa(r.ordinal))
		attrs.PutStr(metricnames.AttrHWID, "GPU-sim-"+strconv.Itoa(r.ordinal))
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		for _, v := range values {
			m := ms.AppendEmpty()
			m.SetName(v.name)
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(ts)
			dp.SetDoubleValue(v.value)
			if v.task {
				dp.Attributes().PutStr(metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
			}
		}
		m := ms.AppendEmpty()
		m.SetName(generationTokens)
		sum := m.SetEmptySum()
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		sum.SetIsMonotonic(true)
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(epoch.Add(r.readyAt)))
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(r.tokens)
	}
	return md
}

// generationTokens is vLLM's counter of generated tokens (spec section 3).
const generationTokens = "vllm:generation_tokens_total"
