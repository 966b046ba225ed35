package dcgmreceiver

import (
	"context"
	"os"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper"
	"go.opentelemetry.io/collector/scraper/scraperhelper"

	// The console_short log encoding, for a collector run on a terminal
	// (also in the lean agent, which has no gpu_analyzer).
	_ "github.com/otelcol-gpu/otelcol-gpu/internal/consolelog"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// NewFactory returns the factory of the dcgm receiver.
func NewFactory() receiver.Factory {
	return receiver.NewFactory(
		metadata.Type,
		createDefaultConfig,
		receiver.WithMetrics(createMetricsReceiver, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config {
	cc := scraperhelper.NewDefaultControllerConfig()
	cc.CollectionInterval = 10 * time.Second
	hostname, _ := os.Hostname()
	return &Config{
		Hostname:             hostname,
		ControllerConfig:     cc,
		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
		Backend:              BackendAuto,
		Endpoint:             "localhost:5555",
		Naming:               NamingOTel,
		Reconnect: ReconnectConfig{
			InitialInterval: time.Second,
			MaxInterval:     time.Minute,
		},
		PodResources: PodResourcesConfig{
			Enabled:         false,
			Endpoint:        "/var/lib/kubelet/pod-resources/kubelet.sock",
			RefreshInterval: 30 * time.Second,
		},
		PerProcess: PerProcessConfig{
			Enabled:          false,
			ProcRoot:         "/proc",
			ContainerLogsDir: "/var/log/containers",
		},
		DRA: DRAConfig{
			Enabled: false,
			Driver:  "gpu.nvidia.com",
			Auth:    AuthConfig{Type: "in_cluster"},
		},
		Slurm: SlurmConfig{
			Details: SlurmDetailsConfig{Enabled: true, Timeout: 5 * time.Second, CacheTTL: 10 * time.Minute},
		},
		Simulated: simulated.DefaultConfig(),
	}
}

func createMetricsReceiver(_ context.Context, set receiver.Settings, cfg component.Config, next consumer.Metrics) (receiver.Metrics, error) {
	c := cfg.(*Config)
	for _, w := range c.legacyKeys {
		set.Logger.Warn(w)
	}
	s := newGPUScraper(c, set)
	sc, err := scraper.NewMetrics(s.scrape, scraper.WithStart(s.start), scraper.WithShutdown(s.shutdown))
	if err != nil {
		return nil, err
	}
	ctrl, err := scraperhelper.NewMetricsController(&c.ControllerConfig, set, next, scraperhelper.AddMetricsScraper(metadata.Type, sc))
	if err != nil {
		return nil, err
	}
	return &dcgmReceiver{Metrics: ctrl, scraper: s}, nil
}

// dcgmReceiver is the scraper controller, which the collector runs, with
// the scraper's mapping reachable for trace replay.
type dcgmReceiver struct {
	receiver.Metrics
	scraper *gpuScraper
}

var _ offline.Receiver = (*dcgmReceiver)(nil)

// Map implements offline.Receiver.
func (r *dcgmReceiver) Map(samples []gpu.Sample) pmetric.Metrics { return r.scraper.Map(samples) }
