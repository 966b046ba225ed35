package gpuhealth

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The one rule: a GPU is failed exactly when its fault calls for a reset,
// a drain or a replacement, for every entry of the catalogue.
func TestStateFollowsAction(t *testing.T) {
	for code, e := range xids {
		assert.Equal(t, e.Action >= ResetGPU, e.State == Failed, "XID %d: %s, %s", code, e.Action, e.State)
	}
	for code := range 8 {
		e := Recovery(code)
		assert.Equal(t, e.Action >= ResetGPU, e.State == Failed, "recovery %d", code)
	}
	for _, e := range []Entry{ECCUncorrectable, RowRemapFailure, GPUFaulted, ECCCorrectable, ECCDeferred, CPERFatal, CPERUncorrected, BadPageThreshold} {
		assert.Equal(t, e.Action >= ResetGPU, e.State == Failed, "%+v", e)
	}
	assert.Equal(t, Degraded, Of(RestartApp, Failed), "a failed GPU calls for an action; without one it is degraded")
}

// The cases that distinguish NVIDIA's catalogue from "any XID is a drain".
func TestXIDCatalogue(t *testing.T) {
	for _, c := range []struct {
		code   int
		action Action
		state  State
	}{
		// A row remapping recorded: reset at the next opportunity, no drain.
		{63, None, Degraded},
		{64, Drain, Failed}, // the remapping itself failed
		{94, RestartApp, Degraded},
		{92, None, PredictedFailure},
		{13, RestartApp, OK},
		{43, RestartApp, OK},
		{79, Drain, Failed},  // fallen off the bus
		{119, Drain, Failed}, // GSP timeout
		{48, Drain, Failed},  // double-bit ECC
		{62, ResetGPU, Failed},
		{154, ResetGPU, Failed},
		{1, None, OK}, // not in the catalogue
	} {
		e := XID(c.code)
		assert.Equal(t, c.action, e.Action, "XID %d", c.code)
		assert.Equal(t, c.state, e.State, "XID %d", c.code)
	}
	_, has63 := XIDActions()[63]
	assert.False(t, has63, "an XID that calls for nothing is not in the action map")
}

func TestRecovery(t *testing.T) {
	assert.Equal(t, Entry{}, Recovery(RecoveryNone))
	assert.Equal(t, Entry{ResetGPU, Failed}, Recovery(RecoveryDrainAndReset))
	assert.Equal(t, Entry{Drain, Failed}, Recovery(RecoveryIMEX))
	assert.Equal(t, Entry{Drain, Failed}, Recovery(42), "an action this version does not know")
	code, ok := ParseRecovery("node_reboot")
	require.True(t, ok)
	assert.Equal(t, RecoveryNodeReboot, code)
	assert.Equal(t, "action_42", RecoveryName(42))
}

func TestBadPages(t *testing.T) {
	assert.Equal(t, OK, BadPages(100, 0), "no threshold known")
	assert.Equal(t, OK, BadPages(49, 100))
	assert.Equal(t, PredictedFailure, BadPages(50, 100))
	assert.Equal(t, Failed, BadPages(100, 100))
}

func TestGPU(t *testing.T) {
	var g GPU
	s, why := g.State(0)
	assert.Equal(t, OK, s)
	assert.Empty(t, why)

	g.Event(Degraded, "xid_63", 10, 100)
	g.Event(Failed, "xid_79", 20, 100)
	s, why = g.State(50)
	assert.Equal(t, Failed, s)
	assert.Equal(t, "xid_79", why)
	s, _ = g.State(115)
	assert.Equal(t, Failed, s, "held until 120")
	s, why = g.State(120)
	assert.Equal(t, OK, s, "both held events over: 110 and 120")
	assert.Empty(t, why)

	g.Set(LevelBadPages, PredictedFailure, "bad_pages")
	g.Event(Degraded, "ecc_deferred", 200, 100)
	s, why = g.State(250)
	assert.Equal(t, Degraded, s)
	assert.Equal(t, "ecc_deferred", why)
	g.Set(LevelRecovery, Failed, "recovery_gpu_reset")
	s, why = g.State(250)
	assert.Equal(t, Failed, s)
	assert.Equal(t, "recovery_gpu_reset", why)
	g.Set(LevelRecovery, OK, "recovery_gpu_reset")
	s, why = g.State(400)
	assert.Equal(t, PredictedFailure, s, "the event is over; the level holds")
	assert.Equal(t, "bad_pages", why)

	g.Event(OK, "xid_13", 500, 100)
	s, _ = g.State(500)
	assert.Equal(t, PredictedFailure, s, "an ok event is no evidence")
}

func TestNames(t *testing.T) {
	for _, s := range States() {
		assert.NotEmpty(t, s.String())
	}
	assert.Equal(t, "predicted_failure", PredictedFailure.String())
	a, err := ParseAction("reset_gpu")
	require.NoError(t, err)
	assert.Equal(t, ResetGPU, a)
	_, err = ParseAction("reboot")
	assert.ErrorContains(t, err, `unknown action "reboot"`)
	assert.Equal(t, "action_9", Action(9).String())
	require.Len(t, XIDTable(), len(xids))
	assert.Equal(t, [3]string{"8", "restart_app", "ok"}, XIDTable()[0])
}
