// Package cgroupstat reads the CPU, memory and pressure (PSI) figures of
// every Kubernetes pod's cgroup on a node, and the node's own pressure from
// /proc/pressure. It reads cgroup v2, v1 and hybrid hierarchies, as the
// kubelet lays them out with the systemd and the cgroupfs drivers.
//
// A scraper makes one Reader, calls Pods once per scrape (a few directory
// reads) and ReadPod for each pod (a handful of small files). A figure whose
// file is absent is "not reported" (its Has… field is false), which is not
// zero: a pod without a CPU limit has no limit, not a limit of 0. A file
// that is present but not in the kernel's format is an error naming the
// file and line.
package cgroupstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroup"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sysfile"
)

// Layout is how the cgroup hierarchies are mounted.
type Layout int

const (
	// V2 is one unified cgroup2 hierarchy at the root.
	V2 Layout = iota + 1
	// V1 is one hierarchy per controller (cpu, cpuacct, memory, ...).
	V1
	// Hybrid is V1 plus a cgroup2 hierarchy at unified/, which carries
	// no controllers but does carry the pressure files.
	Hybrid
)

func (l Layout) String() string {
	switch l {
	case V2:
		return "v2"
	case V1:
		return "v1"
	case Hybrid:
		return "hybrid"
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// Pod is a pod's cgroup directory in each hierarchy that has one; an empty
// directory is a hierarchy without the pod (or not mounted). Under V2 only
// Unified is set. Tests and callers may build one by hand to read a single
// directory.
type Pod struct {
	// UID is the pod's UID as the API server spells it (with dashes), or a
	// static pod's 32 hex digits.
	UID string
	// Unified is the pod's directory in the cgroup2 hierarchy (V2, or
	// Hybrid's unified/).
	Unified string
	// CPU, CPUAcct and Memory are the pod's directories in the v1
	// hierarchies of those controllers; CPU and CPUAcct are the same
	// directory where the two are mounted together (cpu,cpuacct).
	CPU, CPUAcct, Memory string
}

// Reader finds pods under a cgroup root and reads their figures. It keeps a
// read buffer and a scratch map between calls, so one Reader must not be
// used by two goroutines at once. The zero Reader reads pods built by hand
// (ReadPod, ReadNodePressure) but finds none.
type Reader struct {
	layout Layout
	// unified is the cgroup2 hierarchy's directory ("" under V1 without
	// unified/); cpu, cpuacct and memory are the v1 hierarchies' ("" when
	// the controller is not mounted).
	unified, cpu, cpuacct, memory string

	files sysfile.Files  // the pods' files, kept open between scrapes
	index map[string]int // pod UID -> index in the slice Pods builds
}

// New inspects the cgroup root (normally /sys/fs/cgroup) and returns a
// Reader for its layout. It fails when the root is neither a cgroup2 mount
// nor holds any v1 hierarchy this package reads.
func New(root string) (*Reader, error) {
	r := &Reader{}
	if exists(filepath.Join(root, "cgroup.controllers")) {
		r.layout, r.unified = V2, root
		return r, nil
	}
	// v1 mounts cpu and cpuacct together on most distributions, as
	// "cpu,cpuacct" with cpu and cpuacct as symbolic links to it; some
	// (and this package's CI) mount them apart.
	r.cpu = firstDir(root, "cpu", "cpu,cpuacct", "cpuacct,cpu")
	r.cpuacct = firstDir(root, "cpuacct", "cpu,cpuacct", "cpuacct,cpu")
	r.memory = firstDir(root, "memory")
	if r.cpu == "" && r.cpuacct == "" && r.memory == "" {
		return nil, fmt.Errorf("%s: neither a cgroup2 root (no cgroup.controllers) nor cgroup v1 hierarchies (no cpu, cpuacct or memory)", root)
	}
	r.layout = V1
	if u := filepath.Join(root, "unified"); exists(filepath.Join(u, "cgroup.controllers")) {
		r.layout, r.unified = Hybrid, u
	}
	// Two names for one directory (a symbolic link to the combined
	// mount) are walked once.
	if r.cpu != "" && r.cpuacct != "" && sameDir(r.cpu, r.cpuacct) {
		r.cpuacct = r.cpu
	}
	return r, nil
}

// Layout returns the layout New found.
func (r *Reader) Layout() Layout { return r.layout }

// maxDepth bounds the walk from a hierarchy's root to a pod directory. The
// deepest form known is kind's
// kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-burstable.slice/<pod>
// (4); one more leaves room for a node-level parent slice.
const maxDepth = 5

// Pods appends to dst the pods found in every hierarchy and returns it.
// A pod directory whose name looks like a pod's but holds no valid UID is
// reported in the error, joined with any other, and skipped; the pods found
// are returned with it. A directory that vanishes during the walk (a pod
// deleted) is not an error.
func (r *Reader) Pods(dst []Pod) ([]Pod, error) {
	if r.index == nil {
		r.index = make(map[string]int)
	}
	clear(r.index)
	var errs []error
	base := len(dst)
	cpuacct := r.cpuacct
	if cpuacct == r.cpu {
		cpuacct = "" // the combined cpu,cpuacct hierarchy, walked as cpu
	}
	for _, h := range []struct {
		root string
		set  func(*Pod, string)
	}{
		{r.unified, func(p *Pod, d string) { p.Unified = d }},
		{r.cpu, func(p *Pod, d string) { p.CPU = d }},
		{cpuacct, func(p *Pod, d string) { p.CPUAcct = d }},
		{r.memory, func(p *Pod, d string) { p.Memory = d }},
	} {
		if h.root != "" {
			dst = r.walk(dst, h.root, "", 0, h.set, &errs)
		}
	}
	if r.cpu != "" && r.cpu == r.cpuacct {
		for i := base; i < len(dst); i++ {
			dst[i].CPUAcct = dst[i].CPU
		}
	}
	return dst, errors.Join(errs...)
}

// walk reads dir (rel below the hierarchy root) and descends towards pod
// directories: at the top only into the kubelet's own (kubepods…,
// kubelet…), below that into every directory that is not a pod's, never
// into a pod's (its containers are not read).
func (r *Reader) walk(dst []Pod, root, rel string, depth int, set func(*Pod, string), errs *[]error) []Pod {
	entries, err := os.ReadDir(filepath.Join(root, rel))
	if err != nil {
		if depth > 0 && errors.Is(err, os.ErrNotExist) {
			return dst // deleted while walking
		}
		*errs = append(*errs, err)
		return dst
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		if depth == 0 && !strings.Contains(name, "kube") {
			continue
		}
		sub := rel + "/" + name
		id, err := cgroup.PathIdentity(sub)
		switch {
		case err != nil:
			*errs = append(*errs, fmt.Errorf("%s: %w", filepath.Join(root, sub), err))
		case id.PodUID != "" && id.ContainerID == "":
			i, ok := r.index[id.PodUID]
			if !ok {
				i = len(dst)
				r.index[id.PodUID] = i
				dst = append(dst, Pod{UID: id.PodUID})
			}
			set(&dst[i], filepath.Join(root, sub))
		case id.PodUID != "":
			// A container's directory under a path PathIdentity read
			// as a pod's: not a pod level, not descended.
		case depth+1 < maxDepth:
			dst = r.walk(dst, root, sub, depth+1, set, errs)
		}
	}
	return dst
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func firstDir(root string, names ...string) string {
	for _, n := range names {
		d := filepath.Join(root, n)
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}
