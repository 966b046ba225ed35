package gpuanalyzerprocessor

// The verdict's metrics, as metadata.yaml declares them, on the GPU's own
// resource.

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// The analyzer's values as mdatagen's attribute enums, by index; each is
// checked to match by name (TestAttributeEnums).
var (
	classAttrs = func() (out [analysis.NumClasses]metadata.AttributeOtelgpuBottleneckClass) {
		for _, c := range analysis.Classes() {
			out[c] = metadata.MapAttributeOtelgpuBottleneckClass[c.String()]
		}
		return out
	}()
	// hintOpts are the hint attribute's options, made once rather than per
	// data point; none for NoHint.
	hintOpts = func() (out [analysis.NumHints]metadata.MetricAttributeOption) {
		for h := analysis.NoHint + 1; h < analysis.NumHints; h++ {
			out[h] = metadata.WithOtelgpuBottleneckHintMetricAttribute(metadata.MapAttributeOtelgpuBottleneckHint[h.String()].String())
		}
		return out
	}()
	// evidenceOpts and scopeOpts likewise; none for NoEvidence and NoScope.
	evidenceOpts = func() (out [analysis.NumEvidence]metadata.MetricAttributeOption) {
		for e := analysis.NoEvidence + 1; e < analysis.NumEvidence; e++ {
			out[e] = metadata.WithOtelgpuBottleneckEvidenceMetricAttribute(metadata.MapAttributeOtelgpuBottleneckEvidence[e.String()].String())
		}
		return out
	}()
	scopeOpts = func() (out [analysis.NumScopes]metadata.MetricAttributeOption) {
		for sc := analysis.NoScope + 1; sc < analysis.NumScopes; sc++ {
			out[sc] = metadata.WithOtelgpuBottleneckScopeMetricAttribute(metadata.MapAttributeOtelgpuBottleneckScope[sc.String()].String())
		}
		return out
	}()
	causeOpts = func() (out [cause.NumKinds]metadata.MetricAttributeOption) {
		for _, k := range cause.Kinds() {
			out[k] = metadata.WithOtelgpuBottleneckCauseMetricAttribute(metadata.MapAttributeOtelgpuBottleneckCause[k.String()].String())
		}
		return out
	}()
	alertAttrs = func() (out [analysis.NumAlerts]metadata.AttributeAlertname) {
		for a := range analysis.NumAlerts {
			out[a] = metadata.MapAttributeAlertname[a.String()]
		}
		return out
	}()
	alertStateAttrs = [...]metadata.AttributeAlertstate{analysis.Pending: metadata.AttributeAlertstatePending, analysis.Firing: metadata.AttributeAlertstateFiring}
)

// emit adds a verdict's metrics to the GPU's resource, in a scope of the
// analyzer's own.
func (p *analyzerProcessor) emit(v *analysis.Verdict) {
	rm := p.rms[v.Seq]
	if p.summary != nil {
		p.summary.observe(v, rm.Resource().Attributes())
	}
	if p.jobs != nil && v.Report {
		// The verdicts sent (on any change of class, hint, straggler
		// state, alert or usage state, and at least every
		// verdict_interval) carry every change the report counts: the
		// time between two is in the first's state. It samples
		// utilization and memory that often too, as jobstats does every
		// 30 s, at a thirtieth of the cost of every verdict at 1 s.
		p.jobs.observe(v, rm.Resource().Attributes(), p.jobReads[v.Seq])
	}
	if len(v.Shares) > 0 {
		p.emitShares(v)
	}
	if !v.Report {
		return // nothing changed since the last one sent (verdict_interval)
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName(metadata.ScopeName)
	ms := sm.Metrics()
	ms.EnsureCapacity(8)
	ts := pcommon.Timestamp(v.Time)
	mb := p.mb

	// State-set and class time: the current class at every sample, and the
	// class the GPU just left once more, so that its state ends at 0 and its
	// time counter takes its last increment. Series of other classes are not
	// repeated: a query for the current class (== 1) and increase() over a
	// class's time behave as if every class were sent every time. The state
	// carries the hint, so a new hint in the same class ends the old series
	// at 0 too.
	classes := [2]analysis.Class{v.Class, v.PrevClass}
	hints := [2]analysis.Hint{v.Hint, v.PrevHint}
	bases := [2]analysis.Basis{v.Basis, v.PrevBasis}
	causes := [2]cause.Kind{v.Cause.Kind, v.PrevCause}
	n := 1
	if v.PrevClass != v.Class {
		n = 2
	}
	states := n
	if v.PrevHint != v.Hint || v.PrevBasis != v.Basis || v.PrevCause != v.Cause.Kind {
		states = 2
	}
	// Gauges have no start time.
	mb.SetStartTime(0)
	var opts [4]metadata.MetricAttributeOption
	//nolint:gosec // G602: states is 1 or 2, the length of classes, hints, bases and causes
	for i := range states {
		k := 0
		if h := hints[i]; h != analysis.NoHint {
			opts[k], k = hintOpts[h], k+1
		}
		if e := bases[i].Evidence; e != analysis.NoEvidence {
			opts[k], k = evidenceOpts[e], k+1
		}
		if sc := bases[i].Scope; sc != analysis.NoScope {
			opts[k], k = scopeOpts[sc], k+1
		}
		if c := causes[i]; c != cause.None {
			opts[k], k = causeOpts[c], k+1
		}
		mb.RecordOtelgpuBottleneckStateDataPoint(ts, int64(1-i), classAttrs[classes[i]], opts[:k]...)
	}
	// A GPU without peers is never a straggler: nothing to report.
	if v.HasPeers {
		var straggler int64
		if v.Straggler {
			straggler = 1
		}
		mb.RecordOtelgpuStragglerStateDataPoint(ts, straggler)
		mb.RecordOtelgpuStragglerScoreDataPoint(ts, v.Score)
	}
	p.recordAlerts(v, ts)
	mb.SetStartTime(pcommon.Timestamp(v.ClassStart))
	for _, c := range classes[:n] {
		mb.RecordOtelgpuBottleneckTimeDataPoint(ts, v.ClassSeconds[c], classAttrs[c])
	}
	p.recordHealth(v, rm.Resource().Attributes(), ts)
	costAt := p.recordUsage(v, ts)

	from := ms.Len()
	mb.EmitTo(ms)
	if costAt {
		p.setCostUnit(ms, from)
	}
	legacynames.AppendOld(ms, from)
}

// setCostUnit gives otelgpu.cost among ms[from:] the configured
// currency's unit, not metadata.yaml's {USD}.
func (p *analyzerProcessor) setCostUnit(ms pmetric.MetricSlice, from int) {
	for i := from; i < ms.Len(); i++ {
		if m := ms.At(i); m.Name() == metricnames.OTelGPUCost {
			m.SetUnit(p.costUnit)
		}
	}
}
