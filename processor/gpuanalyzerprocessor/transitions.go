package gpuanalyzerprocessor

// The analyzer's transitions as log lines.

import (
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// logTransition logs alert and straggler transitions, naming the GPU the
// way a person finds it: host, device name, and job.
func (p *analyzerProcessor) logTransition(e analysis.Event) {
	fields := []zap.Field{zap.String(metricnames.AttrHWID, e.ID), zap.Time("at", time.Unix(0, e.Time).UTC())}
	if e.Seq < len(p.rms) {
		attrs := p.rms[e.Seq].Resource().Attributes()
		for _, k := range []string{metricnames.AttrHostName, metricnames.AttrHWName, metricnames.AttrK8sNamespaceName, metricnames.AttrK8sJobName, metricnames.AttrK8sPodName,
			metricnames.AttrSlurmJobID, metricnames.AttrSlurmJobName, metricnames.AttrSlurmJobUser} {
			if v, ok := attrs.Get(k); ok {
				fields = append(fields, zap.String(k, v.AsString()))
			}
		}
	}
	switch e.Kind {
	case analysis.AlertFiring:
		p.logger.Info("GPU alert firing", append(fields, zap.String("alertname", e.Alert.String()), zap.String("bottleneck", e.Class.String()))...)
	case analysis.AlertResolved:
		p.logger.Info("GPU alert resolved", append(fields, zap.String("alertname", e.Alert.String()))...)
	case analysis.StragglerStarted:
		p.logger.Info("GPU is a straggler", append(fields, zap.Float64("score", e.Score))...)
	case analysis.StragglerEnded:
		p.logger.Info("GPU is no longer a straggler", fields...)
	case analysis.HealthChanged:
		p.logHealth(e, fields)
	case analysis.CauseChanged:
		// Logged at each change, summary or not: the cause is what a
		// person paged for a slow job reads first.
		fields = append(fields, zap.String("bottleneck", e.Class.String()), zap.String("cause", e.Cause.Kind.String()),
			zap.String("evidence", e.Cause.Why))
		if e.Hint != analysis.NoHint {
			fields = append(fields, zap.String("hint", e.Hint.String()))
		}
		msg := "GPU wait explained"
		if e.Straggler {
			msg = "GPU straggler explained"
		}
		p.logger.Info(msg, fields...)
	case analysis.ClassChanged:
		if p.summary != nil {
			return // the summary logs each change once per interval, with its hint
		}
		fields = append(fields, zap.String("bottleneck", e.Class.String()), zap.String("was", e.Prev.String()))
		if e.Hint != analysis.NoHint {
			fields = append(fields, zap.String("hint", e.Hint.String()))
		}
		p.logger.Info("GPU bottleneck changed", appendBasis(fields, e.Basis)...)
	}
}
