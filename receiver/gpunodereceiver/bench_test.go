package gpunodereceiver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.opentelemetry.io/collector/receiver/receivertest"

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
	ib := filepath.Join("..", "..", "..", "shared", "realdata", "node", "ib_sysfs", "gpud_h100_sys_class_infiniband")
	if _, err := os.Stat(ib); err != nil {
		b.Skipf("the H100 node's InfiniBand sysfs is read from ../shared/realdata: %v", err)
	}
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "sys", "class"), 0o750))
	must(exec.Command("cp", "-r", ib, filepath.Join(root, "sys", "class", "infiniband")).Run())
	must(os.MkdirAll(filepath.Join(root, "sys", "class", "net"), 0o750))
	cg := filepath.Join(root, "sys", "fs", "cgroup")
	must(os.MkdirAll(cg, 0o750))
	must(os.WriteFile(filepath.Join(cg, "cgroup.controllers"), []byte("cpu io memory pids\n"), 0o600))
	for i := range gpus {
		uid := fmt.Sprintf("0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b%02d", i)
		d := filepath.Join(cg, "kubepods.slice", "kubepods-burstable.slice", "kubepods-burstable-pod"+uidUnderscores(uid)+".slice")
		must(os.MkdirAll(d, 0o750))
		for name, v := range map[string]string{
			"cpu.max":         "400000 100000\n",
			"cpu.stat":        "usage_usec 9123456789\nuser_usec 8000000000\nsystem_usec 1123456789\nnr_periods 809036\nnr_throttled 76213\nthrottled_usec 363166000\n",
			"memory.current":  "31457280000\n",
			"memory.max":      "34359738368\n",
			"cpu.pressure":    "some avg10=1.00 avg60=2.00 avg300=3.00 total=465907442\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=463529433\n",
			"memory.pressure": "some avg10=0.00 avg60=0.00 avg300=0.00 total=6912345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=6812345\n",
			"io.pressure":     "some avg10=0.00 avg60=0.00 avg300=0.00 total=17712345\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=17612345\n",
		} {
			must(os.WriteFile(filepath.Join(d, name), []byte(v), 0o600))
		}
	}
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

func uidUnderscores(uid string) string {
	out := []byte(uid)
	for i, c := range out {
		if c == '-' {
			out[i] = '_'
		}
	}
	return string(out)
}
