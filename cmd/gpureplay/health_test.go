package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// decisionLine is what the agreement test reads of gpureplay -remediate's
// lines.
type decisionLine struct {
	Time   float64 `json:"time"`
	UUID   string  `json:"uuid"`
	Fault  string  `json:"fault"`
	Action string  `json:"action"`
	Reason string  `json:"reason"`
	Health string  `json:"health"`
}

func readDecisions(t *testing.T, out string) []decisionLine {
	t.Helper()
	var ds []decisionLine
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var d decisionLine
		require.NoError(t, json.Unmarshal([]byte(line), &d), line)
		ds = append(ds, d)
	}
	return ds
}

// touchesNode is whether an action takes the GPU out of service.
func touchesNode(action string) bool {
	return action == "reset_gpu" || action == "drain" || action == "replace"
}

// checkAgreement holds the remediation's decisions and the analyzer's
// hw.status to one another, decision by decision: a decision that takes
// the GPU out of service finds it failed; a GPU found failed has had such
// a decision (this one or an earlier one within the hold); and a GPU that
// is not failed was never given one.
func checkAgreement(t *testing.T, ds []decisionLine) {
	t.Helper()
	outOfService := map[string]bool{}
	for _, d := range ds {
		require.NotEmpty(t, d.Health, "every decision has the GPU's hw.status: %+v", d)
		if touchesNode(d.Action) {
			outOfService[d.UUID] = true
			require.Equal(t, "failed", d.Health, "the remediation takes the GPU out of service: %+v", d)
		}
		if d.Health == "failed" {
			require.True(t, outOfService[d.UUID], "hw.status says failed, and no decision took the GPU out of service: %+v", d)
		}
	}
}

// TestHealthAgreesWithRemediation: on every real kernel log and every
// shared trace, the remediation's decisions and hw.status agree.
func TestHealthAgreesWithRemediation(t *testing.T) {
	settings := emptySettings(t)
	decided := 0
	for _, l := range kmsgLogs {
		t.Run(l.name, func(t *testing.T) {
			args := append([]string{"-remediate", settings}, l.args...)
			out, stderr, code := runReplay(t, append(args, kmsgPath(l.name))...)
			require.Equal(t, 0, code, stderr)
			ds := readDecisions(t, out)
			decided += len(ds)
			checkAgreement(t, ds)
		})
	}
	traces, err := filepath.Glob(filepath.Join("testdata", "traces", "*.csv"))
	require.NoError(t, err)
	for _, p := range traces {
		if strings.HasSuffix(p, ".labels.csv") {
			continue
		}
		t.Run(filepath.Base(p), func(t *testing.T) {
			out, stderr, code := runReplay(t, "-remediate", settings, p)
			require.Equal(t, 0, code, stderr)
			ds := readDecisions(t, out)
			decided += len(ds)
			checkAgreement(t, ds)
		})
	}
	t.Logf("%d decisions checked", decided)
	require.Positive(t, decided)
}

// TestXID63Degraded: the real kernel log line of an A100's row remapping
// (gpud-xid48-63-94.log's XID 63, alone: the double-bit error before it in
// that log drains the node on its own) leaves the GPU degraded, and the
// remediation touches no node, as NVIDIA's catalogue says: reset the GPU
// at the next opportunity.
func TestXID63Degraded(t *testing.T) {
	log, err := os.ReadFile(kmsgPath("gpud-xid48-63-94"))
	require.NoError(t, err)
	var line string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "NVRM: Xid") && strings.Contains(l, "): 63,") {
			line = l
		}
	}
	require.NotEmpty(t, line, "the log's XID 63 line")
	p := filepath.Join(t.TempDir(), "xid63.log")
	require.NoError(t, os.WriteFile(p, []byte(line+"\n"), 0o600))
	out, stderr, code := runReplay(t, "-remediate", emptySettings(t), p)
	require.Equal(t, 0, code, stderr)
	ds := readDecisions(t, out)
	require.Len(t, ds, 1)
	require.Equal(t, decisionLine{Time: ds[0].Time, UUID: "PCI:0000:19:00", Fault: "xid_63", Action: "none", Reason: "non_critical", Health: "degraded"}, ds[0])
}
