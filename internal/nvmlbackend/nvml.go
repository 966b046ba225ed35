// Package nvmlbackend reads GPUs through NVML with go-nvml, for hosts
// without DCGM. On Hopper and newer it adds SM, tensor and DRAM activity
// from GPM (GPU Performance Monitoring), which otherwise only DCGM's
// profiling module gives.
package nvmlbackend

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Options configure the backend.
type Options struct {
	Logger *zap.Logger
	// Lib is the NVML implementation; nil means the real library. Tests
	// pass go-nvml's mock.
	Lib nvml.Interface
	// Hostname is the host.name of the devices; empty means none.
	Hostname string
	// PerProcess reads each GPU's processes into gpu.Sample.Processes
	// (process.go).
	PerProcess bool
	// ProcRoot is the host's /proc, where PIDs are placed in pods; empty
	// means /proc.
	ProcRoot string
	// Health judges each GPU's memory, InfoROM and PCIe by DCGM's health
	// rules (health.go).
	Health bool
}

// Backend is the NVML backend.
type Backend struct {
	opts    Options
	lib     nvml.Interface
	devices []*device
	events  nvml.EventSet
	inited  bool
	// epoch counts initializations: counters read after a reconnect are not
	// comparable with those before (gpu.Sample.Epoch).
	epoch uint64
	// procs places the PIDs of per-process readings; nil unless
	// Options.PerProcess.
	procs *procTable
}

type device struct {
	h   nvml.Device
	dev gpu.Device
	// gpm holds the previous GPM sample; GPM metrics are computed between
	// two samples.
	gpm     [2]nvml.GpmSample
	gpmPrev bool
	// fields is the request of the field values read through
	// nvmlDeviceGetFieldValues, reused from read to read.
	fields [1]nvml.FieldValue
	// lastSeen is the newest timestamp of the per-process utilization
	// samples read so far: the next read asks for those after it.
	lastSeen uint64
	// utilWarned is set once the GPU was found without per-process
	// utilization.
	utilWarned bool
	// mig marks a MIG instance's device; migs are a GPU's instances
	// (mig.go), and totalMemory its memory, which names their profiles.
	mig         bool
	migs        []*device
	totalMemory uint64
	// health is what the health check keeps between collections.
	health healthState
}

// New returns an unconnected backend.
func New(opts Options) *Backend {
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	b := &Backend{opts: opts}
	if opts.PerProcess {
		b.procs = newProcTable(opts.ProcRoot, opts.Logger)
	}
	return b
}

// Name implements backend.Backend.
func (*Backend) Name() string { return "nvml" }

// Connect implements backend.Backend.
func (b *Backend) Connect(context.Context) error {
	if b.inited {
		return nil
	}
	b.lib = b.opts.Lib
	if b.lib == nil {
		b.lib = nvml.New()
	}
	if ret := b.lib.Init(); ret != nvml.SUCCESS {
		if ret == nvml.ERROR_LIBRARY_NOT_FOUND {
			return errors.New("NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and its libraries mounted?")
		}
		return fmt.Errorf("nvml init: %v", nvml.ErrorString(ret))
	}
	b.inited = true
	b.epoch++
	if err := b.discover(); err != nil {
		_ = b.Close()
		return err
	}
	return nil
}

func (b *Backend) discover() error {
	n, ret := b.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return fmt.Errorf("count devices: %v", nvml.ErrorString(ret))
	}
	driver, _ := b.lib.SystemGetDriverVersion()
	b.devices = b.devices[:0]
	if set, ret := b.lib.EventSetCreate(); ret == nvml.SUCCESS {
		b.events = set
	}
	for i := 0; i < n; i++ {
		h, ret := b.lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			return fmt.Errorf("device %d: %v", i, nvml.ErrorString(ret))
		}
		d := &device{h: h}
		d.dev.Index = i
		d.dev.DriverVersion = driver
		d.dev.Host = b.opts.Hostname
		if d.dev.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
			return fmt.Errorf("device %d UUID: %v", i, nvml.ErrorString(ret))
		}
		d.dev.Model, _ = h.GetName()
		readBoard(h, &d.dev)
		if m, ret := h.GetMemoryInfo(); ret == nvml.SUCCESS {
			d.totalMemory = m.Total
		}
		if pci, ret := h.GetPciInfo(); ret == nvml.SUCCESS {
			d.dev.PCIBusID = busID(pci)
		}
		if b.events != nil {
			if ret := h.RegisterEvents(nvml.EventTypeXidCriticalError, b.events); ret != nvml.SUCCESS {
				b.opts.Logger.Debug("XID events unavailable", zap.String("uuid", d.dev.UUID), zap.String("error", nvml.ErrorString(ret)))
			}
		}
		if sup, ret := b.lib.GpmQueryDeviceSupport(h); ret == nvml.SUCCESS && sup.IsSupportedDevice != 0 {
			s1, r1 := b.lib.GpmSampleAlloc()
			s2, r2 := b.lib.GpmSampleAlloc()
			if r1 == nvml.SUCCESS && r2 == nvml.SUCCESS {
				d.gpm = [2]nvml.GpmSample{s1, s2}
			}
		} else {
			b.opts.Logger.Info("GPM unsupported; SM, tensor and DRAM activity unavailable on this GPU",
				zap.String("uuid", d.dev.UUID), zap.String("model", d.dev.Model))
		}
		b.devices = append(b.devices, d)
	}
	return nil
}

func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusIdLegacy))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}

// lost reports whether an NVML error means the device or driver is gone.
func lost(ret nvml.Return) bool {
	return ret == nvml.ERROR_GPU_IS_LOST || ret == nvml.ERROR_UNINITIALIZED ||
		ret == nvml.ERROR_DRIVER_NOT_LOADED || ret == nvml.ERROR_LIB_RM_VERSION_MISMATCH
}

// Collect implements backend.Backend. NVML reads are live, so every value
// is as fresh as the call.
func (b *Backend) Collect(_ context.Context, now time.Time, _ time.Duration) ([]gpu.Sample, error) {
	if !b.inited {
		return nil, errors.New("not connected")
	}
	out := make([]gpu.Sample, 0, len(b.devices))
	if b.procs != nil {
		b.procs.begin()
		defer b.procs.end()
	}
	for _, d := range b.devices {
		s := gpu.Sample{Device: &d.dev, Time: now, Epoch: b.epoch}
		if err := b.read(d, &s.Values); err != nil {
			return nil, err
		}
		if b.opts.Health {
			b.readHealth(d, &s, now)
		}
		if b.procs != nil {
			if err := b.readProcesses(d, &s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
		if err := b.scanMIG(d); err != nil {
			return nil, err
		}
		for _, m := range d.migs {
			s := gpu.Sample{Device: &m.dev, Time: now, Epoch: b.epoch}
			if err := readMIG(m, &s.Values); err != nil {
				return nil, err
			}
			if b.procs != nil {
				if err := b.readProcesses(m, &s); err != nil {
					return nil, err
				}
			}
			out = append(out, s)
		}
	}
	b.drainXIDs(out)
	return out, nil
}

func (b *Backend) read(d *device, vs *f.Values) error {
	h := d.h
	var firstLost nvml.Return
	check := func(ret nvml.Return) bool {
		if lost(ret) && firstLost == 0 {
			firstLost = ret
		}
		return ret == nvml.SUCCESS
	}
	if u, ret := h.GetUtilizationRates(); check(ret) {
		vs.Set(f.GPUUtil, float64(u.Gpu))
		vs.Set(f.MemCopyUtil, float64(u.Memory))
	}
	if u, _, ret := h.GetEncoderUtilization(); check(ret) {
		vs.Set(f.EncUtil, float64(u))
	}
	if u, _, ret := h.GetDecoderUtilization(); check(ret) {
		vs.Set(f.DecUtil, float64(u))
	}
	if m, ret := h.GetMemoryInfo(); check(ret) {
		vs.Set(f.FBTotal, float64(m.Total>>20))
		vs.Set(f.FBUsed, float64(m.Used>>20))
		vs.Set(f.FBFree, float64(m.Free>>20))
	}
	if p, ret := h.GetPowerUsage(); check(ret) {
		vs.Set(f.PowerUsage, float64(p)/1000)
	}
	if p, ret := h.GetEnforcedPowerLimit(); check(ret) {
		vs.Set(f.EnforcedPowerLimit, float64(p)/1000) // mW
	}
	if e, ret := h.GetTotalEnergyConsumption(); check(ret) {
		vs.Set(f.TotalEnergy, float64(e))
	}
	if t, ret := h.GetTemperature(nvml.TEMPERATURE_GPU); check(ret) {
		vs.Set(f.GPUTemp, float64(t))
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_SM); check(ret) {
		vs.Set(f.SMClock, float64(c))
	}
	if c, ret := h.GetClockInfo(nvml.CLOCK_MEM); check(ret) {
		vs.Set(f.MemClock, float64(c))
	}
	if r, ret := h.GetCurrentClocksEventReasons(); check(ret) {
		vs.Set(f.ClocksEventReasons, float64(r))
	}
	if n, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_CORRECTED, nvml.VOLATILE_ECC); check(ret) {
		vs.Set(f.ECCSBEVolTotal, float64(n))
	}
	if n, ret := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC); check(ret) {
		vs.Set(f.ECCDBEVolTotal, float64(n))
	}
	if n, ret := h.GetPcieReplayCounter(); check(ret) {
		vs.Set(f.PCIeReplayCounter, float64(n))
	}
	d.health.rowsKnown = false
	if corr, unc, pending, failed, ret := h.GetRemappedRows(); check(ret) {
		d.health.rowsPending, d.health.rowsKnown = pending, true
		vs.Set(f.CorrectableRemappedRows, float64(corr))
		vs.Set(f.UncorrectableRemappedRows, float64(unc))
		failure := 0.0
		if failed {
			failure = 1
		}
		vs.Set(f.RowRemapFailure, failure)
	}
	b.readFields(d, vs, check)
	// NVML reports PCIe throughput in KiB/s over a 20 ms window.
	if kb, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); check(ret) {
		vs.Set(f.PCIeTxBytes, float64(kb)*1024)
	}
	if kb, ret := h.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); check(ret) {
		vs.Set(f.PCIeRxBytes, float64(kb)*1024)
	}
	if firstLost != 0 {
		return fmt.Errorf("GPU %s: %v", d.dev.UUID, nvml.ErrorString(firstLost))
	}
	b.readGPM(d, vs)
	return nil
}

// readFields reads what NVML gives only as a field value, not through a
// getter of its own: the recovery action, NVML_FI_DEV_GET_GPU_RECOVERY_ACTION
// (230 in nvml.h; not DCGM's field 230, which is the XID), an
// nvmlDeviceGpuRecoveryAction_t. A driver that predates the field answers
// the call but fails the field (nvml.h: "value is undefined if nvmlReturn !=
// NVML_SUCCESS"), which leaves the value out rather than reporting 0.
func (*Backend) readFields(d *device, vs *f.Values, check func(nvml.Return) bool) {
	d.fields[0] = nvml.FieldValue{FieldId: nvml.FI_DEV_GET_GPU_RECOVERY_ACTION}
	if !check(d.h.GetFieldValues(d.fields[:])) {
		return
	}
	fv := &d.fields[0]
	if !check(nvml.Return(fv.NvmlReturn)) {
		return
	}
	if v, ok := fieldValue(fv); ok {
		vs.Set(f.RecoveryAction, v)
	}
}

// fieldValue decodes an nvmlValue_t, the union of nvml.h that a field
// value's valueType names the member of. go-nvml carries it as its 8 bytes
// in the machine's order.
func fieldValue(fv *nvml.FieldValue) (float64, bool) {
	b := fv.Value[:]
	switch nvml.ValueType(fv.ValueType) {
	case nvml.VALUE_TYPE_DOUBLE:
		return math.Float64frombits(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_UNSIGNED_INT:
		return float64(binary.NativeEndian.Uint32(b)), true
	case nvml.VALUE_TYPE_SIGNED_INT:
		return float64(int32(binary.NativeEndian.Uint32(b))), true
	case nvml.VALUE_TYPE_UNSIGNED_LONG, nvml.VALUE_TYPE_UNSIGNED_LONG_LONG:
		// unsigned long is 8 bytes on the 64-bit Linux that NVML ships for.
		return float64(binary.NativeEndian.Uint64(b)), true
	case nvml.VALUE_TYPE_SIGNED_LONG_LONG:
		return float64(int64(binary.NativeEndian.Uint64(b))), true
	case nvml.VALUE_TYPE_UNSIGNED_SHORT:
		return float64(binary.NativeEndian.Uint16(b)), true
	default:
		return 0, false
	}
}

var gpmFields = []struct {
	id    nvml.GpmMetricId
	field f.Field
}{
	{nvml.GPM_METRIC_GRAPHICS_UTIL, f.GREngineActive},
	{nvml.GPM_METRIC_SM_UTIL, f.SMActive},
	{nvml.GPM_METRIC_SM_OCCUPANCY, f.SMOccupancy},
	{nvml.GPM_METRIC_ANY_TENSOR_UTIL, f.PipeTensorActive},
	{nvml.GPM_METRIC_DRAM_BW_UTIL, f.DRAMActive},
	{nvml.GPM_METRIC_FP64_UTIL, f.PipeFP64Active},
	{nvml.GPM_METRIC_FP32_UTIL, f.PipeFP32Active},
	{nvml.GPM_METRIC_FP16_UTIL, f.PipeFP16Active},
}

// readGPM takes a GPM sample and, given the previous one, the activity
// between them. GPM reports percentages; DCGM's profiling fields are ratios.
func (b *Backend) readGPM(d *device, vs *f.Values) {
	if d.gpm[0] == nil {
		return
	}
	if ret := b.lib.GpmSampleGet(d.h, d.gpm[1]); ret != nvml.SUCCESS {
		d.gpmPrev = false
		return
	}
	if d.gpmPrev {
		req := &nvml.GpmMetricsGetType{NumMetrics: uint32(len(gpmFields)), Sample1: d.gpm[0], Sample2: d.gpm[1]}
		for i, g := range gpmFields {
			req.Metrics[i].MetricId = uint32(g.id)
		}
		if ret := b.lib.GpmMetricsGet(req); ret == nvml.SUCCESS {
			for i, g := range gpmFields {
				m := req.Metrics[i]
				if nvml.Return(m.NvmlReturn) == nvml.SUCCESS {
					vs.Set(g.field, m.Value/100)
				}
			}
		}
	}
	d.gpm[0], d.gpm[1] = d.gpm[1], d.gpm[0]
	d.gpmPrev = true
}

// drainXIDs reads the XID events that arrived since the last collection.
func (b *Backend) drainXIDs(samples []gpu.Sample) {
	if b.events == nil {
		return
	}
	for range 1024 {
		ev, ret := b.events.Wait(0)
		if ret != nvml.SUCCESS {
			return
		}
		if ev.EventType != nvml.EventTypeXidCriticalError || ev.Device == nil {
			continue
		}
		uuid, ret := ev.Device.GetUUID()
		if ret != nvml.SUCCESS {
			continue
		}
		for i := range samples {
			if samples[i].Device.UUID == uuid {
				samples[i].XIDs = append(samples[i].XIDs, uint32(ev.EventData))
			}
		}
	}
}

// Close implements backend.Backend.
func (b *Backend) Close() error {
	if !b.inited {
		return nil
	}
	for _, d := range b.devices {
		for _, s := range d.gpm {
			if s != nil {
				_ = b.lib.GpmSampleFree(s)
			}
		}
	}
	if b.events != nil {
		_ = b.lib.EventSetFree(b.events)
		b.events = nil
	}
	b.devices = nil
	b.inited = false
	if ret := b.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %v", nvml.ErrorString(ret))
	}
	return nil
}
