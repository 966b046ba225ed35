package simulated

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

var t0 = time.Unix(1767225600, 0)

func collect(t *testing.T, fl *Fleet, at time.Duration) []gpu.Sample {
	t.Helper()
	s, err := fl.Collect(context.Background(), t0.Add(at), time.Second)
	require.NoError(t, err)
	return s
}

func val(t *testing.T, s gpu.Sample, field f.Field) float64 {
	t.Helper()
	v, ok := s.Values.Get(field)
	require.Truef(t, ok, "%s missing on %s", field, s.Device.Name())
	return v
}

func TestDeterministic(t *testing.T) {
	run := func(seed int64) [][]gpu.Sample {
		cfg := DefaultConfig()
		cfg.Seed = seed
		fl, err := New(cfg)
		require.NoError(t, err)
		var out [][]gpu.Sample
		for k := range 5 {
			out = append(out, collect(t, fl, time.Duration(k)*7*time.Second))
		}
		return out
	}
	a, b := run(1), run(1)
	require.Equal(t, a, b, "same seed and times, same fleet")
	c := run(2)
	require.NotEqual(t, a[0][0].Device.UUID, c[0][0].Device.UUID, "the seed picks the UUIDs")
}

func TestDefaultFleetShape(t *testing.T) {
	fl, err := New(DefaultConfig())
	require.NoError(t, err)
	s := collect(t, fl, 0)
	require.Len(t, s, 16)
	seen := map[string]bool{}
	for _, x := range s {
		require.Regexp(t, `^GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`, x.Device.UUID)
		require.False(t, seen[x.Device.UUID], "UUIDs are unique")
		seen[x.Device.UUID] = true
		require.Equal(t, "NVIDIA H100 80GB HBM3", x.Device.Model)
	}
	require.Equal(t, "gpu-node-0", s[0].Device.Host)
	require.Equal(t, "llm-pretrain", s[0].Device.Pod.Job)
	require.Equal(t, "llm-pretrain-worker-0", s[7].Device.Pod.Name)
	require.Equal(t, "inference-1-2", s[10].Device.Pod.Name)
	require.Empty(t, s[15].Device.Pod.Name, "GPUs 1/6-7 are unallocated")
}

// TestFaultSignals checks that each injected fault changes the signals the
// way the analyzer's rules (spec/analysis.md) look for.
func TestFaultSignals(t *testing.T) {
	cfg := Config{
		Seed: 3, Hosts: 1, GPUsPerHost: 8, HostPrefix: "n", Models: []string{"a100"},
		Workloads: []Workload{{Name: "job", Kind: "training", Namespace: "ml", GPUs: "0/*", Phases: []Phase{{Kind: ComputeBound}}}},
		Faults: []Fault{
			{Kind: ThermalThrottle, GPUs: "0/1", Start: 10 * time.Second, Duration: 20 * time.Second},
			{Kind: SlowClock, GPUs: "0/2", Start: 10 * time.Second},
			{Kind: SlowRank, GPUs: "0/3", Start: 10 * time.Second},
			{Kind: ECC, GPUs: "0/4", Start: 10 * time.Second},
			{Kind: XID, GPUs: "0/5", Start: 10 * time.Second, XID: 43},
			{Kind: MemoryGrowth, GPUs: "0/6", Start: 10 * time.Second, Ramp: 60 * time.Second},
		},
	}
	fl, err := New(cfg)
	require.NoError(t, err)
	before := collect(t, fl, 0) // the fleet's clock starts here
	at := collect(t, fl, 15*time.Second)
	healthy := at[0]

	// Before any fault, every GPU runs at full clock, unthrottled.
	for _, s := range before {
		require.Equal(t, 1410.0, val(t, s, f.SMClock))
		require.Zero(t, val(t, s, f.ClocksEventReasons))
	}
	require.Equal(t, float64(f.ClocksEventSWThermal|f.ClocksEventHWThermal), val(t, at[1], f.ClocksEventReasons))
	require.GreaterOrEqual(t, val(t, at[1], f.GPUTemp), 85.0)
	require.Less(t, val(t, at[1], f.SMClock), 0.9*val(t, healthy, f.SMClock))

	require.Less(t, val(t, at[2], f.SMClock), 0.9*val(t, healthy, f.SMClock))
	require.Zero(t, val(t, at[2], f.ClocksEventReasons), "slow clocks without a throttle flag")

	require.Less(t, val(t, at[3], f.SMActive), val(t, healthy, f.SMActive)-0.2, "a slow rank is an SM-activity outlier")

	require.Equal(t, 1.0, val(t, at[4], f.ECCDBEVolTotal))
	require.Equal(t, []uint32{48}, at[4].XIDs)
	require.Equal(t, []uint32{43}, at[5].XIDs)
	require.Equal(t, 43.0, val(t, at[5], f.XIDErrors))

	used := func(s gpu.Sample) float64 { return val(t, s, f.FBUsed) / val(t, s, f.FBTotal) }
	require.Greater(t, used(at[6]), used(before[6]))

	// Faults end: the throttled GPU recovers; events are not repeated.
	later := collect(t, fl, 40*time.Second)
	require.Zero(t, val(t, later[1], f.ClocksEventReasons))
	require.Empty(t, later[4].XIDs)
	require.Empty(t, later[5].XIDs)
	require.Equal(t, 1.0, val(t, later[4], f.ECCDBEVolTotal), "ECC totals are cumulative")
	require.GreaterOrEqual(t, used(collect(t, fl, 90*time.Second)[6]), 0.95, "memory grows to pressure")

	// Energy only grows.
	require.Greater(t, val(t, later[0], f.TotalEnergy), val(t, at[0], f.TotalEnergy))
}

func TestPhases(t *testing.T) {
	cfg := Config{
		Seed: 1, Hosts: 1, GPUsPerHost: 1, HostPrefix: "n", Models: []string{"h100"},
		Workloads: []Workload{{Name: "svc", Kind: "serving", Namespace: "s", GPUs: "0/0", Phases: []Phase{
			{Kind: ComputeBound, Duration: time.Minute},
			{Kind: MemoryBound, Duration: time.Minute},
			{Kind: InputBound, Duration: time.Minute},
			{Kind: LaunchBound, Duration: time.Minute},
			{Kind: Idle, Duration: time.Minute},
			{Kind: CommunicationBound, Duration: time.Minute},
		}}},
	}
	fl, err := New(cfg)
	require.NoError(t, err)
	at := func(m int) gpu.Sample { return collect(t, fl, time.Duration(m)*time.Minute+30*time.Second)[0] }
	compute, memory, input, launch, idle := at(0), at(1), at(2), at(3), at(4)
	require.Greater(t, val(t, compute, f.SMActive), 0.5)
	require.Less(t, val(t, compute, f.DRAMActive), 0.7)
	require.GreaterOrEqual(t, val(t, memory, f.DRAMActive), 0.7)
	require.Less(t, val(t, input, f.SMActive), 0.5)
	require.Less(t, val(t, input, f.GPUUtil), 80.0)
	require.Less(t, val(t, launch, f.SMActive), 0.5)
	require.GreaterOrEqual(t, val(t, launch, f.GPUUtil), 80.0)
	require.Less(t, val(t, idle, f.SMActive), 0.05)
	require.Equal(t, float64(f.ClocksEventGPUIdle), val(t, idle, f.ClocksEventReasons))
	comm := at(5)
	require.Less(t, val(t, comm, f.SMActive), 0.5)
	require.GreaterOrEqual(t, val(t, comm, f.GPUUtil), 80.0)
	require.GreaterOrEqual(t, val(t, comm, f.NVLinkTxBytes)+val(t, comm, f.NVLinkRxBytes), 100e9)
	// The cycle repeats.
	require.Greater(t, val(t, at(6), f.SMActive), 0.5)
}

// TestProfilingByModel: Turing (T4) reports the profiling fields, except
// NVLink, which it lacks; Pascal (P100) reports none.
func TestProfilingByModel(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Models = []string{"t4", "p100"}
	fl, err := New(cfg)
	require.NoError(t, err)
	samples := collect(t, fl, 0)
	t4, p100 := samples[0], samples[8]
	require.Equal(t, "Tesla T4", t4.Device.Model)
	require.Equal(t, "Tesla P100-PCIE-16GB", p100.Device.Model)
	for _, field := range f.All() {
		if !field.Info().Profiling {
			continue
		}
		nvlink := field == f.NVLinkTxBytes || field == f.NVLinkRxBytes
		require.Equalf(t, !nvlink && t4.Values.Has(f.SMActive), t4.Values.Has(field), "%s on a T4", field)
		require.Falsef(t, p100.Values.Has(field), "%s on a P100", field)
	}
	require.True(t, t4.Values.Has(f.SMActive))
}

// TestDefaultFleetV2: the training job's collectives phase after 20 min and
// the leaking GPU 0/7.
func TestDefaultFleetV2(t *testing.T) {
	fl, err := New(DefaultConfig())
	require.NoError(t, err)
	collect(t, fl, 0)
	comm := collect(t, fl, 21*time.Minute)[0]
	require.Less(t, val(t, comm, f.SMActive), 0.5)
	require.GreaterOrEqual(t, val(t, comm, f.GPUUtil), 95.0)
	require.GreaterOrEqual(t, val(t, comm, f.NVLinkTxBytes)+val(t, comm, f.NVLinkRxBytes), 100e9)
	back := collect(t, fl, 26*time.Minute)[0]
	require.Greater(t, val(t, back, f.SMActive), 0.5, "compute again after 5 min")

	// 0/7's frame buffer grows by the same amount every minute.
	a, b, c := collect(t, fl, 30*time.Minute)[7], collect(t, fl, 31*time.Minute)[7], collect(t, fl, 32*time.Minute)[7]
	require.Greater(t, val(t, b, f.FBUsed), val(t, a, f.FBUsed))
	require.InDelta(t, val(t, b, f.FBUsed)-val(t, a, f.FBUsed), val(t, c, f.FBUsed)-val(t, b, f.FBUsed), 1)
}

// TestRecoveryAction: every GPU reports a recovery action, 0 (none),
// whatever else goes wrong with it (an XID 79, an ECC error); an xid fault
// of XID 154 logs the XID once and sets the action to 1 (GPU reset) for as
// long as the fault lasts.
func TestRecoveryAction(t *testing.T) {
	cfg := Config{
		Seed: 3, Hosts: 1, GPUsPerHost: 4, HostPrefix: "n", Models: []string{"h100"},
		Faults: []Fault{
			{Kind: XID, GPUs: "0/1", Start: 10 * time.Second, Duration: 20 * time.Second, XID: 154},
			{Kind: XID, GPUs: "0/2", Start: 10 * time.Second, XID: 79},
			{Kind: ECC, GPUs: "0/3", Start: 10 * time.Second},
		},
	}
	fl, err := New(cfg)
	require.NoError(t, err)
	for _, step := range []struct {
		at     time.Duration
		reset  bool // GPU 1 needs a reset
		xid154 bool // GPU 1 logs XID 154
	}{
		{0, false, false},
		{10 * time.Second, true, true},
		{20 * time.Second, true, false},
		{30 * time.Second, false, false},
	} {
		s := collect(t, fl, step.at)
		for i := range s {
			want := float64(f.RecoveryActionNone)
			if i == 1 && step.reset {
				want = f.RecoveryActionGPUReset
			}
			require.Equalf(t, want, val(t, s[i], f.RecoveryAction), "GPU %d at %v", i, step.at)
		}
		if step.xid154 {
			require.Equal(t, []uint32{154}, s[1].XIDs, "at %v", step.at)
			require.Equal(t, []uint32{79}, s[2].XIDs, "the other faults fire too")
			require.Equal(t, []uint32{48}, s[3].XIDs)
		} else {
			require.Empty(t, s[1].XIDs, "at %v", step.at)
		}
	}
}

// TestMIGAndDRA: a mig workload splits its GPU into instances under their
// MIG UUIDs, each with its pod, profile and own load; the board stays a
// device, no pod's. A dra workload's pods hold their GPUs through claims.
func TestMIGAndDRA(t *testing.T) {
	cfg := Config{Seed: 3, Hosts: 1, GPUsPerHost: 3, HostPrefix: "n", Models: []string{"h100"}, Workloads: []Workload{
		{Name: "svc", Kind: Serving, Namespace: "serving", GPUs: "0/0", DRA: true, Phases: []Phase{{Kind: ComputeBound}}},
		{Name: "split", Kind: MIG, Namespace: "lab", GPUs: "0/1", Instances: 3, Phases: []Phase{{Kind: ComputeBound}}},
	}}
	fl, err := New(cfg)
	require.NoError(t, err)
	fl.EnableProcesses()
	devs := fl.Devices()
	require.Len(t, devs, 3+3)
	require.Equal(t, "svc-0-0-gpu", devs[0].Pod.Claim)
	parent := devs[1]
	require.Nil(t, parent.MIG)
	require.Empty(t, parent.Pod.Name, "the board is no one pod's")
	utils := map[float64]bool{}
	uuids := map[string]bool{}
	samples, err := fl.Collect(context.Background(), time.Unix(1000, 0), time.Second)
	require.NoError(t, err)
	require.Len(t, samples, 6)
	for k, d := range devs[2:5] {
		require.True(t, strings.HasPrefix(d.UUID, "MIG-"), d.UUID)
		require.False(t, uuids[d.UUID], "each instance its own UUID")
		uuids[d.UUID] = true
		require.Equal(t, &gpu.MIG{ParentUUID: parent.UUID, GPUInstance: 1 + 2*k, ComputeInstance: 0, Profile: "2g.20gb"}, d.MIG)
		require.Equal(t, fmt.Sprintf("split-0-1-%d", k), d.Pod.Name)
		require.Empty(t, d.Pod.Claim)
		s := samples[2+k]
		require.Same(t, d, s.Device)
		total, _ := s.Values.Get(f.FBTotal)
		require.Equal(t, 19968.0, total)
		u, _ := s.Values.Get(f.GPUUtil)
		utils[u] = true
		require.Len(t, s.Processes, 1)
		require.False(t, s.Processes[0].HasUtilization, "no per-process utilization on MIG")
	}
	require.Len(t, utils, 3, "each instance its own load")
	require.Equal(t, parent, samples[1].Device)

	bad := cfg
	bad.Workloads = []Workload{{Name: "x", Kind: MIG, Namespace: "a", GPUs: "0/0", Instances: 4, Phases: []Phase{{Kind: Idle}}}}
	require.ErrorContains(t, bad.Check(), "workloads[0]::instances must be 2, 3 or 7, got 4")
	bad.Models = []string{"t4"}
	bad.Workloads[0].Instances = 7
	require.ErrorContains(t, bad.Check(), `a mig workload needs h100 or a100 models, got "t4"`)
}
