package nvmlbackend

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

// TestNVMLProcessesSlurm: GPU processes in Slurm jobs' cgroups are their
// jobs' (slurm_job), with job and step: a batch step under cgroup v2, an
// srun step under cgroup v1, and a Slurm node that is a pod, whose job's
// process keeps the pod's UID as where it runs.
func TestNVMLProcessesSlurm(t *testing.T) {
	srv := nvmlmock.New()
	proc := newFakeProc(t)
	proc.run(100, 500, "", "")
	proc.run(200, 600, "", "")
	proc.run(300, 700, "", "")
	cgroupOf := map[uint32]string{
		100: "0::/system.slice/slurmstepd.scope/job_4242/step_batch/user/task_0\n",
		200: "10:memory:/slurm/uid_1000/job_4243/step_1/task_3\n5:freezer:/slurm/uid_1000/job_4243/step_1\n1:name=systemd:/system.slice/slurmd.service\n",
		300: "0::/kubepods.slice/kubepods-pod" + strings.ReplaceAll(podA, "-", "_") + ".slice/cri-containerd-" + ctrA +
			".scope/system.slice/slurmstepd.scope/job_4244/step_0/user/task_0\n",
	}
	for pid, cg := range cgroupOf {
		require.NoError(t, os.WriteFile(filepath.Join(proc.root, strconv.Itoa(int(pid)), "cgroup"), []byte(cg), 0o600))
	}
	g := &gpu0{running: []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 1 << 30}, {Pid: 200, UsedGpuMemory: 2 << 30}, {Pid: 300, UsedGpuMemory: 3 << 30}}}
	g.install(srv.Devices[0].(*dgxa100.Device))
	b, _ := newProcBackend(t, srv, proc.root)

	samples := collect(t, b, 100)
	var got []gpu.Process
	for _, p := range samples[0].Processes {
		got = append(got, gpu.Process{PID: p.PID, Owner: p.Owner, PodUID: p.PodUID, ContainerID: p.ContainerID, Slurm: p.Slurm})
	}
	require.Equal(t, []gpu.Process{
		{PID: 100, Owner: gpu.OwnerSlurmJob, Slurm: gpu.SlurmJob{ID: "4242", Step: "batch"}},
		{PID: 200, Owner: gpu.OwnerSlurmJob, Slurm: gpu.SlurmJob{ID: "4243", Step: "1"}},
		{PID: 300, Owner: gpu.OwnerSlurmJob, PodUID: podA, ContainerID: ctrA, Slurm: gpu.SlurmJob{ID: "4244", Step: "0"}},
	}, got)
}
