package gpuautoscaleconnector

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/serving"
)

// lookbackPeak names the serving mode's peak forecast (without
// attainment) in gpu.autoscale.serving.forecaster.
const lookbackPeak = "lookback_peak"

// forecasterOf is the gpu.autoscale.serving.forecaster of an estimate:
// the calibrated forecaster in use, or the peak forecast.
func forecasterOf(e *serving.Estimate) string {
	if e.Forecaster == "" {
		return lookbackPeak
	}
	return e.Forecaster
}

// emitMetrics adds the target's evaluation to md, as one resource: the
// target, named as k8s_attributes names a workload.
func (a *autoscaler) emitMetrics(md pmetric.Metrics, now time.Time, t *target, current int32, reporting int, d hpa.Decision) {
	ts := pcommon.NewTimestampFromTime(now)
	if t.start == 0 {
		t.start = ts
	}
	mb := a.mb
	mb.RecordGpuAutoscaleReplicasDesiredDataPoint(ts, int64(d.Desired))
	mb.RecordGpuAutoscaleReplicasCurrentDataPoint(ts, int64(current))
	mb.RecordGpuAutoscalePodsReportingDataPoint(ts, int64(reporting))
	// One data point per metric: its average per pod (when it had one) and
	// its target.
	for i, mc := range t.metrics {
		if i < len(d.Proposals) && d.Proposals[i].Err == nil {
			mb.RecordGpuAutoscaleMetricValueDataPoint(ts, d.Proposals[i].Value, mc.Name)
		}
		mb.RecordGpuAutoscaleMetricTargetDataPoint(ts, mc.TargetValue, mc.Name)
	}
	if t.cfg.Mode == "predictive" {
		mb.RecordGpuAutoscaleMetricForecastDataPoint(ts, d.Forecast, t.metrics[0].Name)
	}
	if t.serving != nil && t.serving.last != nil {
		e := t.serving.last
		mb.RecordGpuAutoscaleServingForecastHeadroomDataPoint(ts, e.Headroom, forecasterOf(e))
		if e.HasWait {
			mb.RecordGpuAutoscaleServingQueueWaitDataPoint(ts, e.Wait)
		}
	}
	mb.RecordGpuAutoscaleDecisionDataPoint(ts, 1, string(d.Reason))
	mb.RecordGpuAutoscaleActionsDataPoint(ts, t.actions[0], metadata.AttributeGpuAutoscaleDirectionUp)
	mb.RecordGpuAutoscaleActionsDataPoint(ts, t.actions[1], metadata.AttributeGpuAutoscaleDirectionDown)

	rb := mb.NewResourceBuilder()
	rb.SetK8sNamespaceName(t.ref.Namespace)
	rb.SetGpuAutoscaleTargetKind(t.ref.Kind)
	rb.SetGpuAutoscaleTargetName(t.ref.Name)
	switch t.ref.Kind {
	case "Deployment":
		rb.SetK8sDeploymentName(t.ref.Name)
	case "StatefulSet":
		rb.SetK8sStatefulsetName(t.ref.Name)
	case "ReplicaSet":
		rb.SetK8sReplicasetName(t.ref.Name)
	}
	// The counts of actions start at the target's first evaluation.
	mb.EmitForResource(metadata.WithResource(rb.Emit()), metadata.WithStartTimeOverride(t.start))
	mb.Emit().ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
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
	metric, target := d.Metric, 0.0
	for _, mc := range t.metrics {
		if mc.Name == d.Metric {
			target = mc.TargetValue
		}
	}
	lr.Body().SetStr(fmt.Sprintf("%s %s from %d to %d replicas: %s (%s %.3f, target %.3f)",
		verb, t.ref, before, d.Desired, d.Reason, metric, d.Value, target))
	at := lr.Attributes()
	at.PutStr("gpu.autoscale.target", t.ref.String())
	at.PutInt("gpu.autoscale.replicas.before", int64(before))
	at.PutInt("gpu.autoscale.replicas.after", int64(d.Desired))
	at.PutStr("gpu.autoscale.reason", string(d.Reason))
	at.PutStr("gpu.autoscale.metric", metric)
	at.PutDouble("gpu.autoscale.metric.value", d.Value)
	at.PutDouble("gpu.autoscale.metric.target", target)
	at.PutStr("gpu.autoscale.mode", modeOf(t.cfg))
	at.PutBool("gpu.autoscale.dry_run", dry)
	if t.cfg.Mode == "predictive" {
		at.PutDouble("gpu.autoscale.metric.forecast", d.Forecast)
	}
	if t.serving != nil {
		putServingAttributes(at, t.serving.last)
	}
}

func modeOf(t *TargetConfig) string {
	if t.Mode == "" {
		return "reactive"
	}
	return t.Mode
}
