package legacynames

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// AppendOld appends to ms, for each renamed metric among ms[from:], a copy
// under its old name with its data points' attributes under their old names.
// It does nothing while the gate is disabled. The copies come after every
// metric of ms, so that readers of the new names see them first.
func AppendOld(ms pmetric.MetricSlice, from int) {
	if !Enabled() {
		return
	}
	appendOld(ms, from, false)
}

// AppendOldResource does what AppendOld does for every scope of rm, a
// resource of the dcgm receiver. On a per-process resource (one with
// otelgpu.process.owner) it also sets the old resource attribute; on a GPU's
// own resource otelgpu.process.count is copied as amd.gpu.process.count, a
// gauge, as it was.
func AppendOldResource(rm pmetric.ResourceMetrics) {
	if !Enabled() {
		return
	}
	attrs := rm.Resource().Attributes()
	owner, split := attrs.Get(metricnames.AttrOTelGPUProcessOwner)
	if split {
		attrs.PutStr(OldProcessOwner, owner.Str())
	}
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		appendOld(sms.At(i).Metrics(), 0, !split)
	}
}

func appendOld(ms pmetric.MetricSlice, from int, device bool) {
	n := ms.Len()
	for i := from; i < n; i++ {
		m := ms.At(i)
		old, ok := metrics[m.Name()]
		if !ok {
			continue
		}
		c := ms.AppendEmpty()
		// ms may have grown: take m again.
		ms.At(i).CopyTo(c)
		if device && c.Name() == metricnames.OTelGPUProcessCount {
			c.SetName(OldAMDProcessCount)
			toGauge(c)
			continue
		}
		c.SetName(old)
		renameAttributes(c)
	}
}

// toGauge turns an int sum into the gauge amd.gpu.process.count was.
func toGauge(m pmetric.Metric) {
	if m.Type() != pmetric.MetricTypeSum {
		return
	}
	dps := pmetric.NewNumberDataPointSlice()
	m.Sum().DataPoints().MoveAndAppendTo(dps)
	dps.MoveAndAppendTo(m.SetEmptyGauge().DataPoints())
}

func renameAttributes(m pmetric.Metric) {
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	default:
		return
	}
	for i := 0; i < dps.Len(); i++ {
		renameKeys(dps.At(i).Attributes())
	}
}

// renameKeys gives renamed attributes their old names, in place, keeping
// their order.
func renameKeys(attrs pcommon.Map) {
	found := false
	attrs.Range(func(k string, _ pcommon.Value) bool {
		_, found = attributes[k]
		return !found
	})
	if !found {
		return
	}
	out := pcommon.NewMap()
	out.EnsureCapacity(attrs.Len())
	attrs.Range(func(k string, v pcommon.Value) bool {
		if old, ok := attributes[k]; ok {
			k = old
		}
		v.CopyTo(out.PutEmpty(k))
		return true
	})
	out.MoveTo(attrs)
}
