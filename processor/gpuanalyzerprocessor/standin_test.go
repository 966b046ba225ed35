package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestProfilingStandIns: where DCGM profiles nothing, the receiver reports
// GPU utilization as the graphics engine's activity and the memory copy
// utilization as DRAM activity. Those stand-ins are no evidence: a busy H100
// without profiling, at 0.7 of its power, stays unknown with its engine equal
// to its utilization and its DRAM equal to its copy utilization (0.9, which
// as DRAM activity would be memory bound). With a profiled engine that
// differs from utilization, the engine and the tensor pipes decide.
func TestProfilingStandIns(t *testing.T) {
	for _, tc := range []struct {
		name            string
		engine, dram    float64
		class, evidence string
	}{
		{"both stand-ins", 0.98, 0.9, "unknown", ""},
		{"a profiled engine", 0.93, 0.9, "compute_bound", "gr_engine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			cfg.VerdictInterval = 0
			p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
			t0 := time.Unix(1767225600, 0)
			for i := range 31 {
				md := pmetric.NewMetrics()
				rm := md.ResourceMetrics().AppendEmpty()
				rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-a")
				rm.Resource().Attributes().PutStr(metricnames.AttrHWModel, "NVIDIA H100 80GB HBM3")
				ms := rm.ScopeMetrics().AppendEmpty().Metrics()
				ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
				gauge := func(name string, v float64, kv ...string) {
					m := ms.AppendEmpty()
					m.SetName(name)
					dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
					dp.SetTimestamp(ts)
					dp.SetDoubleValue(v)
					for k := 0; k+1 < len(kv); k += 2 {
						dp.Attributes().PutStr(kv[k], kv[k+1])
					}
				}
				gauge(metricnames.HWGPUUtilization, 0.98, metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
				gauge(metricnames.NvidiaGPUGraphicsEngineActive, tc.engine)
				gauge(metricnames.NvidiaGPUMemoryCopyUtilization, 0.9)
				gauge(metricnames.NvidiaGPUDRAMActive, tc.dram)
				gauge(metricnames.NvidiaGPUPipeActive, 0.6, metricnames.AttrNvidiaGPUPipe, metricnames.AttrNvidiaGPUPipeTensor)
				gauge(metricnames.HWPower, 490)
				require.NoError(t, p.ConsumeMetrics(context.Background(), md))
			}
			all := sink.AllMetrics()
			dps := verdicts(all[len(all)-1])["GPU-a"][metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
			attrs := dps.At(0).Attributes().AsRaw()
			require.Equal(t, tc.class, attrs[metricnames.AttrOTelGPUBottleneckClass])
			if tc.evidence == "" {
				require.NotContains(t, attrs, metricnames.AttrOTelGPUBottleneckEvidence)
			} else {
				require.Equal(t, tc.evidence, attrs[metricnames.AttrOTelGPUBottleneckEvidence])
			}
		})
	}
}
