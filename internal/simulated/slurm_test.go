package simulated

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

func slurmFleet(t *testing.T) *Fleet {
	t.Helper()
	job := func(id uint32, user, account string) *SlurmJob {
		return &SlurmJob{JobID: id, User: user, Account: account, Partition: "gpu", Cluster: "hpc1"}
	}
	cfg := Config{
		Seed: 5, Hosts: 3, GPUsPerHost: 4, HostPrefix: "node", Models: []string{"h100"},
		Workloads: []Workload{
			{Name: "climate", Kind: Training, GPUs: "0-1/*", Phases: []Phase{{Kind: ComputeBound}}, Slurm: job(4242, "alice", "physics")},
			{Name: "infer", Kind: Serving, GPUs: "2/0-1", Phases: []Phase{{Kind: ComputeBound}}, Slurm: job(5000, "bob", "chem")},
			{Name: "shared", Kind: TimeSliced, GPUs: "2/2", Pods: 2, Phases: []Phase{{Kind: ComputeBound}}, Slurm: job(6000, "carol", "bio")},
			{Name: "mig", Kind: MIG, Instances: 2, GPUs: "2/3", Phases: []Phase{{Kind: ComputeBound}}, Slurm: job(7000, "dave", "bio")},
		},
		Faults: []Fault{{Kind: SlowRank, GPUs: "1/2"}},
	}
	fl, err := New(cfg)
	require.NoError(t, err)
	fl.EnableProcesses()
	return fl
}

// TestSlurmJobs: a Slurm workload's GPUs are its jobs', with no pod: a
// two-node training job is one job on both hosts; a serving workload one
// job per GPU; two jobs share a time-sliced GPU, which is neither's; a MIG
// instance is its own job's; the processes carry job and step only, as a
// cgroup names them.
func TestSlurmJobs(t *testing.T) {
	s := collect(t, slurmFleet(t), 10*time.Second)
	byName := map[string]gpu.Sample{}
	for _, smp := range s {
		byName[smp.Device.Host+"/"+smp.Device.Name()] = smp
	}
	climate := gpu.SlurmJob{ID: "4242", Step: "0", Name: "climate", User: "alice", Account: "physics", Partition: "gpu", Cluster: "hpc1"}
	for _, n := range []string{"node0/gpu0", "node0/gpu3", "node1/gpu0", "node1/gpu2"} {
		d := byName[n].Device
		require.Equal(t, climate, d.Slurm, n)
		require.Equal(t, gpu.Pod{}, d.Pod, n)
		require.Len(t, byName[n].Processes, 1)
		require.Equal(t, gpu.Process{PID: byName[n].Processes[0].PID, Owner: gpu.OwnerSlurmJob, Slurm: gpu.SlurmJob{ID: "4242", Step: "0"}},
			stripFigures(byName[n].Processes[0]), n)
	}
	require.Equal(t, "5000", byName["node2/gpu0"].Device.Slurm.ID)
	require.Equal(t, "5001", byName["node2/gpu1"].Device.Slurm.ID)
	require.Equal(t, "bob", byName["node2/gpu1"].Device.Slurm.User)

	shared := byName["node2/gpu2"]
	require.False(t, shared.Device.Slurm.Known(), "a GPU two jobs share is neither's")
	require.Len(t, shared.Processes, 2)
	require.Equal(t, []string{"6000", "6001"}, []string{shared.Processes[0].Slurm.ID, shared.Processes[1].Slurm.ID})

	for k, n := range []string{"node2/gpu3/mig1.0", "node2/gpu3/mig4.0"} {
		m := byName[n]
		require.NotNil(t, m.Device, n)
		require.Equal(t, []string{"7000", "7001"}[k], m.Device.Slurm.ID, n)
		require.Equal(t, gpu.Pod{}, m.Device.Pod)
		require.Equal(t, gpu.OwnerSlurmJob, m.Processes[0].Owner)
	}
}

// TestSlurmStraggler: the slow rank on the second node of the two-node job
// is slower than its peers on both nodes.
func TestSlurmStraggler(t *testing.T) {
	fl := slurmFleet(t)
	s := collect(t, fl, 30*time.Second)
	var slow, peers float64
	n := 0
	for _, smp := range s {
		if smp.Device.Slurm.ID != "4242" {
			continue
		}
		v := val(t, smp, f.SMActive)
		if smp.Device.Host == "node1" && smp.Device.Index == 2 {
			slow = v
			continue
		}
		peers += v
		n++
	}
	require.Equal(t, 7, n)
	require.Less(t, slow, peers/float64(n))
}

// TestSlurmCheck: a Slurm workload's errors name their key.
func TestSlurmCheck(t *testing.T) {
	cfg := Config{Hosts: 1, GPUsPerHost: 1, Models: []string{"h100"}, Workloads: []Workload{
		{Name: "x", Kind: Training, GPUs: "0/*", Phases: []Phase{{Kind: Idle}}, DRA: true, Slurm: &SlurmJob{}},
	}}
	err := cfg.Check()
	require.ErrorContains(t, err, "workloads[0]::slurm::job_id must be positive")
	require.ErrorContains(t, err, "workloads[0]: a slurm job holds no ResourceClaim")
	require.ErrorContains(t, err, "workloads[0]::slurm: user and account must be set")
}

func stripFigures(p gpu.Process) gpu.Process {
	return gpu.Process{PID: p.PID, Owner: p.Owner, PodUID: p.PodUID, ContainerID: p.ContainerID, Slurm: p.Slurm, Pod: p.Pod}
}
