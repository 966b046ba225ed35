// Package amdsmistandin builds the stand-in libamd_smi.so from the
// receiver's testdata and writes its state files, so that tests run the
// real AMD SMI cgo path on machines without AMD GPUs. It is for tests only.
package amdsmistandin

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// StateEnv names the state file the stand-in reads.
const StateEnv = "STANDIN_AMDSMI_STATE"

// Build compiles src (the stand-in's C source) with the system C compiler
// against the amdsmi.h that internal/amdsmibackend is compiled against (AMD
// SMI 25.x), into dir/libamd_smi.so, and returns its path.
func Build(src, dir string) (string, error) { return BuildABI(src, dir, 25) }

// ABIs are the AMD SMI major versions the stand-in can be built for: 25
// with the backend's own header, 26 with AMD's 26.x header in include26,
// whose structures differ, so that the backend is tested against the
// layout a ROCm 7 library has.
var ABIs = []int{25, 26}

// BuildABI is Build against the amdsmi.h of AMD SMI major version major
// (one of ABIs).
func BuildABI(src, dir string, major int) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	pkg, sub := "internal/amdsmibackend", "include"
	switch major {
	case 25:
	case 26:
		pkg, sub = "internal/amdsmistandin", "include26"
	default:
		return "", fmt.Errorf("no amdsmi.h for AMD SMI %d.x: the stand-in builds for %v", major, ABIs)
	}
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/otelcol-gpu/otelcol-gpu/"+pkg).Output()
	if err != nil {
		return "", fmt.Errorf("locate the AMD SMI %d.x amdsmi.h: %w", major, err)
	}
	inc := filepath.Join(strings.TrimSpace(string(out)), sub)
	lib := filepath.Join(dir, "libamd_smi.so")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-Wall", "-Werror", "-I", inc, "-o", lib, src).CombinedOutput(); err != nil {
		return "", fmt.Errorf("compile %s with %s against AMD SMI %d.x: %w\n%s", src, cc, major, err, out)
	}
	return lib, nil
}

// MoreData25 is AMDSMI_STATUS_MORE_DATA in the AMD SMI 25.x libraries AMD
// released (ROCm 6.4.1 on); 26.x, and the 25.x header the backend is built
// with, taken from AMD's development branch, have 39.
const MoreData25 = 57

// GPU is one GPU of the stand-in.
type GPU struct {
	// Kind is mi300x or mi250.
	Kind string
	UUID string
	// BDF is the PCI address, domain:bus:device.function.
	BDF string
	// Compute and Memory are the partition modes (SPX, CPX; NPS1, NPS4);
	// empty for a GPU without (MI250).
	Compute, Memory string
	// Partitions is how many processors the GPU shows: 8 in CPX mode.
	Partitions int
	// Load is the graphics activity in percent.
	Load int
	// XCPLoads is, on a partitioned GPU, each compute partition's own
	// graphics activity in percent, by XCP index; a partition without
	// one has Load.
	XCPLoads []int
	// Gone makes every call on the GPU answer NOT_FOUND.
	Gone bool
}

// ECC is one RAS block's ECC counts.
type ECC struct {
	GPU                  int
	Block                string
	Corrected, Uncorr, D uint64
}

// CPER is a CPER record: Severity 0 non-fatal uncorrected, 1 fatal, 2
// non-fatal corrected, as amdsmi_cper_sev_t.
type CPER struct {
	GPU, Severity int
	AFIDs         []uint64
}

// Fail makes a call fail on a GPU with an amdsmi_status_t.
type Fail struct {
	Call        string
	GPU, Status int
}

// XCCBusy sets one XCC's entry in a GPU's metrics table, as is: the way
// to make an entry the firmware's "not available" (math.MaxUint32) or an
// XCC of a partition busier than the others.
type XCCBusy struct {
	GPU, XCP, XCC int
	Value         uint32
}

// BadPage is a retired page: Status 0 reserved, 1 pending, 2 unreservable.
type BadPage struct{ GPU, Status int }

// Proc is a process on a processor: Partition is its index on the GPU (0
// for a GPU not partitioned). Its graphics engine time starts at GFXNs and
// grows by StepNs at each listing, as the encoder's does by EncStepNs:
// once per scrape with per_process.
type Proc struct {
	GPU, Partition int
	PID            uint32
	VRAMBytes      uint64
	GFXNs, StepNs  uint64
	EncStepNs      uint64
}

// State is the stand-in's behaviour (see its C source).
type State struct {
	// Version is the library version; zero is the version of the header
	// the stand-in is built against.
	Version  [3]int
	InitFail int
	// CPERPage is the records per page; zero is 4.
	CPERPage int
	// MoreData is the status that says another CPER page follows; zero
	// is the header's AMDSMI_STATUS_MORE_DATA (39), MoreData25 what the
	// 25.x libraries AMD released answer.
	MoreData int
	// MetricsXCPStride and LinkStride, where not zero, are the bytes
	// between the xcp_stats entries of amdsmi_gpu_metrics_t and between
	// the links of amdsmi_link_metrics_t that the stand-in writes; zero is
	// the layout of Version's AMD SMI (232 and 56 in 25.x, 504 and 56 in
	// 26.0 and 26.1, 504 and 48 in 26.2, 504 and 56 in 26.3, 520 and 56
	// from 26.4).
	MetricsXCPStride, LinkStride int
	GPUs                         []GPU
	ECC                          []ECC
	CPER                         []CPER
	Fails                        []Fail
	BadPages                     []BadPage
	XCCBusy                      []XCCBusy
	// Procs replaces, on each processor they name, the process the
	// stand-in shows otherwise while its GPU is loaded: VRAM held and
	// no engine time, as AMD SMI shows a ROCm compute process.
	Procs []Proc
}

// Write writes the state file at path, atomically.
func (s State) Write(path string) error {
	var b strings.Builder
	if s.Version != [3]int{} {
		fmt.Fprintf(&b, "version %d %d %d\n", s.Version[0], s.Version[1], s.Version[2])
	}
	if s.InitFail != 0 {
		fmt.Fprintf(&b, "init_fail %d\n", s.InitFail)
	}
	if s.CPERPage != 0 {
		fmt.Fprintf(&b, "cper_page %d\n", s.CPERPage)
	}
	if s.MoreData != 0 {
		fmt.Fprintf(&b, "more_data %d\n", s.MoreData)
	}
	if s.MetricsXCPStride != 0 {
		fmt.Fprintf(&b, "metrics_xcp_stride %d\n", s.MetricsXCPStride)
	}
	if s.LinkStride != 0 {
		fmt.Fprintf(&b, "link_stride %d\n", s.LinkStride)
	}
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return s
	}
	for i, g := range s.GPUs {
		fmt.Fprintf(&b, "gpu %s %s %s %s %s %d %d\n", g.Kind, g.UUID, g.BDF, dash(g.Compute), dash(g.Memory), max(g.Partitions, 1), g.Load)
		if g.Gone {
			fmt.Fprintf(&b, "gone %d\n", i)
		}
		for x, l := range g.XCPLoads {
			fmt.Fprintf(&b, "xcp_load %d %d %d\n", i, x, l)
		}
	}
	for _, e := range s.ECC {
		fmt.Fprintf(&b, "ecc %d %s %d %d %d\n", e.GPU, e.Block, e.Corrected, e.Uncorr, e.D)
	}
	for _, p := range s.BadPages {
		fmt.Fprintf(&b, "bad_page %d %d\n", p.GPU, p.Status)
	}
	for _, c := range s.CPER {
		fmt.Fprintf(&b, "cper %d %d", c.GPU, c.Severity)
		for _, a := range c.AFIDs {
			fmt.Fprintf(&b, " %d", a)
		}
		b.WriteString("\n")
	}
	for _, x := range s.XCCBusy {
		fmt.Fprintf(&b, "xcc_busy %d %d %d %d\n", x.GPU, x.XCP, x.XCC, x.Value)
	}
	for _, f := range s.Fails {
		fmt.Fprintf(&b, "fail %s %d %d\n", f.Call, f.GPU, f.Status)
	}
	for _, p := range s.Procs {
		fmt.Fprintf(&b, "proc %d %d %d %d %d %d %d\n", p.GPU, p.Partition, p.PID, p.VRAMBytes, p.GFXNs, p.StepNs, p.EncStepNs)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Fleet is a node of the shapes the tests need: an MI300X in SPX mode, an
// MI300X in CPX mode (eight partitions, each busy to its own degree, one
// idle), and an MI250.
func Fleet() State {
	return State{GPUs: []GPU{
		{Kind: "mi300x", UUID: "ccff74a1-0000-1000-80e0-c6d49f5b0d86", BDF: "0000:0c:00.0", Compute: "SPX", Memory: "NPS1", Partitions: 1, Load: 87},
		{Kind: "mi300x", UUID: "9fff74b9-0000-1000-8044-4a2fb30adeb0", BDF: "0000:22:00.0", Compute: "CPX", Memory: "NPS4", Partitions: 8, Load: 35,
			XCPLoads: []int{35, 0, 100, 60, 35, 20, 35, 90}},
		{Kind: "mi250", UUID: "c3ff740c-0000-1000-8021-7a1b2c3d4e5f", BDF: "0000:c1:00.0", Partitions: 1, Load: 12},
	}}
}
