// Package dratest tests the dcgm receiver's DRA attribution against a real
// kube-apiserver, through the receiver's factory. It is a package of its
// own so that the receiver's test binary, whose benchmarks compare scrape
// costs, links no Kubernetes client: client-go's packages keep a heap from
// start-up that every garbage collection of a benchmark marks again.
package dratest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	resourcev1 "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

var (
	apiServer    *kubetest.Server
	apiServerErr error
)

// TestMain starts one kube-apiserver with etcd for the package's tests,
// stops it after, checks that no goroutine leaked, and exits.
func TestMain(m *testing.M) {
	if kubetest.Fuzzing() {
		apiServerErr = errors.New("no kube-apiserver while fuzzing")
		os.Exit(m.Run())
	}
	apiBin, etcdBin, err := kubetest.Binaries("../../../..")
	if err == nil {
		apiServer, err = kubetest.Start(apiBin, etcdBin)
	}
	apiServerErr = err
	code := m.Run()
	if apiServer != nil {
		apiServer.Stop()
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// agentKubeconfig writes a kubeconfig that acts as the node agent's
// service account, whose permissions are the ClusterRole of the shipped
// agent manifest.
func agentKubeconfig(t *testing.T, s *kubetest.Server) string {
	t.Helper()
	ctx := context.Background()
	objs, err := kubetest.Decode("../../../../distributions/otelcol-gpu/kubernetes/agent.yaml")
	require.NoError(t, err)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	_, err = cs.CoreV1().Namespaces().Get(ctx, "observability", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		ns, _ := kubetest.Decode("../../../../distributions/otelcol-gpu/kubernetes/namespace.yaml")
		for _, obj := range ns {
			require.NoError(t, s.Create(obj, false))
		}
	}
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding":
			if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
			}
		}
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: agent
  user: {token: %q, as: "system:serviceaccount:observability:otelcol-gpu-agent"}
contexts:
- name: agent
  context: {cluster: test, user: agent}
current-context: agent
`, s.URL, kubetest.AdminToken)
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

// gpuSlice is a ResourceSlice of the NVIDIA DRA driver publishing one
// node's devices, each with the attributes it sets.
func gpuSlice(name, node string, generation int64, devices map[string]map[string]string) *resourcev1.ResourceSlice {
	rs := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   "gpu.nvidia.com",
			Pool:     resourcev1.ResourcePool{Name: node, Generation: generation, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for dev, attrs := range devices {
		d := resourcev1.Device{Name: dev, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}}
		for k, v := range attrs {
			d.Attributes[resourcev1.QualifiedName(k)] = resourcev1.DeviceAttribute{StringValue: ptr.To(v)}
		}
		rs.Spec.Devices = append(rs.Spec.Devices, d)
	}
	return rs
}

// claimed is a container holding the devices of one claim through DRA.
func claimed(ctr, claim, ns string, devices ...*podresourcesv1.ClaimResource) *podresourcesv1.ContainerResources {
	return &podresourcesv1.ContainerResources{Name: ctr, DynamicResources: []*podresourcesv1.DynamicResource{
		{ClaimName: claim, ClaimNamespace: ns, ClaimResources: devices},
	}}
}

func nvidiaDevice(pool, device string) *podresourcesv1.ClaimResource {
	return &podresourcesv1.ClaimResource{DriverName: "gpu.nvidia.com", PoolName: pool, DeviceName: device}
}

// TestDRAAttribution: the kubelet (a real gRPC server with the v1 API's
// types) names a device plugin's GPU and the devices that DRA claims hold;
// a real kube-apiserver holds the driver's ResourceSlices, read as the
// agent's service account through the shipped ClusterRole. Each claimed
// GPU's series carry the claim, its namespace and its pod; as slices are
// created, changed and deleted, the attribution follows.
func TestDRAAttribution(t *testing.T) {
	s := kubetest.Require(t, apiServer, apiServerErr)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))

	fleetCfg := simulated.DefaultConfig()
	fleetCfg.Workloads = nil // every attribute must come from the kubelet
	fl, err := simulated.New(fleetCfg)
	require.NoError(t, err)
	devs := fl.Devices()
	node := devs[0].Host

	k := &kubelet{resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Name: "trainer-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{
			{Name: "pytorch", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(devs[0].UUID)}},
		}},
		{Name: "infer-0", Namespace: "serving", Containers: []*podresourcesv1.ContainerResources{
			claimed("vllm", "infer-0-gpu", "serving", nvidiaDevice(node, "gpu-5"),
				// Another driver's device is not a GPU of this receiver.
				&podresourcesv1.ClaimResource{DriverName: "nic.example.com", PoolName: node, DeviceName: "gpu-6"}),
		}},
		// One claim that two pods share: the GPU is the claim's, no one pod's.
		{Name: "notebook-a", Namespace: "lab", Containers: []*podresourcesv1.ContainerResources{
			claimed("jupyter", "shared-gpu", "lab", nvidiaDevice(node, "gpu-6")),
		}},
		{Name: "notebook-b", Namespace: "lab", Containers: []*podresourcesv1.ContainerResources{
			claimed("jupyter", "shared-gpu", "lab", nvidiaDevice(node, "gpu-6")),
		}},
	}}}
	sock := serveKubelet(t, k)

	f := dcgmreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*dcgmreceiver.Config)
	cfg.Backend = dcgmreceiver.BackendSimulated
	cfg.CollectionInterval = 50 * time.Millisecond
	cfg.Simulated = fleetCfg
	cfg.PodResources = dcgmreceiver.PodResourcesConfig{Enabled: true, Endpoint: sock, RefreshInterval: time.Hour}
	cfg.DRA = dcgmreceiver.DRAConfig{Enabled: true, Driver: "gpu.nvidia.com", NodeName: node,
		Auth: dcgmreceiver.AuthConfig{Type: "kubeconfig", Kubeconfig: agentKubeconfig(t, s)}}
	require.NoError(t, confmap.Validate(cfg))
	core, logs := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(f.Type())
	set.Logger = zap.New(core)
	sink := new(consumertest.MetricsSink)
	r, err := f.CreateMetrics(ctx, set, cfg, sink)
	require.NoError(t, err)
	require.NoError(t, r.Start(ctx, componenttest.NewNopHost()))
	t.Cleanup(func() { require.NoError(t, r.Shutdown(context.Background())) })
	// latest is the newest scrape's resources by hw.id, once there is one
	// after every earlier call: each check reads what followed the change
	// before it.
	latest := func() map[string]pmetric.ResourceMetrics {
		n := sink.DataPointCount()
		require.Eventually(t, func() bool { return sink.DataPointCount() > n && len(sink.AllMetrics()) > 0 }, 10*time.Second, 10*time.Millisecond)
		all := sink.AllMetrics()
		return byDevice(t, all[len(all)-1])
	}
	attrs := func() map[string]map[string]any {
		out := map[string]map[string]any{}
		for id, rm := range latest() {
			if _, split := rm.Resource().Attributes().Get("otelgpu.process.owner"); split {
				continue
			}
			out[id] = rm.Resource().Attributes().AsRaw()
		}
		return out
	}
	claimOf := func(got map[string]map[string]any, i int) any { return got[devs[i].UUID]["k8s.resourceclaim.name"] }

	// Before any slice: the device plugin's GPU only.
	got := attrs()
	require.Equal(t, "trainer-0", got[devs[0].UUID]["k8s.pod.name"])
	for _, a := range got {
		require.NotContains(t, a, "k8s.resourceclaim.name")
	}

	// The driver publishes its devices; another node's slice, with the
	// same device names, is not read.
	_, err = admin.ResourceV1().ResourceSlices().Create(ctx, gpuSlice(node+"-gpus", node, 1, map[string]map[string]string{
		"gpu-5": {"uuid": devs[5].UUID, "type": "gpu"},
		"gpu-6": {"gpu.nvidia.com/uuid": devs[6].UUID, "type": "gpu"},
	}), metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = admin.ResourceV1().ResourceSlices().Create(ctx, gpuSlice("other-node-gpus", "other-node", 1, map[string]map[string]string{
		"gpu-5": {"uuid": devs[9].UUID, "type": "gpu"},
	}), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return claimOf(attrs(), 5) != nil }, 20*time.Second, 50*time.Millisecond, "the claim never reached gpu5")
	got = attrs()
	require.Equal(t, map[string]any{"k8s.resourceclaim.name": "infer-0-gpu", "k8s.namespace.name": "serving", "k8s.pod.name": "infer-0", "k8s.container.name": "vllm"},
		pick(got[devs[5].UUID], "k8s.resourceclaim.name", "k8s.namespace.name", "k8s.pod.name", "k8s.container.name"))
	require.Equal(t, map[string]any{"k8s.resourceclaim.name": "shared-gpu", "k8s.namespace.name": "lab"},
		pick(got[devs[6].UUID], "k8s.resourceclaim.name", "k8s.namespace.name", "k8s.pod.name", "k8s.container.name"), "a shared claim names no pod")
	require.NotContains(t, got[devs[9].UUID], "k8s.resourceclaim.name", "another node's slice")
	require.Equal(t, "trainer-0", got[devs[0].UUID]["k8s.pod.name"], "the device plugin's GPU keeps its pod")
	for _, m := range []string{"hw.gpu.utilization", "hw.power", "nvidia.gpu.sm.active"} {
		require.True(t, hasMetric(latest()[devs[5].UUID], m), "%s on the claimed GPU's resource", m)
	}

	// The driver republishes the pool (a new generation, as after a GPU
	// was replaced): gpu-5 is now another GPU. The old generation's slice
	// is left behind for a while, and is not read.
	_, err = admin.ResourceV1().ResourceSlices().Create(ctx, gpuSlice(node+"-gpus-2", node, 2, map[string]map[string]string{
		"gpu-5": {"uuid": devs[7].UUID, "type": "gpu"},
	}), metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return claimOf(attrs(), 7) == "infer-0-gpu" }, 20*time.Second, 50*time.Millisecond, "the claim never followed gpu-5")
	got = attrs()
	require.NotContains(t, got[devs[5].UUID], "k8s.resourceclaim.name")
	require.NotContains(t, got[devs[6].UUID], "k8s.resourceclaim.name", "gpu-6 is not in the newest generation")

	// A change within a slice: the driver names gpu-5 by another UUID.
	rs, err := admin.ResourceV1().ResourceSlices().Get(ctx, node+"-gpus-2", metav1.GetOptions{})
	require.NoError(t, err)
	rs.Spec.Devices[0].Attributes["uuid"] = resourcev1.DeviceAttribute{StringValue: ptr.To(devs[8].UUID)}
	_, err = admin.ResourceV1().ResourceSlices().Update(ctx, rs, metav1.UpdateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { return claimOf(attrs(), 8) == "infer-0-gpu" }, 20*time.Second, 50*time.Millisecond, "the claim never followed the update")
	require.Nil(t, claimOf(attrs(), 7))

	// The slices deleted: no DRA attribution is left; the device
	// plugin's is.
	for _, name := range []string{node + "-gpus", node + "-gpus-2"} {
		require.NoError(t, admin.ResourceV1().ResourceSlices().Delete(ctx, name, metav1.DeleteOptions{}))
	}
	require.Eventually(t, func() bool { return claimOf(attrs(), 8) == nil }, 20*time.Second, 50*time.Millisecond, "the claim outlived its slice")
	got = attrs()
	for _, a := range got {
		require.NotContains(t, a, "k8s.resourceclaim.name")
	}
	require.Equal(t, "trainer-0", got[devs[0].UUID]["k8s.pod.name"])
	require.Zero(t, logs.FilterMessage("DRA attribution unavailable; retrying").Len())
	require.NoError(t, admin.ResourceV1().ResourceSlices().Delete(ctx, "other-node-gpus", metav1.DeleteOptions{}))
}

// kubelet serves the PodResources v1 API the way the kubelet does, on a
// unix socket.
type kubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	resp *podresourcesv1.ListPodResourcesResponse
}

func (k *kubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
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

// byDevice indexes a scrape's resources by hw.id; a GPU's per-process
// resources, which share its hw.id, come after it and are kept apart by
// attrs.
func byDevice(t *testing.T, md pmetric.Metrics) map[string]pmetric.ResourceMetrics {
	t.Helper()
	out := map[string]pmetric.ResourceMetrics{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, ok := rm.Resource().Attributes().Get("hw.id")
		require.True(t, ok, "resource without hw.id")
		if _, seen := out[id.Str()]; !seen {
			out[id.Str()] = rm
		}
	}
	return out
}

func hasMetric(rm pmetric.ResourceMetrics, name string) bool {
	for i := 0; i < rm.ScopeMetrics().Len(); i++ {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Name() == name {
				return true
			}
		}
	}
	return false
}

func pick(m map[string]any, keys ...string) map[string]any {
	out := map[string]any{}
	for _, k := range keys {
		if v, ok := m[k]; ok {
			out[k] = v
		}
	}
	return out
}

// TestDRARBAC: the shipped agent ClusterRole lets the agent read
// ResourceSlices and nothing more of resource.k8s.io: it cannot write
// them, nor read the claims themselves (the kubelet names them).
func TestDRARBAC(t *testing.T) {
	s := kubetest.Require(t, apiServer, apiServerErr)
	ctx := context.Background()
	agentKubeconfig(t, s)
	as := s.Config(kubetest.AdminToken)
	as.Impersonate.UserName = "system:serviceaccount:observability:otelcol-gpu-agent"
	sa := kubernetes.NewForConfigOrDie(as)

	_, err := sa.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	require.NoError(t, err, "list")
	w, err := sa.ResourceV1().ResourceSlices().Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err, "watch")
	w.Stop()
	_, err = sa.ResourceV1().ResourceSlices().Get(ctx, "absent", metav1.GetOptions{})
	require.True(t, apierrors.IsNotFound(err), "get: want not found, got %v", err)

	forbidden := map[string]error{}
	_, forbidden["create resourceslice"] = sa.ResourceV1().ResourceSlices().Create(ctx, gpuSlice("x", "n", 1, nil), metav1.CreateOptions{})
	forbidden["delete resourceslices"] = sa.ResourceV1().ResourceSlices().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_, forbidden["list resourceclaims"] = sa.ResourceV1().ResourceClaims("").List(ctx, metav1.ListOptions{})
	_, forbidden["list deviceclasses"] = sa.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	_, forbidden["list secrets"] = sa.CoreV1().Secrets("").List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		require.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
}
