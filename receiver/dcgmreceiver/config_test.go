package dcgmreceiver

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

func loadConfig(t *testing.T, name string) *Config {
	t.Helper()
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	require.NoError(t, err)
	cfg := NewFactory().CreateDefaultConfig()
	sub, err := cm.Sub(component.NewIDWithName(metadata.Type, name).String())
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	return cfg.(*Config)
}

func TestLoadConfig(t *testing.T) {
	def := loadConfig(t, "")
	require.NoError(t, confmap.Validate(def))
	require.Equal(t, createDefaultConfig(), def)

	c := loadConfig(t, "custom")
	require.NoError(t, confmap.Validate(c))
	require.Equal(t, BackendDCGM, c.Backend)
	require.Equal(t, NamingDCGMExporter, c.Naming)
	require.Equal(t, 5*time.Second, c.CollectionInterval)
	require.Equal(t, ReconnectConfig{InitialInterval: 2 * time.Second, MaxInterval: 30 * time.Second}, c.Reconnect)
	require.Equal(t, PodResourcesConfig{Enabled: true, Endpoint: "/var/lib/kubelet/pod-resources/kubelet.sock", RefreshInterval: 10 * time.Second}, c.PodResources)
	require.False(t, c.Metrics.NvidiaGpuClockEventActive.Enabled)
	addr, unix, err := dcgmbackend.ParseEndpoint(c.Endpoint)
	require.NoError(t, err)
	require.True(t, unix)
	require.Equal(t, "/run/nvidia/nv-hostengine.sock", addr)

	require.Equal(t, PerProcessConfig{ProcRoot: "/proc", ContainerLogsDir: "/var/log/containers"}, def.PerProcess, "off by default: it needs hostPID")
	pp := loadConfig(t, "per_process")
	require.NoError(t, confmap.Validate(pp))
	require.Equal(t, PerProcessConfig{Enabled: true, ProcRoot: "/host/proc", ContainerLogsDir: "/host/var/log/containers"}, pp.PerProcess)
	require.NoError(t, confmap.Validate(loadConfig(t, "per_process_off")), "a disabled block is not checked")
	require.NoError(t, confmap.Validate(loadConfig(t, "per_process_amdsmi")), "AMD SMI lists each GPU's processes")

	amd := loadConfig(t, "amd")
	require.NoError(t, confmap.Validate(amd))
	require.Equal(t, BackendAMDSMI, amd.Backend)
	require.Equal(t, NamingDeviceMetricsExporter, amd.Naming)
	storageID := component.MustNewIDWithName("file_storage", "amd")
	require.Equal(t, AMDSMIConfig{LibraryPath: "/opt/rocm/lib/libamd_smi.so", Storage: &storageID}, amd.AMDSMI)
	require.Equal(t, AMDSMIConfig{}, def.AMDSMI, "the loader's path; cursors in memory")

	require.Equal(t, DRAConfig{Driver: "gpu.nvidia.com", Auth: AuthConfig{Type: "in_cluster"}}, def.DRA, "off by default: it needs RBAC")
	dra := loadConfig(t, "dra")
	require.NoError(t, confmap.Validate(dra))
	require.Equal(t, DRAConfig{Enabled: true, Driver: "gpu.nvidia.com", NodeName: "gpu-node-1", Auth: AuthConfig{Type: "in_cluster"}}, dra.DRA)
}

func TestConfigValidationErrors(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"unknown_backend", []string{`backend: unknown backend "rocm"; want one of auto, dcgm, nvml, amdsmi, simulated`}},
		{"bad_endpoint", []string{`endpoint: "localhost:notaport" has an invalid port "notaport"`}},
		{"relative_socket", []string{`endpoint: "unix://run/nv-hostengine.sock": a unix socket path must be absolute`}},
		{"zero_interval", []string{`"collection_interval": requires positive value`}},
		{"bad_naming", []string{`naming: unknown naming "prometheus"; want otel, dcgm_exporter or device_metrics_exporter`}},
		{"bad_backoff", []string{"reconnect: max_interval (1s) must not be less than initial_interval (10s)"}},
		{"zero_backoff", []string{"reconnect: initial_interval must be positive, got 0s"}},
		{"pods_without_socket", []string{"pod_resources: endpoint must be set when enabled is true"}},
		{"pods_all_wrong", []string{"pod_resources: endpoint must be set when enabled is true; refresh_interval must be positive, got 0s"}},
		{"per_process_relative", []string{`per_process: proc_root must be an absolute path, got "proc"; container_logs_dir must be an absolute path or empty, got "var/log/containers"`}},
		{"per_process_dcgm", []string{
			"per_process: enabled needs backend nvml, amdsmi, simulated or auto; the dcgm backend does not read per-process data",
			"per_process: enabled needs naming otel; dcgm_exporter naming has no per-process series",
		}},
		{"dra_without_pods", []string{
			"dra: enabled needs pod_resources::enabled",
			`dra: driver must be set when enabled is true; auth::type must be in_cluster or kubeconfig, got "token"`,
		}},
		{"bad_fleet", []string{
			`simulated: models[1]: unknown model "mi300"; want h100, a100, t4, l40s, p100, mi300x or mi250`,
			`simulated: workloads[0]::kind: unknown kind "batch"; want training, serving, time_sliced, mig or cpx`,
			`simulated: workloads[0]::gpus: "0/x": gpus: "x" is not *, N or N-M`,
			`simulated: workloads[0]::phases[0]::kind: unknown phase "busy"`,
			`simulated: faults[0]::kind: unknown fault "meltdown"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := confmap.Validate(loadConfig(t, tt.name))
			require.Error(t, err)
			for _, w := range tt.want {
				require.ErrorContains(t, err, w)
			}
		})
	}
}

// TestConfigValidationReportsEachErrorOnce goes through confmap.Validate, as
// the collector does: it walks nested structs itself, so an error must come
// from one Validate only, and a block the chosen backend does not read is not
// checked.
func TestConfigValidationReportsEachErrorOnce(t *testing.T) {
	t.Run("no duplicates", func(t *testing.T) {
		err := confmap.Validate(loadConfig(t, "zero_interval_empty_fleet"))
		require.Error(t, err)
		lines := strings.Split(err.Error(), "\n")
		require.Len(t, lines, 2, "want one error per bad key, got:\n%v", err)
		all := strings.Join(lines, "\n")
		require.Contains(t, all, `"collection_interval": requires positive value`)
		require.Contains(t, all, "simulated: hosts and gpus_per_host must be positive, got 0 and 8")
	})
	t.Run("unused block", func(t *testing.T) {
		require.NoError(t, confmap.Validate(loadConfig(t, "unused_fleet")),
			"the simulated block is not read with backend nvml")
	})
}
