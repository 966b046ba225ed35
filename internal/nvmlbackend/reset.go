package nvmlbackend

import (
	"errors"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPUCheck is what a GPU reset needs to know of one GPU, found by UUID.
type GPUCheck struct {
	UUID string
	// Problem is why NVML could not answer for this GPU (not found, lost,
	// an error of a query), or "" when every query below succeeded.
	Problem string
	// NotFound: no GPU of this node has the UUID (a subset of Problem).
	NotFound bool
	// Compute and Graphics are the PIDs of the processes running on it.
	Compute, Graphics []uint32
	// MIG: MIG mode is enabled (currently, not pending); GPUInstances is
	// how many GPU instances exist on it then.
	MIG          bool
	GPUInstances int
}

// CheckGPUs opens NVML, answers for each UUID, and shuts NVML down again
// before it returns: an NVML client attached to a GPU makes nvidia-smi
// refuse to reset it ("In use by another client"), so the reset actor
// holds no NVML session between its checks. lib nil means the real
// library. The error is NVML's own failure (library missing, init
// failed); a GPU it cannot answer for is a GPUCheck with a Problem.
func CheckGPUs(lib nvml.Interface, uuids []string) (checks []GPUCheck, err error) {
	if lib == nil {
		lib = nvml.New()
	}
	if ret := lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return nil, errors.New("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and its libraries mounted?")
		}
		return nil, fmt.Errorf("nvml init: %v", nvml.ErrorString(ret))
	}
	defer func() {
		if ret := lib.Shutdown(); ret != nvml.SUCCESS && err == nil {
			err = fmt.Errorf("nvml shutdown: %v", nvml.ErrorString(ret))
		}
	}()
	for _, uuid := range uuids {
		checks = append(checks, checkGPU(lib, uuid))
	}
	return checks, nil
}

func checkGPU(lib nvml.Interface, uuid string) GPUCheck {
	c := GPUCheck{UUID: uuid}
	d, ret := lib.DeviceGetHandleByUUID(uuid)
	if ret != nvml.SUCCESS {
		// NVML answers NOT_FOUND for a well-formed UUID that no GPU has
		// and INVALID_ARGUMENT for a malformed one: both mean not here.
		c.NotFound = ret == nvml.ERROR_NOT_FOUND || ret == nvml.ERROR_INVALID_ARGUMENT
		c.Problem = "NVML: " + nvml.ErrorString(ret)
		return c
	}
	fail := func(what string, ret nvml.Return) {
		if c.Problem == "" {
			c.Problem = fmt.Sprintf("NVML %s: %s", what, nvml.ErrorString(ret))
		}
	}
	procs, ret := d.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		fail("compute processes", ret)
	}
	for _, p := range procs {
		c.Compute = append(c.Compute, p.Pid)
	}
	procs, ret = d.GetGraphicsRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		// Data-center GPUs without a display engine answer NOT_SUPPORTED:
		// no graphics processes can run there.
		fail("graphics processes", ret)
	}
	for _, p := range procs {
		c.Graphics = append(c.Graphics, p.Pid)
	}
	current, _, ret := d.GetMigMode()
	switch {
	case ret == nvml.ERROR_NOT_SUPPORTED:
		// A GPU without MIG (pre-Ampere, or not an A100/H100 class part).
	case ret != nvml.SUCCESS:
		fail("MIG mode", ret)
	case current == nvml.DEVICE_MIG_ENABLE:
		c.MIG = true
		n, ret := countGPUInstances(d)
		if ret != nvml.SUCCESS {
			fail("GPU instances", ret)
		}
		c.GPUInstances = n
	}
	return c
}

// countGPUInstances counts the GPU instances of a GPU in MIG mode, over
// every GPU instance profile the GPU supports.
func countGPUInstances(d nvml.Device) (int, nvml.Return) {
	n := 0
	for p := 0; p < nvml.GPU_INSTANCE_PROFILE_COUNT; p++ {
		info, ret := d.GetGpuInstanceProfileInfo(p)
		if ret != nvml.SUCCESS {
			continue // a profile this GPU does not offer
		}
		gis, ret := d.GetGpuInstances(&info)
		if ret != nvml.SUCCESS {
			return n, ret
		}
		n += len(gis)
	}
	return n, nvml.SUCCESS
}
