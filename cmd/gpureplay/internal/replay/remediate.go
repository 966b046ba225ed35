package replay

import (
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/report"
)

// Remediate replays through the gpu_remediation connector's decisions.
type Remediate struct {
	r *components.Remediator
}

// LoadRemediate reads the connector's settings from a YAML file; an empty
// file gives the defaults.
func LoadRemediate(path string) (*Remediate, error) {
	m, err := components.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	cfg, err := components.RemediationSettings(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r, err := components.ReplayRemediator(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &Remediate{r: r}, nil
}

// lines writes one JSON line per decision the batch led to:
//
//	{"time":1767226900,"node":"gpu-node-02","uuid":"GPU-…","incident":"xid_79-1a2b3c4d","fault":"xid_79","action":"drain","reason":"policy","dry_run":true,"health":"failed"}
//
// health is the GPU's hw.status, as the gpu_analyzer reported it with the
// evidence: the dashboard's view of the same fault.
func (rm *Remediate) lines(b []byte, md pmetric.Metrics, now time.Time, rep *report.Collector) []byte {
	var health map[string]string
	for _, d := range rm.r.ReplayBatch(md, now) {
		if health == nil {
			health = healthByGPU(md)
		}
		if rep != nil {
			rep.AddDecision(report.Decision{
				Time: float64(d.Time.UnixNano()) / 1e9, Node: d.Node, UUID: d.UUID, Incident: d.Incident,
				Fault: d.Fault, Action: d.Action, Reason: d.Reason, DryRun: d.DryRun, Health: health[d.UUID],
			})
		}
		b = append(b, `{"time":`...)
		b = strconv.AppendFloat(b, float64(d.Time.UnixNano())/1e9, 'f', -1, 64)
		b = append(b, `,"node":`...)
		b = strconv.AppendQuote(b, d.Node)
		b = append(b, `,"uuid":`...)
		b = strconv.AppendQuote(b, d.UUID)
		b = append(b, `,"incident":`...)
		b = strconv.AppendQuote(b, d.Incident)
		b = append(b, `,"fault":`...)
		b = strconv.AppendQuote(b, d.Fault)
		b = append(b, `,"action":`...)
		b = strconv.AppendQuote(b, d.Action)
		b = append(b, `,"reason":`...)
		b = strconv.AppendQuote(b, d.Reason)
		b = append(b, `,"dry_run":`...)
		b = strconv.AppendBool(b, d.DryRun)
		b = append(b, `,"health":`...)
		b = strconv.AppendQuote(b, health[d.UUID])
		b = append(b, "}\n"...)
	}
	return b
}
