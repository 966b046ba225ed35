package nvmlbackend

import (
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// MIG instances. A GPU in MIG mode is read as itself (power, temperature,
// clocks, errors: the board's) and as each of its instances, one device
// each under its own MIG-… UUID, the identity the kubelet allocates it by.
// An administrator (or the GPU Operator's MIG manager, or a DRA driver)
// creates and destroys instances while the GPU runs, so the instances are
// listed again at every collection of a GPU in MIG mode; the mode itself is
// asked at every collection too, as it can be turned on without a reboot on
// Hopper and later.

// scanMIG lists the MIG instances of the physical GPU p now, keeping the
// devices of those it already knew (and their per-process state) and
// logging those that came and went.
func (b *Backend) scanMIG(p *device) error {
	current, _, ret := p.h.GetMigMode()
	switch {
	case lost(ret):
		return fmt.Errorf("GPU %s: MIG mode: %v", p.dev.UUID, nvml.ErrorString(ret))
	case ret != nvml.SUCCESS || current != nvml.DEVICE_MIG_ENABLE:
		// Not supported (before Ampere, or not a data-center part), or off.
		b.dropMIG(p, "MIG mode off")
		return nil
	}
	n, ret := p.h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		if lost(ret) {
			return fmt.Errorf("GPU %s: MIG device count: %v", p.dev.UUID, nvml.ErrorString(ret))
		}
		b.dropMIG(p, "MIG devices unreadable")
		return nil
	}
	next := p.migs[:0:0]
	for i := range n {
		h, ret := p.h.GetMigDeviceHandleByIndex(i)
		if ret != nvml.SUCCESS {
			if lost(ret) {
				return fmt.Errorf("GPU %s: MIG device %d: %v", p.dev.UUID, i, nvml.ErrorString(ret))
			}
			continue // no instance at this index (NOT_FOUND)
		}
		uuid, ret := h.GetUUID()
		if ret != nvml.SUCCESS {
			continue // destroyed since it was listed
		}
		if i := slices.IndexFunc(p.migs, func(m *device) bool { return m.dev.UUID == uuid }); i >= 0 {
			next = append(next, p.migs[i])
			continue
		}
		m := b.newMIG(p, h, uuid)
		if m == nil {
			continue
		}
		b.opts.Logger.Info("MIG instance appeared", zap.String("hw.id", uuid), zap.String("parent", p.dev.UUID),
			zap.Int("gpu_instance", m.dev.MIG.GPUInstance), zap.Int("compute_instance", m.dev.MIG.ComputeInstance),
			zap.String("profile", m.dev.MIG.Profile))
		next = append(next, m)
	}
	for _, m := range p.migs {
		if !slices.Contains(next, m) {
			b.opts.Logger.Info("MIG instance gone", zap.String("hw.id", m.dev.UUID), zap.String("parent", p.dev.UUID))
		}
	}
	slices.SortFunc(next, func(a, b *device) int {
		if a.dev.MIG.GPUInstance != b.dev.MIG.GPUInstance {
			return a.dev.MIG.GPUInstance - b.dev.MIG.GPUInstance
		}
		return a.dev.MIG.ComputeInstance - b.dev.MIG.ComputeInstance
	})
	p.migs = next
	return nil
}

func (b *Backend) dropMIG(p *device, why string) {
	for _, m := range p.migs {
		b.opts.Logger.Info("MIG instance gone", zap.String("hw.id", m.dev.UUID), zap.String("parent", p.dev.UUID), zap.String("reason", why))
	}
	p.migs = nil
}

// newMIG describes the MIG device h of p; nil if its instance IDs cannot
// be read (destroyed since it was listed).
func (b *Backend) newMIG(p *device, h nvml.Device, uuid string) *device {
	gi, ret := h.GetGpuInstanceId()
	if ret != nvml.SUCCESS {
		return nil
	}
	ci, ret := h.GetComputeInstanceId()
	if ret != nvml.SUCCESS {
		return nil
	}
	m := &device{h: h, mig: true}
	m.dev = gpu.Device{
		UUID: uuid, Index: p.dev.Index, Model: p.dev.Model, DriverVersion: p.dev.DriverVersion,
		PCIBusID: p.dev.PCIBusID, Host: p.dev.Host,
		SerialNumber: p.dev.SerialNumber, FirmwareVersion: p.dev.FirmwareVersion,
		MIG: &gpu.MIG{ParentUUID: p.dev.UUID, GPUInstance: gi, ComputeInstance: ci, Profile: b.migProfile(p, gi, ci)},
	}
	return m
}

// migProfile names an instance's profile as nvidia-smi and the kubelet's
// MIG resources do: slices and memory, 1g.10gb; a compute instance with
// fewer slices than its GPU instance prefixes its own, 1c.2g.20gb. Empty
// where NVML does not say.
func (b *Backend) migProfile(p *device, giID, ciID int) string {
	gi, ret := p.h.GetGpuInstanceById(giID)
	if ret != nvml.SUCCESS {
		return ""
	}
	giInfo, ret := gi.GetInfo()
	if ret != nvml.SUCCESS {
		return ""
	}
	prof, ret := p.h.GetGpuInstanceProfileInfo(int(giInfo.ProfileId))
	if ret != nvml.SUCCESS || prof.SliceCount == 0 {
		return ""
	}
	name := gpu.MIGProfile(int(prof.SliceCount), p.totalMemory, prof.MemorySizeMB)
	ci, ret := gi.GetComputeInstanceById(ciID)
	if ret != nvml.SUCCESS {
		return name
	}
	ciInfo, ret := ci.GetInfo()
	if ret != nvml.SUCCESS {
		return name
	}
	ciProf, ret := gi.GetComputeInstanceProfileInfo(int(ciInfo.ProfileId), nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
	if ret == nvml.SUCCESS && ciProf.SliceCount > 0 && ciProf.SliceCount < prof.SliceCount {
		name = fmt.Sprintf("%dc.%s", ciProf.SliceCount, name)
	}
	return name
}

// readMIG reads what NVML answers for a MIG device: its memory. Its
// utilization, power, temperature and clocks are the board's, read on the
// parent; its SM activity would need GPM per instance, which is not read.
func readMIG(d *device, vs *f.Values) error {
	m, ret := d.h.GetMemoryInfo()
	switch {
	case ret == nvml.SUCCESS:
		vs.Set(f.FBTotal, float64(m.Total>>20))
		vs.Set(f.FBUsed, float64(m.Used>>20))
		vs.Set(f.FBFree, float64(m.Free>>20))
	case lost(ret):
		return fmt.Errorf("MIG device %s: %v", d.dev.UUID, nvml.ErrorString(ret))
	}
	return nil
}
