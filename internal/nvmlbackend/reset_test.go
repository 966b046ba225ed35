package nvmlbackend

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

// TestCheckGPUs: what the reset actor learns of each GPU it is asked to
// reset, and that it leaves NVML shut down (an attached NVML client makes
// nvidia-smi refuse the reset).
func TestCheckGPUs(t *testing.T) {
	srv := nvmlmock.New()
	inits := 0
	srv.InitFunc = func() nvml.Return { inits++; return nvml.SUCCESS }
	srv.ShutdownFunc = func() nvml.Return { inits--; return nvml.SUCCESS }
	dev := func(i int) *dgxa100.Device { return srv.Devices[i].(*dgxa100.Device) }

	dev(1).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4242}, {Pid: 4243}}, nvml.SUCCESS
	}
	dev(2).GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 77}}, nvml.SUCCESS
	}
	// GPU 3 in MIG mode with one GPU instance; GPU 4 in MIG mode without.
	for _, i := range []int{3, 4} {
		_, ret := dev(i).SetMigMode(nvml.DEVICE_MIG_ENABLE)
		require.Equal(t, nvml.SUCCESS, ret)
	}
	info, ret := dev(3).GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_1_SLICE)
	require.Equal(t, nvml.SUCCESS, ret)
	_, ret = dev(3).CreateGpuInstance(&info)
	require.Equal(t, nvml.SUCCESS, ret)
	dev(5).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_GPU_IS_LOST }

	missing := "GPU-00000000-0000-4000-8000-000000000000"
	uuids := []string{dev(0).UUID, dev(1).UUID, dev(2).UUID, dev(3).UUID, dev(4).UUID, dev(5).UUID, missing}
	checks, err := CheckGPUs(srv, uuids)
	require.NoError(t, err)
	require.Equal(t, 0, inits, "NVML is shut down again")
	require.Equal(t, []GPUCheck{
		{UUID: dev(0).UUID},
		{UUID: dev(1).UUID, Compute: []uint32{4242, 4243}},
		{UUID: dev(2).UUID, Graphics: []uint32{77}},
		{UUID: dev(3).UUID, MIG: true, GPUInstances: 1},
		{UUID: dev(4).UUID, MIG: true},
		{UUID: dev(5).UUID, Problem: "NVML compute processes: " + nvml.ErrorString(nvml.ERROR_GPU_IS_LOST)},
		// The mock answers INVALID_ARGUMENT for a UUID no GPU has.
		{UUID: missing, NotFound: true, Problem: "NVML: " + nvml.ErrorString(nvml.ERROR_INVALID_ARGUMENT)},
	}, checks)
}

func TestCheckGPUsWithoutNVML(t *testing.T) {
	srv := nvmlmock.New()
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	_, err := CheckGPUs(srv, []string{"GPU-1"})
	require.EqualError(t, err, "NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and its libraries mounted?")
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	_, err = CheckGPUs(srv, []string{"GPU-1"})
	require.ErrorContains(t, err, "nvml init: ")
}
