package gpuanalyzerprocessor

import (
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// healthAttrs are hw.state's values by gpuhealth.State; each is checked
// to match by name (TestHealthStates).
var healthAttrs = func() (out [gpuhealth.NumStates]metadata.AttributeHwState) {
	for _, s := range gpuhealth.States() {
		out[s] = metadata.MapAttributeHwState[s.String()]
	}
	return out
}()

// recordHealth records hw.status as the conventions' state set: 1 for the
// GPU's state and 0 for each other, every one at every report, so that a
// query for any state finds a value.
func (p *analyzerProcessor) recordHealth(v *analysis.Verdict, attrs pcommon.Map, ts pcommon.Timestamp) {
	p.mb.SetStartTime(pcommon.Timestamp(v.UsageStart)) // since the analyzer first saw the GPU
	st := p.inherit(v, attrs)
	for _, s := range gpuhealth.States() {
		var on int64
		if s == st {
			on = 1
		}
		p.mb.RecordHwStatusDataPoint(ts, on, healthAttrs[s])
	}
}

// inherit returns the device's state: its own, or its GPU's where that is
// worse. A MIG instance or a partition runs on its GPU's memory and
// engines: one whose GPU had a double-bit error is no better off, though
// the error is counted on the GPU's board. The GPU is the one the
// receiver names in hw.parent (or, from a receiver that predates it,
// nvidia.gpu.mig.parent_id), reported in the same batch before its
// instances, or earlier. Only GPUs that are not ok are remembered.
func (p *analyzerProcessor) inherit(v *analysis.Verdict, attrs pcommon.Map) gpuhealth.State {
	if v.Health != gpuhealth.OK {
		if p.unwell == nil {
			p.unwell = map[string]gpuhealth.State{}
		}
		p.unwell[v.ID] = v.Health
	} else if len(p.unwell) > 0 {
		delete(p.unwell, v.ID)
	}
	if len(p.unwell) == 0 {
		return v.Health
	}
	parent := ""
	if a, ok := attrs.Get(metricnames.AttrHWParent); ok {
		parent = a.AsString()
	} else if a, ok := attrs.Get(metricnames.AttrNvidiaGPUMIGParentID); ok {
		parent = a.AsString()
	}
	if st, ok := p.unwell[parent]; ok && parent != v.ID && st > v.Health {
		return st
	}
	return v.Health
}

// logHealth logs a change of a GPU's health: compact under make run's
// summary (the GPU by host and name), with its resource's names otherwise.
func (p *analyzerProcessor) logHealth(e analysis.Event, fields []zap.Field) {
	if p.summary != nil {
		fields = []zap.Field{zap.String("gpu", e.ID)}
		if g := p.summary.gpus[e.ID]; g != nil {
			fields[0] = zap.String("gpu", g.name)
		}
	} else {
		fields = append(fields, zap.Time("at", time.Unix(0, e.Time).UTC()))
	}
	fields = append(fields, zap.String("from", e.PrevHealth.String()), zap.String("to", e.Health.String()))
	if e.Why != "" {
		fields = append(fields, zap.String("reason", e.Why))
	}
	p.logger.Info("GPU health changed", fields...)
}

// healthPart sums up the GPUs whose health is not ok, worst first, for the
// fleet summary; "" when every GPU is ok.
func healthPart(count [gpuhealth.NumStates]int) string {
	var parts []string
	for s := gpuhealth.NumStates - 1; s > gpuhealth.OK; s-- {
		if count[s] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[s], s))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "health: " + strings.Join(parts, ", ")
}
