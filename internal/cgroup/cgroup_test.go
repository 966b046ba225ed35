package cgroup

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	uid = "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c"
	cid = "3f9a1c2b4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e7f8"
)

const procRoot = "testdata/proc"

// TestRead reads every form of testdata/README.md from the fake /proc tree.
func TestRead(t *testing.T) {
	for _, tc := range []struct {
		pid  uint32
		what string
		want Identity
	}{
		{1001, "v2, systemd, containerd, burstable", Identity{PodUID: uid, ContainerID: cid}},
		{1002, "v2, systemd, containerd, guaranteed", Identity{PodUID: uid, ContainerID: cid}},
		{1003, "v2, systemd, CRI-O, besteffort", Identity{PodUID: uid, ContainerID: cid}},
		{1004, "v2, systemd, Docker, private cgroup namespace", Identity{
			PodUID: "fd698699-eabf-4c23-92ef-cf0bbdb78261", ContainerID: "2cc65c162ca1388b6b8d5ccfb701d22fc96675ccf8b2f1590c490c2c4039547f",
		}},
		{1005, "v2, cgroupfs, containerd, burstable", Identity{PodUID: uid, ContainerID: cid}},
		{1006, "v1, cgroupfs, besteffort, every hierarchy", Identity{PodUID: uid, ContainerID: cid}},
		{1007, "v1 hybrid, systemd, CRI-O, burstable", Identity{PodUID: uid, ContainerID: cid}},
		{1008, "v1, cgroupfs, CRI-O, guaranteed", Identity{
			PodUID: "068e8fa0-9213-11e7-a01f-507b9d4141fa", ContainerID: "81e5c2990803c383229c9680ce964738d5e566d97f5bd436ac34808d2ec75d5f",
		}},
		{1009, "CRI-O conmon: the pod, no container", Identity{PodUID: uid}},
		{1010, "systemd name used as a cgroupfs directory", Identity{PodUID: uid, ContainerID: cid}},
		{1011, "kind: kubelet root /kubelet inside a Docker node", Identity{
			PodUID: "b6a16766-05ee-446a-8ee5-ff96a817f47c", ContainerID: "679f3691f7f1b20198548be43b86f265f9fff9be0ac4c973638f5ee89decbca9",
		}},
		{1012, "static pod UID", Identity{PodUID: "8c0a5fb2e3d14b7c9a1f6e2d3c4b5a69", ContainerID: cid}},
		{1013, "v2, cgroupfs, private cgroup namespace", Identity{PodUID: uid, ContainerID: cid}},
		{1014, "the pod's own cgroup", Identity{PodUID: uid}},
		{2001, "host: systemd service", Identity{}},
		{2002, "host: v1 user session", Identity{}},
		{2003, "host: init", Identity{}},
		{2004, "a QoS slice, no pod", Identity{}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			got, err := Read(procRoot, tc.pid)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.want.PodUID != "", got.InPod())
		})
	}
}

// TestReadUnknown: a form this package does not know is an error naming
// the file and the line, not a process attributed to no pod.
func TestReadUnknown(t *testing.T) {
	for pid, want := range map[uint32]string{
		3001: "testdata/proc/3001/cgroup:1: ",
		3002: "testdata/proc/3002/cgroup:2: want hierarchy-ID:controller-list:/cgroup-path, got \"cgroup v3 has not happened\"",
		3003: "testdata/proc/3003/cgroup:1: ",
	} {
		_, err := Read(procRoot, pid)
		require.ErrorContainsf(t, err, want, "pid %d", pid)
	}
	_, err := Read(procRoot, 3001)
	require.ErrorContains(t, err, `container component "kata-`+cid+`.scope"`)
	_, err = Read(procRoot, 3003)
	require.ErrorContains(t, err, `"not-a-uid" is not a pod UID`)
}

// TestReadGone: a process that exited is fs.ErrNotExist, which callers
// tell apart from a file they cannot read.
func TestReadGone(t *testing.T) {
	_, err := Read(procRoot, 4242)
	require.ErrorIs(t, err, fs.ErrNotExist)
	_, err = StartTime(procRoot, 4242)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func TestParseLine(t *testing.T) {
	for _, tc := range []struct {
		line string
		want Identity
		err  string
	}{
		{line: "0::/", want: Identity{}},
		{line: "0::/kubepods/burstable/pod" + uid + "/" + cid, want: Identity{PodUID: uid, ContainerID: cid}},
		// A container that makes cgroups of its own: only the component
		// under the pod's is the container.
		{line: "0::/kubepods/burstable/pod" + uid + "/" + cid + "/init.scope", want: Identity{PodUID: uid, ContainerID: cid}},
		// pod<uid> outside kubepods is not a pod: another tool's name.
		{line: "0::/machine.slice/pod" + uid, want: Identity{}},
		{line: "3:cpu,cpuacct:/kubepods/pod" + uid + "/docker-" + cid + ".scope", want: Identity{PodUID: uid, ContainerID: cid}},
		{line: "", err: "want hierarchy-ID"},
		{line: "x::/", err: "want hierarchy-ID"},
		{line: "0:/", err: "want hierarchy-ID"},
		{line: "0::relative", err: "want hierarchy-ID"},
		{line: "0::/kubepods/burstable/pod" + uid + "/" + cid[:63], err: "not cri-containerd-"},
		{line: "0::/kubepods/burstable/pod" + strings.ToUpper(uid) + "/" + cid, err: "is not a pod UID"},
		{line: "0::/kubepods.slice/kubepods-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/crio-" + cid[1:] + ".scope", err: "is not a container ID"},
		{line: "0::/kubepods-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice:cri-containerd", err: "want .slice:prefix:id"},
	} {
		got, err := ParseLine(tc.line)
		if tc.err != "" {
			require.ErrorContainsf(t, err, tc.err, "%q", tc.line)
			continue
		}
		require.NoErrorf(t, err, "%q", tc.line)
		require.Equalf(t, tc.want, got, "%q", tc.line)
	}
}

// TestParseContainerAfterPod: a v1 hierarchy that stops at the pod's level
// does not hide the container another hierarchy names, and a hierarchy
// naming another pod does not change the pod.
func TestParseContainerAfterPod(t *testing.T) {
	other := "11111111-2222-3333-4444-555555555555"
	data := strings.Join([]string{
		"4:memory:/kubepods/burstable/pod" + uid,
		"3:cpu:/kubepods/burstable/pod" + other + "/" + strings.Repeat("a", 64),
		"2:pids:/kubepods/burstable/pod" + uid + "/" + cid,
	}, "\n")
	got, err := Parse("cgroup", []byte(data))
	require.NoError(t, err)
	require.Equal(t, Identity{PodUID: uid, ContainerID: cid}, got)
}

func TestStartTime(t *testing.T) {
	st, err := StartTime(procRoot, 1001)
	require.NoError(t, err)
	require.Equal(t, uint64(123456), st, "after the last ')' of a command holding one")
	st, err = StartTime(procRoot, 1002)
	require.NoError(t, err)
	require.Equal(t, uint64(777), st)
	_, err = StartTime(procRoot, 1003)
	require.ErrorIs(t, err, errStat)
	require.ErrorContains(t, err, filepath.Join(procRoot, "1003", "stat"))
	require.NotErrorIs(t, err, fs.ErrNotExist)

	bt, err := BootTime(procRoot)
	require.NoError(t, err)
	require.Equal(t, int64(1767225000), bt)
	_, err = BootTime(t.TempDir())
	require.ErrorIs(t, err, fs.ErrNotExist)
}
