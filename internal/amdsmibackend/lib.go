package amdsmibackend

/*
#cgo CFLAGS: -I${SRCDIR}/include
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "amd_smi/amdsmi.h"

#include "lib_abi.h"
#include "lib_read.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"unsafe"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// Status is an amdsmi_status_t.
type Status int

// The statuses the backend tells apart.
const (
	statusSuccess          Status = C.AMDSMI_STATUS_SUCCESS
	statusNotSupported     Status = C.AMDSMI_STATUS_NOT_SUPPORTED
	statusFailLoadSymbol   Status = C.AMDSMI_STATUS_FAIL_LOAD_SYMBOL
	statusNotFound         Status = C.AMDSMI_STATUS_NOT_FOUND
	statusDriverNotLoaded  Status = C.AMDSMI_STATUS_DRIVER_NOT_LOADED
	statusMoreData         Status = C.AMDSMI_STATUS_MORE_DATA
	statusNoData           Status = C.AMDSMI_STATUS_NO_DATA
	statusNotYetImplmented Status = C.AMDSMI_STATUS_NOT_YET_IMPLEMENTED
)

// lost reports whether a status says the device or the driver is gone:
// the backend then re-enumerates rather than leave one figure out.
func (s Status) lost() bool { return s == statusNotFound || s == statusDriverNotLoaded }

// unsupported reports whether a status says the GPU or the library does
// not have the figure at all, which is not a failure worth a warning.
func (s Status) unsupported() bool {
	return s == statusNotSupported || s == statusFailLoadSymbol || s == statusNotYetImplmented || s == statusNoData
}

func (s Status) Error() string {
	if name := C.GoString(C.otg_status_string(C.int(s))); name != "" {
		return fmt.Sprintf("%s (%d)", name, int(s))
	}
	return fmt.Sprintf("amdsmi status %d", int(s))
}

// ABIMajor is the major version of the amdsmi.h this package is compiled
// against (25), and MaxABIMajor the newest it reads (26, through the
// mirrors of lib_abi.h). AMD SMI bumps the major version whenever its
// ABI changes (the header says so), so a library of another major version
// may lay out the structures read here differently: it is refused rather
// than misread.
const (
	ABIMajor    = C.AMDSMI_LIB_VERSION_MAJOR
	MaxABIMajor = 26
)

// Version is the library's version.
type Version struct{ Major, Minor, Release int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Release) }

// The library is process-wide: one dlopen, one set of function pointers.
// amdsmi_init and amdsmi_shut_down are reference counted by the library,
// so that each backend initialises and shuts down on its own.
var (
	libMu   sync.Mutex
	libPath string
)

// open loads the library at path, once per path.
func open(path string) error {
	libMu.Lock()
	defer libMu.Unlock()
	if libPath == path {
		return nil
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	switch C.otg_open(cpath) {
	case 0:
		libPath = path
		return nil
	case 1:
		// dlerror names the library, in most cases with the path tried.
		msg := C.GoString(C.otg_open_err())
		if !strings.Contains(msg, path) {
			msg = path + ": " + msg
		}
		return fmt.Errorf("%s (is ROCm's amd-smi library installed, and library_path right?)", msg)
	default:
		return fmt.Errorf("open %s: not AMD SMI: amdsmi_init or another base function is missing", path)
	}
}

func libInit() error {
	if st := Status(C.otg_init()); st != statusSuccess {
		return fmt.Errorf("amdsmi_init: %w", st)
	}
	return nil
}

func libShutDown() error {
	if st := Status(C.otg_shut_down()); st != statusSuccess {
		return fmt.Errorf("amdsmi_shut_down: %w", st)
	}
	return nil
}

func libVersion() (Version, error) {
	var v [3]C.uint32_t
	if st := Status(C.otg_version(&v[0])); st != statusSuccess {
		return Version{}, fmt.Errorf("amdsmi_get_lib_version: %w", st)
	}
	return Version{int(v[0]), int(v[1]), int(v[2])}, nil
}

// checkVersion refuses a library whose ABI this build does not read, and
// otherwise makes the calls use its layout.
func checkVersion(v Version) error {
	switch {
	case v.Major < ABIMajor:
		return fmt.Errorf("libamd_smi %v is too old: this build reads AMD SMI %d.x to %d.x (ROCm 6.4 to 7.x)", v, ABIMajor, MaxABIMajor)
	case v.Major > MaxABIMajor:
		return fmt.Errorf("libamd_smi %v has a newer ABI than this build reads (AMD SMI %d.x to %d.x): its structures may differ", v, ABIMajor, MaxABIMajor)
	}
	C.otg_set_version(C.int(v.Major), C.int(v.Minor))
	return nil
}

// layoutKnown reports whether this package knows the library's layout of
// amdsmi_gpu_metrics_t and amdsmi_link_metrics_t, which changes between
// minor versions (see the table in lib_abi.h): where it does not,
// neither is read.
func layoutKnown() bool { return C.otg_known_layout() != 0 }

// maxProcessors bounds the GPUs and partitions enumerated: 64, eight GPUs
// in CPX mode with room to spare.
const maxProcessors = 64

// handle is an amdsmi_processor_handle, kept as an integer: it is the
// library's, not memory Go may look into.
type handle uintptr

// processors lists the AMD GPU processors, with each one's socket index.
func processors() ([]handle, []int, error) {
	var hs [maxProcessors]C.uintptr_t
	var socks [maxProcessors]C.uint32_t
	n := C.uint32_t(maxProcessors)
	if st := Status(C.otg_processors(&hs[0], &socks[0], &n)); st != statusSuccess {
		return nil, nil, fmt.Errorf("enumerate processors: %w", st)
	}
	out := make([]handle, int(n))
	sock := make([]int, int(n))
	for i := range out {
		out[i] = handle(hs[i])
		sock[i] = int(socks[i])
	}
	return out, sock, nil
}

// identity is what a device says about itself once.
type identity struct {
	UUID, Model, BDF, Driver, Compute, Memory string
	PartitionID                               int
}

var errNoUUID = errors.New("amdsmi_get_gpu_device_uuid failed")

func readIdentity(h handle) (identity, error) {
	var s C.otg_static
	C.otg_read_static(C.uintptr_t(h), &s)
	if st := Status(s.st_uuid); st != statusSuccess {
		if st.lost() {
			return identity{}, fmt.Errorf("%w: %w", errNoUUID, st)
		}
		return identity{}, fmt.Errorf("%w: %w", errNoUUID, st)
	}
	id := identity{UUID: C.GoString(&s.uuid[0]), PartitionID: -1}
	if s.st_asic == 0 {
		id.Model = C.GoString(&s.asic.market_name[0])
	}
	if s.st_bdf == 0 {
		raw := *(*uint64)(unsafe.Pointer(&s.bdf))
		// amdsmi_bdf_t: function 3 bits, device 5, bus 8, domain 48.
		id.BDF = fmt.Sprintf("%04x:%02x:%02x.%x", raw>>16&0xffff, raw>>8&0xff, raw>>3&0x1f, raw&0x7)
	}
	if s.st_driver == 0 {
		id.Driver = C.GoString(&s.driver.driver_version[0])
	}
	if s.st_compute == 0 {
		id.Compute = C.GoString(&s.compute[0])
	}
	if s.st_memory == 0 {
		id.Memory = C.GoString(&s.memory[0])
	}
	if s.st_kfd == 0 && s.kfd.current_partition_id != 0xffffffff {
		id.PartitionID = int(s.kfd.current_partition_id)
	}
	return id, nil
}

// reading is C memory for one device's reading, reused from scrape to
// scrape.
type reading struct{ r *C.otg_reading }

func newReading(skipPCIThroughput bool) reading {
	r := reading{(*C.otg_reading)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_reading{}))))}
	if skipPCIThroughput {
		r.r.skip_pci_throughput = 1
	}
	return r
}

func (r reading) free() {
	if r.r.xcp != nil {
		C.free(unsafe.Pointer(r.r.xcp))
	}
	if r.r.procs != nil {
		C.free(unsafe.Pointer(r.r.procs))
	}
	C.free(unsafe.Pointer(r.r))
}

// readPartitions makes the reading read its GPU's metrics table too, for
// the activity of each of its partitions.
func (r reading) readPartitions() {
	r.r.xcp = (*C.otg_xcp)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_xcp{}))))
}

// partitionStatus is amdsmi_get_gpu_metrics_info's status in a reading
// made with readPartitions.
func (r reading) partitionStatus() Status { return Status(r.r.xcp.st) }

// partitionActivity returns the mean graphics activity of XCP i's XCCs
// in percent, and false where the table has no valid entry for it.
func (r reading) partitionActivity(i int) (float64, bool) {
	x := r.r.xcp
	if i < 0 || i >= int(x.n) || x.gfx_n[i] == 0 {
		return 0, false
	}
	return float64(x.gfx_sum[i]) / float64(x.gfx_n[i]), true
}

// procBuffer is C memory for one amdsmi_get_gpu_process_list, which the
// devices of a backend share: they are read one after the other.
type procBuffer struct{ p *C.amdsmi_proc_info_t }

func newProcBuffer() procBuffer {
	return procBuffer{(*C.amdsmi_proc_info_t)(C.calloc(C.OTG_MAX_PROCS, C.size_t(unsafe.Sizeof(C.amdsmi_proc_info_t{}))))}
}

func (b procBuffer) free() { C.free(unsafe.Pointer(b.p)) }

// readProcesses makes the reading list the device's processes, into buf,
// and not only count them.
func (r reading) readProcesses(buf procBuffer) {
	if r.r.procs == nil {
		r.r.procs = (*C.otg_procs)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_procs{}))))
	}
	r.r.procs.buf = buf.p
}

// maxProcesses bounds the processes read per device and scrape.
const maxProcesses = C.OTG_MAX_PROCS

// procInfo is one process of a reading: VRAM in bytes, the graphics and
// encoder engines' busy time in ns since the process opened the device.
type procInfo struct {
	pid            uint32
	vram, gfx, enc uint64
}

// processList appends the reading's processes to out, and says whether
// the device had more than it holds.
func (r reading) processList(out []procInfo) ([]procInfo, bool) {
	ps := r.r.procs
	if ps == nil {
		return out, false
	}
	for i := range min(int(ps.n), maxProcesses) {
		p := &ps.p[i]
		out = append(out, procInfo{pid: uint32(p.pid), vram: uint64(p.vram), gfx: uint64(p.gfx), enc: uint64(p.enc)})
	}
	return out, ps.truncated != 0
}

func (r reading) read(h handle) { C.otg_read(C.uintptr_t(h), r.r) }

// cperPage is C memory for one page of CPER records.
type cperPage struct{ p *C.otg_cper_page }

func newCPERPage() cperPage {
	return cperPage{(*C.otg_cper_page)(C.calloc(1, C.size_t(unsafe.Sizeof(C.otg_cper_page{}))))}
}

func (p cperPage) free() { C.free(unsafe.Pointer(p.p)) }

// The calls of one reading, as otg_reading.st indexes them.
const (
	callActivity         = C.OTG_ACTIVITY
	callVRAMUsed         = C.OTG_VRAM_USED
	callVRAMTotal        = C.OTG_VRAM_TOTAL
	callPower            = C.OTG_POWER
	callPowerCap         = C.OTG_POWER_CAP
	callEnergy           = C.OTG_ENERGY
	callTempEdge         = C.OTG_TEMP_EDGE
	callTempHotspot      = C.OTG_TEMP_HOTSPOT
	callTempVRAM         = C.OTG_TEMP_VRAM
	callClockGFX         = C.OTG_CLOCK_GFX
	callClockMem         = C.OTG_CLOCK_MEM
	callViolation        = C.OTG_VIOLATION
	callECCEnabled       = C.OTG_ECC_ENABLED
	callBadPages         = C.OTG_BAD_PAGES
	callBadPageThreshold = C.OTG_BAD_PAGE_THRESHOLD
	callLinks            = C.OTG_LINKS
	callPCIThroughput    = C.OTG_PCI_THROUGHPUT
	callPCIReplays       = C.OTG_PCI_REPLAYS
	callProcesses        = C.OTG_PROCESSES
	numCalls             = C.OTG_CALLS
)

func (r reading) status(call int) Status { return Status(r.r.st[call]) }

// lostError returns the first status of the reading that says the device
// or the driver is gone, or nil.
func (r reading) lostError() error {
	for i := range numCalls {
		if st := Status(r.r.st[i]); st.lost() {
			return st
		}
	}
	if r.r.xcp != nil {
		if st := r.partitionStatus(); st.lost() {
			return st
		}
	}
	return nil
}

func (r reading) activity() (gfx, umc, mm uint32) {
	a := &r.r.activity
	return uint32(a.gfx_activity), uint32(a.umc_activity), uint32(a.mm_activity)
}

func (r reading) vramUsed() uint64  { return uint64(r.r.vram_used) }
func (r reading) vramTotal() uint64 { return uint64(r.r.vram_total) }

// power returns the current and average socket power and the power
// limit, in W.
func (r reading) power() (current, average, limit uint32) {
	return uint32(r.r.power_now), uint32(r.r.power_avg), uint32(r.r.power_limit)
}

func (r reading) powerCap() uint64 { return uint64(r.r.cap.power_cap) }

func (r reading) energy() (uint64, float64) {
	return uint64(r.r.energy), float64(r.r.energy_resolution)
}

func (r reading) temp(i int) int64   { return int64(r.r.temp[i]) }
func (r reading) clock(i int) uint32 { return uint32(r.r.clock[i].clk) }

func (r reading) violations() [5]uint64 {
	v := &r.r.per_violation
	return [5]uint64{uint64(v[0]), uint64(v[1]), uint64(v[2]), uint64(v[3]), uint64(v[4])}
}

// ecc returns block bit's status and its correctable, uncorrectable and
// deferred counts.
func (r reading) ecc(bit int) (Status, [3]uint64) {
	c := &r.r.ecc[bit]
	return Status(r.r.st_ecc[bit]), [3]uint64{uint64(c.correctable_count), uint64(c.uncorrectable_count), uint64(c.deferred_count)}
}

func (r reading) badPages() [3]uint32 {
	b := r.r.bad_by_status
	return [3]uint32{uint32(b[0]), uint32(b[1]), uint32(b[2])}
}

func (r reading) badPageThreshold() uint32 { return uint32(r.r.bad_threshold) }

// xgmiLinks appends the XGMI links of the reading to out.
func (r reading) xgmiLinks(out []gpu.XGMILink) []gpu.XGMILink {
	var links [C.OTG_MAX_LINKS]C.otg_link
	var index [C.OTG_MAX_LINKS]C.int
	n := int(C.otg_links(&r.r.links, &links[0], &index[0]))
	for i := range n {
		l := &links[i]
		out = append(out, gpu.XGMILink{Index: int(index[i]), ReadKB: uint64(l.read), WriteKB: uint64(l.write), MaxBandwidthGbps: float64(l.max_bandwidth)})
	}
	return out
}

func (r reading) pciThroughput() (sent, received uint64) {
	return uint64(r.r.pci_sent), uint64(r.r.pci_received)
}

func (r reading) pciReplays() uint64 { return uint64(r.r.pci_replays) }
func (r reading) processes() uint32  { return uint32(r.r.processes) }

func cU64(v uint64) C.uint64_t { return C.uint64_t(v) }

func cperRead(h handle, p cperPage) int { return int(C.otg_cper(C.uintptr_t(h), p.p)) }

// records appends the page's records to out.
func (p cperPage) records(out []gpu.CPERRecord) []gpu.CPERRecord {
	n := int(p.p.count)
	for i := range n {
		rec := gpu.CPERRecord{Severity: cperSeverity(int(p.p.severity[i]))}
		for j := range int(p.p.nafids[i]) {
			rec.AFIDs = append(rec.AFIDs, uint64(p.p.afids[i][j]))
		}
		out = append(out, rec)
	}
	return out
}

// cperSeverity names an amdsmi_cper_sev_t; an unknown one counts as
// fatal, the severity that asks for attention.
func cperSeverity(s int) string {
	switch s {
	case C.AMDSMI_CPER_SEV_NON_FATAL_UNCORRECTED:
		return gpu.CPERNonFatalUncorrected
	case C.AMDSMI_CPER_SEV_NON_FATAL_CORRECTED:
		return gpu.CPERNonFatalCorrected
	default:
		return gpu.CPERFatal
	}
}
