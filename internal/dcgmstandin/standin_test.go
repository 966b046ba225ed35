package dcgmstandin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
)

// TestExporterCalls drives, through go-dcgm, the stand-in's entry points
// that dcgm-exporter calls at start-up and per scrape (the benchmark runs
// the real dcgm-exporter against them): field metadata, device attributes
// with topology, CPU affinity and PCIe bandwidth, and per-entity reads.
func TestExporterCalls(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	require.NoError(t, dcgmstandin.State{GPUs: 4, NoProf: []int{3}, Connected: true,
		Recovery: []dcgmstandin.Recovery{{GPU: 2, Action: 1}}}.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", dir))
	cleanup, err := dcgm.Init(dcgm.Standalone, "localhost:5555", "0")
	require.NoError(t, err)
	t.Cleanup(cleanup)
	require.GreaterOrEqual(t, dcgm.FieldsInit(), 0)

	meta, err := dcgm.FieldGetByID(155)
	require.NoError(t, err)
	require.Equal(t, byte('d'), meta.FieldType)
	require.Equal(t, dcgm.FE_GPU, meta.EntityLevel)
	meta, err = dcgm.FieldGetByID(1)
	require.NoError(t, err)
	require.Equal(t, dcgm.FE_NONE, meta.EntityLevel, "the driver version belongs to no entity")
	meta, err = dcgm.FieldGetByID(dcgm.DCGM_FI_DEV_GPU_RECOVERY_ACTION)
	require.NoError(t, err)
	require.Equal(t, byte('i'), meta.FieldType, "the recovery action is an int64 field")
	_, err = dcgm.FieldGetByID(5)
	require.Error(t, err, "a field the stand-in does not serve is unsupported")

	n, err := dcgm.GetAllDeviceCount()
	require.NoError(t, err)
	require.Equal(t, uint(4), n)
	dev, err := dcgm.GetDeviceInfo(2)
	require.NoError(t, err)
	require.Equal(t, "GPU-5ca1ab1e-0000-4000-8000-000000000002", dev.UUID)
	require.Equal(t, "NVIDIA H100 80GB HBM3", dev.Identifiers.Model)
	require.Equal(t, "00000000:38:00.0", dev.PCI.BusID)
	require.Equal(t, "Yes", dev.DCGMSupported)
	require.Equal(t, int64(1969*16), dev.PCI.Bandwidth, "PCIe gen 4 x16, in MB/s")
	require.Empty(t, dev.Topology, "the stand-in's GPUs have no peers")
	dev, err = dcgm.GetDeviceInfo(3)
	require.NoError(t, err)
	require.Equal(t, "Tesla T4", dev.Identifiers.Model)

	vals, err := dcgm.EntityGetLatestValues(dcgm.FE_GPU, 1, []dcgm.Short{150, 155, 54, 1002})
	require.NoError(t, err)
	require.Len(t, vals, 4)
	require.Equal(t, int64(51), vals[0].Int64())
	require.InDelta(t, 301.5, vals[1].Float64(), 1e-9)
	require.Equal(t, "GPU-5ca1ab1e-0000-4000-8000-000000000001", vals[2].String())
	require.InDelta(t, 0.52, vals[3].Float64(), 1e-9)
	vals, err = dcgm.EntityGetLatestValues(dcgm.FE_GPU, 3, []dcgm.Short{1002})
	require.NoError(t, err)
	require.NotZero(t, vals[0].Status, "no profiling on the T4")
	// The recovery action, under go-dcgm's name for field 1523: what the
	// state file says (GPU reset on GPU 2), none elsewhere.
	for gpu, want := range []int64{0, 0, 1, 0} {
		vals, err = dcgm.EntityGetLatestValues(dcgm.FE_GPU, uint(gpu), []dcgm.Short{dcgm.DCGM_FI_DEV_GPU_RECOVERY_ACTION})
		require.NoError(t, err)
		require.Zero(t, vals[0].Status)
		require.Equal(t, want, vals[0].Int64(), "GPU %d", gpu)
	}
}

// TestDiag drives the stand-in's dcgmRunDiagnostic through go-dcgm: the
// GPUs of the group are diagnosed at the level asked for, a GPU marked
// diagfail fails with an error naming it, and the others pass.
func TestDiag(t *testing.T) {
	dir := t.TempDir()
	state, diagLog := filepath.Join(dir, "state"), filepath.Join(dir, "diag.log")
	require.NoError(t, dcgmstandin.State{GPUs: 4, Connected: true, DiagFail: []int{2}}.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	t.Setenv(dcgmstandin.DiagLogEnv, diagLog)
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", dir))
	cleanup, err := dcgm.Init(dcgm.Standalone, "localhost:5555", "0")
	require.NoError(t, err)
	t.Cleanup(cleanup)

	group, err := dcgm.CreateGroup("diag")
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, dcgm.DestroyGroup(group)) })
	require.NoError(t, dcgm.AddToGroup(group, 1))
	require.NoError(t, dcgm.AddToGroup(group, 2))
	res, err := dcgm.RunDiag(dcgm.DiagQuick, group)
	require.NoError(t, err)
	require.Len(t, res.Software, 2)
	byGPU := map[uint]dcgm.DiagResult{}
	for _, r := range res.Software {
		byGPU[r.EntityID] = r
	}
	require.Equal(t, "pass", byGPU[1].Status)
	require.Equal(t, "software", byGPU[1].TestName)
	require.Empty(t, byGPU[1].ErrorMessage)
	require.Equal(t, "fail", byGPU[2].Status)
	require.Equal(t, "GPU 2 had memory errors and row remappings are pending", byGPU[2].ErrorMessage)
	require.Equal(t, uint(dcgm.DCGM_FR_PENDING_ROW_REMAP), byGPU[2].ErrorCode)
	require.Equal(t, "1652000000002", byGPU[2].SerialNumber)

	// Every GPU passes once the state says so; the log has both runs.
	require.NoError(t, dcgmstandin.State{GPUs: 4, Connected: true}.Write(state))
	res, err = dcgm.RunDiag(dcgm.DiagMedium, group)
	require.NoError(t, err)
	for _, r := range res.Software {
		require.Equal(t, "pass", r.Status, "GPU %d", r.EntityID)
	}
	raw, err := os.ReadFile(diagLog)
	require.NoError(t, err)
	require.Equal(t, "diag 10 1 2\ndiag 20 1 2\n", string(raw))

	// A lost host engine fails the call, as DCGM does.
	require.NoError(t, dcgmstandin.State{GPUs: 4}.Write(state))
	_, err = dcgm.RunDiag(dcgm.DiagQuick, group)
	require.Error(t, err)
	require.NoError(t, dcgmstandin.State{GPUs: 4, Connected: true}.Write(state))
}
