// Package nvmlmock is go-nvml's DGX A100 mock with every call the NVML
// backend makes answered, so that code above the backend runs against NVML
// on machines without GPUs. It is for tests only.
package nvmlmock

import (
	"encoding/binary"
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// XIDDevice is the device on which New queues one XID 79 event, reported
// by the first collection.
const XIDDevice = 2

// New returns eight A100s with fixed readings: device i is 80+i % busy,
// uses 10 of its 40 GiB, draws 250.5 W of its enforced 400 W power limit
// at 61 C, runs its SMs at 1410 MHz with the HW thermal slowdown reason
// set, and has seen 5 corrected and 1 uncorrected ECC errors, and needs no
// recovery action. Device 0 supports GPM, as a Hopper GPU would, so it
// reports SM activity from its second collection on; device 3 has a
// failed row remapping. No GPU runs a process (what the GPU reset actor
// checks) and none has a per-process utilization sample (NOT_FOUND); a
// test that needs one sets the device's GetComputeRunningProcessesFunc,
// GetMPSComputeRunningProcessesFunc or GetProcessUtilizationFunc.
func New() *dgxa100.Server {
	s := dgxa100.New()
	var pending []nvml.EventData
	events := &mock.EventSet{
		WaitFunc: func(uint32) (nvml.EventData, nvml.Return) {
			if len(pending) == 0 {
				return nvml.EventData{}, nvml.ERROR_TIMEOUT
			}
			ev := pending[0]
			pending = pending[1:]
			return ev, nvml.SUCCESS
		},
	}
	for i, d := range s.Devices {
		md := d.(*dgxa100.Device)
		md.MemoryInfo = nvml.Memory{Total: 40 << 30, Used: 10 << 30, Free: 30 << 30}
		md.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(80 + i), Memory: 30}, nvml.SUCCESS
		}
		md.GetEncoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 0, 0, nvml.SUCCESS }
		md.GetDecoderUtilizationFunc = func() (uint32, uint32, nvml.Return) { return 0, 0, nvml.ERROR_NOT_SUPPORTED }
		md.GetPowerUsageFunc = func() (uint32, nvml.Return) { return 250500, nvml.SUCCESS }
		md.GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 400000, nvml.SUCCESS }
		md.GetTotalEnergyConsumptionFunc = func() (uint64, nvml.Return) { return 123456, nvml.SUCCESS }
		md.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) { return 61, nvml.SUCCESS }
		// An A100 SXM4's, as nvidia-smi -q shows them.
		md.GetSerialFunc = func() (string, nvml.Return) { return fmt.Sprintf("1564720%06d", 4100+i), nvml.SUCCESS }
		md.GetVbiosVersionFunc = func() (string, nvml.Return) { return "92.00.45.00.03", nvml.SUCCESS }
		md.GetTemperatureThresholdFunc = func(t nvml.TemperatureThresholds) (uint32, nvml.Return) {
			switch t {
			case nvml.TEMPERATURE_THRESHOLD_SHUTDOWN:
				return 92, nvml.SUCCESS
			case nvml.TEMPERATURE_THRESHOLD_SLOWDOWN:
				return 89, nvml.SUCCESS
			case nvml.TEMPERATURE_THRESHOLD_MEM_MAX:
				return 95, nvml.SUCCESS
			}
			return 0, nvml.ERROR_NOT_SUPPORTED
		}
		md.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_SM {
				return 1410, nvml.SUCCESS
			}
			return 1593, nvml.SUCCESS
		}
		md.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) { return 0x40, nvml.SUCCESS }
		md.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
			if t == nvml.MEMORY_ERROR_TYPE_CORRECTED {
				return 5, nvml.SUCCESS
			}
			return 1, nvml.SUCCESS
		}
		md.GetPcieReplayCounterFunc = func() (int, nvml.Return) { return 0, nvml.SUCCESS }
		md.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 2, 1, false, i == 3, nvml.SUCCESS }
		md.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_DISABLED, nvml.SUCCESS }
		md.ValidateInforomFunc = func() nvml.Return { return nvml.SUCCESS }
		md.GetPcieThroughputFunc = func(nvml.PcieUtilCounter) (uint32, nvml.Return) { return 1000, nvml.SUCCESS }
		md.RegisterEventsFunc = func(uint64, nvml.EventSet) nvml.Return { return nvml.SUCCESS }
		md.GetFieldValuesFunc = RecoveryAction(0, nvml.SUCCESS)
		md.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		md.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.ERROR_NOT_SUPPORTED }
		md.GetMPSComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
		md.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return nil, nvml.ERROR_NOT_FOUND
		}
	}
	s.EventSetCreateFunc = func() (nvml.EventSet, nvml.Return) { return events, nvml.SUCCESS }
	s.EventSetFreeFunc = func(nvml.EventSet) nvml.Return { return nvml.SUCCESS }
	s.GpmQueryDeviceSupportFunc = func(d nvml.Device) (nvml.GpmSupport, nvml.Return) {
		if d == s.Devices[0] {
			return nvml.GpmSupport{IsSupportedDevice: 1}, nvml.SUCCESS
		}
		return nvml.GpmSupport{}, nvml.SUCCESS
	}
	s.GpmSampleAllocFunc = func() (nvml.GpmSample, nvml.Return) { return &mock.GpmSample{}, nvml.SUCCESS }
	s.GpmSampleFreeFunc = func(nvml.GpmSample) nvml.Return { return nvml.SUCCESS }
	s.GpmSampleGetFunc = func(nvml.Device, nvml.GpmSample) nvml.Return { return nvml.SUCCESS }
	s.GpmMetricsGetFunc = func(req *nvml.GpmMetricsGetType) nvml.Return {
		for i := uint32(0); i < req.NumMetrics; i++ {
			m := &req.Metrics[i]
			m.NvmlReturn = uint32(nvml.SUCCESS)
			m.Value = float64(10 * m.MetricId) // percent
		}
		return nvml.SUCCESS
	}
	pending = append(pending, nvml.EventData{Device: s.Devices[XIDDevice], EventType: nvml.EventTypeXidCriticalError, EventData: 79})
	return s
}

// RecoveryAction answers nvmlDeviceGetFieldValues for a GPU whose recovery
// action (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION) is action, an
// nvmlDeviceGpuRecoveryAction_t, as an unsigned int. With ret other than
// SUCCESS the field fails with ret while the call succeeds, as with a
// driver that predates the field (ERROR_NOT_SUPPORTED). Every other field
// fails with ERROR_NOT_SUPPORTED.
func RecoveryAction(action uint32, ret nvml.Return) func([]nvml.FieldValue) nvml.Return {
	return func(fvs []nvml.FieldValue) nvml.Return {
		for i := range fvs {
			fv := &fvs[i]
			fv.NvmlReturn = uint32(nvml.ERROR_NOT_SUPPORTED)
			if fv.FieldId != nvml.FI_DEV_GET_GPU_RECOVERY_ACTION {
				continue
			}
			fv.NvmlReturn = uint32(ret)
			if ret == nvml.SUCCESS {
				fv.ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_INT)
				fv.Value = [8]byte{}
				binary.NativeEndian.PutUint32(fv.Value[:], action)
			}
		}
		return nvml.SUCCESS
	}
}

// MIG is one mock GPU in MIG mode, whose instances a test creates and
// destroys while the backend runs, as an administrator would with
// nvidia-smi mig. Each instance is a GPU instance with one compute
// instance, listed by the parent's MIG device handles as real NVML lists
// them: GetMaxMigDeviceCount slots, NOT_FOUND where no instance is.
type MIG struct {
	dev       *dgxa100.Device
	instances []*migInstance
	created   int
}

type migInstance struct {
	uuid string
	gi   nvml.GpuInstance
	ci   nvml.ComputeInstance
	h    *mock.Device
}

// EnableMIG turns MIG mode on for s's device i, with no instance yet.
func EnableMIG(s *dgxa100.Server, i int) *MIG {
	d := s.Devices[i].(*dgxa100.Device)
	m := &MIG{dev: d}
	d.MigMode = nvml.DEVICE_MIG_ENABLE
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return 7, nvml.SUCCESS }
	d.GetMigDeviceHandleByIndexFunc = func(n int) (nvml.Device, nvml.Return) {
		if n < 0 || n >= 7 {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		if n >= len(m.instances) {
			return nil, nvml.ERROR_NOT_FOUND
		}
		return m.instances[n].h, nvml.SUCCESS
	}
	d.GetGpuInstanceByIdFunc = func(id int) (nvml.GpuInstance, nvml.Return) {
		for _, in := range m.instances {
			if info, _ := in.gi.GetInfo(); int(info.Id) == id {
				return in.gi, nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	return m
}

// Create makes a GPU instance of GPU instance profile giProfile (e.g.
// nvml.GPU_INSTANCE_PROFILE_1_SLICE) with one compute instance of compute
// instance profile ciProfile, and returns its MIG UUID.
func (m *MIG) Create(giProfile, ciProfile int) string {
	giInfo, ret := m.dev.GetGpuInstanceProfileInfo(giProfile)
	if ret != nvml.SUCCESS {
		panic(fmt.Sprintf("GPU instance profile %d: %v", giProfile, ret))
	}
	gi, _ := m.dev.CreateGpuInstance(&giInfo)
	ciInfo, ret := gi.GetComputeInstanceProfileInfo(ciProfile, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret != nvml.SUCCESS {
		panic(fmt.Sprintf("compute instance profile %d: %v", ciProfile, ret))
	}
	ci, _ := gi.CreateComputeInstance(&ciInfo)
	mgi := gi.(*dgxa100.GpuInstance)
	mgi.GetComputeInstanceByIdFunc = func(id int) (nvml.ComputeInstance, nvml.Return) {
		if info, _ := ci.GetInfo(); int(info.Id) == id {
			return ci, nvml.SUCCESS
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	gInfo, _ := gi.GetInfo()
	cInfo, _ := ci.GetInfo()
	m.created++
	uuid := fmt.Sprintf("MIG-%08x-0000-4000-8000-%012x", m.dev.Index, m.created)
	in := &migInstance{uuid: uuid, gi: gi, ci: ci}
	in.h = &mock.Device{
		GetUUIDFunc:              func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetGpuInstanceIdFunc:     func() (int, nvml.Return) { return int(gInfo.Id), nvml.SUCCESS },
		GetComputeInstanceIdFunc: func() (int, nvml.Return) { return int(cInfo.Id), nvml.SUCCESS },
		GetMemoryInfoFunc: func() (nvml.Memory, nvml.Return) {
			total := giInfo.MemorySizeMB << 20
			return nvml.Memory{Total: total, Used: 1 << 30, Free: total - 1<<30}, nvml.SUCCESS
		},
		GetComputeRunningProcessesFunc:    func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
		GetMPSComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
		GetProcessUtilizationFunc: func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			return nil, nvml.ERROR_NOT_SUPPORTED
		},
	}
	m.instances = append(m.instances, in)
	return uuid
}

// Destroy destroys the instance with MIG UUID uuid; its handle then
// answers as a destroyed instance's does.
func (m *MIG) Destroy(uuid string) {
	for i, in := range m.instances {
		if in.uuid != uuid {
			continue
		}
		_ = in.ci.Destroy()
		_ = in.gi.Destroy()
		in.h.GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_NOT_FOUND }
		in.h.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_NOT_FOUND }
		m.instances = append(m.instances[:i], m.instances[i+1:]...)
		return
	}
}

// Disable turns MIG mode off; the instances must have been destroyed.
func (m *MIG) Disable() { m.dev.MigMode = nvml.DEVICE_MIG_DISABLE }
