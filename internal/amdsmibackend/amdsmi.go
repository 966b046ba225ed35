// Package amdsmibackend reads AMD Instinct GPUs through AMD SMI
// (libamd_smi.so), which it opens at run time: a collector without ROCm
// starts, and this backend reports why it cannot connect.
//
// Each GPU, or each compute partition of a partitioned GPU, is a device.
// The figures both vendors have go into the sample's DCGM-shaped values
// (graphics activity as GPU_UTIL, a partition's its own, VRAM as FB_USED and FB_TOTAL, socket power,
// energy, hotspot temperature, PCIe throughput, ECC totals), so that traces,
// replay and the analyzer read them like NVIDIA's; AMD's own figures go
// into gpu.AMDValues. A call that fails leaves its figure out of that
// sample and is logged once; a device that is gone fails the collection,
// so that the receiver reconnects and enumerates anew.
package amdsmibackend

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"go.uber.org/zap"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Name is the backend's config name.
const Name = "amdsmi"

// DefaultLibrary is the library opened when Options.Library is empty: the
// dynamic loader's search path, where ROCm's ld.so.conf entry puts
// /opt/rocm/lib.
const DefaultLibrary = "libamd_smi.so"

// Options configures the backend.
type Options struct {
	// Library is the path of libamd_smi.so; empty is DefaultLibrary.
	Library  string
	Hostname string
	Logger   *zap.Logger
	// Cursors keeps each GPU's CPER cursor across restarts; nil keeps
	// them in memory, for the life of the process.
	Cursors Cursors
	// SkipPCIeThroughput does not read PCIe traffic (hw.gpu.io disabled):
	// the driver measures it over a window of its own, which the call
	// may wait for.
	SkipPCIeThroughput bool
	// PerProcess reads each device's processes into gpu.Sample.Processes
	// (process.go).
	PerProcess bool
	// ProcRoot is the host's /proc, where PIDs are placed in pods; empty
	// means /proc.
	ProcRoot string
}

// Backend reads AMD GPUs through AMD SMI. It implements backend.Backend.
type Backend struct {
	opts    Options
	logger  *zap.Logger
	cursors Cursors

	connected bool
	epoch     uint64
	devices   []*device
	page      cperPage
	// warned holds the calls whose failure was logged: each is logged
	// once per process, not once per device and scrape.
	warned map[string]bool
	// procBuf is the process list's C memory, and procScratch its Go
	// copy, shared by the devices; set with Options.PerProcess.
	procBuf     procBuffer
	procScratch []procInfo
}

type device struct {
	h      handle
	dev    *gpu.Device
	r      reading
	amd    gpu.AMDValues
	cursor uint64
	// cperOff is set once the GPU answered that it has no CPER records
	// to read (a partition other than the first, an older driver).
	cperOff bool
	// table is, on a partition, the device whose reading holds its GPU's
	// metrics table (the GPU's first partition, read first), and xcp the
	// partition's index in it; nil on a GPU that is not partitioned.
	table *device
	xcp   int
	// seen is the processes of the previous scrape, by PID, and gen
	// counts scrapes (process.go).
	seen map[uint32]*procSeen
	gen  uint64
}

// New returns a backend; it opens nothing until Connect.
func New(opts Options) *Backend {
	if opts.Library == "" {
		opts.Library = DefaultLibrary
	}
	if opts.Logger == nil {
		opts.Logger = zap.NewNop()
	}
	if opts.ProcRoot == "" {
		opts.ProcRoot = "/proc"
	}
	c := opts.Cursors
	if c == nil {
		c = NewMemoryCursors()
	}
	return &Backend{opts: opts, logger: opts.Logger, cursors: c, warned: map[string]bool{}}
}

// Name implements backend.Backend.
func (*Backend) Name() string { return Name }

// Connect opens and initialises the library, checks its version and
// enumerates the GPUs and partitions.
func (b *Backend) Connect(ctx context.Context) error {
	if err := open(b.opts.Library); err != nil {
		return err
	}
	if err := libInit(); err != nil {
		return err
	}
	v, err := libVersion()
	if err == nil {
		err = checkVersion(v)
	}
	if err == nil {
		err = b.enumerate(ctx)
	}
	if err != nil {
		_ = libShutDown()
		return err
	}
	if !layoutKnown() {
		b.logUnread(v)
	}
	b.connected = true
	b.epoch++
	return nil
}

// logUnread says, once, which figures are not read from a library whose
// version this build has no layout for, and why: amdsmi_link_metrics_t and
// amdsmi_gpu_metrics_t change layout from one minor version to the next
// (see lib.go), and a misread figure is worse than none.
func (b *Backend) logUnread(v Version) {
	b.warnOnce("unread/amdsmi_get_link_metrics", "XGMI link throughput is not read: this build does not know this AMD SMI version's "+
		"amdsmi_link_metrics_t layout, which changes between minor versions (56 bytes a link in 26.0 and 26.1, 48 in 26.2, 56 from 26.3)",
		zap.String("call", "amdsmi_get_link_metrics"), zap.Stringer("amdsmi.version", v))
	for _, d := range b.devices {
		if d.table != nil {
			b.warnOnce("unread/amdsmi_get_gpu_metrics_info", "Each partition's graphics activity is not read, and partitions report none: "+
				"this build does not know this AMD SMI version's amdsmi_gpu_metrics_t layout, which changes between minor versions "+
				"(partition statistics of 232 bytes in 25.x, 504 in 26.0 to 26.3, 520 in 26.4 and 26.5)",
				zap.String("call", "amdsmi_get_gpu_metrics_info"), zap.Stringer("amdsmi.version", v))
			return
		}
	}
}

func (b *Backend) enumerate(ctx context.Context) error {
	hs, socks, err := processors()
	if err != nil {
		return err
	}
	if len(hs) == 0 {
		return fmt.Errorf("%s: no AMD GPU found", b.opts.Library)
	}
	b.page = newCPERPage()
	if b.opts.PerProcess {
		b.procBuf = newProcBuffer()
	}
	firstOfSocket := map[int]*device{}
	partitionsOf := map[int]int{}
	for i, h := range hs {
		id, err := readIdentity(h)
		if err != nil {
			b.free()
			return fmt.Errorf("processor %d: %w", i, err)
		}
		r := newReading(b.opts.SkipPCIeThroughput)
		if b.opts.PerProcess {
			r.readProcesses(b.procBuf)
		}
		d := &device{h: h, r: r, dev: &gpu.Device{
			UUID: id.UUID, Index: i, Model: id.Model, DriverVersion: id.Driver,
			PCIBusID: id.BDF, Host: b.opts.Hostname, Vendor: gpu.VendorAMD,
			AMD: &gpu.AMDDevice{ComputePartition: id.Compute, MemoryPartition: id.Memory, PartitionID: id.PartitionID},
		}}
		first, ok := firstOfSocket[socks[i]]
		if !ok {
			first = d
			firstOfSocket[socks[i]] = d
		}
		if partitioned(id.Compute) {
			d.dev.AMD.ParentUUID = first.dev.UUID
			// The metrics table is the GPU's, the same on every
			// partition: read once, on its first.
			if first == d {
				d.r.readPartitions()
			}
			d.table = first
			// A partition's XCP is its partition ID (what AMD SMI
			// indexes xcp_stats by); failing that, its place.
			d.xcp = partitionsOf[socks[i]]
			if id.PartitionID >= 0 {
				d.xcp = id.PartitionID
			}
			partitionsOf[socks[i]]++
		}
		c, ok, err := b.cursors.Get(ctx, id.UUID)
		if err != nil {
			b.warnOnce("cursor", "Could not read a GPU's saved CPER cursor; its records are read from the start of the driver's log",
				zap.String("hw.id", id.UUID), zap.Error(err))
		} else if ok {
			d.cursor = c
		}
		b.devices = append(b.devices, d)
	}
	return nil
}

// partitioned reports whether a compute partition mode splits the GPU.
func partitioned(mode string) bool {
	switch strings.ToUpper(mode) {
	case "", "SPX", "N/A":
		return false
	}
	return true
}

// Collect implements backend.Backend: one sample per device, every figure
// read now.
func (b *Backend) Collect(ctx context.Context, now time.Time, _ time.Duration) ([]gpu.Sample, error) {
	if !b.connected {
		return nil, fmt.Errorf("%s: not connected", b.opts.Library)
	}
	out := make([]gpu.Sample, 0, len(b.devices))
	for _, d := range b.devices {
		d.r.read(d.h)
		if err := d.r.lostError(); err != nil {
			return nil, fmt.Errorf("GPU %s (%s, %s) is gone: %w", d.dev.UUID, d.dev.Name(), d.dev.PCIBusID, err)
		}
		s := gpu.Sample{Device: d.dev, Time: now, Epoch: b.epoch}
		d.amd.Reset()
		b.convert(d, &s.Values)
		if b.opts.PerProcess && d.r.status(callProcesses) == statusSuccess {
			// A failed list leaves the processes out, as convert said.
			s.Processes = b.processes(d, now)
		}
		if err := b.readCPER(ctx, d); err != nil {
			return nil, err
		}
		amd := d.amd // a copy: the sample outlives the next Collect
		amd.ECC = append([]gpu.ECCBlock(nil), d.amd.ECC...)
		amd.Links = append([]gpu.XGMILink(nil), d.amd.Links...)
		amd.CPER = append([]gpu.CPERRecord(nil), d.amd.CPER...)
		s.AMD = &amd
		out = append(out, s)
	}
	return out, nil
}

// Close implements backend.Backend.
func (b *Backend) Close() error {
	if !b.connected {
		return nil
	}
	b.connected = false
	b.free()
	return libShutDown()
}

func (b *Backend) free() {
	for _, d := range b.devices {
		d.r.free()
	}
	b.devices = nil
	if b.page.p != nil {
		b.page.free()
		b.page.p = nil
	}
	if b.procBuf.p != nil {
		b.procBuf.free()
		b.procBuf.p = nil
	}
}

// warnOnce logs a warning the first time key is seen.
func (b *Backend) warnOnce(key, msg string, fields ...zap.Field) {
	if b.warned[key] {
		return
	}
	b.warned[key] = true
	b.logger.Warn(msg, fields...)
}

// failed logs, once per call and status, that a call failed and its
// figure is left out. A figure the GPU does not have is not a failure.
func (b *Backend) failed(d *device, call string, st Status) {
	if st.unsupported() {
		return
	}
	b.warnOnce(call+"/"+st.Error(), "AMD SMI call failed; its metrics are left out while it fails (logged once)",
		zap.String("call", call), zap.String("hw.id", d.dev.UUID), zap.String("status", st.Error()))
}

// Sentinels AMD SMI returns for a value it does not have.
const (
	na16 = math.MaxUint16
	na32 = math.MaxUint32
	na64 = math.MaxUint64
)

func (b *Backend) convert(d *device, vs *f.Values) {
	r := d.r
	amd := &d.amd
	ok := func(call int, name string) bool {
		st := r.status(call)
		if st != statusSuccess {
			b.failed(d, name, st)
			return false
		}
		return true
	}
	if ok(callActivity, "amdsmi_get_gpu_activity") {
		gfx, umc, mm := r.activity()
		// A partition's graphics activity is its own, below; what this
		// call answers on the first partition is the whole GPU's.
		if d.table == nil {
			setPercent(func(v float64) { vs.Set(f.GPUUtil, v) }, gfx)
		}
		setPercent(func(v float64) { amd.Set(gpu.AMDUMCActivity, v) }, umc)
		setPercent(func(v float64) { amd.Set(gpu.AMDMMActivity, v) }, mm)
	}
	if d.table != nil {
		b.partitionActivity(d, vs)
	}
	if ok(callVRAMUsed, "amdsmi_get_gpu_memory_usage") {
		vs.Set(f.FBUsed, float64(r.vramUsed())/(1<<20))
	}
	if ok(callVRAMTotal, "amdsmi_get_gpu_memory_total") {
		if t := r.vramTotal(); t > 0 {
			vs.Set(f.FBTotal, float64(t)/(1<<20))
		}
	}
	var limit uint32
	if ok(callPower, "amdsmi_get_power_info") {
		// MI300 and later report the current socket power; MI200 only
		// an average over the firmware's window, and na (or 0) as
		// current.
		cur, avg, lim := r.power()
		limit = lim
		switch {
		case cur != na16 && cur != na32 && cur > 0:
			vs.Set(f.PowerUsage, float64(cur))
			amd.Set(gpu.AMDPowerCurrent, float64(cur))
		case avg != na16 && avg != na32:
			vs.Set(f.PowerUsage, float64(avg))
			amd.Set(gpu.AMDPowerAverage, float64(avg))
		}
	}
	if ok(callPowerCap, "amdsmi_get_power_cap_info") {
		if c := r.powerCap(); c > 0 && c != na64 {
			amd.Set(gpu.AMDPowerCap, float64(c)/1e6) // µW on Linux
		}
	}
	if !amd.Has(gpu.AMDPowerCap) && limit > 0 && limit != na16 && limit != na32 {
		// The power information carries the same cap, in W, where the
		// cap's own call answers nothing.
		amd.Set(gpu.AMDPowerCap, float64(limit))
	}
	if ok(callEnergy, "amdsmi_get_energy_count") {
		e, res := r.energy()
		if e != na64 && res > 0 {
			vs.Set(f.TotalEnergy, float64(e)*res/1000) // µJ to DCGM's mJ
		}
	}
	temps := []struct {
		call  int
		field gpu.AMDField
	}{{callTempEdge, gpu.AMDTempEdge}, {callTempHotspot, gpu.AMDTempHotspot}, {callTempVRAM, gpu.AMDTempVRAM}}
	for i, t := range temps {
		if ok(t.call, "amdsmi_get_temp_metric") {
			if v := r.temp(i); v > -273 && v < 1000 {
				amd.Set(t.field, float64(v))
				if t.field == gpu.AMDTempHotspot {
					vs.Set(f.GPUTemp, float64(v))
				}
			}
		}
	}
	if ok(callClockGFX, "amdsmi_get_clock_info") {
		if c := r.clock(0); c != na32 && c > 0 {
			amd.Set(gpu.AMDClockGFX, float64(c))
		}
	}
	if ok(callClockMem, "amdsmi_get_clock_info") {
		if c := r.clock(1); c != na32 && c > 0 {
			amd.Set(gpu.AMDClockMem, float64(c))
		}
	}
	if ok(callViolation, "amdsmi_get_violation_status") {
		for i, p := range r.violations() {
			if p != na64 && p <= 100 {
				amd.Set(violationFields[i], float64(p))
			}
		}
	}
	if ok(callECCEnabled, "amdsmi_get_gpu_ecc_enabled") {
		var ce, ue float64
		for blk := range eccBlocks {
			st, c := r.ecc(blk)
			if st == statusNotSupported {
				continue
			}
			if st != statusSuccess {
				b.failed(d, "amdsmi_get_gpu_ecc_count", st)
				continue
			}
			amd.ECC = append(amd.ECC, gpu.ECCBlock{Block: eccBlocks[blk], Corrected: c[0], Uncorrected: c[1], Deferred: c[2]})
			ce += float64(c[0])
			ue += float64(c[1])
		}
		if len(amd.ECC) > 0 {
			vs.Set(f.ECCSBEVolTotal, ce)
			vs.Set(f.ECCDBEVolTotal, ue)
		}
	}
	if ok(callBadPages, "amdsmi_get_gpu_bad_page_info") {
		byStatus := r.badPages()
		amd.Set(gpu.AMDBadPagesReserved, float64(byStatus[0]))
		amd.Set(gpu.AMDBadPagesPending, float64(byStatus[1]))
		amd.Set(gpu.AMDBadPagesUnreservable, float64(byStatus[2]))
	}
	if ok(callBadPageThreshold, "amdsmi_get_gpu_bad_page_threshold") {
		if t := r.badPageThreshold(); t != na32 {
			amd.Set(gpu.AMDBadPageThreshold, float64(t))
		}
	}
	if ok(callLinks, "amdsmi_get_link_metrics") {
		amd.Links = r.xgmiLinks(amd.Links)
	}
	if ok(callPCIThroughput, "amdsmi_get_gpu_pci_throughput") {
		sent, received := r.pciThroughput()
		if sent != na64 && received != na64 {
			vs.Set(f.PCIeTxBytes, float64(sent))
			vs.Set(f.PCIeRxBytes, float64(received))
		}
	}
	if ok(callPCIReplays, "amdsmi_get_gpu_pci_replay_counter") {
		if n := r.pciReplays(); n != na64 {
			amd.Set(gpu.AMDPCIeReplays, float64(n))
		}
	}
	if ok(callProcesses, "amdsmi_get_gpu_process_list") {
		amd.Set(gpu.AMDProcesses, float64(r.processes()))
	}
}

// partitionActivity sets a partition's graphics activity: the mean of its
// XCCs' instantaneous activity in its GPU's metrics table. Where the table
// could not be read, or has no valid entry for the partition, it is left
// out rather than taken from the whole GPU.
func (b *Backend) partitionActivity(d *device, vs *f.Values) {
	t := d.table.r
	if st := t.partitionStatus(); st != statusSuccess {
		if d.table == d {
			b.failed(d, "amdsmi_get_gpu_metrics_info", st)
		}
		return
	}
	if v, ok := t.partitionActivity(d.xcp); ok {
		vs.Set(f.GPUUtil, v)
	}
}

// setPercent records a percentage unless it is a sentinel.
func setPercent(set func(float64), p uint32) {
	if p <= 100 {
		set(float64(p))
	}
}

// violationFields follows amdsmi_violation_status_t's per_* fields:
// processor hot, package power tracking, socket thermal, voltage
// regulator thermal, HBM thermal.
var violationFields = [5]gpu.AMDField{
	gpu.AMDViolationProchot, gpu.AMDViolationPower, gpu.AMDViolationSocketThermal,
	gpu.AMDViolationVRThermal, gpu.AMDViolationHBMThermal,
}

// eccBlocks names the RAS blocks of amdsmi_gpu_block_t by bit, lower case
// as AMD SMI's CLI and the driver's sysfs spell them.
var eccBlocks = [...]string{
	"umc", "sdma", "gfx", "mmhub", "athub", "pcie_bif", "hdp", "xgmi_wafl", "df", "smn",
	"sem", "mp0", "mp1", "fuse", "mca", "vcn", "jpeg", "ih", "mpio",
}

// readCPER reads the CPER records logged since the device's cursor, page
// by page, and saves the cursor past them.
func (b *Backend) readCPER(ctx context.Context, d *device) error {
	if d.cperOff {
		return nil
	}
	start := d.cursor
	for range 1000 { // a bound, in case a library never stops paging
		p := b.page.p
		p.cursor = cU64(d.cursor)
		st := Status(cperRead(d.h, b.page))
		if st.lost() {
			return fmt.Errorf("GPU %s (%s) is gone: amdsmi_get_gpu_cper_entries: %w", d.dev.UUID, d.dev.Name(), st)
		}
		if st != statusSuccess && st != statusMoreData {
			if st.unsupported() {
				d.cperOff = true
			} else {
				b.failed(d, "amdsmi_get_gpu_cper_entries", st)
			}
			break
		}
		d.amd.CPER = b.page.records(d.amd.CPER)
		d.cursor = uint64(p.cursor)
		if st == statusSuccess {
			break
		}
	}
	if d.cursor != start {
		if err := b.cursors.Put(ctx, d.dev.UUID, d.cursor); err != nil {
			b.warnOnce("cursor-put", "Could not save a GPU's CPER cursor; after a restart its records would be counted again",
				zap.String("hw.id", d.dev.UUID), zap.Error(err))
		}
	}
	return nil
}
