package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRemediateReplay replays the mixed serving trace through the
// gpu_remediation connector's decisions with the default settings: the
// output is the golden file, byte for byte, every time.
func TestRemediateReplay(t *testing.T) {
	cfg := filepath.Join("testdata", "remediate-defaults.yaml")
	out, stderr, code := runReplay(t, "-remediate", cfg, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	want, err := os.ReadFile(filepath.Join("testdata", "remediate-serving-mixed-5s.jsonl"))
	require.NoError(t, err)
	require.Equal(t, string(want), out)
	again, _, _ := runReplay(t, "-remediate", cfg, tracePath("serving-mixed-5s"))
	require.Equal(t, out, again, "deterministic")
}

func TestRemediateBadSettings(t *testing.T) {
	bad := filepath.Join("testdata", "remediate-bad.yaml")
	out, stderr, code := runReplay(t, "-remediate", bad, tracePath("serving-mixed-5s"))
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Equal(t, "gpureplay: "+bad+`: policy::xid::79: unknown action "reboot"; want none, restart_app, reset_gpu, drain or replace`+"\n", stderr)
}
