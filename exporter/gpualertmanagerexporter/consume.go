package gpualertmanagerexporter

// From metrics to alerts: the points of otelgpu.alerts (the gpu_analyzer)
// and of gpu.remediation.incident.state (the gpu_remediation). Everything
// else in the pipeline is ignored, so the exporter can sit in the same
// metrics pipeline as the others.

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// The alertstate values: Prometheus' ALERTS has pending and firing; the
// analyzer ends a series it leaves with a 0, and a producer that names the
// resolve as a state of its own says resolved.
const (
	statePending  = metricnames.AttrAlertstatePending
	stateFiring   = metricnames.AttrAlertstateFiring
	stateResolved = "resolved"
)

// The remediation's incidents as alerts: one that waits for a person pages
// (critical), one under way is a warning. The state is a label's worth of
// difference on purpose: needs_person is a new alert, not an update that an
// Alertmanager route would not look at again.
const (
	alertRemediation = "GPURemediationUnderway"
	alertNeedsPerson = "GPUNeedsPerson"
	needsPerson      = "needs_person"
)

// summaries are the summary annotations of the analyzer's alerts, with
// the GPU's name and host (as examples/prometheus/rules.yaml words them).
var summaries = map[string]string{
	"GPUFaulted":        "GPU %s on %s is faulted: reset, drain or replace it",
	"GPUOverheating":    "GPU %s on %s is overheating",
	"GPUMemoryPressure": "GPU %s on %s has nearly all of its memory in use",
	"GPUThrottled":      "GPU %s on %s is held below its clocks",
	"GPUStraggler":      "GPU %s on %s is slowing down its job",
	"GPUIdle":           "GPU %s on %s is held by a pod and idle",
	"GPUMemoryLeak":     "GPU %s on %s will run out of memory: its use grows steadily",
	alertRemediation:    "GPU %s on %s is being taken out of service",
	alertNeedsPerson:    "GPU %s on %s needs a person: remediation could not return it to service",
}

// batchResult is what one ConsumeMetrics call found.
type batchResult struct {
	send     []wireAlert
	rejected map[string]int64 // by reason
}

func (r *batchResult) reject(reason string) {
	if r.rejected == nil {
		r.rejected = map[string]int64{}
	}
	r.rejected[reason]++
}

// consume applies a batch's alert points to the set and returns the alerts
// to send at once: new ones and resolves.
func (e *alertExporter) consume(md pmetric.Metrics, now time.Time) batchResult {
	var res batchResult
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		rm := rms.At(i)
		resAttrs := rm.Resource().Attributes()
		sms := rm.ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			var holding map[uint64]bool // the remediation's snapshot, if this scope is one
			var snapshotAt pcommon.Timestamp
			for k := range ms.Len() {
				m := ms.At(k)
				switch m.Name() {
				case metricnames.OTelGPUAlerts:
					e.analyzerAlerts(m, resAttrs, now, &res)
				case metricnames.GPURemediationIncidentState:
					if holding == nil {
						holding = map[uint64]bool{}
					}
					e.remediationAlerts(m, resAttrs, now, holding, &res)
				case metricnames.GPURemediationNodes:
					// Sent with every tick of the connector, beside the
					// incidents under way: its presence makes the scope a
					// full snapshot, so an incident missing from it ended.
					if holding == nil {
						holding = map[uint64]bool{}
					}
					if dps := gaugeOrSum(m); dps.Len() > 0 {
						snapshotAt = dps.At(0).Timestamp()
					}
				}
			}
			if snapshotAt != 0 {
				res.send = append(res.send, e.set.resolveRemediation(holding, snapshotAt.AsTime())...)
			}
		}
	}
	return res
}

func gaugeOrSum(m pmetric.Metric) pmetric.NumberDataPointSlice {
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		return m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		return m.Sum().DataPoints()
	default:
		return pmetric.NewNumberDataPointSlice()
	}
}

func pointValue(dp pmetric.NumberDataPoint) float64 {
	if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
		return float64(dp.IntValue())
	}
	return dp.DoubleValue()
}

// analyzerAlerts takes otelgpu.alerts: 1 with alertstate firing fires;
// 0 with alertstate firing (the analyzer's end of the series) or alertstate
// resolved resolves; pending is never sent, as Prometheus sends only firing
// alerts.
func (e *alertExporter) analyzerAlerts(m pmetric.Metric, res pcommon.Map, now time.Time, out *batchResult) {
	dps := gaugeOrSum(m)
	for i := range dps.Len() {
		dp := dps.At(i)
		attrs := dp.Attributes()
		name, ok := attrs.Get(metricnames.AttrAlertname)
		if !ok || name.AsString() == "" {
			out.reject("no_alertname")
			continue
		}
		state := ""
		if v, ok := attrs.Get(metricnames.AttrAlertstate); ok {
			state = v.AsString()
		}
		severity := ""
		if v, ok := attrs.Get(metricnames.AttrSeverity); ok {
			severity = v.AsString()
		}
		labels := e.labels(name.AsString(), severity, res)
		at := dp.Timestamp().AsTime()
		switch {
		case state == statePending:
		case state == stateFiring && pointValue(dp) > 0:
			if w, ok := e.set.fire(labels, e.annotations(labels, nil), at, now, false); ok {
				out.send = append(out.send, w)
			}
		case state == stateFiring || state == stateResolved:
			if w, ok := e.set.resolve(labels, at); ok {
				out.send = append(out.send, w)
			}
		default:
			out.reject("unknown_state")
		}
	}
}

// remediationAlerts takes gpu.remediation.incident.state: each incident
// under way fires; its id is a label, since every incident is its own.
func (e *alertExporter) remediationAlerts(m pmetric.Metric, res pcommon.Map, now time.Time, holding map[uint64]bool, out *batchResult) {
	dps := gaugeOrSum(m)
	for i := range dps.Len() {
		dp := dps.At(i)
		attrs := dp.Attributes()
		id, ok := attrs.Get(metricnames.AttrGPURemediationIncidentID)
		if !ok || id.AsString() == "" {
			out.reject("no_incident")
			continue
		}
		if pointValue(dp) <= 0 {
			continue // not under way: the snapshot's absence resolves it
		}
		state := ""
		if v, ok := attrs.Get(metricnames.AttrGPURemediationState); ok {
			state = v.AsString()
		}
		name, severity := alertRemediation, "warning"
		if state == needsPerson {
			name, severity = alertNeedsPerson, "critical"
		}
		labels := e.labels(name, severity, res)
		labels["incident_id"] = id.AsString()
		if gpu, ok := attrs.Get(metricnames.AttrHWID); ok && gpu.AsString() != "" {
			labels[promName(metricnames.AttrHWID)] = gpu.AsString()
		}
		holding[fingerprint(labels)] = true
		extra := map[string]string{"remediation_state": state}
		if w, ok := e.set.fire(labels, e.annotations(labels, extra), dp.Timestamp().AsTime(), now, true); ok {
			out.send = append(out.send, w)
		}
	}
}

// labels are the alert's name and severity, the configured resource
// attributes under Prometheus' names, and the external labels: what the
// prometheus exporter and a rule would put on the alert, and nothing that
// differs between replicas.
func (e *alertExporter) labels(name, severity string, res pcommon.Map) map[string]string {
	labels := make(map[string]string, len(e.cfg.ResourceLabels)+len(e.cfg.ExternalLabels)+2)
	for _, k := range e.cfg.ResourceLabels {
		if v, ok := res.Get(k); ok && v.AsString() != "" {
			labels[promName(k)] = v.AsString()
		}
	}
	for k, v := range e.cfg.ExternalLabels {
		labels[k] = v
	}
	labels[labelAlertname] = name
	if severity != "" {
		labels[labelSeverity] = severity
	}
	return labels
}

// annotations are the summary and the runbook link, plus extra.
func (e *alertExporter) annotations(labels, extra map[string]string) map[string]string {
	out := make(map[string]string, 3+len(extra))
	gpu, host := labels[promName(metricnames.AttrHWName)], labels[promName(metricnames.AttrHostName)]
	if gpu == "" {
		gpu = labels[promName(metricnames.AttrHWID)]
	}
	name := labels[labelAlertname]
	if f, ok := summaries[name]; ok {
		out["summary"] = fmt.Sprintf(f, orUnknown(gpu), orUnknown(host))
	} else {
		out["summary"] = fmt.Sprintf("%s on GPU %s on %s", name, orUnknown(gpu), orUnknown(host))
	}
	if e.cfg.RunbookURL != "" {
		out["runbook_url"] = e.cfg.RunbookURL + name + ".md"
	}
	for k, v := range extra {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// promName is an attribute's name as the prometheus exporter writes it as a
// label: every character but letters, digits and _ becomes _ (the
// otlptranslator's rule for names that are not UTF-8 escaped).
func promName(k string) string {
	b := []byte(k)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "key_" + string(b)
	}
	return string(b)
}
