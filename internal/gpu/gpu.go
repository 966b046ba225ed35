// Package gpu holds the backend-neutral description of a GPU and of one
// sample of its telemetry, which every receiver backend produces.
package gpu

import (
	"fmt"
	"math"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// Vendors, as hw.vendor spells them.
const (
	VendorNVIDIA = "NVIDIA"
	VendorAMD    = "AMD"
)

// Vendor is the hw.vendor of a device that does not name its own: every
// source but AMD SMI reads NVIDIA GPUs.
const Vendor = VendorNVIDIA

// Device identifies a GPU or a MIG instance.
type Device struct {
	// UUID is the device's identity (hw.id), spelled as DCGM and the kubelet
	// spell it: "GPU-..." for a GPU, "MIG-..." for a MIG instance where the
	// driver reports one.
	UUID string
	// Index is the GPU's index on its host (for a MIG instance, its parent's).
	Index int
	// Model is the product name, e.g. "NVIDIA H100 80GB HBM3".
	Model         string
	DriverVersion string
	PCIBusID      string
	Host          string
	// MIG is set for a MIG instance and nil for a whole GPU.
	MIG *MIG
	// Vendor is VendorAMD for an AMD GPU; empty means VendorNVIDIA.
	Vendor string
	// AMD describes an AMD GPU's partitioning; nil for NVIDIA's.
	AMD *AMDDevice
	// Pod is the workload the device is allocated to, if known. On a
	// Slurm node that is a pod (Soperator, SUNK) it is where the job runs.
	Pod Pod
	// Slurm is the Slurm job the device is allocated to, if known: the
	// device's owner where set, before Pod.
	Slurm SlurmJob
	// SharedSlurmJobs are the jobs of a device several Slurm jobs share,
	// as a prolog's mapping file names them; Slurm is then unset.
	SharedSlurmJobs []string
	// SerialNumber is the board's serial number and FirmwareVersion its
	// VBIOS version, empty where the source does not report them. A MIG
	// instance has its GPU's: it is on the same board.
	SerialNumber    string
	FirmwareVersion string
	// TempLimits are the temperature thresholds the source reports for
	// the device, read once per connection: static, like the identity.
	// A MIG instance has none (they are its GPU's), nor has a partition
	// of an AMD GPU where the library answers only for the first.
	TempLimits []TempLimit
}

// TempSensor says where a temperature is taken (hw.sensor_location).
type TempSensor uint8

// The sensors a GPU reports.
const (
	// SensorDie is NVIDIA's GPU temperature (DCGM_FI_DEV_GPU_TEMP).
	SensorDie TempSensor = iota
	// SensorMemory is the HBM's (NVIDIA) or the VRAM's (AMD).
	SensorMemory
	// SensorEdge is AMD's edge sensor.
	SensorEdge
	// SensorHotspot is AMD's junction temperature, the die's hottest
	// point.
	SensorHotspot
)

// TempLimitKind is which threshold a TempLimit is.
type TempLimitKind uint8

// Temperature thresholds.
const (
	// LimitSlowdown is where the GPU slows itself down to cool: NVIDIA's
	// slowdown threshold and memory maximum operating temperature, AMD
	// SMI's critical temperature.
	LimitSlowdown TempLimitKind = iota
	// LimitShutdown is where the GPU shuts down: NVIDIA's shutdown
	// threshold, AMD SMI's emergency temperature.
	LimitShutdown
)

// TempLimit is one temperature threshold of a device.
type TempLimit struct {
	Sensor  TempSensor
	Kind    TempLimitKind
	Celsius float64
}

// MIG describes a MIG instance.
type MIG struct {
	ParentUUID      string
	GPUInstance     int
	ComputeInstance int
	Profile         string
}

// MIGProfile names a MIG profile as nvidia-smi and the kubelet's MIG
// resources do, by its slices and memory: 1g.10gb. The memory is the
// instance's share of the board's, rounded up to eighths (an instance has
// at most 8 memory slices), of the board's memory in whole GB: an A100
// 80GB's 9728 MB instance is 10gb, its 80896 MB one 80gb. Without the
// board's memory, the instance's own, rounded up.
func MIGProfile(slices int, boardBytes, instanceMB uint64) string {
	return fmt.Sprintf("%dg.%dgb", slices, migMemoryGB(boardBytes, instanceMB))
}

func migMemoryGB(boardBytes, instanceMB uint64) uint64 {
	if boardBytes == 0 {
		return (instanceMB + 1023) / 1024
	}
	const gb = 1 << 30
	share := float64(instanceMB<<20) / float64(boardBytes)
	share = math.Ceil(share*8) / 8
	return uint64(math.Round(share * float64((boardBytes+gb-1)/gb)))
}

// Pod is a Kubernetes container that a device is allocated to.
type Pod struct {
	Namespace string
	Name      string
	Container string
	// Job is the k8s.job.name. The kubelet does not know it; the simulated
	// fleet sets it and, on real clusters, the k8s_attributes processor adds
	// it downstream.
	Job string
	// Claim is the name of the DRA ResourceClaim, in Namespace, through
	// which the device is allocated; empty for a device plugin's device.
	// Where several pods share the claim, Name and Container are empty.
	Claim string
}

// VendorName returns the device's hw.vendor.
func (d *Device) VendorName() string {
	if d.Vendor == "" {
		return VendorNVIDIA
	}
	return d.Vendor
}

// IsAMD reports whether the device is an AMD GPU or partition.
func (d *Device) IsAMD() bool { return d.Vendor == VendorAMD }

// Name is the device's human-readable hw.name: "gpu3", or "gpu3/mig1.0".
// An AMD partition is a GPU of its own to the driver and to amd-smi, and
// is named by its own index.
func (d *Device) Name() string {
	if d.MIG != nil {
		return fmt.Sprintf("gpu%d/mig%d.%d", d.Index, d.MIG.GPUInstance, d.MIG.ComputeInstance)
	}
	return fmt.Sprintf("gpu%d", d.Index)
}

// Sample is one reading of one device.
type Sample struct {
	Device *Device
	// Time is when the values were taken.
	Time   time.Time
	Values dcgmfield.Values
	// XIDs lists the XID codes that occurred since the device's previous
	// sample, one entry per event.
	XIDs []uint32
	// Epoch changes whenever the backend lost its source and reconnected,
	// or the driver was reloaded: counters from before are not comparable.
	// The backend that produced the sample owns it; nothing downstream
	// changes it.
	Epoch uint64
	// AMD holds the figures only AMD SMI reads; nil for other sources. The
	// figures both vendors have (activity, memory, power, energy,
	// temperature, PCIe, ECC totals) are in Values, in DCGM's units, so
	// that traces, replay and the analyzer read one set of fields.
	AMD *AMDValues
	// Health is what the source's health check says of the device (DCGM's
	// health watches, NVML's equivalents); zero where it checks none.
	Health Health
	// Processes is what each process did on the device over the interval
	// since the device's previous sample, when the backend reads
	// per-process data (the receiver's per_process setting); nil
	// otherwise. A PID may appear twice: once for the process that holds
	// it now and once for the one that held it earlier in the interval.
	Processes []Process
}

// Owner says whose a process on a GPU is.
type Owner uint8

// Owners of processes.
const (
	// OwnerUnknown is a process that could not be placed: it exited
	// before its cgroup was read, or its cgroup was unreadable or in a
	// form not understood.
	OwnerUnknown Owner = iota
	// OwnerPod is a process in a Kubernetes pod.
	OwnerPod
	// OwnerHost is a process outside any pod and any Slurm job: a system
	// service, a user's shell, a container not run by the kubelet.
	OwnerHost
	// OwnerSlurmJob is a process in a Slurm job's cgroup; on a Slurm node
	// that is a pod, it is in the pod too (PodUID), but the job owns it.
	OwnerSlurmJob
)

// String returns the owner as the otelgpu.process.owner attribute
// spells it.
func (o Owner) String() string {
	switch o {
	case OwnerPod:
		return "pod"
	case OwnerHost:
		return "host"
	case OwnerSlurmJob:
		return "slurm_job"
	default:
		return "unknown"
	}
}

// Process is one process's use of a GPU over a sample's interval.
type Process struct {
	PID   uint32
	Owner Owner
	// PodUID and ContainerID place a pod's process (OwnerPod); the
	// container ID is empty for a process in the pod but in no container.
	PodUID      string
	ContainerID string
	// Slurm is the job and step of a Slurm job's process (OwnerSlurmJob),
	// from its cgroup: ID and Step only.
	Slurm SlurmJob
	// Pod names the container where the source knows it (the simulated
	// fleet); the receiver names the others through the kubelet.
	Pod Pod
	// MemoryBytes is the frame buffer memory the process holds. HasMemory
	// is false where the source does not say: NVML cannot, or the process
	// exited during the interval.
	MemoryBytes uint64
	HasMemory   bool
	// SMUtil, MemUtil, EncUtil and DecUtil are the percentages of the
	// interval the process kept the SMs, the memory controller, the
	// encoder and the decoder busy (NVML's per-process utilization).
	// HasUtilization is false where they are unknown (MIG, drivers
	// without per-process utilization); a process that did nothing has
	// HasUtilization and zeros.
	SMUtil, MemUtil, EncUtil, DecUtil float64
	HasUtilization                    bool
}
