package trace

import (
	"math"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Sample turns the row into what a receiver backend would produce for it.
// devices keeps one Device per UUID, replaced when the row's identity
// (host, model, pod...) differs, so that the receiver's per-device state
// follows the GPU as a backend's would.
func (r *Row) Sample(devices map[string]*gpu.Device) gpu.Sample {
	d := devices[r.UUID]
	want := gpu.Device{
		UUID: r.UUID, Index: r.GPU, Model: r.Model, Host: r.Host,
		Pod: gpu.Pod{Namespace: r.Namespace, Name: r.Pod, Container: r.Container, Job: r.Job},
	}
	if r.Node != nil {
		want.PCIBusID = r.Node.BusID
	}
	// A trace holds no more of a device than these (no thresholds, whose
	// slice makes Device incomparable).
	if d == nil || d.UUID != want.UUID || d.Index != want.Index || d.Model != want.Model || d.Host != want.Host || d.Pod != want.Pod ||
		d.PCIBusID != want.PCIBusID {
		d = &want
		devices[r.UUID] = d
	}
	s := gpu.Sample{
		Device: d,
		Time:   time.Unix(0, int64(math.Round(r.Time*1e6))*1000),
		Values: r.Values,
		Epoch:  1,
	}
	// In a trace the XID field holds the code at the sample where an XID
	// occurred and 0 otherwise: that is one event.
	if code, ok := r.Values.Get(dcgmfield.XIDErrors); ok && code > 0 && code < math.MaxUint32 {
		s.XIDs = []uint32{uint32(code)}
	}
	if r.Node != nil && r.Node.PodUID != "" {
		// The pod whose processes run on the GPU, as a backend reading
		// them places them: the receiver's per-process resource, which
		// ties the GPU to its pod's cgroup.
		s.Processes = []gpu.Process{{Owner: gpu.OwnerPod, PodUID: r.Node.PodUID, Pod: d.Pod}}
	}
	return s
}
