package simulated

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

func sharedFleet(t *testing.T, pods int) *Fleet {
	t.Helper()
	cfg := Config{
		Seed: 3, Hosts: 1, GPUsPerHost: 4, HostPrefix: "n", Models: []string{"h100"},
		Workloads: []Workload{
			{Name: "svc", Kind: Serving, Namespace: "serving", GPUs: "0/0", Phases: []Phase{{Kind: ComputeBound}}},
			{Name: "train", Kind: Training, Namespace: "ml", GPUs: "0/1-2", Phases: []Phase{{Kind: MemoryBound}}},
			{Name: "notebook", Kind: TimeSliced, Namespace: "research", GPUs: "0/3", Pods: pods, Phases: []Phase{{Kind: ComputeBound}}},
		},
	}
	fl, err := New(cfg)
	require.NoError(t, err)
	fl.EnableProcesses()
	return fl
}

// TestTimeSliced: a time-sliced GPU is no one pod's; its pods' processes
// do a half, a third and a sixth of its work and hold those parts of its
// memory, so that they add up to the GPU's readings, with distinct
// values. An exclusive GPU has one process, its pod's, doing the whole.
func TestTimeSliced(t *testing.T) {
	fl := sharedFleet(t, 0)
	s := collect(t, fl, 10*time.Second)

	shared := s[3]
	require.Equal(t, gpu.Pod{}, shared.Device.Pod)
	require.Len(t, shared.Processes, DefaultSharingPods)
	util, memCopy, used := val(t, shared, f.GPUUtil), val(t, shared, f.MemCopyUtil), val(t, shared, f.FBUsed)
	require.Positive(t, util)
	var sumUtil, sumCopy float64
	var sumMem uint64
	uids := map[string]bool{}
	for k, p := range shared.Processes {
		require.Equal(t, gpu.OwnerPod, p.Owner)
		require.Equal(t, gpu.Pod{Namespace: "research", Name: []string{"notebook-0-3-0", "notebook-0-3-1", "notebook-0-3-2"}[k], Container: "main"}, p.Pod)
		require.InDelta(t, util*[]float64{1.0 / 2, 1.0 / 3, 1.0 / 6}[k], p.SMUtil, 1e-9)
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$`, p.PodUID)
		require.Regexp(t, `^[0-9a-f]{64}$`, p.ContainerID)
		uids[p.PodUID] = true
		sumUtil += p.SMUtil
		sumCopy += p.MemUtil
		sumMem += p.MemoryBytes
	}
	require.Len(t, uids, 3, "three pods")
	require.InDelta(t, util, sumUtil, 1e-9, "the pods' parts add up to the GPU's utilization")
	require.InDelta(t, memCopy, sumCopy, 1e-9)
	require.InDelta(t, used*(1<<20), float64(sumMem), 3, "and to its memory, to the byte's rounding")

	svc := s[0]
	require.Equal(t, "svc-0-0", svc.Device.Pod.Name)
	require.Len(t, svc.Processes, 1)
	require.Equal(t, svc.Device.Pod, svc.Processes[0].Pod)
	require.InDelta(t, val(t, svc, f.GPUUtil), svc.Processes[0].SMUtil, 1e-9)

	// The training pod's one container holds both its GPUs, with one
	// process on each.
	require.Equal(t, s[1].Processes[0].PodUID, s[2].Processes[0].PodUID)
	require.Equal(t, s[1].Processes[0].ContainerID, s[2].Processes[0].ContainerID)
	require.NotEqual(t, s[1].Processes[0].PID, s[2].Processes[0].PID)
	require.NotEqual(t, s[0].Processes[0].PodUID, s[1].Processes[0].PodUID)

	// The same fleet without processes enabled reads none, and has the
	// same UUIDs: the pods' UIDs come from apart.
	plain, err := New(fl.cfg)
	require.NoError(t, err)
	ps := collect(t, plain, 10*time.Second)
	for i := range ps {
		require.Nil(t, ps[i].Processes)
		require.Equal(t, s[i].Device.UUID, ps[i].Device.UUID)
	}
}

func TestTimeSlicedPods(t *testing.T) {
	s := collect(t, sharedFleet(t, 5), 0)
	require.Len(t, s[3].Processes, 5)
	cfg := DefaultConfig()
	cfg.Workloads[0].Pods = 2
	cfg.Workloads = append(cfg.Workloads, Workload{Name: "n", Kind: TimeSliced, GPUs: "1/7", Pods: 17, Phases: []Phase{{Kind: Idle}}})
	err := cfg.Check()
	require.ErrorContains(t, err, "workloads[0]::pods: only a time_sliced workload shares GPUs between pods")
	require.ErrorContains(t, err, "workloads[2]::pods must be 2 to 16, got 17")
}
