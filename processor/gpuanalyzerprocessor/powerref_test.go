package gpuanalyzerprocessor

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestBoardPower: models as DCGM, NVML and dcgm-exporter name them find their
// board power; the longest whole-word key wins, a configured value
// overrides the table, and an unknown model has none (the analyzer learns).
func TestBoardPower(t *testing.T) {
	tbl := newPowerTable(map[string]float64{"L40S": 325, "MI300X": 750})
	for model, want := range map[string]float64{
		"NVIDIA H100 80GB HBM3":   700,
		"NVIDIA H100 PCIe":        350,
		"NVIDIA H100 NVL":         400,
		"NVIDIA H100":             700,
		"NVIDIA A100-SXM4-80GB":   400,
		"NVIDIA A100-PCIE-40GB":   250,
		"NVIDIA A100 80GB PCIe":   300,
		"NVIDIA A10":              150,
		"Tesla V100-SXM2-32GB":    300,
		"Tesla P100-PCIE-16GB":    250,
		"Tesla T4":                70,
		"NVIDIA L4":               72,
		"NVIDIA L40S":             325,
		"AMD Instinct MI300X":     750,
		"NVIDIA GeForce RTX 4090": 0,
		"":                        0,
	} {
		attrs := pcommon.NewMap()
		if model != "" {
			attrs.PutStr(metricnames.AttrHWModel, model)
		}
		require.Equal(t, want, tbl.of(attrs), model)
		require.Equal(t, want, tbl.of(attrs), "%s, cached", model)
	}
}

// TestReadPowerLimit: a positive, finite nvidia.gpu.power.limit is the
// sample's reference power; 0 is a reading of nothing known, and NaN,
// infinite or negative limits are not readings.
func TestReadPowerLimit(t *testing.T) {
	p := &analyzerProcessor{}
	for _, tc := range []struct {
		v       float64
		ok      bool
		wantRef float64
	}{
		{400, true, 400},
		{0, true, 0},
		{math.NaN(), false, 0},
		{math.Inf(1), false, 0},
		{-1, false, 0},
	} {
		dp := pmetric.NewNumberDataPoint()
		dp.SetTimestamp(1)
		dp.SetDoubleValue(tc.v)
		var s analysis.Sample
		var fb deferred
		require.True(t, p.read(metricnames.NvidiaGPUPowerLimit, dp, &s, &fb), "%v", tc.v)
		require.Equal(t, tc.ok, fb.into(&s) == 0, "%v: a plausible reading, or one ignored", tc.v)
		require.Equal(t, tc.wantRef, s.RefPower, "%v", tc.v)
	}
}

// TestPowerLimitIsReference: an H100 capped at 400 W (the table says 700 W)
// and without profiling fields is judged against its cap. Busy by
// utilization at 120 W (0.3 of 400) it waits; at 150 W (0.375 of 400, 0.21
// of 700) it waits only against the table. With power alone, 300 W is work
// against its cap (0.75) and between the bands against the table (0.43). A
// limit of 0 is unknown: the table decides.
func TestPowerLimitIsReference(t *testing.T) {
	const noUtil = -1
	for _, tc := range []struct {
		name         string
		util, watts  float64
		limit        float64 // 0: a reported 0; -1: not reported
		class, state string
	}{
		{"capped: 120 W is a wait", 1, 120, 400, "launch_bound", metricnames.AttrOTelGPUUsageStateWaiting},
		{"capped: 150 W is no wait", 1, 150, 400, "unknown", metricnames.AttrOTelGPUUsageStateUsed},
		{"table: 150 W is a wait", 1, 150, -1, "launch_bound", metricnames.AttrOTelGPUUsageStateWaiting},
		{"limit 0: the table, 150 W is a wait", 1, 150, 0, "launch_bound", metricnames.AttrOTelGPUUsageStateWaiting},
		{"capped, power alone: 300 W is work", noUtil, 300, 400, "unknown", metricnames.AttrOTelGPUUsageStateUsed},
		{"table, power alone: 300 W is between the bands", noUtil, 300, -1, "unknown", metricnames.AttrOTelGPUUsageStateUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
			t0 := time.Unix(1767225600, 0)
			for i := range 61 {
				md := pmetric.NewMetrics()
				rm := md.ResourceMetrics().AppendEmpty()
				rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "GPU-capped")
				rm.Resource().Attributes().PutStr(metricnames.AttrHWModel, "NVIDIA H100 80GB HBM3")
				ms := rm.ScopeMetrics().AppendEmpty().Metrics()
				ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
				gauge := func(name string, v float64) pmetric.NumberDataPoint {
					m := ms.AppendEmpty()
					m.SetName(name)
					dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
					dp.SetTimestamp(ts)
					dp.SetDoubleValue(v)
					return dp
				}
				if tc.util != noUtil {
					gauge(metricnames.HWGPUUtilization, tc.util).Attributes().PutStr(metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
				}
				gauge(metricnames.HWPower, tc.watts)
				if tc.limit >= 0 {
					gauge(metricnames.NvidiaGPUPowerLimit, tc.limit)
				}
				require.NoError(t, p.ConsumeMetrics(context.Background(), md))
			}
			var last map[string]pmetric.Metric
			var spent map[string]float64
			for _, md := range sink.AllMetrics() {
				v := verdicts(md)["GPU-capped"]
				last = v
				if m, ok := v[metricnames.OTelGPUTime]; ok {
					spent = usageOf(m)
				}
			}
			require.Equal(t, tc.class, classOf(last))
			var most string
			for st, secs := range spent {
				if most == "" || secs > spent[most] {
					most = st
				}
			}
			require.Equal(t, tc.state, most, "time by state: %v", spent)
		})
	}
}
