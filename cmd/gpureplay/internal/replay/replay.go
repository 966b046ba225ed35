// Package replay feeds a trace through the gpu_analyzer processor and
// writes its verdicts.
package replay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/report"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
)

// Autoscale replays through the gpu_autoscale connector's algorithm.
type Autoscale struct {
	a *components.Autoscaler
}

// LoadAutoscale reads the connector's settings from a YAML file.
func LoadAutoscale(path string) (*Autoscale, error) {
	m, err := components.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	cfg, err := components.AutoscaleSettings(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	a, err := components.ReplayAutoscaler(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Autoscale{a: a}, nil
}

// LoadConfig reads the processor's settings from a YAML file: the keys that
// go under `processors: gpu_analyzer:` in a collector configuration. An
// empty path gives the defaults.
func LoadConfig(path string) (component.Config, error) {
	cfg := gpuanalyzerprocessor.NewFactory().CreateDefaultConfig()
	if path == "" {
		return cfg, nil
	}
	m, err := components.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	if err := components.Unmarshal(m, cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := confmap.Validate(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

type host struct{}

func (host) GetExtensions() map[component.ID]component.Component { return nil }

// Options say what a replay does besides the verdicts.
type Options struct {
	// Autoscale, if set, replays through the gpu_autoscale connector and
	// writes one line per evaluation instead of the verdicts.
	Autoscale *Autoscale
	// Remediate, if set, writes one line per remediation decision instead.
	Remediate *Remediate
	// Cost, if set, tallies GPU-hours and cost; RunCost writes the summary.
	Cost *CostTally
	// Resample, if positive, thins the trace to one batch every this many
	// seconds, as a Prometheus scrape at that interval would see it.
	Resample float64
	// Fields, if set, keeps only these DCGM fields of the trace, as a
	// collector recording only them (dcgm-exporter's default counters, say)
	// would have recorded it.
	Fields *trace.FieldSet
	// Report, if set, gathers every row's verdict and every decision for
	// an HTML report, besides what the replay writes.
	Report *report.Collector
}

// Run replays the trace read from in (named name in errors) and writes one
// JSON line per row to out, or what opts ask for instead.
func Run(ctx context.Context, cfg component.Config, opts Options, in io.Reader, name string, out io.Writer) error {
	rd, err := trace.NewReader(in, name)
	if err != nil {
		return err
	}
	return run(ctx, cfg, opts, trace.Resample(trace.Restrict(rd, opts.Fields), opts.Resample), name, out)
}

// resourceAdder is a source that adds to a row's resource what the
// receiver does not map (a kernel log's recovery action).
type resourceAdder interface {
	addResource(rm pmetric.ResourceMetrics, r *trace.Row)
}

func run(ctx context.Context, cfg component.Config, opts Options, tr trace.Batches, name string, out io.Writer) error {
	scaler, remediate, cost := opts.Autoscale, opts.Remediate, opts.Cost
	// One line per row needs every row's verdict: verdict_interval, which
	// sends unchanged verdicts only now and then, does not apply here.
	cfg.(*gpuanalyzerprocessor.Config).VerdictInterval = 0
	cfg.(*gpuanalyzerprocessor.Config).Cost.ReportInterval = 0
	f := gpuanalyzerprocessor.NewFactory()
	w := &writer{out: out, scaler: scaler, remediate: remediate, cost: cost, report: opts.Report, causes: newCauseLog()}
	if cost != nil {
		cost.waits = newWaitTally(cfg.(*gpuanalyzerprocessor.Config).GroupBy)
	}
	sink, err := consumer.NewMetrics(w.consume)
	if err != nil {
		return err
	}
	set := processortest.NewNopSettings(f.Type())
	set.Logger = zap.New(w.causes) // for the causes' evidence (causes.go)
	proc, err := f.CreateMetrics(ctx, set, cfg, sink)
	if err != nil {
		return err
	}
	if err := proc.Start(ctx, host{}); err != nil {
		return err
	}
	defer func() { _ = proc.Shutdown(ctx) }()

	rcv, err := components.Receiver()
	if err != nil {
		return err
	}
	var nodes nodeFeed
	devices := map[string]*gpu.Device{}
	var samples []gpu.Sample
	for {
		batch, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		samples = samples[:0]
		for i := range batch {
			samples = append(samples, batch[i].Sample(devices))
		}
		if err := nodes.consume(ctx, proc, w, batch, samples[0].Time); err != nil {
			return fmt.Errorf("%s:%d: %w", name, batch[0].Line, err)
		}
		md := rcv.Map(samples)
		rms := md.ResourceMetrics()
		// The devices' resources, one per row, then the per-process ones
		// of the rows that name their pod (node.go).
		if want := len(batch) + withPod(batch); rms.Len() != want {
			return fmt.Errorf("%s:%d: mapping produced %d resources for %d rows", name, batch[0].Line, rms.Len(), want)
		}
		w.rows, w.now = batch, samples[0].Time
		adder, _ := tr.(resourceAdder)
		for i := range batch {
			addWorkload(rms.At(i), &batch[i])
			if adder != nil {
				adder.addResource(rms.At(i), &batch[i])
			}
		}
		if err := proc.ConsumeMetrics(ctx, md); err != nil {
			return fmt.Errorf("%s:%d: %w", name, batch[0].Line, err)
		}
		if w.err != nil {
			return w.err
		}
	}
}

// addWorkload adds what a trace knows beyond the receiver: the deployment
// and the rank's step compute time, as a training framework would report it.
func addWorkload(rm pmetric.ResourceMetrics, r *trace.Row) {
	if r.Deployment != "" {
		rm.Resource().Attributes().PutStr(metricnames.AttrK8sDeploymentName, r.Deployment)
	}
	if !r.HasStep {
		return
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("gpureplay")
	m := sm.Metrics().AppendEmpty()
	m.SetName(metricnames.TrainingStepComputeDuration)
	m.SetUnit("s")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(0, int64(math.Round(r.Time*1e6))*1000)))
	dp.SetDoubleValue(r.StepSeconds)
}

// writer turns the processor's output back into verdict lines.
type writer struct {
	out      io.Writer
	rows     []trace.Row
	now      time.Time
	scaler   *Autoscale
	cost     *CostTally
	buf      []byte
	verdicts []verdict // the batch's, by row
	// remediate, when set, replaces the verdict lines with decisions.
	remediate *Remediate
	report    *report.Collector
	causes    *causeLog
	err       error
	// evidence is set while the node evidence's batch passes.
	evidence bool
}

func (w *writer) consume(_ context.Context, md pmetric.Metrics) error {
	if w.evidence {
		return nil // the gpu_node receiver's batch: no GPU in it
	}
	if w.cost != nil {
		w.cost.add(md)
	}
	if w.report != nil && (w.remediate != nil || w.scaler != nil) {
		// Those replays print decisions, not verdicts: read the verdicts
		// for the report here.
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len() && i < len(w.rows); i++ {
			w.report.Add(&w.rows[i], w.verdictOf(rms.At(i)).forReport())
		}
	}
	if w.remediate != nil {
		w.buf = w.remediate.lines(w.buf[:0], md, w.now, w.report)
		if _, err := w.out.Write(w.buf); err != nil && w.err == nil {
			w.err = err
		}
		return nil
	}
	if w.scaler != nil {
		for _, e := range w.scaler.a.ReplayBatch(md, w.now) {
			if w.report != nil {
				w.report.AddScale(report.ScaleEvent{Time: w.rows[0].Time, Target: e.Target, Current: int(e.Current), Desired: int(e.Desired), Reason: e.Reason})
			}
			b := w.buf[:0]
			b = append(b, `{"time":`...)
			b = strconv.AppendFloat(b, w.rows[0].Time, 'f', -1, 64)
			b = append(b, `,"target":`...)
			b = strconv.AppendQuote(b, e.Target)
			b = append(b, `,"current":`...)
			b = strconv.AppendInt(b, int64(e.Current), 10)
			b = append(b, `,"desired":`...)
			b = strconv.AppendInt(b, int64(e.Desired), 10)
			b = append(b, `,"reason":`...)
			b = strconv.AppendQuote(b, e.Reason)
			b = append(b, "}\n"...)
			w.buf = b
			if _, err := w.out.Write(b); err != nil && w.err == nil {
				w.err = err
			}
		}
		return nil
	}
	rms := md.ResourceMetrics()
	w.verdicts = w.verdicts[:0]
	for i := 0; i < rms.Len() && i < len(w.rows); i++ {
		v := w.verdictOf(rms.At(i))
		w.verdicts = append(w.verdicts, v)
		r := &w.rows[i]
		if w.report != nil {
			w.report.Add(r, v.forReport())
		}
		b := w.buf[:0]
		b = append(b, `{"time":`...)
		b = strconv.AppendFloat(b, r.Time, 'f', -1, 64)
		b = append(b, `,"uuid":`...)
		b = strconv.AppendQuote(b, r.UUID)
		b = append(b, `,"bottleneck":`...)
		b = strconv.AppendQuote(b, v.bottleneck)
		b = append(b, `,"straggler":`...)
		b = strconv.AppendBool(b, v.straggler)
		b = append(b, `,"alerts":[`...)
		for j, a := range v.alerts {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendQuote(b, a)
		}
		b = append(b, `],"score":`...)
		b = strconv.AppendFloat(b, math.Round(v.score*1e4)/1e4, 'f', -1, 64)
		b = append(b, `,"hint":`...)
		b = strconv.AppendQuote(b, v.hint)
		b = append(b, `,"usage":`...)
		b = strconv.AppendQuote(b, v.usage)
		b = append(b, `,"evidence":`...)
		b = strconv.AppendQuote(b, v.evidence)
		b = append(b, `,"health":`...)
		b = strconv.AppendQuote(b, v.health)
		if v.scope != "" {
			b = append(b, `,"scope":`...)
			b = strconv.AppendQuote(b, v.scope)
		}
		if v.cause != "" {
			b = append(b, `,"cause":`...)
			b = strconv.AppendQuote(b, v.cause)
		}
		if v.why != "" {
			b = append(b, `,"cause_evidence":`...)
			b = strconv.AppendQuote(b, v.why)
		}
		b = append(b, "}\n"...)
		w.buf = b
		if _, err := w.out.Write(b); err != nil && w.err == nil {
			w.err = err
		}
	}
	if w.cost != nil && len(w.rows) > 0 {
		w.cost.waits.add(w.rows[0].Time, w.rows, w.verdicts)
	}
	return nil
}

type verdict struct {
	bottleneck string
	hint       string // empty where there is none
	// evidence is what the class rests on, scope where a
	// communication-bound GPU's collective runs; empty where none.
	evidence, scope string
	// cause is why the GPU waits, from its node's evidence; empty where
	// none was found (traces without node columns have none).
	cause string
	// why is the cause's evidence in words, from the analyzer's log line
	// (causes.go).
	why       string
	straggler bool
	score     float64
	alerts    []string // firing
	pending   []string
	// usage is the GPU's usage state from this row on (used, waiting,
	// workload_idle, cluster_idle, unknown).
	usage string
	// health is the GPU's hw.status state (ok, degraded, failed,
	// predicted_failure).
	health string
	// price is the GPU's price per hour (0: none configured), read back
	// from its cost and time counters (priceOf).
	price float64
}

// verdictOf reads the analyzer's metrics on one GPU's resource.
func verdictOf(rm pmetric.ResourceMetrics) verdict {
	v := verdict{bottleneck: "unknown"}
	var spent, cost pmetric.Metric
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Name() {
			case metricnames.OTelGPUBottleneckState:
				dps := m.Gauge().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					if dps.At(k).IntValue() != 1 {
						continue // the class, hint or evidence the GPU just left
					}
					a := dps.At(k).Attributes()
					c, _ := a.Get(metricnames.AttrOTelGPUBottleneckClass)
					v.bottleneck = c.Str()
					if h, ok := a.Get(metricnames.AttrOTelGPUBottleneckHint); ok {
						v.hint = h.Str()
					}
					if e, ok := a.Get(metricnames.AttrOTelGPUBottleneckEvidence); ok {
						v.evidence = e.Str()
					}
					if c, ok := a.Get(metricnames.AttrOTelGPUBottleneckCause); ok {
						v.cause = c.Str()
					}
					if sc, ok := a.Get(metricnames.AttrOTelGPUBottleneckScope); ok {
						v.scope = sc.Str()
					}
				}
			case metricnames.OTelGPUTime:
				// The state the GPU is in comes first (the state it left, if
				// it just changed, second).
				if st, ok := m.Sum().DataPoints().At(0).Attributes().Get(metricnames.AttrOTelGPUUsageState); ok {
					v.usage = st.Str()
				}
				spent = m
			case metricnames.OTelGPUCost:
				cost = m
			case metricnames.HWStatus:
				v.health = healthOf(m)
			case metricnames.OTelGPUStragglerState:
				v.straggler = m.Gauge().DataPoints().At(0).IntValue() == 1
			case metricnames.OTelGPUStragglerScore:
				v.score = m.Gauge().DataPoints().At(0).DoubleValue()
			case metricnames.OTelGPUAlerts:
				dps := m.Gauge().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					if metricpoints.Value(dps.At(k)) == 0 {
						continue // the 0 that ends a state's series: left, not held
					}
					a := dps.At(k).Attributes()
					name, _ := a.Get(metricnames.AttrAlertname)
					switch st, _ := a.Get(metricnames.AttrAlertstate); st.Str() {
					case metricnames.AttrAlertstateFiring:
						v.alerts = append(v.alerts, name.Str())
					case metricnames.AttrAlertstatePending:
						v.pending = append(v.pending, name.Str())
					}
				}
			}
		}
	}
	slices.Sort(v.alerts)
	slices.Sort(v.pending)
	v.price = priceOf(spent, cost)
	return v
}

// priceOf reads a GPU's price per hour back from its cumulative time and
// cost in one usage state, both sent for the same states: the analyzer
// prices each interval at the GPU's price, constant for a GPU of a model.
// 0 without prices, or before any time has passed.
func priceOf(spent, cost pmetric.Metric) float64 {
	if spent == (pmetric.Metric{}) || cost == (pmetric.Metric{}) {
		return 0
	}
	costs := map[string]float64{}
	cdps := cost.Sum().DataPoints()
	for i := 0; i < cdps.Len(); i++ {
		st, _ := cdps.At(i).Attributes().Get(metricnames.AttrOTelGPUUsageState)
		costs[st.Str()] = cdps.At(i).DoubleValue()
	}
	dps := spent.Sum().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		st, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUUsageState)
		if secs := dps.At(i).DoubleValue(); secs > 0 {
			return costs[st.Str()] / (secs / 3600)
		}
	}
	return 0
}

// verdictOf reads a GPU's verdict and the evidence for its cause.
func (w *writer) verdictOf(rm pmetric.ResourceMetrics) verdict {
	v := verdictOf(rm)
	if id, ok := rm.Resource().Attributes().Get(metricnames.AttrHWID); ok {
		v.why = w.causes.why(id.AsString(), v.cause)
	}
	return v
}

// healthOf reads the state hw.status sets to 1; "" if none.
func healthOf(m pmetric.Metric) string {
	dps := m.Sum().DataPoints()
	for k := 0; k < dps.Len(); k++ {
		if dps.At(k).IntValue() == 1 {
			st, _ := dps.At(k).Attributes().Get(metricnames.AttrHWState)
			return st.Str()
		}
	}
	return ""
}

// healthByGPU reads each GPU's hw.status state in a batch, by hw.id.
func healthByGPU(md pmetric.Metrics) map[string]string {
	out := map[string]string{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		id, ok := rms.At(i).Resource().Attributes().Get(metricnames.AttrHWID)
		if !ok {
			continue
		}
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				if ms.At(k).Name() == metricnames.HWStatus {
					out[id.AsString()] = healthOf(ms.At(k))
				}
			}
		}
	}
	return out
}

func (v verdict) forReport() report.Verdict {
	return report.Verdict{Class: v.bottleneck, Straggler: v.straggler, Score: v.score, Firing: v.alerts, Pending: v.pending, Usage: v.usage,
		Cause: v.cause, Why: v.why, Hint: v.hint, Price: v.price, Health: v.health}
}
