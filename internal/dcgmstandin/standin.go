// Package dcgmstandin builds and loads the stand-in libdcgm.so.4 from the
// receiver's testdata, so that tests run the real go-dcgm code on machines
// without GPUs. It is for tests only.
package dcgmstandin

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
*/
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"
)

// Soname is the name go-dcgm dlopens.
const Soname = "libdcgm.so.4"

var (
	once    sync.Once
	loadErr error
)

// Load compiles src (the stand-in's C source) with the system C compiler
// against go-dcgm's copies of DCGM's headers, and loads it into the process
// under its soname. go-dcgm's later dlopen("libdcgm.so.4") then finds the
// stand-in among the loaded objects. The state file is named by the
// STANDIN_DCGM_STATE environment variable, which the stand-in reads on every
// call. Load builds once per process.
func Load(src, dir string) error {
	once.Do(func() { loadErr = load(src, dir) })
	return loadErr
}

// Build compiles src (the stand-in's C source) into dir/libdcgm.so.4 and
// returns its path. A process started with dir on LD_LIBRARY_PATH loads it
// as DCGM.
func Build(src, dir string) (string, error) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	inc, err := dcgmHeaders()
	if err != nil {
		return "", err
	}
	lib := filepath.Join(dir, Soname)
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-Wall", "-Wl,-soname,"+Soname, "-I", inc, "-o", lib, src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("compile %s with %s: %w\n%s", src, cc, err, out)
	}
	return lib, nil
}

func load(src, dir string) error {
	lib, err := Build(src, dir)
	if err != nil {
		return err
	}
	cpath := C.CString(lib)
	defer C.free(unsafe.Pointer(cpath))
	if C.dlopen(cpath, C.RTLD_NOW|C.RTLD_GLOBAL) == nil {
		return fmt.Errorf("dlopen %s: %s", lib, C.GoString(C.dlerror()))
	}
	return nil
}

// dcgmHeaders finds go-dcgm's pkg/dcgm directory, which holds DCGM's headers.
func dcgmHeaders() (string, error) {
	out, err := exec.Command("go", "list", "-f", "{{.Dir}}", "github.com/NVIDIA/go-dcgm/pkg/dcgm").Output()
	if err != nil {
		return "", fmt.Errorf("locate go-dcgm's headers: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// State is the stand-in's behaviour (see testdata/standin-dcgm/libdcgm.c).
type State struct {
	GPUs      int
	NoProf    []int
	MIG       bool
	Connected bool
	Epoch     int
	Stale     bool
	XIDs      []XID
	// Recovery sets GPUs' recovery actions; a GPU not listed reports 0
	// (none).
	Recovery []Recovery
	// DiagFail lists the GPUs that fail dcgmRunDiagnostic; the others pass.
	DiagFail []int
	// Switches is the number of NVSwitches.
	Switches int
	// Health lists the incidents dcgmHealthCheck reports, for the groups
	// that watch their system and hold their entity.
	Health []Incident
	// NoHealth makes dcgmHealthSet fail, as a host engine without its
	// health module does.
	NoHealth bool
}

// Incident is a health incident for the stand-in to report: System is
// one of DCGM's dcgmHealthSystems_t bits, Result DCGM's 10 (warn) or 20
// (fail); on NVSwitch Entity where Switch is set, else on GPU Entity.
type Incident struct {
	Entity int
	Switch bool
	System uint
	Result int
}

// Recovery is a GPU's recovery action (DCGM_FI_DEV_GPU_RECOVERY_ACTION),
// an nvmlDeviceGpuRecoveryAction_t, or RecoveryUnsupported.
type Recovery struct {
	GPU    int
	Action int
}

// RecoveryUnsupported is the action of a GPU whose driver predates the
// field: the stand-in reads DCGM's NOT_SUPPORTED blank, with a status of
// OK, so that only the value marks it.
const RecoveryUnsupported = -1

// XID is an XID event for the stand-in to report.
type XID struct {
	GPU      int
	Code     int
	TSMicros int64
}

// Write writes the state file at path.
func (s State) Write(path string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "gpus %d\n", s.GPUs)
	for _, i := range s.NoProf {
		fmt.Fprintf(&b, "noprof %d\n", i)
	}
	if s.MIG {
		b.WriteString("mig 1\n")
	}
	connected := 0
	if s.Connected {
		connected = 1
	}
	fmt.Fprintf(&b, "connected %d\n", connected)
	fmt.Fprintf(&b, "epoch %d\n", max(s.Epoch, 1))
	if s.Stale {
		b.WriteString("stale 1\n")
	}
	for _, x := range s.XIDs {
		fmt.Fprintf(&b, "xid %d %d %d\n", x.GPU, x.Code, x.TSMicros)
	}
	for _, r := range s.Recovery {
		fmt.Fprintf(&b, "recovery %d %d\n", r.GPU, r.Action)
	}
	for _, i := range s.DiagFail {
		fmt.Fprintf(&b, "diagfail %d\n", i)
	}
	if s.Switches > 0 {
		fmt.Fprintf(&b, "switches %d\n", s.Switches)
	}
	for _, h := range s.Health {
		key := "health"
		if h.Switch {
			key = "switchhealth"
		}
		fmt.Fprintf(&b, "%s %d %d %d\n", key, h.Entity, h.System, h.Result)
	}
	if s.NoHealth {
		b.WriteString("nohealth 1\n")
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Watch is one dcgmWatchFields call the stand-in logged: the update
// frequency asked for and the field IDs of the group watched.
type Watch struct {
	FreqMicros int64
	Fields     []uint16
}

// WatchLogEnv names the file the stand-in logs its watches to.
const WatchLogEnv = "STANDIN_DCGM_WATCHLOG"

// DiagLogEnv names the file the stand-in logs its diagnostics to, one
// line per dcgmRunDiagnostic call: "diag LEVEL GPU GPU ...", with DCGM's
// level (10 for level 1, the short run) and the GPUs of the group.
const DiagLogEnv = "STANDIN_DCGM_DIAGLOG"

// HealthLogEnv names the file the stand-in logs its health calls to:
// "healthset SYSTEMS GPU ... [sw SWITCH ...]" (the systems in hex) per
// dcgmHealthSet, "healthcheck N" (incidents answered) per dcgmHealthCheck.
const HealthLogEnv = "STANDIN_DCGM_HEALTHLOG"

// ReadWatches reads the watch log at path.
func ReadWatches(path string) ([]Watch, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ws []Watch
	for i, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		parts := strings.Fields(line)
		if len(parts) < 2 || parts[0] != "watch" {
			return nil, fmt.Errorf("%s:%d: not a watch line: %q", path, i+1, line)
		}
		var w Watch
		if _, err := fmt.Sscan(parts[1], &w.FreqMicros); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		for _, p := range parts[2:] {
			var id uint16
			if _, err := fmt.Sscan(p, &id); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
			}
			w.Fields = append(w.Fields, id)
		}
		ws = append(ws, w)
	}
	return ws, nil
}
