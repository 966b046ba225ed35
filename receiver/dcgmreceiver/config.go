package dcgmreceiver

import (
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// Backend names accepted in `backend`.
const (
	BackendAuto      = "auto"
	BackendDCGM      = "dcgm"
	BackendNVML      = "nvml"
	BackendSimulated = "simulated"
)

// Naming modes accepted in `naming`.
const (
	// NamingOTel emits hw.* and nvidia.gpu.* metrics with resource attributes.
	NamingOTel = "otel"
	// NamingDCGMExporter emits dcgm-exporter's DCGM_FI_* gauges with its labels.
	NamingDCGMExporter = "dcgm_exporter"
)

// Config is the dcgm receiver's configuration.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// Backend selects the source: auto (DCGM, then NVML), dcgm, nvml or simulated.
	Backend string `mapstructure:"backend"`
	// Endpoint is nv-hostengine's address: host:port, or unix:///path/to/socket.
	Endpoint string `mapstructure:"endpoint"`
	// Embedded starts a host engine inside the collector instead of
	// connecting to nv-hostengine.
	Embedded bool `mapstructure:"embedded"`
	// Naming selects metric names: otel or dcgm_exporter.
	Naming string `mapstructure:"naming"`
	// Hostname is the host.name of DCGM and NVML devices. It defaults to
	// the machine's hostname; in a Kubernetes pod, set it to the node's name
	// (e.g. ${env:K8S_NODE_NAME} from the downward API). The simulated fleet
	// names its own hosts.
	Hostname string `mapstructure:"hostname"`
	// Reconnect bounds the back-off between attempts to reach the backend.
	Reconnect ReconnectConfig `mapstructure:"reconnect"`
	// PodResources attributes devices to pods through the kubelet.
	PodResources PodResourcesConfig `mapstructure:"pod_resources"`
	// Simulated configures the simulated fleet.
	Simulated simulated.Config `mapstructure:"simulated"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// ReconnectConfig is a capped exponential back-off.
type ReconnectConfig struct {
	InitialInterval time.Duration `mapstructure:"initial_interval"`
	MaxInterval     time.Duration `mapstructure:"max_interval"`
}

// PodResourcesConfig configures the kubelet PodResources client.
type PodResourcesConfig struct {
	// Enabled turns pod attribution on.
	Enabled bool `mapstructure:"enabled"`
	// Endpoint is the kubelet's pod-resources unix socket.
	Endpoint string `mapstructure:"endpoint"`
	// RefreshInterval is how often the device-to-pod map is refreshed.
	RefreshInterval time.Duration `mapstructure:"refresh_interval"`
}

// Validate checks the configuration; each error names the offending key.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.CollectionInterval <= 0 {
		errs = append(errs, fmt.Errorf("collection_interval must be positive, got %v", cfg.CollectionInterval))
	}
	switch cfg.Backend {
	case BackendAuto, BackendDCGM, BackendNVML, BackendSimulated:
	default:
		errs = append(errs, fmt.Errorf("backend: unknown backend %q; want one of auto, dcgm, nvml, simulated", cfg.Backend))
	}
	switch cfg.Naming {
	case NamingOTel, NamingDCGMExporter:
	default:
		errs = append(errs, fmt.Errorf("naming: unknown naming %q; want otel or dcgm_exporter", cfg.Naming))
	}
	if !cfg.Embedded && (cfg.Backend == BackendAuto || cfg.Backend == BackendDCGM) {
		if _, _, err := ParseEndpoint(cfg.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("endpoint: %w", err))
		}
	}
	if cfg.Reconnect.InitialInterval <= 0 {
		errs = append(errs, fmt.Errorf("reconnect::initial_interval must be positive, got %v", cfg.Reconnect.InitialInterval))
	}
	if cfg.Reconnect.MaxInterval < cfg.Reconnect.InitialInterval {
		errs = append(errs, fmt.Errorf("reconnect::max_interval (%v) must not be less than reconnect::initial_interval (%v)", cfg.Reconnect.MaxInterval, cfg.Reconnect.InitialInterval))
	}
	if cfg.PodResources.Enabled {
		if cfg.PodResources.Endpoint == "" {
			errs = append(errs, errors.New("pod_resources::endpoint must be set when pod_resources::enabled is true"))
		}
		if cfg.PodResources.RefreshInterval <= 0 {
			errs = append(errs, fmt.Errorf("pod_resources::refresh_interval must be positive, got %v", cfg.PodResources.RefreshInterval))
		}
	}
	if cfg.Backend == BackendSimulated {
		if err := cfg.Simulated.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("simulated: %w", err))
		}
	}
	return errors.Join(errs...)
}

// ParseEndpoint turns an nv-hostengine endpoint into go-dcgm's address and
// whether it is a unix socket. It accepts host:port, unix:///path and a bare
// absolute socket path.
func ParseEndpoint(endpoint string) (address string, unix bool, err error) {
	return dcgmbackend.ParseEndpoint(endpoint)
}
