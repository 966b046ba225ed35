package cgroup

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReadSlurm reads each of Slurm's forms of testdata/README.md.
func TestReadSlurm(t *testing.T) {
	for _, tc := range []struct {
		pid  uint32
		what string
		want Identity
	}{
		{5001, "v2, step 0, task 0", Identity{Slurm: SlurmStep{JobID: "3385", Step: "0", Task: "0"}}},
		{5002, "v2, the extern step", Identity{Slurm: SlurmStep{JobID: "3385", Step: "extern", Task: "0"}}},
		{5003, "v2, the interactive step", Identity{Slurm: SlurmStep{JobID: "3385", Step: "interactive", Task: "0"}}},
		{5004, "v2, the batch step", Identity{Slurm: SlurmStep{JobID: "4242", Step: "batch", Task: "0"}}},
		{5005, "v2, slurmstepd in its step's slurm cgroup", Identity{Slurm: SlurmStep{JobID: "3385", Step: "0"}}},
		{5006, "v2, several slurmd: <node>_slurmstepd.scope", Identity{Slurm: SlurmStep{JobID: "4242", Step: "1", Task: "3", Node: "gamba1"}}},
		{5007, "v2, slurmstepd.scope/system: no job", Identity{}},
		{5008, "v1, per controller, the freezer at the step", Identity{Slurm: SlurmStep{JobID: "1", Step: "0", Task: "0", UID: "1000"}}},
		{5009, "v1, CgroupPrepend /slurm_<node>, batch step", Identity{Slurm: SlurmStep{JobID: "77", Step: "batch", Task: "0", UID: "1000"}}},
		{5013, "v1, the freezer's step line before the memory's task line", Identity{Slurm: SlurmStep{JobID: "1", Step: "0", Task: "2", UID: "1000"}}},
		{5010, "v2, Slurm 26.05's SLUID job directory", Identity{Slurm: SlurmStep{SLUID: "sEKNKTV3WPV500", Step: "0", Task: "0"}}},
		{5011, "a Slurm node in a pod: the pod and the job", Identity{
			PodUID: uid, ContainerID: cid, Slurm: SlurmStep{JobID: "4242", Step: "0", Task: "1"},
		}},
		{5012, "v2 from a private cgroup namespace, a heterogeneous step's component, task_special", Identity{
			Slurm: SlurmStep{JobID: "4242", Step: "0+1", Task: "special"},
		}},
	} {
		t.Run(tc.what, func(t *testing.T) {
			got, err := Read(procRoot, tc.pid)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
			require.Equal(t, tc.want.Slurm.JobID != "" || tc.want.Slurm.SLUID != "", got.Slurm.InJob())
		})
	}
}

// TestReadSlurmUnknown: below a slurmstepd scope or a uid_<n>/job_ pair,
// a component Slurm does not write is an error naming it.
func TestReadSlurmUnknown(t *testing.T) {
	for pid, want := range map[uint32]string{
		3004: `testdata/proc/3004/cgroup:1: cgroup path "/system.slice/slurmstepd.scope/job_abc/step_0/user/task_0": slurm job component "job_abc"`,
		3005: `slurm step component "step_foo"`,
		3006: `slurm step 0: component "task_0": want user or slurm`,
		3007: `slurm step 0: component "task_x": not task_<n>`,
	} {
		_, err := Read(procRoot, pid)
		require.ErrorContainsf(t, err, want, "pid %d", pid)
	}
}

// TestSlurmLine: the cases that tell Slurm's layout from look-alikes.
func TestSlurmLine(t *testing.T) {
	for _, tc := range []struct {
		line    string
		want    SlurmStep
		wantErr string
	}{
		// A v1 user's cgroup with no job under it is not Slurm's.
		{line: "4:memory:/user.slice/uid_1000", want: SlurmStep{}},
		{line: "4:memory:/slurm/uid_1000", want: SlurmStep{}},
		// The job's own cgroup: a job, no step.
		{line: "4:memory:/slurm/uid_1000/job_5", want: SlurmStep{JobID: "5", UID: "1000"}},
		{line: "0::/system.slice/slurmstepd.scope/job_5", want: SlurmStep{JobID: "5"}},
		// cgroup v1 has no user level: a v2 path under uid_ is an error.
		{line: "4:memory:/slurm/uid_1000/job_5/step_0/user/task_0", wantErr: `"user/task_0": want one task_<n> below the step`},
		// A SLUID is a v2 form only; job IDs have no leading zero.
		{line: "4:memory:/slurm/uid_1000/sEKNKTV3WPV500", want: SlurmStep{}},
		{line: "0::/system.slice/slurmstepd.scope/job_0123", wantErr: `slurm job component "job_0123"`},
		{line: "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV5I0", wantErr: `slurm job component`}, // I is no Crockford digit
		{line: "0::/system.slice/_slurmstepd.scope/job_5", wantErr: "no node name"},
		// A het step's component needs its number.
		{line: "0::/system.slice/slurmstepd.scope/job_5/step_0+", wantErr: `slurm step component "step_0+"`},
		{line: "0::/system.slice/slurmstepd.scope/job_5/step_0/user/task_0/extra", wantErr: `"task_0/extra": want one task_<n> below the step`},
		// The same tree under another slice (CgroupSlice).
		{line: "0::/slurm.slice/slurmstepd.scope/job_5/step_2/user/task_7", want: SlurmStep{JobID: "5", Step: "2", Task: "7"}},
	} {
		t.Run(tc.line, func(t *testing.T) {
			got, err := ParseLine(tc.line)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Slurm)
		})
	}
}

// FuzzSlurmRoundTrip: a job step written in each of Slurm's forms parses
// back to itself, under any root that does not itself name one.
func FuzzSlurmRoundTrip(f *testing.F) {
	f.Add(uint32(4242), "0", uint32(0), uint8(0), "/system.slice")
	f.Add(uint32(1), "batch", uint32(3), uint8(1), "/slurm")
	f.Add(uint32(77), "extern", uint32(0), uint8(2), "/slurm_node1")
	f.Fuzz(func(t *testing.T, job uint32, step string, task uint32, form uint8, root string) {
		if job == 0 || !validStep(step) || strings.ContainsAny(root, "\n:") || (root != "" && root[0] != '/') ||
			strings.Contains(root, "slurmstepd.scope") || strings.Contains(root, "uid_") ||
			strings.Contains(root, "kubepods") || strings.Contains(root, "pod") {
			return
		}
		root = strings.TrimSuffix(root, "/")
		j, k := uitoa(job), uitoa(task)
		var line string
		want := SlurmStep{JobID: j, Step: step, Task: k}
		switch form % 3 {
		case 0:
			line = "0::" + root + "/slurmstepd.scope/job_" + j + "/step_" + step + "/user/task_" + k
		case 1:
			line = "4:memory:" + root + "/uid_1000/job_" + j + "/step_" + step + "/task_" + k
			want.UID = "1000"
		default:
			line = "0::" + root + "/n1_slurmstepd.scope/job_" + j + "/step_" + step + "/slurm"
			want.Task, want.Node = "", "n1"
		}
		got, err := ParseLine(line)
		if err != nil || got.Slurm != want {
			t.Fatalf("%q: got %+v, %v; want %+v", line, got.Slurm, err, want)
		}
	})
}

func uitoa(v uint32) string {
	var b [10]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}
