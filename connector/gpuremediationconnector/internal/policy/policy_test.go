package policy

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The default map follows NVIDIA's catalogue as the issue lists it.
func TestDefaultMap(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs()}
	for _, c := range []int{13, 31, 43, 94} {
		require.Equal(t, RestartApp, p.XIDs[c], "XID %d", c)
	}
	for _, c := range []int{48, 63, 64, 74, 79, 95, 119, 120, 140} {
		require.Equal(t, Drain, p.XIDs[c], "XID %d", c)
	}
	for _, c := range []int{46, 62, 109, 110, 136, 143} {
		require.Equal(t, ResetGPU, p.XIDs[c], "XID %d", c)
	}
	for _, c := range []int{1, 14, 37, 92, 93, 121} { // unused, IGNORE
		require.Equal(t, None, p.XIDs[c], "XID %d", c)
	}
	require.Len(t, Table(), len(defaultXIDs))
}

func TestEscalationByRepetition(t *testing.T) {
	p := &Policy{XIDs: DefaultXIDs(), Count: 3, Window: 10 * time.Minute, EscalateTo: ResetGPU}
	t0 := time.Unix(0, 0)
	xid13 := Fault{Kind: XID, Code: 13}
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", xid13, t0))
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", xid13, t0.Add(time.Minute)))
	// Another GPU's and another XID's count are their own.
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-b", xid13, t0.Add(2*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", Fault{Kind: XID, Code: 31}, t0.Add(2*time.Minute)))
	require.Equal(t, Decision{Remediation: ResetGPU, Escalated: true, Repeats: 3}, p.Decide("gpu-a", xid13, t0.Add(3*time.Minute)))
	// The count starts afresh, and old repeats fall out of the window.
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", xid13, t0.Add(4*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", xid13, t0.Add(20*time.Minute)))
	require.Equal(t, Decision{Remediation: RestartApp}, p.Decide("gpu-a", xid13, t0.Add(25*time.Minute)))
	// A drain-level XID never needs repetition; a non-critical one never escalates.
	require.Equal(t, Decision{Remediation: Drain}, p.Decide("gpu-a", Fault{Kind: XID, Code: 79}, t0))
	for i := range 5 {
		require.Equal(t, Decision{Remediation: None}, p.Decide("gpu-a", Fault{Kind: XID, Code: 92}, t0.Add(time.Duration(i)*time.Second)))
	}
}

func TestParse(t *testing.T) {
	for _, r := range []Remediation{None, RestartApp, ResetGPU, Drain} {
		got, err := Parse(r.String())
		require.NoError(t, err)
		require.Equal(t, r, got)
	}
	_, err := Parse("reboot")
	require.EqualError(t, err, `unknown action "reboot"; want none, restart_app, reset_gpu or drain`)
}
