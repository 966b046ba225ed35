package dcgmreceiver

import (
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// kubelet serves the PodResources v1 API the way the kubelet does, on a
// unix socket.
type kubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	resp  *podresourcesv1.ListPodResourcesResponse
	calls int
}

func (k *kubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	k.calls++
	return k.resp, nil
}

func serveKubelet(t *testing.T, k *kubelet) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	srv := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(srv, k)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return sock
}

func gpuDevice(ids ...string) *podresourcesv1.ContainerDevices {
	return &podresourcesv1.ContainerDevices{ResourceName: "nvidia.com/gpu", DeviceIds: ids}
}

func newSimulatedScraper(t *testing.T, mutate func(*Config)) (*gpuScraper, *observer.ObservedLogs) {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendSimulated
	cfg.CollectionInterval = time.Second
	if mutate != nil {
		mutate(cfg)
	}
	require.NoError(t, confmap.Validate(cfg))
	core, logs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newGPUScraper(cfg, set)
	require.NoError(t, s.start(context.Background(), &statusHost{}))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	return s, logs
}

func TestPodAttribution(t *testing.T) {
	fleetCfg := simulated.DefaultConfig()
	fleetCfg.Workloads = nil // no simulated pods: every attribute must come from the kubelet
	fl, err := simulated.New(fleetCfg)
	require.NoError(t, err)
	devs := fl.Devices()

	k := &kubelet{resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Name: "trainer-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{
			{Name: "pytorch", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(devs[0].UUID, devs[1].UUID)}},
		}},
		{Name: "notebook", Namespace: "lab", Containers: []*podresourcesv1.ContainerResources{
			// A time-sliced GPU is advertised as UUID::replica.
			{Name: "jupyter", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(devs[2].UUID + "::3")}},
			{Name: "sidecar", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "example.com/nic", DeviceIds: []string{devs[3].UUID}}}},
		}},
	}}}
	sock := serveKubelet(t, k)

	s, _ := newSimulatedScraper(t, func(c *Config) {
		c.Simulated = fleetCfg
		c.PodResources = PodResourcesConfig{Enabled: true, Endpoint: sock, RefreshInterval: time.Hour}
	})
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	got := byDevice(t, md)
	require.Len(t, got, 16)
	attrs := func(i int) map[string]any { return got[devs[i].UUID].Resource().Attributes().AsRaw() }
	require.Equal(t, "ml", attrs(0)["k8s.namespace.name"])
	require.Equal(t, "trainer-0", attrs(0)["k8s.pod.name"])
	require.Equal(t, "pytorch", attrs(0)["k8s.container.name"])
	require.Equal(t, "trainer-0", attrs(1)["k8s.pod.name"])
	require.Equal(t, "notebook", attrs(2)["k8s.pod.name"])
	require.Equal(t, "jupyter", attrs(2)["k8s.container.name"])
	require.NotContains(t, attrs(3), "k8s.pod.name", "only nvidia.com resources are GPUs")
	require.NotContains(t, attrs(4), "k8s.pod.name")

	// The map is cached until the refresh interval passes.
	_, err = s.scrape(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, k.calls)
}

func TestPodAttributionSocketMissing(t *testing.T) {
	s, logs := newSimulatedScraper(t, func(c *Config) {
		c.PodResources = PodResourcesConfig{Enabled: true, Endpoint: filepath.Join(t.TempDir(), "absent.sock"), RefreshInterval: time.Nanosecond}
	})
	for range 3 {
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		require.Equal(t, 16, md.ResourceMetrics().Len(), "metrics flow without the kubelet")
	}
	warnings := logs.FilterMessage("Pod attribution unavailable; GPU metrics flow without k8s attributes")
	require.Equal(t, 1, warnings.Len(), "one warning, not one per scrape")
	require.Contains(t, warnings.All()[0].ContextMap()["error"], "absent.sock")
}
