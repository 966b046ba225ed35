package gpuanalyzerprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

var usageStateNames = func() []string {
	out := make([]string, analysis.NumUsageStates)
	for _, s := range analysis.UsageStates() {
		out[s] = s.String()
	}
	return out
}()

// emitUsage adds the GPU's wall time, and with prices its cost, per usage
// state, when they are due (cost::report_interval). Like the class time,
// only the current state and the one the GPU just left are sent: the others
// have not changed.
func (p *analyzerProcessor) emitUsage(ms pmetric.MetricSlice, v *analysis.Verdict, ts pcommon.Timestamp) {
	u := &v.Usage
	if !u.Report {
		return
	}
	states := [2]analysis.UsageState{u.State, u.PrevState}
	n := 1
	if u.PrevState != u.State {
		n = 2
	}
	start := pcommon.Timestamp(v.UsageStart)

	spent := ms.AppendEmpty()
	spent.SetName(metricnames.NvidiaGPUTime)
	spent.SetDescription("Wall time of the GPU in each usage state: used, workload_idle (idle, held by a pod), cluster_idle (idle, no pod), unknown.")
	spent.SetUnit(metricnames.NvidiaGPUTimeUnit)
	sum := spent.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dps := sum.DataPoints()
	dps.EnsureCapacity(n)
	for _, st := range states[:n] {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(float64(u.Nanos[st]) / 1e9)
		dp.Attributes().PutStr(metricnames.AttrNvidiaGPUUsageState, usageStateNames[st])
	}

	if !p.costOn {
		return
	}
	cost := ms.AppendEmpty()
	cost.SetName(metricnames.NvidiaGPUCost)
	cost.SetDescription("Cost of the GPU's time in each usage state, at the configured price per GPU-hour.")
	cost.SetUnit(p.costUnit)
	sum = cost.SetEmptySum()
	sum.SetIsMonotonic(true)
	sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	dps = sum.DataPoints()
	dps.EnsureCapacity(n)
	for _, st := range states[:n] {
		dp := dps.AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(u.Cost[st])
		dp.Attributes().PutStr(metricnames.AttrNvidiaGPUUsageState, usageStateNames[st])
	}
}
