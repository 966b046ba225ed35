package gpuanalyzerprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

var usageStateAttrs = func() (out [analysis.NumUsageStates]metadata.AttributeOtelgpuUsageState) {
	for _, s := range analysis.UsageStates() {
		out[s] = metadata.MapAttributeOtelgpuUsageState[s.String()]
	}
	return out
}()

// recordUsage records the GPU's wall time, and with prices its cost, per
// usage state, when they are due (cost::report_interval). Like the class
// time, only the current state and the one the GPU just left are sent: the
// others have not changed. It reports whether it recorded a cost.
func (p *analyzerProcessor) recordUsage(v *analysis.Verdict, ts pcommon.Timestamp) bool {
	u := &v.Usage
	if !u.Report {
		return false
	}
	states := [2]analysis.UsageState{u.State, u.PrevState}
	n := 1
	if u.PrevState != u.State {
		n = 2
	}
	all := states[:n]
	if u.Split {
		// A shared GPU's own counters are what its owners left: any of
		// them may have moved.
		all = analysis.UsageStates()
	}
	p.mb.SetStartTime(pcommon.Timestamp(v.UsageStart))
	for _, st := range all {
		p.mb.RecordOtelgpuTimeDataPoint(ts, float64(u.Nanos[st])/1e9, usageStateAttrs[st])
	}
	if !p.costOn {
		return false
	}
	for _, st := range all {
		p.mb.RecordOtelgpuCostDataPoint(ts, u.Cost[st], usageStateAttrs[st])
	}
	return true
}
