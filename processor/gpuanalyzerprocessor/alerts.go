package gpuanalyzerprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// recordAlerts records otelgpu.alerts: 1 for each pending or firing alert,
// as Prometheus' ALERTS; and once 0 for the state an alert just left
// (pending when it fires or its condition stops holding, firing when it
// resolves), as otelgpu.bottleneck.state ends the class a GPU left.
//
// Why a 0 on the series left rather than a third state: the resolve is
// explicit, so the gpu_alertmanager exporter sends it at once, with its
// time, instead of guessing from an absence; the prometheus exporter's
// series goes to 0 at once instead of holding 1 until it expires; and the
// alertstate values stay ALERTS' own (pending, firing), so that a
// "resolved" series, which ALERTS never has, cannot be counted as an alert.
// Queries keep ALERTS' meaning with == 1 (or sum, which the 0 does not
// change).
func (p *analyzerProcessor) recordAlerts(v *analysis.Verdict, ts pcommon.Timestamp) {
	for name, st := range v.Alerts {
		if st != analysis.Inactive {
			p.mb.RecordOtelgpuAlertsDataPoint(ts, 1, alertAttrs[name], alertStateAttrs[st], p.severities[name])
		}
		if was := v.PrevAlerts[name]; was != st && was != analysis.Inactive {
			p.mb.RecordOtelgpuAlertsDataPoint(ts, 0, alertAttrs[name], alertStateAttrs[was], p.severities[name])
		}
	}
}
