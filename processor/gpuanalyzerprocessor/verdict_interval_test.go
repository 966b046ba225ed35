package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestVerdictInterval runs the default fleet for 200 s twice, with every
// verdict sent and with verdict_interval 20s. With the interval, a GPU's
// verdicts are sent at its first sample, at every batch where the full run
// shows a change (a final 0 for a class or hint, a straggler or alert
// change, usage counters), and never more than 20 s apart; what is sent is
// what the full run sent in that batch, and far fewer points go out.
func TestVerdictInterval(t *testing.T) {
	run := func(interval time.Duration) []map[string]map[string]pmetric.Metric {
		cfg := createDefaultConfig().(*Config)
		cfg.VerdictInterval = interval
		f := newFleet(t, simulated.DefaultConfig())
		p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
		var out []map[string]map[string]pmetric.Metric
		for range 200 {
			sink.Reset()
			require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
			out = append(out, verdicts(sink.AllMetrics()[0]))
		}
		return out
	}
	all, sparse := run(0), run(20*time.Second)
	var sentAll, sentSparse int
	last := map[string]int{}         // hw.id -> batch of the last verdict sent
	prev := map[string]fingerprint{} // hw.id -> the full run's previous batch
	for i := range all {
		for id, full := range all[i] {
			sentAll++
			got, sent := sparse[i][id]
			fp := fingerprintOf(full)
			was, seen := prev[id]
			prev[id] = fp
			steady := fp
			steady.transition, was.transition = false, false
			changed := !seen || fp.transition || steady != was || full[metricnames.OTelGPUTime] != (pmetric.Metric{})
			if changed {
				require.True(t, sent, "batch %d, %s: a change must be sent", i, id)
			}
			if !sent {
				require.Less(t, i-last[id], 20, "batch %d, %s: at least every 20 s", i, id)
				continue
			}
			sentSparse++
			last[id] = i
			require.Equal(t, fp, fingerprintOf(got), "batch %d, %s: the same verdict", i, id)
			for name, m := range full {
				require.Contains(t, got, name)
				require.Equal(t, pointsOf(m), pointsOf(got[name]), "batch %d, %s, %s", i, id, name)
			}
		}
	}
	require.Less(t, sentSparse*4, sentAll, "a quarter of the verdicts or fewer: %d of %d", sentSparse, sentAll)
}

// fingerprint is what a GPU's verdict says, less its counters and score.
type fingerprint struct {
	class, hint string
	straggler   int64
	alerts      string
	transition  bool
}

func fingerprintOf(m map[string]pmetric.Metric) fingerprint {
	fp := fingerprint{class: classOf(m), hint: hintOf(m), straggler: -1}
	fp.transition = m[metricnames.OTelGPUBottleneckState].Gauge().DataPoints().Len() > 1
	if s, ok := m[metricnames.OTelGPUStragglerState]; ok {
		fp.straggler = s.Gauge().DataPoints().At(0).IntValue()
	}
	if a, ok := m[metricnames.OTelGPUAlerts]; ok {
		dps := a.Gauge().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			// A 0 ends the state an alert left, once, like a class's:
			// a transition, not a state of its own.
			if dps.At(i).IntValue() == 0 {
				fp.transition = true
				continue
			}
			n, _ := dps.At(i).Attributes().Get(metricnames.AttrAlertname)
			st, _ := dps.At(i).Attributes().Get(metricnames.AttrAlertstate)
			fp.alerts += n.Str() + "=" + st.Str() + ";"
		}
	}
	return fp
}

func pointsOf(m pmetric.Metric) int {
	if m.Type() == pmetric.MetricTypeSum {
		return m.Sum().DataPoints().Len()
	}
	return m.Gauge().DataPoints().Len()
}
