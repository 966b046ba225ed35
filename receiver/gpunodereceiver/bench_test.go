package gpunodereceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/fakenode"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// BenchmarkScrape measures one scrape of an HGX H100 node as the agent
// would see it: the nine RDMA ports of a real H100 node's sysfs (gpud's
// fixture, ../shared/realdata) and eight GPU pods, each with a CPU limit
// and pressure files. It reports ns/gpu, the node evidence's cost per GPU
// per scrape, to set beside the dcgm receiver's BenchmarkScrape
// (dcgm-standin ns/gpu) of the same run: what turning the node evidence on
// adds to the agent's scrape.
func BenchmarkScrape(b *testing.B) {
	const gpus = 8
	root := b.TempDir()
	ib := filepath.Join("..", "..", "..", "shared", "realdata", filepath.FromSlash(fakenode.H100InfiniBand))
	if _, err := os.Stat(ib); err != nil {
		b.Skipf("the H100 node's InfiniBand sysfs is read from ../shared/realdata: %v", err)
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(fakenode.Write(root, ib, gpus))
	for _, tc := range []struct {
		name         string
		cgroup, netw bool
	}{{"cgroup", true, false}, {"network", false, true}, {"all", true, true}} {
		b.Run(fmt.Sprintf("%s/gpus=%d", tc.name, gpus), func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.RootPath = root
			cfg.Cgroup.Enabled, cfg.Network.Enabled, cfg.Pressure.Enabled = tc.cgroup, tc.netw, false
			cfg.Network.Ethtool = false
			s, err := newNodeScraper(cfg, "gpu-node-1", receivertest.NewNopSettings(metadata.Type))
			must(err)
			var points int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				md, err := s.scrape(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				points = md.DataPointCount()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/gpus, "ns/gpu")
			b.ReportMetric(float64(points), "datapoints/scrape")
		})
	}
}
