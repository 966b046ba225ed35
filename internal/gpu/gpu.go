// Package gpu holds the backend-neutral description of a GPU and of one
// sample of its telemetry, which every receiver backend produces.
package gpu

import (
	"fmt"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// Vendor is the hw.vendor of every device here.
const Vendor = "NVIDIA"

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
	// Pod is the workload the device is allocated to, if known.
	Pod Pod
}

// MIG describes a MIG instance.
type MIG struct {
	ParentUUID      string
	GPUInstance     int
	ComputeInstance int
	Profile         string
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
}

// Name is the device's human-readable hw.name: "gpu3", or "gpu3/mig1.0".
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
}
