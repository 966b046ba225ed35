package cgroupstat

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sysfile"
)

// Stats are one pod's figures. Each group has its Has… flags: a figure whose
// file is absent (a controller not enabled, an older kernel) is not
// reported, which is different from zero.
type Stats struct {
	CPU    CPUStat
	Limit  CPULimit
	Memory Memory
	// CPUPressure, MemoryPressure and IOPressure are the pod's
	// cpu.pressure, memory.pressure and io.pressure (cgroup2 only: under
	// V1 they come from Hybrid's unified/ where the pod has a directory).
	CPUPressure, MemoryPressure, IOPressure PSI
}

// CPULimit is the pod's CFS bandwidth limit.
type CPULimit struct {
	// CPUs is quota / period: 0.1 for a limit of 100m. Meaningful only
	// when Has; a pod without a limit (cpu.max "max", cfs_quota_us -1) has
	// Has false.
	CPUs float64
	Has  bool
}

// Memory is the pod's memory use and limit, in bytes.
type Memory struct {
	Usage    uint64
	HasUsage bool
	// Limit is meaningful only when HasLimit; "max" (v2) and the v1
	// kernel's near-2^63 "unlimited" leave HasLimit false.
	Limit    uint64
	HasLimit bool
}

// NodePressure is the node's /proc/pressure.
type NodePressure struct {
	CPU, Memory, IO PSI
}

// ErrGone is returned (wrapped, together with fs.ErrNotExist) by ReadPod
// when the pod's cgroup directories no longer exist: the pod was deleted
// between Pods and ReadPod, which is normal on a node.
var ErrGone = errors.New("pod cgroup gone")

// v1Unlimited: the v1 memory controller writes its "no limit" as the
// largest page-aligned value below 2^63 (9223372036854771712 with 4 KiB
// pages, lower with larger pages). No machine has 2^62 bytes of memory, so
// any limit from there up is no limit.
const v1Unlimited = 1 << 62

// ReadPod reads the pod's figures into s (overwritten). It returns an error
// naming the file and line when a file is malformed, and one wrapping
// ErrGone and fs.ErrNotExist when every directory of the pod has vanished;
// a file that is merely absent leaves its figure not reported.
func (r *Reader) ReadPod(p Pod, s *Stats) error {
	*s = Stats{}
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	read := func(dir, file string) ([]byte, string, bool) {
		if dir == "" {
			return nil, "", false
		}
		name := filepath.Join(dir, file)
		data, ok, err := r.readFile(name)
		note(err)
		return data, name, ok
	}

	// CPU: v1's cpu and cpuacct hierarchies when the pod is in them,
	// else cgroup2's cpu.stat and cpu.max.
	cpuDir, v1 := p.CPU, true
	if cpuDir == "" && p.CPUAcct == "" {
		cpuDir, v1 = p.Unified, false
	}
	if data, name, ok := read(cpuDir, "cpu.stat"); ok {
		st, err := ParseCPUStat(name, data)
		note(err)
		s.CPU = st
	}
	if v1 {
		if data, name, ok := read(p.CPUAcct, "cpuacct.usage"); ok {
			v, err := parseValue(name, data)
			note(err)
			s.CPU.Usage, s.CPU.HasUsage = nanos(v), err == nil
		}
		note(r.readV1Limit(p.CPU, &s.Limit))
	} else if data, name, ok := read(cpuDir, "cpu.max"); ok {
		l, err := parseCPUMax(name, data)
		note(err)
		s.Limit = l
	}

	if p.Memory != "" {
		if data, name, ok := read(p.Memory, "memory.usage_in_bytes"); ok {
			v, err := parseValue(name, data)
			note(err)
			s.Memory.Usage, s.Memory.HasUsage = v, err == nil
		}
		if data, name, ok := read(p.Memory, "memory.limit_in_bytes"); ok {
			v, err := parseValue(name, data)
			note(err)
			s.Memory.Limit, s.Memory.HasLimit = v, err == nil && v < v1Unlimited
		}
	} else {
		if data, name, ok := read(p.Unified, "memory.current"); ok {
			v, err := parseValue(name, data)
			note(err)
			s.Memory.Usage, s.Memory.HasUsage = v, err == nil
		}
		if data, name, ok := read(p.Unified, "memory.max"); ok && !isMax(data) {
			v, err := parseValue(name, data)
			note(err)
			s.Memory.Limit, s.Memory.HasLimit = v, err == nil
		}
	}

	for _, pr := range []struct {
		file string
		dst  *PSI
	}{{"cpu.pressure", &s.CPUPressure}, {"memory.pressure", &s.MemoryPressure}, {"io.pressure", &s.IOPressure}} {
		if data, name, ok := read(p.Unified, pr.file); ok {
			psi, err := ParsePressure(name, data)
			note(err)
			*pr.dst = psi
		}
	}

	if len(errs) == 0 && *s == (Stats{}) && !p.anyDirExists() {
		return fmt.Errorf("pod %s: %w: %w", p.UID, ErrGone, fs.ErrNotExist)
	}
	return errors.Join(errs...)
}

func (r *Reader) readV1Limit(dir string, l *CPULimit) error {
	if dir == "" {
		return nil
	}
	qname := filepath.Join(dir, "cpu.cfs_quota_us")
	q, ok, err := r.readFile(qname)
	if !ok || err != nil {
		return err
	}
	quota, qok := parseInt(q)
	if !qok {
		return fmt.Errorf("%s:1: want a number of µs or -1, got %q", qname, bytes.TrimSpace(q))
	}
	if quota < 0 {
		return nil // -1: no limit
	}
	pname := filepath.Join(dir, "cpu.cfs_period_us")
	pd, ok, err := r.readFile(pname)
	if !ok || err != nil {
		return err
	}
	period, err := parseValue(pname, pd)
	if err != nil {
		return err
	}
	if period == 0 {
		return fmt.Errorf("%s:1: a period of 0", pname)
	}
	*l = CPULimit{CPUs: float64(quota) / float64(period), Has: true}
	return nil
}

// parseCPUMax reads cgroup2's cpu.max: "quota period", or "max period" for
// no limit.
func parseCPUMax(name string, data []byte) (CPULimit, error) {
	line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte{'\n'})
	q, p, ok := bytes.Cut(line, []byte{' '})
	period, pok := parseUint(p)
	if !ok || !pok || period == 0 {
		return CPULimit{}, fmt.Errorf("%s:1: want \"quota period\" or \"max period\", got %q", name, line)
	}
	if string(q) == "max" {
		return CPULimit{}, nil
	}
	quota, qok := parseUint(q)
	if !qok {
		return CPULimit{}, fmt.Errorf("%s:1: quota %q is neither a number of µs nor max", name, q)
	}
	return CPULimit{CPUs: float64(quota) / float64(period), Has: true}, nil
}

// parseValue reads a file holding one number.
func parseValue(name string, data []byte) (uint64, error) {
	v, ok := parseUint(data)
	if !ok {
		line, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte{'\n'})
		return 0, fmt.Errorf("%s:1: want a number, got %q", name, line)
	}
	return v, nil
}

func parseInt(b []byte) (int64, bool) {
	b = bytes.TrimSpace(b)
	if neg, ok := bytes.CutPrefix(b, []byte{'-'}); ok {
		v, ok := parseUint(neg)
		return -int64(v), ok && v <= 1<<63
	}
	v, ok := parseUint(b)
	return int64(v), ok && v < 1<<63
}

func isMax(data []byte) bool { return string(bytes.TrimSpace(data)) == "max" }

func (p Pod) anyDirExists() bool {
	for _, d := range []string{p.Unified, p.CPU, p.CPUAcct, p.Memory} {
		if d != "" && exists(d) {
			return true
		}
	}
	return false
}

// ReadNodePressure reads procRoot/pressure/{cpu,memory,io} (procRoot is
// normally /proc). A kernel without PSI (CONFIG_PSI off, or psi=0) has no
// such files, which leaves every figure not reported and is no error.
func (r *Reader) ReadNodePressure(procRoot string, np *NodePressure) error {
	*np = NodePressure{}
	var errs []error
	for _, pr := range []struct {
		file string
		dst  *PSI
	}{{"cpu", &np.CPU}, {"memory", &np.Memory}, {"io", &np.IO}} {
		name := filepath.Join(procRoot, "pressure", pr.file)
		data, ok, err := r.readFile(name)
		if err != nil {
			errs = append(errs, err)
		}
		if !ok {
			continue
		}
		psi, err := ParsePressure(name, data)
		if err != nil {
			errs = append(errs, err)
		}
		*pr.dst = psi
	}
	return errors.Join(errs...)
}

// readFile reads name, keeping it open for the next scrape (sysfile.Files:
// a pod's files are read every scrape while it lives); the data is valid
// until the next call. ok is false when the file is absent or its cgroup is
// being removed (ENODEV on a file opened just before its directory went),
// neither of which is an error.
func (r *Reader) readFile(name string) (data []byte, ok bool, err error) {
	data, err = r.files.Read(name)
	switch {
	case err == nil:
		return data, true, nil
	case absent(err):
		return nil, false, nil
	case errors.Is(err, sysfile.ErrTooLong):
		return nil, false, fmt.Errorf("%s: longer than %d bytes", name, sysfile.BufSize)
	default:
		return nil, false, err
	}
}

// EndRound closes the files of pods not read since the last EndRound: a
// scraper calls it after each scrape, so that a deleted pod's files do not
// stay open.
func (r *Reader) EndRound() { r.files.EndRound() }

// Close closes the files kept open; the Reader can still be used.
func (r *Reader) Close() { r.files.Close() }

func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENODEV)
}
