package gpunodereceiver

import (
	"context"
	"fmt"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// NewFactory returns the factory of the gpu_node receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetricsReceiver, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	// Cgroup and PSI counters are cumulative: 15 s resolves a throttled
	// input pipeline without reading tens of pods' files too often.
	cc.CollectionInterval = 15 * time.Second
	return &Config{
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		RootPath:             "/",
		Cgroup:               CgroupConfig{Enabled: true},
		Pressure:             PressureConfig{Enabled: true},
		Network:              NetworkConfig{Enabled: true, Ethtool: true},
		NCCL:                 NCCLConfig{Enabled: false, Paths: []string{}},
	}
}

func createMetricsReceiver(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	host := c.HostName
	if host == "" {
		h, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("host name: %w (set host_name)", err)
		}
		host = h
	}
	s, err := newNodeScraper(c, host, set)
	if err != nil {
		return nil, err
	}
	sc, err := scraper.NewMetrics(s.scrape, scraper.WithShutdown(s.shutdown))
	if err != nil {
		return nil, err
	}
	ctl, err := scraperhelper.NewMetricsController(&c.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
	if err != nil {
		return nil, err
	}
	return &nodeReceiver{Metrics: ctl, s: s}, nil
}

// nodeReceiver is the receiver as its factory makes it: the scraper's
// controller, and its mapping for the project's offline tools.
type nodeReceiver struct {
	receiver.Metrics
	s *nodeScraper
}

var _ offline.NodeReceiver = (*nodeReceiver)(nil)

// MapNodes implements offline.NodeReceiver: the evidence recorded and
// emitted by the code every scrape runs, with the receiver's settings.
func (r *nodeReceiver) MapNodes(now time.Time, nodes []simulated.NodeEvidence) pmetric.Metrics {
	emitNodes(pcommon.NewTimestampFromTime(now), r.s.mb, r.s.cfg, nodes)
	return r.s.mb.Emit()
}
