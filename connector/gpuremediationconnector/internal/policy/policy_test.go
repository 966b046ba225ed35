package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
)

// The default map follows NVIDIA's catalogue as the issue lists it.
func TestDefaultMap(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs()}
	for _, c := range []int{13, 31, 43, 94} {
		require.Equal(t, RestartApp, p.XIDs[c], "XID %d", c)
	}
	for _, c := range []int{48, 64, 74, 79, 95, 119, 120, 140} {
		require.Equal(t, Drain, p.XIDs[c], "XID %d", c)
	}
	for _, c := range []int{46, 62, 109, 110, 136, 143} {
		require.Equal(t, ResetGPU, p.XIDs[c], "XID %d", c)
	}
	// Unused, IGNORE; 63 (a row remapping recorded: reset at the next
	// opportunity) and 92 (many corrected errors) change the GPU's health
	// but touch no node.
	for _, c := range []int{1, 14, 37, 63, 92, 93, 121} {
		require.Equal(t, None, p.XIDs[c], "XID %d", c)
	}
	require.Len(t, Table(), len(DefaultXIDs()))
}

// decide files one piece of evidence and decides its incident if it opens
// one; a piece that joins an open incident decides nothing (zero Decision).
func decide(p *Policy, gpu string, f Fault, at time.Time) Decision {
	inc, opened := p.Observe(gpu, f, at)
	if !opened {
		return Decision{Remediation: -1}
	}
	return p.Decide(inc)
}

func TestEscalationByRepetition(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs(), IncidentWindow: 10 * time.Second, Count: 3, Window: 10 * time.Minute, EscalateTo: ResetGPU}
	t0 := time.Unix(0, 0)
	xid13 := Fault{Kind: XID, Code: 13}
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", xid13, t0))
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", xid13, t0.Add(time.Minute)))
	// Another GPU's and another XID's count are their own.
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-b", xid13, t0.Add(2*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", Fault{Kind: XID, Code: 31}, t0.Add(2*time.Minute)))
	require.Equal(t, Decision{Remediation: ResetGPU, Escalated: true, Repeats: 3}, decide(p, "gpu-a", xid13, t0.Add(3*time.Minute)))
	// The count starts afresh, and old repeats fall out of the window.
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", xid13, t0.Add(4*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", xid13, t0.Add(20*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, decide(p, "gpu-a", xid13, t0.Add(25*time.Minute)))
	// A drain-level XID never needs repetition; a non-critical one never escalates.
	require.Equal(t, Decision{Remediation: Drain}, decide(p, "gpu-a", Fault{Kind: XID, Code: 79}, t0))
	for i := range 5 {
		d := decide(p, "gpu-a", Fault{Kind: XID, Code: 92}, t0.Add(time.Duration(i)*time.Minute))
		require.Equal(t, Decision{Remediation: None}, d)
	}
}

// One application fault logged as a burst of lines is one incident: it
// never escalates however many lines there are. Escalation counts
// incidents.
func TestBurstIsOneIncident(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs(), IncidentWindow: 10 * time.Second, Count: 3, Window: 10 * time.Minute, EscalateTo: ResetGPU}
	t0 := time.Unix(1700000000, 0)
	xid13 := Fault{Kind: XID, Code: 13}
	first, opened := p.Observe("gpu-a", xid13, t0)
	require.True(t, opened)
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide(first))
	for i := 1; i < 16; i++ { // sixteen lines within 3 ms
		inc, opened := p.Observe("gpu-a", xid13, t0.Add(time.Duration(i)*200*time.Microsecond))
		require.False(t, opened, "line %d", i)
		require.Same(t, first, inc)
	}
	require.Equal(t, 16, first.Evidence)
	require.Equal(t, IncidentID("gpu-a", xid13, t0), first.ID)
	// XID 43 right after is its own fault and its own incident.
	inc43, opened := p.Observe("gpu-a", Fault{Kind: XID, Code: 43}, t0.Add(4*time.Millisecond))
	require.True(t, opened)
	require.NotEqual(t, first.ID, inc43.ID)
	// The analyzer's verdict joins the latest open incident.
	require.Same(t, inc43, p.Latest("gpu-a", t0.Add(5*time.Second)))
	require.Nil(t, p.Latest("gpu-a", t0.Add(11*time.Second)))
	// Evidence past the window opens a new incident: a second crash.
	_, opened = p.Observe("gpu-a", xid13, t0.Add(10*time.Second))
	require.True(t, opened)
	p.Prune(t0.Add(time.Hour))
	require.Zero(t, p.Remembered())
}

// Ids are the same for the same evidence, and differ otherwise.
func TestIncidentID(t *testing.T) {
	t0 := time.Unix(1700000000, 5)
	id := IncidentID("GPU-1", Fault{Kind: XID, Code: 79}, t0)
	require.Regexp(t, `^xid_79-[0-9a-f]{8}$`, id)
	require.Equal(t, id, IncidentID("GPU-1", Fault{Kind: XID, Code: 79}, t0))
	require.NotEqual(t, id, IncidentID("GPU-2", Fault{Kind: XID, Code: 79}, t0))
	require.NotEqual(t, id, IncidentID("GPU-1", Fault{Kind: XID, Code: 79}, t0.Add(time.Nanosecond)))
}

func TestParse(t *testing.T) {
	for _, r := range []Remediation{None, RestartApp, ResetGPU, Drain} {
		got, err := Parse(r.String())
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	_, err := Parse("reboot")
	require.EqualError(t, err, `unknown action "reboot"; want none, restart_app, reset_gpu, drain or replace`)
}

// The driver's recovery action decides; unknown actions drain.
func TestRecoveryActions(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs(), Actions: gpuhealth.RecoveryActions(), IncidentWindow: 30 * time.Second}
	t0 := time.Unix(0, 0)
	for code, want := range map[int]Remediation{gpuhealth.RecoveryGPUReset: ResetGPU, gpuhealth.RecoveryDrainAndReset: ResetGPU, gpuhealth.RecoveryNodeReboot: Drain, gpuhealth.RecoveryDrainP2P: Drain, gpuhealth.RecoveryIMEX: Drain, 9: Drain} {
		require.Equal(t, Decision{Remediation: want}, decide(p, "gpu-a", Fault{Kind: RecoveryAction, Code: code}, t0), "action %d", code)
	}
	require.Equal(t, "recovery_node_reboot", Fault{Kind: RecoveryAction, Code: gpuhealth.RecoveryNodeReboot}.String())
	require.Equal(t, "recovery_action_9", Fault{Kind: RecoveryAction, Code: 9}.String())
	c, ok := gpuhealth.ParseRecovery("drain_and_reset")
	require.True(t, ok)
	require.Equal(t, gpuhealth.RecoveryDrainAndReset, c)
	// A bare XID 154 (no reading of the action) is at least a reset.
	require.Equal(t, ResetGPU, p.XIDs[154])
}

// A failed DCGM health subsystem takes its remediation from the map; one
// absent from it (a subsystem a newer receiver adds) is a drain.
func TestDCGMHealthFaults(t *testing.T) {
	p := &Policy{DCGMHealth: map[gpu.HealthSystem]Remediation{gpu.HealthNVLink: ResetGPU}, IncidentWindow: time.Second}
	t0 := time.Unix(0, 0)
	require.Equal(t, Decision{Remediation: ResetGPU}, decide(p, "gpu-a", Fault{Kind: DCGMHealth, Code: int(gpu.HealthNVLink)}, t0))
	require.Equal(t, Decision{Remediation: Drain}, decide(p, "gpu-a", Fault{Kind: DCGMHealth, Code: int(gpu.HealthMemory)}, t0))
	require.Equal(t, "dcgm_health_memory", Fault{Kind: DCGMHealth, Code: int(gpu.HealthMemory)}.String())
	for sys, r := range DefaultDCGMHealth() {
		require.Equal(t, Drain, r, "%s", sys)
	}
}
