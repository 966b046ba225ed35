package dcgmreceiver

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// BenchmarkScrape measures one scrape, backend read and mapping to OTLP
// included, and reports the cost per emitted data point.
//
// The simulated backend runs at 1,024 GPUs (64 hosts x 16). The DCGM backend
// runs the real go-dcgm code against the stand-in library at 32 GPUs, the
// most one host engine serves (DCGM_MAX_NUM_DEVICES); its per-data-point
// figures are what compare.
//
// The per_process variant is the same fleet with per-process series on:
// every GPU is exclusive, one pod's, with one process, so that it measures
// what the split costs a fleet that does not share its GPUs.
func BenchmarkScrape(b *testing.B) {
	fleet := func() *Config {
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendSimulated
		cfg.Simulated.Hosts, cfg.Simulated.GPUsPerHost = 64, 16
		cfg.Simulated.Workloads[0].GPUs = "0-31/*"
		cfg.Simulated.Workloads[1].GPUs = "32-63/*"
		return cfg
	}
	b.Run("simulated/gpus=1024", func(b *testing.B) {
		benchScrape(b, fleet())
	})
	b.Run("simulated/per_process/gpus=1024", func(b *testing.B) {
		cfg := fleet()
		cfg.PerProcess.Enabled = true
		benchScrape(b, cfg)
	})
	b.Run("dcgm-standin/gpus=32", func(b *testing.B) {
		dir := b.TempDir()
		state := filepath.Join(dir, "state")
		if err := (dcgmstandin.State{GPUs: 32, Connected: true}).Write(state); err != nil {
			b.Fatal(err)
		}
		b.Setenv("STANDIN_DCGM_STATE", state)
		if err := dcgmstandin.Load("testdata/standin-dcgm/libdcgm.c", dir); err != nil {
			b.Fatal(err)
		}
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendDCGM
		cfg.CollectionInterval = time.Hour // the stand-in's values are always fresh
		benchScrape(b, cfg)
	})
}

func benchScrape(b *testing.B, cfg *Config) {
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.NewNop()
	s := newGPUScraper(cfg, set)
	ctx := context.Background()
	if err := s.start(ctx, &statusHost{}); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.shutdown(ctx) }()
	md, err := s.scrape(ctx) // warm-up; also sizes the report
	if err != nil || md.DataPointCount() == 0 {
		b.Fatalf("warm-up scrape: %d points, %v", md.DataPointCount(), err)
	}
	points := md.DataPointCount()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.scrape(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(points), "ns/datapoint")
	b.ReportMetric(float64(points), "datapoints/scrape")
}
