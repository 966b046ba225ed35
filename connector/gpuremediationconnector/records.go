package gpuremediationconnector

// This file records what the remediation decides and does: log records,
// the decisions for gpureplay, and the connector's own metrics.

import (
	"context"
	"fmt"
	"sort"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

func (r *remediator) count(action, reason string) { r.counts[[2]string{action, reason}]++ }

// decision records one decision: a log record, a line for gpureplay, and,
// for decisions not to act, the actions metric.
func (r *remediator) decision(d detected, incident string, rem policy.Remediation, reason, why string) {
	dry := r.dryRun()
	action := r.actionName(d, rem)
	if reason != reasonPolicy && reason != reasonEscalated {
		r.count(action, reason)
	}
	r.decisionNamed(d, incident, d.fault.String(), action, reason, why, dry)
}

// decisionNamed records a decision or a change of an incident's state; at
// is the evidence's time for a decision on new evidence, the tick's for a
// state change.
func (r *remediator) decisionNamed(d detected, incident, fault, action, reason, why string, dry bool) {
	r.out = append(r.out, offline.Decision{Time: d.at, Node: d.node, UUID: d.gpu, Incident: incident, Fault: fault, Action: action, Reason: reason, DryRun: dry})
	lr := r.record(d.node, d.at)
	lr.Body().SetStr(why)
	at := lr.Attributes()
	at.PutStr("gpu.remediation.kind", "decision")
	at.PutStr("gpu.remediation.incident.id", incident)
	at.PutStr(metricnames.AttrHWID, d.gpu)
	annotateRail(at, d)
	at.PutStr("gpu.remediation.fault", fault)
	at.PutStr("gpu.remediation.action", action)
	at.PutStr("gpu.remediation.reason", reason)
	at.PutBool("gpu.remediation.dry_run", dry)
	r.logger.Info("GPU remediation decision", zap.String("incident", incident), zap.String("node", d.node), zap.String("gpu", d.gpu), zap.String("fault", fault),
		zap.String("action", action), zap.String("reason", reason), zap.Bool("dry_run", dry), zap.String("why", why))
}

// actionLog records one action taken (or, in dry run, one not written).
func (r *remediator) actionLog(p *plan, step string, dry bool, detail string) {
	lr := r.record(p.d.node, r.now())
	verb := "done"
	if dry {
		verb = "would do (dry run)"
	}
	body := fmt.Sprintf("%s %s on node %s for %s (%s, incident %s)", verb, step, p.d.node, subject(p.d), p.d.fault, p.incident)
	if detail != "" {
		body += ": " + detail
	}
	lr.Body().SetStr(body)
	at := lr.Attributes()
	at.PutStr("gpu.remediation.kind", "action")
	at.PutStr("gpu.remediation.incident.id", p.incident)
	at.PutStr(metricnames.AttrHWID, p.d.gpu)
	annotateRail(at, p.d)
	at.PutStr("gpu.remediation.fault", p.d.fault.String())
	at.PutStr("gpu.remediation.action", step)
	at.PutStr("gpu.remediation.reason", p.reason)
	at.PutBool("gpu.remediation.dry_run", dry)
}

func (r *remediator) record(node string, at time.Time) plog.LogRecord {
	rl := r.logs.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(attrNode, node)
	sl := rl.ScopeLogs().AppendEmpty()
	sl.Scope().SetName(metadata.ScopeName)
	lr := sl.LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
	lr.SetObservedTimestamp(pcommon.NewTimestampFromTime(r.now()))
	lr.SetSeverityNumber(plog.SeverityNumberWarn)
	lr.SetSeverityText("WARN")
	return lr
}

// emit sends the tick's log records and the metrics.
func (r *remediator) emit(ctx context.Context, now time.Time) {
	if r.logsOut != nil && r.logs.LogRecordCount() > 0 {
		if err := r.logsOut.ConsumeLogs(ctx, r.logs); err != nil {
			r.logger.Warn("Could not emit remediation logs", zap.Error(err))
		}
	}
	r.logs = plog.NewLogs()
	if r.metricsOut == nil {
		return
	}
	ts := pcommon.NewTimestampFromTime(now)
	if r.firstTS == 0 {
		r.firstTS = ts
	}
	keys := make([][2]string, 0, len(r.counts))
	for k := range r.counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	for _, k := range keys {
		r.mb.RecordGpuRemediationActionsDataPoint(ts, r.counts[k], k[0], k[1])
	}
	state := int64(0)
	if open, _, _ := r.breaker.Open(); open {
		state = 1
	}
	r.mb.RecordGpuRemediationBreakerStateDataPoint(ts, state)
	nodes := map[string]bool{}
	for _, h := range r.handled {
		nodes[h.node] = true
	}
	r.mb.RecordGpuRemediationNodesDataPoint(ts, int64(len(nodes)))
	for _, p := range r.plans {
		if p.started && p.touchesNode() {
			r.mb.RecordGpuRemediationIncidentStateDataPoint(ts, 1, p.incident, p.d.gpu, p.state())
		}
	}
	for gpu, h := range r.handled {
		if h.needsPerson {
			r.mb.RecordGpuRemediationIncidentStateDataPoint(ts, 1, h.incident, gpu, reasonNeedsPerson)
		}
	}
	// The counts start at the first emission.
	md := r.mb.Emit(metadata.WithStartTimeOverride(r.firstTS))
	if err := r.metricsOut.ConsumeMetrics(ctx, md); err != nil {
		r.logger.Warn("Could not emit remediation metrics", zap.Error(err))
	}
}
