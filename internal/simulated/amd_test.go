package simulated

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// A mixed fleet: an H100 node and an MI300X node with one GPU in CPX mode.
func mixedFleet() Config {
	return Config{
		Seed: 5, Hosts: 2, GPUsPerHost: 4, HostPrefix: "node-", Models: []string{"h100", "mi300x"},
		Workloads: []Workload{
			{Name: "train", Kind: Training, Namespace: "ml", GPUs: "*/0-2", Phases: []Phase{{Kind: ComputeBound}}},
			{Name: "infer", Kind: CPX, Namespace: "serving", GPUs: "1/3", Phases: []Phase{{Kind: MemoryBound}}},
		},
		Faults: []Fault{{Kind: ECC, GPUs: "1/1", Start: 5 * time.Second}, {Kind: ThermalThrottle, GPUs: "1/2"}},
	}
}

// tenSecondsIn builds the fleet of cfg and returns its samples 10 s after
// its first.
func tenSecondsIn(t *testing.T, cfg Config) []gpu.Sample {
	t.Helper()
	fl, err := New(cfg)
	require.NoError(t, err)
	t0 := time.Unix(1767225600, 0)
	_, err = fl.Collect(context.Background(), t0, time.Second)
	require.NoError(t, err)
	samples, err := fl.Collect(context.Background(), t0.Add(10*time.Second), time.Second)
	require.NoError(t, err)
	return samples
}

func TestMixedFleet(t *testing.T) {
	samples := tenSecondsIn(t, mixedFleet())
	require.Len(t, samples, 4+3+8, "4 H100s, 3 MI300Xs and one in 8 CPX partitions")

	var amd []gpu.Sample
	for _, s := range samples {
		if s.Device.IsAMD() {
			amd = append(amd, s)
			require.Equal(t, "AMD Instinct MI300X OAM", s.Device.Model)
			require.NotNil(t, s.AMD)
			require.False(t, s.Values.Has(f.SMActive), "no profiling fields on AMD")
			require.Empty(t, s.XIDs)
		} else {
			require.Nil(t, s.AMD)
		}
	}
	require.Len(t, amd, 11)
	for i, s := range amd {
		require.Equal(t, i, s.Device.Index, "AMD SMI's processor order")
	}
	cpx := amd[3:]
	parent := cpx[0].Device.UUID
	for k, s := range cpx {
		require.Equal(t, parent, s.Device.AMD.ParentUUID)
		require.Equal(t, k, s.Device.AMD.PartitionID)
		require.Equal(t, "infer", s.Device.Pod.Name[:5])
		require.Equal(t, 196592.0/8, mustGet(t, s, f.FBTotal))
	}
	require.Greater(t, mustGet(t, cpx[1], f.GPUUtil), mustGet(t, cpx[7], f.GPUUtil), "partitions' loads differ")
	require.False(t, cpx[1].Values.Has(f.PowerUsage), "the board's power is on the first partition")
	require.Equal(t, "0000:4e:00.5", cpx[5].Device.PCIBusID)

	ecc := amd[1]
	require.Equal(t, 1.0, mustGet(t, ecc, f.ECCDBEVolTotal))
	require.Equal(t, []gpu.ECCBlock{{Block: "umc", Corrected: 3, Uncorrected: 1}}, ecc.AMD.ECC)
	hot := amd[2]
	v, ok := hot.AMD.Get(gpu.AMDViolationSocketThermal)
	require.True(t, ok)
	require.Equal(t, 60.0, v)
	require.GreaterOrEqual(t, mustGet(t, hot, f.GPUTemp), 96.0)
}

func TestCPXNeedsMI300X(t *testing.T) {
	cfg := mixedFleet()
	cfg.Workloads[1].GPUs = "0/3"
	require.ErrorContains(t, cfg.Check(), `workloads[1]: a cpx workload needs mi300x models, got "h100"`)
	cfg = mixedFleet()
	cfg.Workloads = append(cfg.Workloads, Workload{Name: "m", Kind: MIG, Instances: 3, Namespace: "x", GPUs: "0/3", Phases: []Phase{{Kind: Idle}}})
	require.NoError(t, cfg.Check(), "a mig workload on the H100 node of a mixed fleet")
}

func mustGet(t *testing.T, s gpu.Sample, field f.Field) float64 {
	t.Helper()
	v, ok := s.Values.Get(field)
	require.True(t, ok, "%s has %v", s.Device.UUID, field)
	return v
}

// TestSlowRankPeersWait: where power is the evidence (no profiling
// fields), a slow rank's peers spin in the step's collective part of each
// step, so they draw less than it does while their utilization stays
// busy; GPUs of other jobs, and NVIDIA GPUs with profiling (where the slow
// rank shows in its own SM activity), draw what they did.
func TestSlowRankPeersWait(t *testing.T) {
	power := func(cfg Config) map[string]float64 {
		out := map[string]float64{}
		for _, s := range tenSecondsIn(t, cfg) {
			if p, ok := s.Values.Get(f.PowerUsage); ok {
				out[s.Device.Host+"/"+s.Device.Pod.Name+"/"+s.Device.UUID] = p
				if s.Device.Pod.Job == "train" {
					require.GreaterOrEqual(t, mustGet(t, s, f.GPUUtil), 90.0, "busy by utilization, waiting or not")
				}
			}
		}
		return out
	}
	healthy := power(mixedFleet())
	cfg := mixedFleet()
	cfg.Faults = append(cfg.Faults, Fault{Kind: SlowRank, GPUs: "1/1"})
	slowed := power(cfg)
	fl, err := New(cfg)
	require.NoError(t, err)
	var waited int
	for _, d := range fl.Devices() {
		key := d.Host + "/" + d.Pod.Name + "/" + d.UUID
		before, after := healthy[key], slowed[key]
		if before == 0 {
			continue // a partition: the board's power is on its first
		}
		switch {
		case d.IsAMD() && d.Index == 1:
			require.InDelta(t, before, after, 0.1*before, "the slow rank works throughout")
		case d.IsAMD() && d.Pod.Name != "" && d.Pod.Job == "train":
			require.Less(t, after, 0.8*before, "%s waits for the slow rank", key)
			waited++
		default:
			require.InDelta(t, before, after, 0.1*before, "%s: another job, or profiling", key)
		}
	}
	require.Equal(t, 2, waited, "the MI300X's two peers")
}
