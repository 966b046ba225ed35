package gpuremediationconnector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	gpuhw "github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
)

// health adds the receiver's nvidia.gpu.health: one point per subsystem
// given.
func health(ms pmetric.MetricSlice, ts pcommon.Timestamp, results map[string]int64) {
	m := ms.AppendEmpty()
	m.SetName(metricHealth)
	dps := m.SetEmptyGauge().DataPoints()
	for sys, v := range results {
		dp := dps.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(v)
		dp.Attributes().PutStr(attrHealthSys, sys)
	}
}

// A subsystem's failure is a fault when it starts, named
// dcgm_health_<system>; a warning is none; a failure already there when
// the GPU is first seen is not fresh; an unknown subsystem is refused.
func TestDetectDCGMHealth(t *testing.T) {
	r := shadow(t)
	t0 := pcommon.NewTimestampFromTime(time.Unix(1000, 0))
	detect := func(gpu string, ts pcommon.Timestamp, results map[string]int64) []detected {
		return r.detect(resource("n", gpu, func(ms pmetric.MetricSlice) { health(ms, ts, results) }))
	}
	require.Empty(t, detect("g", t0, map[string]int64{"memory": 0, "pcie": 0}))
	require.Empty(t, detect("g", t0+1, map[string]int64{"memory": 1, "pcie": 1}), "a warning calls for nothing")
	got := detect("g", t0+2, map[string]int64{"memory": 2, "pcie": 1})
	require.Len(t, got, 1)
	require.Equal(t, "dcgm_health_memory", got[0].fault.String())
	require.True(t, got[0].fresh)
	require.Empty(t, detect("g", t0+3, map[string]int64{"memory": 2}), "only its onset")
	got = detect("g", t0+4, map[string]int64{"memory": 2, "nvswitch_fatal": 2})
	require.Len(t, got, 1)
	require.Equal(t, "dcgm_health_nvswitch_fatal", got[0].fault.String())

	got = detect("g2", t0+5, map[string]int64{"nvlink": 2})
	require.Len(t, got, 1)
	require.False(t, got[0].fresh, "failed when first seen")

	before := r.bad.invalidValue
	require.Empty(t, detect("g", t0+6, map[string]int64{"cpuset": 2}))
	require.Equal(t, before+1, r.bad.invalidValue)
}

// The remediation and hw.status agree on every subsystem's failure: the
// default decision takes the GPU out of service, and gpuhealth calls the
// GPU failed; an override under policy::dcgm_health is taken, and an
// unknown subsystem is refused by name.
func TestDCGMHealthAgrees(t *testing.T) {
	cfg := createDefaultConfig()
	p, err := cfg.policy()
	require.NoError(t, err)
	t0 := time.Unix(1000, 0)
	for _, sys := range gpuhw.HealthSystems() {
		f := policy.Fault{Kind: policy.DCGMHealth, Code: int(sys)}
		inc, opened := p.Observe("gpu-"+sys.String(), f, t0)
		require.True(t, opened)
		d := p.Decide(inc)
		e := gpuhealth.DCGMHealth(sys, gpuhw.HealthFail)
		require.Equal(t, e.Action, d.Remediation, "%s", sys)
		require.GreaterOrEqual(t, d.Remediation, policy.ResetGPU, "%s: a failure takes the GPU out of service", sys)
		require.Equal(t, gpuhealth.Failed, e.State, "%s", sys)
		require.Regexp(t, `^DCGMHealth[A-Z][A-Za-z]*$`, conditionReason(f))
	}
	require.Equal(t, "DCGMHealthNvswitchFatal", conditionReason(policy.Fault{Kind: policy.DCGMHealth, Code: int(gpuhw.HealthNVSwitchFatal)}))

	cfg.Policy.DCGMHealth = map[string]string{"nvlink": "reset_gpu"}
	p, err = cfg.policy()
	require.NoError(t, err)
	require.Equal(t, policy.ResetGPU, p.DCGMHealth[gpuhw.HealthNVLink])
	require.Equal(t, policy.Drain, p.DCGMHealth[gpuhw.HealthMemory])
	cfg.Policy.DCGMHealth = map[string]string{"cpuset": "drain"}
	require.ErrorContains(t, cfg.Validate(), "policy::dcgm_health::cpuset: unknown health subsystem")
}
