package simulated

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/cgroupstat"
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
)

// causesConfig is make run's second fleet (examples/local/config.yaml): a
// 2-node H100 job over InfiniBand with a rank on a degraded rail, an
// all-reduce between two L40S nodes over Ethernet, a data loader at its
// CPU limit and a limited pod that its limit does not bind.
func causesConfig() Config {
	return Config{
		Seed: 7, Hosts: 4, GPUsPerHost: 2, HostPrefix: "rack-b-", Models: []string{"h100", "h100", "l40s", "l40s"},
		Workloads: []Workload{
			{Name: "ib-pretrain", Kind: Training, Namespace: "ml", GPUs: "0-1/*",
				Phases: []Phase{{Kind: ComputeBound, Duration: 90 * time.Second}, {Kind: CommunicationBound, Duration: 30 * time.Second}}},
			{Name: "allreduce", Kind: Training, Namespace: "ml", GPUs: "2-3/0", CPULimit: 16, Phases: []Phase{{Kind: CommunicationBound}}},
			{Name: "data-loader", Kind: Serving, Namespace: "ml", GPUs: "2/1", CPULimit: 4, Phases: []Phase{{Kind: InputBound}}},
			{Name: "embedder", Kind: Serving, Namespace: "serving", GPUs: "3/1", CPULimit: 4, Phases: []Phase{{Kind: ComputeBound}}},
		},
		Faults: []Fault{{Kind: FabricErrors, GPUs: "1/1", Start: 20 * time.Second}},
	}
}

// runNodes reads the fleet's nodes every 5 s up to until, returning each
// reading.
func runNodes(t *testing.T, fl *Fleet, until time.Duration) [][]NodeEvidence {
	t.Helper()
	var out [][]NodeEvidence
	for at := time.Duration(0); at <= until; at += 5 * time.Second {
		out = append(out, fl.Node(t0.Add(at)))
	}
	return out
}

func podOf(t *testing.T, fl *Fleet, host, idx int) string {
	t.Helper()
	g := fl.gpus[host*fl.cfg.GPUsPerHost+idx]
	require.NotEmpty(t, g.shares, "host %d gpu %d has a pod", host, idx)
	return g.shares[0].uid
}

func findPod(t *testing.T, ev []NodeEvidence, uid string) cgroupstat.Stats {
	t.Helper()
	for _, n := range ev {
		for _, p := range n.Pods {
			if p.UID == uid {
				return p.Stats
			}
		}
	}
	t.Fatalf("no pod %s", uid)
	return cgroupstat.Stats{}
}

func findNIC(t *testing.T, ev []NodeEvidence, host, id string) NICEvidence {
	t.Helper()
	for _, n := range ev {
		for _, c := range n.NICs {
			if n.Host == host && c.Port.ID == id {
				return c
			}
		}
	}
	t.Fatalf("no NIC %s on %s", id, host)
	return NICEvidence{}
}

func errCount(p *netdev.Port, name string) uint64 {
	for _, c := range p.Errors {
		if c.Name == name {
			return c.Value
		}
	}
	return 0
}

// TestNodeThrottling: the data loader, input bound at a 4-CPU limit, is
// throttled in 30-40 % of its periods; the embedder, at the same limit but
// computing, and the all-reduce at 16 CPUs in under 3 %; the training
// pods, without a limit, report no throttling at all.
func TestNodeThrottling(t *testing.T) {
	fl, err := New(causesConfig())
	require.NoError(t, err)
	evs := runNodes(t, fl, time.Minute)
	first, last := evs[0], evs[len(evs)-1]
	frac := func(uid string) float64 {
		a, b := findPod(t, first, uid), findPod(t, last, uid)
		require.True(t, b.Limit.Has && b.CPU.HasThrottling)
		return float64(b.CPU.ThrottledPeriods-a.CPU.ThrottledPeriods) / float64(b.CPU.Periods-a.CPU.Periods)
	}
	loader := podOf(t, fl, 2, 1)
	require.InDelta(t, 0.35, frac(loader), 0.05, "the loader is held by its limit")
	require.InDelta(t, 4, findPod(t, last, loader).Limit.CPUs, 1e-9)
	used := (findPod(t, last, loader).CPU.Usage - findPod(t, first, loader).CPU.Usage).Seconds() / 60
	require.InDelta(t, 3.9, used, 0.1, "and uses all of it")
	require.Less(t, frac(podOf(t, fl, 3, 1)), 0.03, "the embedder's limit does not bind")
	require.Less(t, frac(podOf(t, fl, 2, 0)), 0.03, "nor the all-reduce's")
	train := findPod(t, last, podOf(t, fl, 0, 0))
	require.False(t, train.Limit.Has || train.CPU.HasThrottling || train.Memory.HasLimit)
	require.Positive(t, train.CPU.Usage)
	require.Equal(t, podOf(t, fl, 0, 0), podOf(t, fl, 0, 1), "a training pod holds its host's GPUs")
	for _, n := range last {
		require.Positive(t, n.Pressure.CPU.Some.Total)
	}
}

// TestNodeFabricErrors: from the fault's start the degraded rail's port
// counts ~1,200 symbol errors a minute and ~250 receive errors, and its
// link went down once; no other port counts any.
func TestNodeFabricErrors(t *testing.T) {
	fl, err := New(causesConfig())
	require.NoError(t, err)
	evs := runNodes(t, fl, 80*time.Second)
	at20, last := evs[4], evs[len(evs)-1]
	bad := findNIC(t, last, "rack-b-1", "mlx5_1:1")
	before := findNIC(t, at20, "rack-b-1", "mlx5_1:1")
	perMin := func(name string) float64 {
		return float64(errCount(&bad.Port, name) - errCount(&before.Port, name))
	}
	require.InDelta(t, 1200, perMin("symbol_error"), 120)
	require.InDelta(t, 240, perMin("port_rcv_errors"), 40)
	require.Equal(t, uint64(1), errCount(&bad.Port, "link_downed"))
	require.True(t, bad.Port.Up)
	for _, n := range last {
		for _, c := range n.NICs {
			if n.Host == "rack-b-1" && c.Port.ID == "mlx5_1:1" {
				continue
			}
			for _, e := range c.Port.Errors {
				require.Zero(t, e.Value, "%s %s %s", n.Host, c.Port.ID, e.Name)
			}
		}
	}
}

// TestNodeFabricStraggler: the GPU on the degraded rail is a slow rank.
func TestNodeFabricStraggler(t *testing.T) {
	fl, err := New(causesConfig())
	require.NoError(t, err)
	var sm [4]float64
	for at := time.Duration(0); at <= 40*time.Second; at += 5 * time.Second {
		for _, s := range collect(t, fl, at) {
			if v, ok := s.Values.Get(f.SMActive); ok && s.Device.Host < "rack-b-2" {
				sm[s.Device.Index+2*int(s.Device.Host[len(s.Device.Host)-1]-'0')] = v
			}
		}
	}
	require.Less(t, sm[3], 0.7*sm[0], "rack-b-1/gpu1, on the degraded rail, is slow: %v", sm)
	require.InDelta(t, sm[0], sm[2], 0.1)
}

// TestNodeRails: an HGX H100 host has eight 400 Gb/s InfiniBand ports, one
// per GPU on its PCIe switch; an L40S host two 100 Gb/s Ethernet NICs, each
// serving the GPUs of its NUMA node.
func TestNodeRails(t *testing.T) {
	fl, err := New(Config{Seed: 1, Hosts: 2, GPUsPerHost: 8, HostPrefix: "n", Models: []string{"h100", "l40s"}})
	require.NoError(t, err)
	ev := fl.Node(t0)
	require.Len(t, ev, 2)
	require.Len(t, ev[0].NICs, 8)
	for i, n := range ev[0].NICs {
		require.Equal(t, fmt.Sprintf("mlx5_%d:1", i), n.Port.ID)
		require.Equal(t, netdev.LinkInfiniBand, n.Port.LinkLayer)
		require.InDelta(t, 50e9, n.Port.RateBytesPerSec, 1)
		require.Equal(t, netdev.Rail{GPUs: []string{fmt.Sprintf("0000:%02x:00.0", 0x18+0x10*i)}, By: netdev.RailByPCIeSwitch}, n.Rail)
	}
	require.Len(t, ev[1].NICs, 2)
	for j, n := range ev[1].NICs {
		require.Equal(t, fmt.Sprintf("eth%d", j), n.Port.ID)
		require.Equal(t, netdev.LinkEthernet, n.Port.LinkLayer)
		require.Equal(t, netdev.RailByNUMANode, n.Rail.By)
		require.Equal(t, j, n.Port.NUMA)
		require.Len(t, n.Rail.GPUs, 4)
	}
	require.Equal(t, "0000:58:00.0", ev[1].NICs[1].Rail.GPUs[0])
	// The rails name the GPUs as the dcgm receiver does, normalised.
	for _, d := range fl.Devices()[:8] {
		bus, _ := netdev.NormalizeBusID(d.PCIBusID)
		require.Equal(t, bus, ev[0].NICs[d.Index].Rail.GPUs[0])
	}
	// Configured: two 200 Gb/s InfiniBand ports on the L40S host.
	fl, err = New(Config{Seed: 1, Hosts: 2, GPUsPerHost: 8, HostPrefix: "n", Models: []string{"h100", "l40s"},
		Networks: []Network{{Kind: InfiniBand}, {Kind: InfiniBand, RateGbps: 200, NICs: 2}}})
	require.NoError(t, err)
	ev = fl.Node(t0)
	require.Len(t, ev[1].NICs, 2)
	require.Equal(t, "mlx5_1:1", ev[1].NICs[1].Port.ID)
	require.InDelta(t, 25e9, ev[1].NICs[1].Port.RateBytesPerSec, 1)
}

// TestNodeTraffic: a multi-host job's rails carry 50-70 % of their rate in
// its communication phase, a little while it computes; a single-host
// job's rail next to nothing.
func TestNodeTraffic(t *testing.T) {
	fl, err := New(causesConfig())
	require.NoError(t, err)
	evs := runNodes(t, fl, 120*time.Second)
	util := func(from, to int, host, id string) float64 {
		a, b := findNIC(t, evs[from], host, id), findNIC(t, evs[to], host, id)
		return float64(b.Port.RxBytes-a.Port.RxBytes) / (5 * float64(to-from)) / a.Port.RateBytesPerSec
	}
	require.InDelta(t, 0.06, util(0, 17, "rack-b-0", "mlx5_0:1"), 0.01, "computing")
	require.InDelta(t, 0.6, util(19, 23, "rack-b-0", "mlx5_0:1"), 0.1, "in its collectives")
	require.InDelta(t, 0.6, util(0, 24, "rack-b-2", "eth0"), 0.1, "the L40S all-reduce")
	require.Less(t, util(0, 24, "rack-b-3", "eth1"), 0.01, "the embedder reads nothing")
}

// TestNodeDeterministic: the same seed and times give the same evidence.
func TestNodeDeterministic(t *testing.T) {
	a, err := New(causesConfig())
	require.NoError(t, err)
	b, err := New(causesConfig())
	require.NoError(t, err)
	require.Equal(t, runNodes(t, a, time.Minute), runNodes(t, b, time.Minute))
}

// TestNodeConfig: the knobs are checked.
func TestNodeConfig(t *testing.T) {
	cfg := causesConfig()
	cfg.Workloads[1].CPULimit = -1
	cfg.Networks = []Network{{Kind: "token_ring"}, {Kind: Ethernet, RateGbps: 5000, NICs: 3}}
	err := cfg.Check()
	require.ErrorContains(t, err, "workloads[1]::cpu_limit must be 0 (no limit) to 1024 CPUs, got -1")
	require.ErrorContains(t, err, `networks[0]::kind: unknown kind "token_ring"; want infiniband or ethernet`)
	require.ErrorContains(t, err, "networks[1]::rate_gbps must be 0 (the kind's default) to 1600, got 5000")
	require.ErrorContains(t, err, "networks[1]::nics must be 0 (the kind's default) to gpus_per_host (2), got 3")
}
