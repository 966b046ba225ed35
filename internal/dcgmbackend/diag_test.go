package dcgmbackend

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
)

// TestRunDiag runs the diagnostic through the real go-dcgm code against
// the stand-in DCGM: only the GPUs asked for are diagnosed, at the level
// asked for; a failing GPU and a GPU DCGM does not know fail the verdict.
func TestRunDiag(t *testing.T) {
	dir := t.TempDir()
	state, diagLog := filepath.Join(dir, "state"), filepath.Join(dir, "diag.log")
	require.NoError(t, dcgmstandin.State{GPUs: 4, Connected: true, DiagFail: []int{2}}.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	t.Setenv(dcgmstandin.DiagLogEnv, diagLog)
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", dir))
	uuid := func(i int) string { return "GPU-5ca1ab1e-0000-4000-8000-00000000000" + string(rune('0'+i)) }
	opts := DiagOptions{Address: "localhost:5555", Level: 1}

	res, err := RunDiag(opts, []string{uuid(1), uuid(3)})
	require.NoError(t, err)
	require.Equal(t, DiagResult{Pass: true}, res)

	missing := "GPU-00000000-0000-4000-8000-000000000000"
	res, err = RunDiag(opts, []string{uuid(1), uuid(2), missing})
	require.NoError(t, err)
	require.Equal(t, DiagResult{Failures: []string{
		missing + ": not known to DCGM",
		uuid(2) + ": software: GPU 2 had memory errors and row remappings are pending",
	}}, res)

	opts.Level = 2
	_, err = RunDiag(opts, []string{uuid(0)})
	require.NoError(t, err)
	raw, err := os.ReadFile(diagLog)
	require.NoError(t, err)
	require.Equal(t, "diag 10 1 3\ndiag 10 1 2\ndiag 20 0\n", string(raw), "the GPUs asked for, at DCGM's level for each run level")

	opts.Level = 5
	_, err = RunDiag(opts, []string{uuid(0)})
	require.EqualError(t, err, "diagnostic level 5: want 1 to 4")

	opts.Level = 1
	require.NoError(t, dcgmstandin.State{GPUs: 4}.Write(state))
	_, err = RunDiag(opts, []string{uuid(0)})
	require.ErrorContains(t, err, "nv-hostengine at localhost:5555")
}
