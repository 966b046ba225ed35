package dcgmreceiver

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
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
	BackendAMDSMI    = "amdsmi"
	BackendSimulated = "simulated"
)

// Naming modes accepted in `naming`.
const (
	// NamingOTel emits hw.* and nvidia.gpu.* metrics with resource attributes.
	NamingOTel = "otel"
	// NamingDCGMExporter emits dcgm-exporter's DCGM_FI_* gauges with its labels.
	NamingDCGMExporter = "dcgm_exporter"
	// NamingDeviceMetricsExporter emits AMD device-metrics-exporter's
	// gpu_* gauges with its labels.
	NamingDeviceMetricsExporter = "device_metrics_exporter"
)

// exporterNaming reports whether a naming mode is one of the vendors'
// exporters'. Either names each GPU as its own vendor's exporter does, an
// NVIDIA GPU as dcgm-exporter and an AMD GPU as device-metrics-exporter:
// neither exporter has names for the other vendor's GPUs, and one
// DaemonSet configuration serves a mixed fleet.
func exporterNaming(naming string) bool {
	return naming == NamingDCGMExporter || naming == NamingDeviceMetricsExporter
}

// Config is the dcgm receiver's configuration.
type Config struct {
	scraperhelper.ControllerConfig `mapstructure:",squash"`
	metadata.MetricsBuilderConfig  `mapstructure:",squash"`

	// Backend selects the source: auto (DCGM, then NVML, then AMD SMI),
	// dcgm, nvml, amdsmi or simulated.
	Backend string `mapstructure:"backend"`
	// Endpoint is nv-hostengine's address: host:port, or unix:///path/to/socket.
	Endpoint string `mapstructure:"endpoint"`
	// Embedded starts a host engine inside the collector instead of
	// connecting to nv-hostengine.
	Embedded bool `mapstructure:"embedded"`
	// Naming selects metric names: otel, dcgm_exporter or
	// device_metrics_exporter.
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
	// PerProcess splits each GPU's utilization and memory between the
	// pods whose processes use it (time-slicing, MPS).
	PerProcess PerProcessConfig `mapstructure:"per_process"`
	// DRA attributes the GPUs that Dynamic Resource Allocation claims hold.
	DRA DRAConfig `mapstructure:"dra"`
	// Slurm attributes GPUs to Slurm jobs (slurm.go).
	Slurm SlurmConfig `mapstructure:"slurm"`
	// AMDSMI configures the amdsmi backend.
	AMDSMI AMDSMIConfig `mapstructure:"amdsmi"`
	// Simulated configures the simulated fleet.
	Simulated simulated.Config `mapstructure:"simulated"`

	// legacyKeys are the warnings for the deprecated names among the
	// metrics and resource_attributes keys (legacynames.go).
	legacyKeys []string

	// prevent unkeyed literal initialization
	_ struct{}
}

// AMDSMIConfig configures the amdsmi backend.
type AMDSMIConfig struct {
	// LibraryPath is libamd_smi.so's path; empty searches the dynamic
	// loader's path (ROCm puts /opt/rocm/lib there).
	LibraryPath string `mapstructure:"library_path"`
	// Storage names a storage extension (file_storage) that keeps each
	// GPU's CPER cursor across restarts, so that a RAS record is counted
	// once; without it a restarted collector counts the driver's whole
	// log again.
	Storage *component.ID `mapstructure:"storage"`
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

// PerProcessConfig configures the per-process series.
type PerProcessConfig struct {
	// Enabled turns the per-process series on. Off by default: placing
	// the processes NVML reports needs the host's /proc, so a collector in
	// a pod needs hostPID: true.
	Enabled bool `mapstructure:"enabled"`
	// ProcRoot is where the host's /proc is seen: /proc with hostPID.
	ProcRoot string `mapstructure:"proc_root"`
	// ContainerLogsDir is the kubelet's container log directory, whose
	// links name each container ID's pod, namespace and container; empty
	// names the pods by k8s.pod.uid only.
	ContainerLogsDir string `mapstructure:"container_logs_dir"`
}

// DRAConfig configures attribution through Dynamic Resource Allocation: the
// kubelet names the driver's devices a claim holds, and the driver's
// ResourceSlices, read from the Kubernetes API, give their UUIDs.
type DRAConfig struct {
	// Enabled turns DRA attribution on. It needs pod_resources, and RBAC
	// to get, list and watch resourceslices (resource.k8s.io).
	Enabled bool `mapstructure:"enabled"`
	// Driver is the DRA driver whose devices are GPUs.
	Driver string `mapstructure:"driver"`
	// NodeName restricts the ResourceSlices read to this node's (in a
	// DaemonSet, ${env:K8S_NODE_NAME}); empty reads every node's.
	NodeName string `mapstructure:"node_name"`
	// Auth says how to reach the Kubernetes API.
	Auth AuthConfig `mapstructure:"auth"`
}

// AuthConfig says how to reach the Kubernetes API.
type AuthConfig struct {
	// Type is in_cluster (the pod's service account) or kubeconfig.
	Type       string `mapstructure:"type"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
}

// Validate checks the settings of this struct only: confmap.Validate, which
// the collector runs, walks the nested structs and calls their Validate
// itself (collection_interval is checked by scraperhelper.ControllerConfig,
// metrics by metadata.MetricsBuilderConfig). Each error names the key.
func (cfg *Config) Validate() error {
	var errs []error
	switch cfg.Backend {
	case BackendAuto, BackendDCGM, BackendNVML, BackendAMDSMI, BackendSimulated:
	default:
		errs = append(errs, fmt.Errorf("backend: unknown backend %q; want one of auto, dcgm, nvml, amdsmi, simulated", cfg.Backend))
	}
	switch cfg.Naming {
	case NamingOTel, NamingDCGMExporter, NamingDeviceMetricsExporter:
	default:
		errs = append(errs, fmt.Errorf("naming: unknown naming %q; want otel, dcgm_exporter or device_metrics_exporter", cfg.Naming))
	}
	if !cfg.Embedded && (cfg.Backend == BackendAuto || cfg.Backend == BackendDCGM) {
		if _, _, err := dcgmbackend.ParseEndpoint(cfg.Endpoint); err != nil {
			errs = append(errs, fmt.Errorf("endpoint: %w", err))
		}
	}
	if cfg.PerProcess.Enabled {
		// DCGM's per-PID fields are not read (yet): with backend dcgm the
		// setting would do nothing. auto may fall back to NVML, and warns
		// when it does not.
		if cfg.Backend == BackendDCGM {
			errs = append(errs, fmt.Errorf("per_process: enabled needs backend nvml, amdsmi, simulated or auto; the %s backend does not read per-process data", cfg.Backend))
		}
		if cfg.Naming != NamingOTel {
			errs = append(errs, fmt.Errorf("per_process: enabled needs naming otel; %s naming has no per-process series", cfg.Naming))
		}
	}
	// A Slurm node's jobs are read from the processes' cgroups or from the
	// mapping files; with neither there is nothing to read. The simulated
	// fleet names its jobs itself.
	if cfg.Slurm.Enabled && !cfg.PerProcess.Enabled && cfg.Slurm.JobMappingDir == "" && cfg.Backend != BackendSimulated {
		errs = append(errs, errors.New("slurm: enabled needs per_process::enabled (the GPU processes' cgroups name their jobs) or slurm::job_mapping_dir (a prolog's mapping files)"))
	}
	if cfg.DRA.Enabled && !cfg.PodResources.Enabled {
		errs = append(errs, errors.New("dra: enabled needs pod_resources::enabled: the kubelet says which devices a pod's claims hold"))
	}
	// The simulated block is read only by the simulated backend, so it is
	// checked here, where the backend is known, and not by the walk.
	if cfg.Backend == BackendSimulated {
		for _, err := range unjoin(cfg.Simulated.Check()) {
			errs = append(errs, fmt.Errorf("simulated: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Validate checks the back-off. A maximum is compared with the initial
// interval only once that is valid.
func (c *ReconnectConfig) Validate() error {
	if c.InitialInterval <= 0 {
		return fmt.Errorf("initial_interval must be positive, got %v", c.InitialInterval)
	}
	if c.MaxInterval < c.InitialInterval {
		return fmt.Errorf("max_interval (%v) must not be less than initial_interval (%v)", c.MaxInterval, c.InitialInterval)
	}
	return nil
}

// Validate checks the kubelet client's settings when it is enabled. Its
// problems are reported on one line: confmap.Validate puts the struct's key
// (pod_resources) before the first line of the error only.
func (c *PodResourcesConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var problems []string
	if c.Endpoint == "" {
		problems = append(problems, "endpoint must be set when enabled is true")
	}
	if c.RefreshInterval <= 0 {
		problems = append(problems, fmt.Sprintf("refresh_interval must be positive, got %v", c.RefreshInterval))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Validate checks the per-process settings when they are enabled, on one
// line as PodResourcesConfig does.
func (c *PerProcessConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var problems []string
	if !filepath.IsAbs(c.ProcRoot) {
		problems = append(problems, fmt.Sprintf("proc_root must be an absolute path, got %q", c.ProcRoot))
	}
	if c.ContainerLogsDir != "" && !filepath.IsAbs(c.ContainerLogsDir) {
		problems = append(problems, fmt.Sprintf("container_logs_dir must be an absolute path or empty, got %q", c.ContainerLogsDir))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Validate checks the DRA settings when they are enabled, on one line as
// PodResourcesConfig does.
func (c *DRAConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var problems []string
	if c.Driver == "" {
		problems = append(problems, "driver must be set when enabled is true")
	}
	switch c.Auth.Type {
	case "in_cluster":
	case "kubeconfig":
		if c.Auth.Kubeconfig == "" {
			problems = append(problems, "auth::kubeconfig must be set when auth::type is kubeconfig")
		}
	default:
		problems = append(problems, fmt.Sprintf("auth::type must be in_cluster or kubeconfig, got %q", c.Auth.Type))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// unjoin returns the errors that errors.Join joined, err alone if it is
// not a join, and nothing if it is nil.
func unjoin(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
