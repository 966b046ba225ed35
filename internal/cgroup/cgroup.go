// Package cgroup finds the Kubernetes pod and container, and the Slurm job
// step, a process runs in from its /proc/PID/cgroup, as the kubelet, the
// container runtimes and slurmstepd name their cgroups: cgroup v1 and v2,
// the systemd and the cgroupfs drivers, containerd, CRI-O and Docker, and
// Slurm's cgroup/v1 and cgroup/v2 plugins. testdata/README.md lists every
// form read here with a public source for it.
//
// It reads a /proc tree given as a directory, so that tests use a fake one
// and an agent in a container reads the host's (hostPID: true) through
// /proc, or through a host mount elsewhere.
package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Identity is where a process runs in Kubernetes and Slurm terms. A Slurm
// node that is itself a pod (Soperator, SUNK) runs jobs whose processes
// have both: the job is their owner, the pod where they run.
type Identity struct {
	// PodUID is the pod's UID as the API server spells it (with dashes),
	// or a static pod's 32 hex digits; empty outside any pod.
	PodUID string
	// ContainerID is the runtime's 64-hex-digit container ID; empty for a
	// process in the pod's own cgroup or in CRI-O's monitor (conmon) of a
	// container, which belong to the pod but to no container.
	ContainerID string
	// Slurm is the Slurm job step the process runs in; zero outside any.
	Slurm SlurmStep
}

// InPod reports whether the process runs in a pod.
func (id Identity) InPod() bool { return id.PodUID != "" }

// Read parses the cgroup file of pid under procRoot (normally /proc). An
// error wrapping fs.ErrNotExist means the process is gone.
func Read(procRoot string, pid uint32) (Identity, error) {
	name := filepath.Join(procRoot, strconv.FormatUint(uint64(pid), 10), "cgroup")
	data, err := os.ReadFile(name)
	if err != nil {
		return Identity{}, err
	}
	return Parse(name, data)
}

// Parse reads the content of a /proc/PID/cgroup file; name is the file's
// name in errors. Under cgroup v1 a process has one line per hierarchy (and
// a cgroup v2 line in hybrid mode): the first line that places it in a pod
// gives the pod, and the first that names its container the container, so
// that a hierarchy the runtime leaves at the pod's level does not hide the
// container. A process in no pod has an empty Identity and no error. A line
// that is not a cgroup line, or a pod path that names its pod or container
// in a form this package does not know, is an error naming the file and
// line: attributing such a process to no pod would be a guess.
func Parse(name string, data []byte) (Identity, error) {
	var found Identity
	for n := 1; len(data) > 0; n++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if len(line) == 0 {
			continue // the file ends with a newline
		}
		id, err := ParseLine(string(line))
		if err != nil {
			return Identity{}, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		switch {
		case !id.InPod():
		case !found.InPod():
			found.PodUID, found.ContainerID = id.PodUID, id.ContainerID
		case found.ContainerID == "" && id.PodUID == found.PodUID:
			found.ContainerID = id.ContainerID
		}
		// Under cgroup v1 slurmstepd places a task in each controller it
		// constrains (cpuset, memory, devices) and leaves the others at
		// the root; the freezer stops at the step. The first line that
		// names a job names it, and a later one of the same step its task.
		switch s := &found.Slurm; {
		case !s.InJob():
			*s = id.Slurm
		case s.Task == "" && s.JobID == id.Slurm.JobID && s.SLUID == id.Slurm.SLUID && s.Step == id.Slurm.Step:
			s.Task = id.Slurm.Task
		}
	}
	return found, nil
}

// ParseLine reads one line of a cgroup file: hierarchy-ID:controller-list:
// cgroup-path (cgroups(7)), "0::/path" for cgroup v2. The path itself may
// hold colons, so only the first two separate fields.
func ParseLine(line string) (Identity, error) {
	hier, rest, ok1 := strings.Cut(line, ":")
	_, path, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 || hier == "" || strings.Trim(hier, "0123456789") != "" || !strings.HasPrefix(path, "/") {
		return Identity{}, fmt.Errorf("want hierarchy-ID:controller-list:/cgroup-path, got %q", line)
	}
	return PathIdentity(path)
}

// PathIdentity finds the pod and the container in a cgroup path. It reads
// the path's components wherever they are, since where the kubelet's root
// lies varies (/kubepods, /kubelet.slice/kubelet-kubepods.slice in kind,
// the agent's own cgroup namespace, which makes the path relative:
// /../../kubepods-…). Only the components from the pod's down are read
// strictly.
func PathIdentity(path string) (Identity, error) {
	parts := strings.Split(path, "/")
	slurm, _, err := slurmPath(parts)
	if err != nil {
		return Identity{}, fmt.Errorf("cgroup path %q: %w", path, err)
	}
	id, err := podIdentity(path, parts)
	if err != nil {
		return Identity{}, err
	}
	id.Slurm = slurm
	return id, nil
}

// podIdentity finds the pod and the container among a path's components.
func podIdentity(path string, parts []string) (Identity, error) {
	// A cgroupfs pod directory (pod<uid>) counts only under kubepods, or
	// in a path that climbs out of the reader's cgroup namespace, whose
	// root hides the kubepods above it (cgroup_namespaces(7)).
	kubepods, climbed := false, false
	for i, p := range parts {
		if p == ".." {
			climbed = true
		}
		if p == "" || p == ".." {
			continue
		}
		uid, rest, isPod, err := podComponent(p, kubepods, climbed)
		if err != nil {
			return Identity{}, fmt.Errorf("cgroup path %q: %w", path, err)
		}
		if !isPod {
			if strings.HasPrefix(p, "kubepods") || strings.Contains(p, "-kubepods") {
				kubepods = true
			}
			continue
		}
		id := Identity{PodUID: uid}
		if rest != "" {
			// The kubelet's systemd name given to a runtime configured
			// for cgroupfs: the whole container path is one component.
			id.ContainerID, err = containerComponent(rest)
		} else if next := nextComponent(parts[i+1:]); next != "" {
			id.ContainerID, err = containerComponent(next)
		}
		if err != nil {
			return Identity{}, fmt.Errorf("cgroup path %q: %w", path, err)
		}
		return id, nil
	}
	return Identity{}, nil
}

func nextComponent(parts []string) string {
	for _, p := range parts {
		if p != "" {
			return p
		}
	}
	return ""
}

// podComponent reads a pod's own cgroup component:
//
//	kubepods-burstable-pod<uid with _ for ->.slice   systemd driver
//	kubepods-pod<uid>.slice                          systemd, guaranteed QoS
//	pod<uid>                                         cgroupfs driver, under kubepods
//
// rest is what follows ".slice:" when a runtime configured for cgroupfs was
// handed the kubelet's systemd cgroup name (slice:prefix:name) and used it
// as one directory.
//
// Under kubepods, a pod<…> directory that holds no UID is an error; in a
// path that only climbed out of the reader's cgroup namespace it is some
// other cgroup's name.
func podComponent(p string, underKubepods, climbed bool) (uid, rest string, isPod bool, err error) {
	if strings.HasPrefix(p, "pod") && (underKubepods || climbed) && !strings.Contains(p, ".") {
		uid = p[len("pod"):]
		switch {
		case validUID(uid):
			return uid, "", true, nil
		case underKubepods:
			return "", "", false, fmt.Errorf("pod component %q: %q is not a pod UID", p, uid)
		default:
			return "", "", false, nil
		}
	}
	name := p
	if i := strings.Index(p, ".slice:"); i >= 0 {
		name, rest = p[:i+len(".slice")], p[i+len(".slice:"):]
	}
	if !strings.HasSuffix(name, ".slice") || !strings.Contains(name, "kubepods") {
		return "", "", false, nil
	}
	i := strings.LastIndex(name, "-pod")
	if i < 0 {
		return "", "", false, nil // a QoS slice: kubepods-burstable.slice
	}
	uid = strings.ReplaceAll(name[i+len("-pod"):len(name)-len(".slice")], "_", "-")
	if !validUID(uid) {
		return "", "", false, fmt.Errorf("pod slice %q: %q is not a pod UID", name, uid)
	}
	if rest != "" && strings.Count(rest, ":") != 1 {
		return "", "", false, fmt.Errorf("pod slice %q: want .slice:prefix:id after it, got %q", name, rest)
	}
	return uid, rest, true, nil
}

// containerComponent reads the component under a pod's:
//
//	cri-containerd-<id>.scope   containerd, systemd driver
//	crio-<id>.scope             CRI-O, systemd driver
//	crio-<id>                   CRI-O, cgroupfs driver
//	docker-<id>.scope           Docker (cri-dockerd), systemd driver
//	<id>                        containerd and Docker, cgroupfs driver
//	crio-conmon-<id>[.scope]    CRI-O's monitor of the container: in the pod, in no container
//	cri-containerd:<id>         the rest of a systemd name used as a directory
//
// and returns the container ID.
func containerComponent(p string) (string, error) {
	s := strings.TrimSuffix(p, ".scope")
	if strings.HasPrefix(s, "crio-conmon-") {
		if !validContainerID(s[len("crio-conmon-"):]) {
			return "", fmt.Errorf("container component %q: not a container ID", p)
		}
		return "", nil
	}
	for _, prefix := range []string{"cri-containerd-", "crio-", "docker-", "cri-containerd:", "crio:", "docker:"} {
		if id, ok := strings.CutPrefix(s, prefix); ok {
			if !validContainerID(id) {
				return "", fmt.Errorf("container component %q: %q is not a container ID", p, id)
			}
			return id, nil
		}
	}
	if validContainerID(s) && s == p {
		return s, nil
	}
	return "", fmt.Errorf("container component %q: not cri-containerd-<id>.scope, crio-<id>[.scope], docker-<id>.scope or <id> (64 hex digits)", p)
}

// validUID accepts the UID of an API pod (a UUID: 8-4-4-4-12 lower-case hex
// digits) and of a static pod (the kubelet's 32-hex-digit hash of its
// manifest).
func validUID(s string) bool {
	switch len(s) {
	case 32:
		return isHex(s)
	case 36:
		for _, i := range []int{8, 13, 18, 23} {
			if s[i] != '-' {
				return false
			}
		}
		return isHex(s[0:8]) && isHex(s[9:13]) && isHex(s[14:18]) && isHex(s[19:23]) && isHex(s[24:])
	default:
		return false
	}
}

// validContainerID accepts a CRI container ID: 64 lower-case hex digits,
// as containerd, CRI-O and Docker all make them.
func validContainerID(s string) bool { return len(s) == 64 && isHex(s) }

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// errStat is a /proc/PID/stat the kernel would not write.
var errStat = errors.New("malformed stat file")

// StartTime returns when pid started, in clock ticks after boot (field 22 of
// /proc/PID/stat, proc(5)): the same PID with another start time is another
// process. An error wrapping fs.ErrNotExist means the process is gone.
func StartTime(procRoot string, pid uint32) (uint64, error) {
	name := filepath.Join(procRoot, strconv.FormatUint(uint64(pid), 10), "stat")
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	// The command (field 2) is in parentheses and may hold spaces and
	// parentheses itself: the fields resume after the last ')'.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("%s: %w", name, errStat)
	}
	fields := strings.Fields(string(data[i+1:]))
	const startTime = 22 - 3 // fields[0] is field 3, the state
	if len(fields) <= startTime {
		return 0, fmt.Errorf("%s: %w: %d fields after the command", name, errStat, len(fields))
	}
	v, err := strconv.ParseUint(fields[startTime], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: starttime %q", name, errStat, fields[startTime])
	}
	return v, nil
}

// BootTime returns when the host booted, in seconds since the epoch (the
// btime line of /proc/stat, proc(5)), which turns StartTime into a wall
// time.
func BootTime(procRoot string) (int64, error) {
	name := filepath.Join(procRoot, "stat")
	data, err := os.ReadFile(name)
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: btime %q: %w", name, strings.TrimSpace(v), err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("%s: no btime line", name)
}

// TicksPerSecond is USER_HZ, the unit of StartTime: 100 on every Linux
// architecture Go supports (the kernel fixes it for user space whatever its
// internal HZ).
const TicksPerSecond = 100
