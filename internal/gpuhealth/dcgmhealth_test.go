package gpuhealth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// The one rule holds for every subsystem and result: failed exactly when
// the action takes the GPU out of service.
func TestDCGMHealthFollowsAction(t *testing.T) {
	for _, sys := range gpu.HealthSystems() {
		for _, r := range []gpu.HealthResult{gpu.HealthPass, gpu.HealthWarn, gpu.HealthFail} {
			e := DCGMHealth(sys, r)
			assert.Equal(t, e.Action >= ResetGPU, e.State == Failed, "%s %s: %+v", sys, r, e)
		}
		assert.Equal(t, DCGMHealth(sys, gpu.HealthFail).Action, DCGMHealthActions()[sys], "%s", sys)
	}
}

func TestDCGMHealthCatalogue(t *testing.T) {
	for _, c := range []struct {
		sys gpu.HealthSystem
		r   gpu.HealthResult
		e   Entry
	}{
		{gpu.HealthMemory, gpu.HealthPass, Entry{}},
		// Pages or rows pending: reset at the next opportunity, as XID 63.
		{gpu.HealthMemory, gpu.HealthWarn, Entry{None, Degraded}},
		{gpu.HealthMemory, gpu.HealthFail, Entry{Drain, Failed}},
		{gpu.HealthPCIe, gpu.HealthWarn, Entry{None, Degraded}},
		{gpu.HealthInfoROM, gpu.HealthWarn, Entry{None, Degraded}},
		{gpu.HealthThermal, gpu.HealthWarn, Entry{None, Degraded}},
		// A GPU at its power cap does what its cap says.
		{gpu.HealthPower, gpu.HealthWarn, Entry{}},
		{gpu.HealthNVLink, gpu.HealthWarn, Entry{None, Degraded}},
		{gpu.HealthNVLink, gpu.HealthFail, Entry{Drain, Failed}},
		{gpu.HealthNVSwitchNonFatal, gpu.HealthWarn, Entry{None, Degraded}},
		{gpu.HealthNVSwitchFatal, gpu.HealthFail, Entry{Drain, Failed}},
		{gpu.HealthDriver, gpu.HealthFail, Entry{Drain, Failed}},
	} {
		assert.Equal(t, c.e, DCGMHealth(c.sys, c.r), "%s %s", c.sys, c.r)
	}
}

func TestDCGMHealthState(t *testing.T) {
	var h gpu.Health
	s, why := DCGMHealthState(h)
	assert.Equal(t, OK, s)
	assert.Empty(t, why)
	for _, sys := range gpu.HealthSystems() {
		h.Watch(sys)
	}
	h.Report(gpu.HealthPower, gpu.HealthWarn)
	s, _ = DCGMHealthState(h)
	assert.Equal(t, OK, s, "a power warning is a power cap")
	h.Report(gpu.HealthThermal, gpu.HealthWarn)
	h.Report(gpu.HealthInfoROM, gpu.HealthWarn)
	s, why = DCGMHealthState(h)
	assert.Equal(t, Degraded, s)
	assert.Equal(t, "dcgm_health_inforom", why, "the first of the worst, in DCGM's order")
	h.Report(gpu.HealthNVSwitchFatal, gpu.HealthFail)
	s, why = DCGMHealthState(h)
	assert.Equal(t, Failed, s)
	assert.Equal(t, "dcgm_health_nvswitch_fatal", why)

	// As a level of a GPU's evidence, under the analyzer's verdict.
	var g GPU
	g.Set(LevelDCGMHealth, s, why)
	st, cause := g.State(0)
	require.Equal(t, Failed, st)
	require.Equal(t, "dcgm_health_nvswitch_fatal", cause)
	require.Less(t, LevelDCGMHealth, LevelVerdict, "the verdict stays the last level")
}
