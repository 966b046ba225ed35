package gpunodereceiver

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	uidLimited   = "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c"
	uidUnlimited = "8d1e4c2b-3a5f-4e6d-8c7b-9a0b1c2d3e4f"
)

// scrapeTree scrapes a fake host filesystem under testdata once.
func scrapeTree(t *testing.T, hostfs string) pmetric.Metrics {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.RootPath, _ = filepath.Abs(filepath.Join("testdata", hostfs))
	// hostfs-v2 has a NIC on a GPU's PCIe switch; hostfs-v1 no
	// sys/class/net. The ethtool ioctl would read this machine's own
	// interface of the same name: off.
	cfg.Network.Enabled = hostfs == "hostfs-v2"
	cfg.Network.Ethtool = false
	s, err := newNodeScraper(cfg, "gpu-node-7", receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return md
}

// TestGolden: each fake host's scrape, against its golden file
// (go test -run TestGolden -update rewrites them).
func TestGolden(t *testing.T) {
	for _, hostfs := range []string{"hostfs-v2", "hostfs-v1"} {
		t.Run(hostfs, func(t *testing.T) {
			got := scrapeTree(t, hostfs)
			path := filepath.Join("testdata", "golden", hostfs+".yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, path, got))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}

// TestPodMetrics checks, beyond the golden files, what the contract asks:
// a limit and throttling only for a limited pod, a node resource with
// host.name alone.
func TestPodMetrics(t *testing.T) {
	md := scrapeTree(t, "hostfs-v2")
	byPod := map[string]map[string]pmetric.Metric{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes().AsRaw()
		require.Equal(t, "gpu-node-7", attrs["host.name"])
		if attrs["hw.type"] == "network" {
			continue // a NIC's (TestNICMetrics)
		}
		uid, _ := attrs["k8s.pod.uid"].(string)
		if uid == "" {
			require.Len(t, attrs, 1, "the node's resource: host.name only")
		}
		ms := rm.ScopeMetrics().At(0).Metrics()
		byPod[uid] = map[string]pmetric.Metric{}
		for j := 0; j < ms.Len(); j++ {
			byPod[uid][ms.At(j).Name()] = ms.At(j)
		}
	}
	require.Len(t, byPod, 3, "two pods and the node")

	limited := byPod[uidLimited]
	require.InDelta(t, 0.1, limited["otelgpu.pod.cpu.limit"].Gauge().DataPoints().At(0).DoubleValue(), 1e-12)
	require.Equal(t, int64(512), limited["otelgpu.pod.cpu.throttled_periods"].Sum().DataPoints().At(0).IntValue())
	require.True(t, limited["otelgpu.pod.cpu.throttled_periods"].Sum().IsMonotonic())
	require.InDelta(t, 2.048, limited["otelgpu.pod.cpu.throttled_time"].Sum().DataPoints().At(0).DoubleValue(), 1e-9)
	require.Equal(t, 6, limited["otelgpu.pressure.stall_time"].Sum().DataPoints().Len(), "cpu, memory, io x some, full")

	unlimited := byPod[uidUnlimited]
	for _, name := range []string{"otelgpu.pod.cpu.limit", "otelgpu.pod.cpu.periods", "otelgpu.pod.cpu.throttled_periods", "otelgpu.pod.cpu.throttled_time", "otelgpu.pod.memory.limit"} {
		require.NotContains(t, unlimited, name, "no limit: nothing that reads as 0 %% throttled")
	}
	require.Contains(t, unlimited, "otelgpu.pod.cpu.time")
	require.Contains(t, unlimited, "otelgpu.pod.memory.usage")

	node := byPod[""]
	require.Len(t, node, 1)
	require.Equal(t, 6, node["otelgpu.pressure.stall_time"].Sum().DataPoints().Len())
}

// TestNICMetrics: the fake host's NIC, under the same PCIe switch as its
// GPU, carries that GPU's bus ID as its rail, with its counters as the
// kernel gave them and its rate in bytes per second.
func TestNICMetrics(t *testing.T) {
	md := scrapeTree(t, "hostfs-v2")
	var nics int
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		attrs := rm.Resource().Attributes().AsRaw()
		if attrs["hw.type"] != "network" {
			continue
		}
		nics++
		require.Equal(t, "eth0", attrs["hw.id"])
		require.Equal(t, []any{"0000:03:00.0"}, attrs["otelgpu.network.rail.gpus"])
		require.Equal(t, "pcie_switch", attrs["otelgpu.network.rail.by"])
		got := map[string]any{}
		ms := rm.ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			var dps pmetric.NumberDataPointSlice
			if m.Type() == pmetric.MetricTypeSum {
				dps = m.Sum().DataPoints()
			} else {
				dps = m.Gauge().DataPoints()
			}
			for k := 0; k < dps.Len(); k++ {
				parts := []string{m.Name()}
				for _, a := range []string{"network.io.direction", "error.type"} {
					if v, ok := dps.At(k).Attributes().Get(a); ok {
						parts = append(parts, v.Str())
					}
				}
				key := strings.Join(parts, "/")
				got[key] = dps.At(k).IntValue()
			}
		}
		require.Equal(t, int64(912345678901), got["hw.network.io/receive"])
		require.Equal(t, int64(845678901234), got["hw.network.io/transmit"])
		require.Equal(t, int64(17), got["hw.errors/rx_dropped"])
		require.Equal(t, int64(100_000e6/8), got["hw.network.bandwidth.limit"], "100000 Mb/s")
		require.Equal(t, int64(1), got["hw.network.up"])
	}
	require.Equal(t, 1, nics)
}

// TestNCCLInspector: an Inspector Prometheus file under the host's root
// becomes the rank's GPU's resource with the collective's bus bandwidth in
// bytes per second and its time in seconds.
func TestNCCLInspector(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "var", "lib", "nccl")
	require.NoError(t, os.MkdirAll(dir, 0o750))
	prom := `nccl_bus_bandwidth_gbs{node="gpu-node-2",gpu="GPU3",comm_name="DP Group 0",n_nodes="2",nranks="16",collective="AllReduce",message_size="4-5GB",algo_proto="Ring_ll"} 41.5
nccl_collective_exec_time_microseconds{node="gpu-node-2",gpu="GPU3",comm_name="DP Group 0",n_nodes="2",nranks="16",collective="AllReduce",message_size="4-5GB",algo_proto="Ring_ll"} 98000
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "nccl_inspector_metrics_GPU-1.prom"), []byte(prom), 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.RootPath = root
	cfg.Cgroup.Enabled, cfg.Pressure.Enabled, cfg.Network.Enabled = false, false, false
	cfg.NCCL.Enabled, cfg.NCCL.Paths = true, []string{"/var/lib/nccl/*.prom"}
	require.NoError(t, cfg.Validate())
	s, err := newNodeScraper(cfg, "gpu-node-2", receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, md.ResourceMetrics().Len())
	rm := md.ResourceMetrics().At(0)
	require.Equal(t, map[string]any{"host.name": "gpu-node-2", "hw.name": "gpu3", "otelgpu.nccl.communicator": "DP Group 0"}, rm.Resource().Attributes().AsRaw())
	got := map[string]float64{}
	ms := rm.ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		dp := ms.At(i).Gauge().DataPoints().At(0)
		c, _ := dp.Attributes().Get("otelgpu.nccl.collective")
		require.Equal(t, "AllReduce", c.Str())
		got[ms.At(i).Name()] = dp.DoubleValue()
	}
	require.InDelta(t, 41.5e9, got["otelgpu.nccl.bus_bandwidth"], 1)
	require.InDelta(t, 0.098, got["otelgpu.nccl.collective.duration"], 1e-9)
}
