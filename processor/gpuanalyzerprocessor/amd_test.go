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

// amdGPU is what the dcgm receiver reports of an AMD Instinct GPU at one
// second i of a test: the fields left zero are not reported.
type amdGPU struct {
	model    string
	gfx      float64 // hw.gpu.utilization{general}: gfx activity
	watts    float64
	powerCap float64
	umc      float64
	// xgmiRate is the bytes per second over all links, both directions,
	// on linkBW-each-way links (7 on an MI300X in an 8-GPU hive).
	xgmiRate, linkBW float64
	links            int
	// perLink reports XGMI per link, as traces recorded before the
	// receiver summed the links do; otherwise summed, as it now does.
	perLink bool
	// violation residency by reason
	violation map[string]float64
	// counters as functions of the second, for faults
	uncorrected, fatalCPER func(i int) float64
	badPages, badPageLimit float64
}

func (g amdGPU) metrics(ts, start pcommon.Timestamp, i int) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	attrs := rm.Resource().Attributes()
	attrs.PutStr(metricnames.AttrHWID, "GPU-amd")
	attrs.PutStr(metricnames.AttrHWVendor, "AMD")
	attrs.PutStr(metricnames.AttrHWModel, g.model)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	point := func(name string, v float64, sum bool) pmetric.NumberDataPoint {
		m := ms.AppendEmpty()
		m.SetName(name)
		var dp pmetric.NumberDataPoint
		if sum {
			s := m.SetEmptySum()
			s.SetIsMonotonic(true)
			s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			dp = s.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(start)
		} else {
			dp = m.SetEmptyGauge().DataPoints().AppendEmpty()
		}
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
		return dp
	}
	point(metricnames.HWGPUUtilization, g.gfx, false).Attributes().PutStr(metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
	point(metricnames.HWPower, g.watts, false)
	if g.powerCap > 0 {
		point(metricnames.AmdGPUPowerCap, g.powerCap, false)
	}
	point(metricnames.AmdGPUUmcActivity, g.umc, false)
	point(metricnames.AmdGPUMmActivity, 0, false)
	switch {
	case g.links == 0:
	case g.perLink:
		for l := range g.links {
			for _, dir := range []string{metricnames.AttrNetworkIODirectionTransmit, metricnames.AttrNetworkIODirectionReceive} {
				dp := point(metricnames.AmdGPUXgmiIO, g.xgmiRate/float64(2*g.links)*float64(i), true)
				dp.Attributes().PutStr(metricnames.AttrNetworkIODirection, dir)
				dp.Attributes().PutInt(metricnames.AttrAmdGPUXgmiLink, int64(l))
			}
			point(metricnames.AmdGPUXgmiBandwidth, g.linkBW, false).Attributes().PutInt(metricnames.AttrAmdGPUXgmiLink, int64(l))
		}
	default:
		for _, dir := range []string{metricnames.AttrNetworkIODirectionTransmit, metricnames.AttrNetworkIODirectionReceive} {
			point(metricnames.AmdGPUXgmiIO, g.xgmiRate/2*float64(i), true).Attributes().PutStr(metricnames.AttrNetworkIODirection, dir)
		}
		point(metricnames.AmdGPUXgmiBandwidth, g.linkBW*float64(g.links), false)
	}
	for reason, v := range g.violation {
		point(metricnames.AmdGPUViolationResidency, v, false).Attributes().PutStr(metricnames.AttrAmdGPUViolationReason, reason)
	}
	for _, typ := range []string{metricnames.AttrErrorTypeCorrected, metricnames.AttrErrorTypeUncorrected, metricnames.AttrErrorTypeDeferred} {
		v := float64(0)
		if typ == metricnames.AttrErrorTypeUncorrected && g.uncorrected != nil {
			v = g.uncorrected(i)
		}
		if typ == metricnames.AttrErrorTypeDeferred {
			v = float64(i) // deferred errors are recorded, not a fault
		}
		point(metricnames.HWErrors, v, true).Attributes().PutStr(metricnames.AttrErrorType, typ)
	}
	for _, sev := range []string{metricnames.AttrAmdGPUCperSeverityNonfatalCorrected, metricnames.AttrAmdGPUCperSeverityFatal} {
		v := float64(i) // corrected records pile up harmlessly
		if sev == metricnames.AttrAmdGPUCperSeverityFatal {
			v = 0
			if g.fatalCPER != nil {
				v = g.fatalCPER(i)
			}
		}
		dp := point(metricnames.AmdGPUCperRecords, v, true)
		dp.Attributes().PutStr(metricnames.AttrAmdGPUCperSeverity, sev)
		dp.Attributes().PutInt(metricnames.AttrAmdGPUAfid, 30)
	}
	if g.badPageLimit > 0 {
		point(metricnames.AmdGPUBadPages, g.badPages, false).Attributes().PutStr(metricnames.AttrAmdGPUBadPageStatus, metricnames.AttrAmdGPUBadPageStatusReserved)
		point(metricnames.AmdGPUBadPagesThreshold, g.badPageLimit, false)
	}
	return md
}

// TestAMDRules: each rule reads an AMD GPU's own figures. Gfx activity is
// engine busy, as GPU utilization is NVIDIA's (idle below the threshold);
// power against the MI300X's 750 W tells a GPU spinning in a wait from one
// that works; umc activity is memory traffic, XGMI against its bandwidth
// communication; thermal violation residency throttling, and power (PPT)
// residency, the normal state of a GPU at its cap, not; an uncorrectable
// ECC error, a fatal CPER record and retired pages at the driver's threshold
// are faults, deferred errors and corrected records are not. What no AMD
// figure tells (compute against input bound) stays unknown.
func TestAMDRules(t *testing.T) {
	const mi300x = "AMD Instinct MI300X"
	const hive = 7 // links of an MI300X in an 8-GPU hive
	const linkBW = 64e9
	rising := func(from int) func(int) float64 {
		return func(i int) float64 {
			if i >= from {
				return 1
			}
			return 0
		}
	}
	for _, tc := range []struct {
		name        string
		gpu         amdGPU
		class, hint string
	}{
		{"idle by gfx activity", amdGPU{model: mi300x, gfx: 0.01, watts: 140}, "idle", ""},
		{"busy at a fifth of 750 W waits", amdGPU{model: mi300x, gfx: 1, watts: 150, umc: 0.05}, "launch_bound", "use_cuda_graphs"},
		{"working, memory traffic", amdGPU{model: mi300x, gfx: 0.95, watts: 650, umc: 0.85}, "memory_bound", "reduce_memory_traffic"},
		{"working over XGMI", amdGPU{model: mi300x, gfx: 0.9, watts: 500, umc: 0.3, links: hive, linkBW: linkBW, xgmiRate: 0.3 * 2 * hive * linkBW}, "communication_bound", "overlap_communication"},
		{"working over XGMI, recorded per link", amdGPU{model: mi300x, gfx: 0.9, watts: 500, umc: 0.3, links: hive, linkBW: linkBW, xgmiRate: 0.3 * 2 * hive * linkBW, perLink: true}, "communication_bound", "overlap_communication"},
		{"working, little XGMI, recorded per link", amdGPU{model: mi300x, gfx: 0.97, watts: 680, umc: 0.3, links: hive, linkBW: linkBW, xgmiRate: 0.01 * 2 * hive * linkBW, perLink: true}, "unknown", ""},
		{"working, nothing says what bounds it", amdGPU{model: mi300x, gfx: 0.97, watts: 680, umc: 0.3, links: hive, linkBW: linkBW, xgmiRate: 0.01 * 2 * hive * linkBW}, "unknown", ""},
		{"held by HBM temperature", amdGPU{model: mi300x, gfx: 0.97, watts: 600, umc: 0.4, violation: map[string]float64{"hbm_thermal": 0.8, "power": 0.1}}, "throttled", "check_cooling_or_power"},
		{"at its power cap is not throttled", amdGPU{model: mi300x, gfx: 0.97, watts: 745, umc: 0.4, violation: map[string]float64{"power": 0.9, "socket_thermal": 0}}, "unknown", ""},
		{"uncorrectable ECC", amdGPU{model: mi300x, gfx: 0.97, watts: 600, uncorrected: rising(30)}, "faulted", "replace_or_drain"},
		{"fatal CPER record", amdGPU{model: mi300x, gfx: 0.97, watts: 600, fatalCPER: rising(30)}, "faulted", "replace_or_drain"},
		{"pages retired to the threshold", amdGPU{model: mi300x, gfx: 0.97, watts: 600, badPages: 128, badPageLimit: 128}, "faulted", "replace_or_drain"},
		{"pages retired under the threshold", amdGPU{model: mi300x, gfx: 0.97, watts: 600, badPages: 12, badPageLimit: 128}, "unknown", ""},
		// Against the cap an administrator set (400 W), 150 W is 0.375:
		// no wait; against the table's 750 W it would be one.
		{"power cap is the reference", amdGPU{model: mi300x, gfx: 1, watts: 150, powerCap: 400}, "unknown", ""},
		{"MI325X at 1000 W: 300 W waits", amdGPU{model: "AMD Instinct MI325X", gfx: 1, watts: 300}, "launch_bound", "use_cuda_graphs"},
		{"MI355X at 1400 W: 400 W waits", amdGPU{model: "AMD Instinct MI355X", gfx: 1, watts: 400}, "launch_bound", "use_cuda_graphs"},
		{"MI250X at 560 W: 150 W waits", amdGPU{model: "AMD Instinct MI250X", gfx: 1, watts: 150}, "launch_bound", "use_cuda_graphs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
			t0 := time.Unix(1767225600, 0)
			start := pcommon.NewTimestampFromTime(t0.Add(-time.Hour))
			for i := range 61 {
				ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
				require.NoError(t, p.ConsumeMetrics(context.Background(), tc.gpu.metrics(ts, start, i)))
			}
			all := sink.AllMetrics()
			last := verdicts(all[len(all)-1])["GPU-amd"]
			require.Equal(t, tc.class, classOf(last))
			require.Equal(t, tc.hint, hintOf(last))
		})
	}
}

// TestAMDThrottleReasons: counting PPT residency as throttling is the
// configuration's choice, as sw_power_cap is on NVIDIA; an unknown reason
// is named in the error.
func TestAMDThrottleReasons(t *testing.T) {
	cfg := everySample()
	cfg.Bottleneck.AMDThrottleReasons = []string{"power"}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	t0 := time.Unix(1767225600, 0)
	gpu := amdGPU{model: "AMD Instinct MI300X", gfx: 0.97, watts: 745, violation: map[string]float64{"power": 0.9}}
	for i := range 31 {
		ts := pcommon.NewTimestampFromTime(t0.Add(time.Duration(i) * time.Second))
		require.NoError(t, p.ConsumeMetrics(context.Background(), gpu.metrics(ts, ts, i)))
	}
	all := sink.AllMetrics()
	require.Equal(t, "throttled", classOf(verdicts(all[len(all)-1])["GPU-amd"]))

	cfg = createDefaultConfig().(*Config)
	cfg.Bottleneck.AMDThrottleReasons = []string{"socket_thermal", "edge_thermal"}
	require.ErrorContains(t, cfg.Validate(), `bottleneck::amd_throttle_reasons[1]: unknown reason "edge_thermal"`)
}
