package gpunodereceiver

import (
	"errors"
	"fmt"
	"path/filepath"

	"go.opentelemetry.io/collector/scraper/scraperhelper"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// Config is the gpu_node receiver's configuration.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// RootPath is where the host's filesystem is seen: "/" on the host,
	// the host's root mounted into the agent's container (e.g. /hostfs)
	// otherwise. The cgroup root is RootPath/sys/fs/cgroup and /proc is
	// RootPath/proc.
	RootPath string `mapstructure:"root_path"`
	// HostName is the host.name of every resource. Empty means
	// os.Hostname(), which in a container without hostNetwork is the
	// pod's name, not the node's: set it there, e.g. from the downward
	// API's spec.nodeName.
	HostName string `mapstructure:"host_name"`
	// Cgroup reads each pod's cgroup.
	Cgroup CgroupConfig `mapstructure:"cgroup"`
	// Pressure reads the node's /proc/pressure.
	Pressure PressureConfig `mapstructure:"pressure"`
	// Network reads the node's NICs (Ethernet, InfiniBand/RoCE, EFA) and
	// their rails to the GPUs.
	Network NetworkConfig `mapstructure:"network"`
	// NCCL reads NCCL Inspector's output files.
	NCCL NCCLConfig `mapstructure:"nccl"`
	// Simulated, when set, reads the nodes of a simulated fleet instead of
	// this host: the same block as the dcgm receiver's simulated section
	// (a YAML anchor there, an alias here), so that the pods' UIDs, the
	// hosts and the GPUs' PCI bus IDs are the ones the dcgm receiver
	// reports. The cgroup, pressure and network sections say which of
	// the fleet's pods, nodes and NICs are emitted; root_path, host_name
	// and nccl are not read.
	Simulated *simulated.Config `mapstructure:"simulated"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// CgroupConfig is the `cgroup` section.
type CgroupConfig struct {
	// Enabled emits the otelgpu.pod.* metrics and each pod's
	// otelgpu.pressure.stall_time.
	Enabled bool `mapstructure:"enabled"`
}

// PressureConfig is the `pressure` section.
type PressureConfig struct {
	// Enabled emits the node's otelgpu.pressure.stall_time.
	Enabled bool `mapstructure:"enabled"`
}

// NetworkConfig is the `network` section.
type NetworkConfig struct {
	// Enabled reads the NICs under RootPath/sys/class/net and
	// RootPath/sys/class/infiniband.
	Enabled bool `mapstructure:"enabled"`
	// Ethtool adds each physical Ethernet interface's driver statistics
	// (mlx5's rx_discards_phy, ENA's allowance counters) through the
	// SIOCETHTOOL ioctl, in the collector's own network namespace (an
	// agent with hostNetwork). On by default.
	Ethtool bool `mapstructure:"ethtool"`
	// IncludeVirtual reads virtual interfaces too (veth, bridges, bonds);
	// off by default: a GPU node's pods add a veth each, and their
	// traffic is the physical NICs' already.
	IncludeVirtual bool `mapstructure:"include_virtual"`
}

// NCCLConfig is the `nccl` section.
type NCCLConfig struct {
	// Enabled reads the files Paths match.
	Enabled bool `mapstructure:"enabled"`
	// Paths are glob patterns (filepath.Match syntax) of NCCL Inspector's
	// output files, Prometheus text or JSON records.
	Paths []string `mapstructure:"paths"`
}

// Validate checks the configuration.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.RootPath == "" || !filepath.IsAbs(cfg.RootPath) {
		errs = append(errs, fmt.Errorf("root_path %q: want an absolute path (/ on the host)", cfg.RootPath))
	}
	if cfg.Simulated != nil {
		if !cfg.Cgroup.Enabled && !cfg.Pressure.Enabled && !cfg.Network.Enabled {
			errs = append(errs, errors.New("simulated: cgroup, pressure and network are all disabled: nothing to read"))
		}
		// Checked here, as the dcgm receiver does: the block has no
		// Validate of its own for the config walk.
		if err := cfg.Simulated.Check(); err != nil {
			errs = append(errs, fmt.Errorf("simulated: %w", err))
		}
	} else if !cfg.Cgroup.Enabled && !cfg.Pressure.Enabled && !cfg.Network.Enabled && !cfg.NCCL.Enabled {
		errs = append(errs, errors.New("cgroup, pressure, network and nccl are all disabled: nothing to read"))
	}
	return errors.Join(errs...)
}

// Validate checks the cgroup section (nothing to check beyond the type).
func (c *CgroupConfig) Validate() error { return nil }

// Validate checks the pressure section (nothing to check beyond the type).
func (c *PressureConfig) Validate() error { return nil }

// Validate checks the network section (nothing to check beyond the type).
func (c *NetworkConfig) Validate() error { return nil }

// Validate checks that each path is a well-formed pattern, and that an
// enabled section has one.
func (c *NCCLConfig) Validate() error {
	var errs []error
	if c.Enabled && len(c.Paths) == 0 {
		errs = append(errs, errors.New("nccl: enabled with no paths"))
	}
	for _, p := range c.Paths {
		if _, err := filepath.Match(p, ""); err != nil {
			errs = append(errs, fmt.Errorf("nccl: paths: %q: %w", p, err))
		}
	}
	return errors.Join(errs...)
}
