package gpuanalyzerprocessor

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

type analyzerProcessor struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder
	// mb builds the verdict metrics, as metadata.yaml declares them.
	mb         *metadata.MetricsBuilder
	severities [analysis.NumAlerts]string

	mu sync.Mutex
	an *analysis.Analyzer
	// rms holds the resource of each sample accepted since the last
	// Evaluate, by Verdict.Seq.
	rms     []pmetric.ResourceMetrics
	scratch []byte
	keys    map[string]string // interned group keys
	evicted int64             // evictions already counted in telemetry

	// client keeps the state across restarts, when storage is configured.
	client   storage.Client
	chunks   int   // chunks written last
	lastSave int64 // data time of the last checkpoint

	// jobs follows each job's report for the line logged when it ends
	// (jobs.go), nil with job_report off; jobReads are the accepted
	// samples' readings it needs, by Verdict.Seq as rms.
	jobs     *jobTracker
	jobReads []jobReading

	prices   *pricer
	power    *modelTable
	clocks   *modelTable
	costOn   bool          // prices are configured: emit otelgpu.cost
	costUnit string        // {USD}
	summary  *fleetSummary // nil unless summary_interval is set

	// bad counts the batch's data points not analysed for what they are,
	// reported as rejected_data_points; now is the clock they are checked
	// against.
	bad rejectCounts
	now func() time.Time

	// shares are the batch's per-process resources (share.go); split
	// marks them among the batch's resources.
	shares batchShares
	split  []bool
	// migAllocated is, per MIG-enabled GPU of the batch, the part of
	// it its instances hold (mig.go).
	migAllocated map[string]float64
	// unwell is the state of each GPU whose health is not ok, for its MIG
	// instances and partitions (health.go).
	unwell map[string]gpuhealth.State

	// causes holds the node's evidence (nodeevidence.go); nil with causes
	// off. where is each GPU's host and bus, thresholds the causes',
	// peerEvidence the scratch of a straggler's peers.
	causes       *cause.Store
	nicErrors    []cause.Count   // one NIC reading's error counters, reused (takeNIC)
	peerHosts    map[string]bool // the hosts of a straggler's peers, reused (Explain)
	selfEvidence cause.Evidence  // the GPU's own evidence, reused (Explain)
	where        map[string]gpuWhere
	thresholds   cause.Thresholds
	peerEvidence []cause.Evidence
}

func newAnalyzerProcessor(cfg *Config, set processor.Settings) (*analyzerProcessor, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	p := &analyzerProcessor{
		cfg:    cfg,
		id:     set.ID,
		logger: set.Logger,
		tb:     tb,
		mb:     metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, withoutVersion(set)),
		keys:   map[string]string{},

		prices:   newPricer(&cfg.Cost),
		power:    newPowerTable(cfg.Bottleneck.BoardPower),
		clocks:   newClockTable(),
		costOn:   cfg.Cost.enabled(),
		costUnit: "{" + cfg.Cost.Currency + "}",
		now:      time.Now,
	}
	ac := cfg.analysisConfig()
	if cfg.Causes.Enabled {
		p.causes = cause.NewStore(cfg.Causes.Window, cfg.Causes.MaxAge)
		p.where = map[string]gpuWhere{}
		p.thresholds = cfg.Causes.thresholds()
		ac.Causes = explainer{p}
	}
	p.an = analysis.New(ac)
	for i, a := range cfg.Alerts.byName() {
		p.severities[i] = a.Severity
	}
	p.an.Notify = p.logTransition
	for _, w := range cfg.deprecations() {
		set.Logger.Warn(w)
	}
	if cfg.SummaryInterval > 0 {
		p.summary = newFleetSummary(set.Logger, cfg)
	}
	if cfg.JobReport.Enabled {
		p.jobs = newJobTracker(set.Logger, cfg)
	}
	return p, nil
}

// withoutVersion keeps the scope of the verdicts without a version, as it has
// always been: the generated builder would give it the collector's.
func withoutVersion(set processor.Settings) processor.Settings {
	set.BuildInfo.Version = ""
	return set
}

func (p *analyzerProcessor) shutdown(ctx context.Context) error {
	err := p.closeStorage(ctx)
	p.tb.Shutdown()
	return err
}

// processMetrics analyses every GPU resource of the batch and adds the
// verdicts to it. Everything that came in goes out unchanged.
func (p *analyzerProcessor) processMetrics(ctx context.Context, md pmetric.Metrics) (pmetric.Metrics, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var unanalyzed, ignored, rejected, outOfOrder, latest int64
	rms := md.ResourceMetrics()
	var s analysis.Sample
	p.bad = rejectCounts{horizon: p.now().Add(p.cfg.GPUTTL).UnixNano()}
	p.findShares(rms)
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		if p.causes != nil && p.nodeEvidence(rm) {
			continue // a pod's, the node's or a NIC's: evidence, kept
		}
		idv, ok := attrs.Get(metricnames.AttrHWID)
		if !ok || idv.Type() != pcommon.ValueTypeStr || idv.Str() == "" {
			unanalyzed += int64(dataPoints(rm))
			continue
		}
		if p.split[i] {
			// One pod's (or the host's) part of a GPU's readings, the dcgm
			// receiver's per_process series: its hw.id is the GPU's, whose
			// own resource is analysed. Not a GPU, and not unanalysed
			// data either: it passes through with its part of the GPU's
			// usage (share.go), counted nowhere. Its pod is the GPU's
			// for the causes.
			if p.causes != nil {
				p.causes.BindGPU(idv.Str(), strAttr(attrs, metricnames.AttrHostName), strAttr(attrs, metricnames.AttrK8sPodUid))
			}
			continue
		}
		id := idv.Str()
		s.Reset()
		var fb deferred
		ignored += p.extract(rm, &s, &fb)
		ignored += fb.into(&s)
		if s.Time == 0 {
			continue // no GPU reading on this resource
		}
		latest = max(latest, s.Time)
		s.Group = p.groupKey(attrs)
		s.PodAttributed = heldByWorkload(attrs)
		if p.costOn {
			s.PricePerHour = p.prices.of(attrs) * p.priceFactor(id, attrs)
		}
		if len(p.shares.byGPU) > 0 && !s.PodAttributed {
			// A GPU one pod holds is that pod's, whoever's processes
			// run on it: only a shared one is split.
			s.Shares = p.shares.of(id, s.Time, s.Shares)
		}
		if s.RefPower == 0 && s.Has&analysis.HasPower != 0 && powerEvidence(&s) {
			// The enforced power limit, where the source reports it (read),
			// is the reference; else the model's board power. Power is
			// evidence only without SM activity or clock event reasons: the
			// table is looked up only then.
			s.RefPower = p.power.of(attrs)
		}
		if s.Has&(analysis.HasReasons|analysis.HasViolation) == 0 && s.Has&analysis.HasSMClock != 0 {
			// Without reasons (NVIDIA's or an AMD GPU's violation status), a
			// clock far below the model's maximum tells a GPU held back
			// (throttle.go in the analyzer).
			s.MaxSMClock = p.clocks.of(attrs) * 1e6
		}
		res := p.an.Ingest(id, &s)
		if res == analysis.Flush {
			p.an.Evaluate(p.emit)
			clear(p.rms) // no references kept to the batch
			p.rms, p.jobReads = p.rms[:0], p.jobReads[:0]
			res = p.an.Ingest(id, &s)
		}
		switch res {
		case analysis.Accepted:
			p.rms = append(p.rms, rm)
			if p.jobs != nil {
				p.jobReads = append(p.jobReads, readingOf(&s))
			}
			p.noteGPU(id, attrs)
		case analysis.Rejected:
			rejected++
		case analysis.OutOfOrder:
			outOfOrder++
		}
	}
	p.an.Evaluate(p.emit)
	clear(p.rms)
	p.rms, p.jobReads = p.rms[:0], p.jobReads[:0]
	if p.jobs != nil {
		p.jobs.sweep(latest)
	}
	if p.causes != nil {
		p.causes.Sweep(latest)
	}
	p.shares.reset()
	clear(p.migAllocated)
	p.checkpoint(ctx, latest)
	if p.summary != nil {
		p.summary.flush()
	}

	p.tb.ProcessorGpuAnalyzerTrackedGpus.Record(ctx, int64(p.an.Tracked()))
	if unanalyzed > 0 {
		p.tb.ProcessorGpuAnalyzerUnanalyzedDataPoints.Add(ctx, unanalyzed)
	}
	if ignored > 0 {
		p.tb.ProcessorGpuAnalyzerValuesIgnored.Add(ctx, ignored)
	}
	if rejected > 0 {
		p.tb.ProcessorGpuAnalyzerGpusRejected.Add(ctx, rejected)
	}
	p.bad.record(ctx, p.tb)
	if outOfOrder > 0 {
		p.tb.ProcessorGpuAnalyzerSamplesOutOfOrder.Add(ctx, outOfOrder)
	}
	if ev := p.an.Counters().Evicted; ev > p.evicted {
		p.tb.ProcessorGpuAnalyzerGpusEvicted.Add(ctx, ev-p.evicted)
		p.evicted = ev
	}
	return md, nil
}

// findShares marks the batch's per-process resources in p.split and takes
// their utilization into p.shares; with prices, it also sums what the
// batch's MIG instances hold of their GPUs (mig.go).
func (p *analyzerProcessor) findShares(rms pmetric.ResourceMetricsSlice) {
	n := rms.Len()
	if cap(p.split) < n {
		p.split = make([]bool, n)
	}
	p.split = p.split[:n]
	for i := range n {
		attrs := rms.At(i).Resource().Attributes()
		if p.costOn {
			p.findMIG(attrs)
		}
		_, p.split[i] = attrs.Get(metricnames.AttrOTelGPUProcessOwner)
		if p.split[i] {
			if id, ok := attrs.Get(metricnames.AttrHWID); ok && id.Type() == pcommon.ValueTypeStr {
				p.shares.add(id.Str(), rms.At(i))
			}
		}
	}
}

// groupKey joins the group_by attributes; a GPU missing any has no group.
// A GPU of a Slurm job is grouped by the job (slurm.cluster.name and
// slurm.job.id), whatever group_by says: a Slurm job is one group across
// its nodes, as a Kubernetes job is, and on a Slurm node that is a pod
// (Soperator) the pod's namespace would split or merge jobs wrongly.
func (p *analyzerProcessor) groupKey(attrs pcommon.Map) string {
	b := p.scratch[:0]
	if job, ok := attrs.Get(metricnames.AttrSlurmJobID); ok && job.AsString() != "" {
		// The leading 1 keeps a Slurm job's key apart from any group_by
		// key, which holds no control byte before its first value.
		b = append(b, 1)
		if c, ok := attrs.Get(metricnames.AttrSlurmClusterName); ok {
			b = append(b, c.AsString()...)
		}
		b = append(b, 0)
		b = append(b, job.AsString()...)
	} else {
		if len(p.cfg.GroupBy) == 0 {
			return ""
		}
		for i, k := range p.cfg.GroupBy {
			v, ok := attrs.Get(k)
			if !ok || v.AsString() == "" {
				return ""
			}
			if i > 0 {
				b = append(b, 0)
			}
			b = append(b, v.AsString()...)
		}
	}
	p.scratch = b
	// Intern: the same few keys come with every batch.
	if k, ok := p.keys[string(b)]; ok {
		return k
	}
	k := string(b)
	if len(p.keys) < 4*p.cfg.MaxGPUs {
		p.keys[k] = k
	}
	return k
}

func dataPoints(rm pmetric.ResourceMetrics) int {
	n := 0
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Type() {
			case pmetric.MetricTypeGauge:
				n += m.Gauge().DataPoints().Len()
			case pmetric.MetricTypeSum:
				n += m.Sum().DataPoints().Len()
			case pmetric.MetricTypeHistogram:
				n += m.Histogram().DataPoints().Len()
			case pmetric.MetricTypeExponentialHistogram:
				n += m.ExponentialHistogram().DataPoints().Len()
			case pmetric.MetricTypeSummary:
				n += m.Summary().DataPoints().Len()
			}
		}
	}
	return n
}

// heldByWorkload says whether a pod or a Slurm job holds the GPU: an idle
// GPU it holds is its workload's idle time (workload_idle), one no one
// holds the cluster's.
func heldByWorkload(attrs pcommon.Map) bool {
	if _, ok := attrs.Get(metricnames.AttrK8sPodName); ok {
		return true
	}
	_, ok := attrs.Get(metricnames.AttrSlurmJobID)
	return ok
}
