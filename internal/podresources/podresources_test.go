package podresources

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

func pod(ns, name string, ctrs map[string][]string) *podresourcesv1.PodResources {
	p := &podresourcesv1.PodResources{Namespace: ns, Name: name}
	for ctr, ids := range ctrs {
		p.Containers = append(p.Containers, &podresourcesv1.ContainerResources{Name: ctr, Devices: []*podresourcesv1.ContainerDevices{
			{ResourceName: "nvidia.com/gpu", DeviceIds: ids},
		}})
	}
	return p
}

// TestDevicesToPodsShared: a GPU whose time-slicing replicas are held by
// several pods is no one pod's; one whose replicas one pod's containers
// hold is that pod's, in no one container; an exclusive GPU is its
// container's.
func TestDevicesToPodsShared(t *testing.T) {
	m := devicesToPods(&podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		pod("ml", "a", map[string][]string{"main": {"GPU-shared::0", "GPU-own"}}),
		pod("ml", "b", map[string][]string{"main": {"GPU-shared::1"}}),
		pod("lab", "c", map[string][]string{"x": {"GPU-twice::0"}, "y": {"GPU-twice::1"}}),
	}})
	require.Equal(t, map[string]gpu.Pod{
		"GPU-own":   {Namespace: "ml", Name: "a", Container: "main"},
		"GPU-twice": {Namespace: "lab", Name: "c"},
	}, m)
}

func TestParseLogName(t *testing.T) {
	id := strings.Repeat("0123456789abcdef", 4)
	for name, want := range map[string]*gpu.Pod{
		"trainer-0_ml_pytorch-" + id + ".log":                    {Namespace: "ml", Name: "trainer-0", Container: "pytorch"},
		"nvidia-dcgm-x7_gpu-operator_nvidia-dcgm-" + id + ".log": {Namespace: "gpu-operator", Name: "nvidia-dcgm-x7", Container: "nvidia-dcgm"},
		"trainer-0_ml_pytorch-" + id[:60] + ".log":               nil, // cut at 255 bytes
		"trainer-0_ml_pytorch-" + id:                             nil,
		"trainer-0_pytorch-" + id + ".log":                       nil,
		"_ml_pytorch-" + id + ".log":                             nil,
		"trainer-0_ml_pytorch-" + strings.ToUpper(id) + ".log":   nil,
	} {
		gotID, got, ok := parseLogName(name)
		if want == nil {
			require.Falsef(t, ok, "%q", name)
			continue
		}
		require.Truef(t, ok, "%q", name)
		require.Equal(t, id, gotID)
		require.Equal(t, *want, got)
	}
}

// TestContainerIndex: the index reads the directory at the first lookup,
// rereads it on a miss at most once a second, and forgets the containers
// gone since; an unreadable directory is one warning.
func TestContainerIndex(t *testing.T) {
	dir := t.TempDir()
	id := func(c byte) string { return strings.Repeat(string(c), 64) }
	link := func(name string) {
		t.Helper()
		// The links point into /var/log/pods, which need not exist here.
		require.NoError(t, os.Symlink("/var/log/pods/absent/0.log", filepath.Join(dir, name)))
	}
	link("a-0_ml_main-" + id('a') + ".log")
	core, logs := observer.New(zap.InfoLevel)
	x := NewContainerIndex(dir, zap.New(core))
	t0 := time.Unix(100, 0)

	p, ok := x.Lookup(id('a'), t0)
	require.True(t, ok)
	require.Equal(t, gpu.Pod{Namespace: "ml", Name: "a-0", Container: "main"}, p)

	link("b-0_ml_main-" + id('b') + ".log")
	_, ok = x.Lookup(id('b'), t0.Add(500*time.Millisecond))
	require.False(t, ok, "within a second of the last read a miss does not reread")
	p, ok = x.Lookup(id('b'), t0.Add(1500*time.Millisecond))
	require.True(t, ok, "a second later it does")
	require.Equal(t, "b-0", p.Name)

	require.NoError(t, os.Remove(filepath.Join(dir, "a-0_ml_main-"+id('a')+".log")))
	_, ok = x.Lookup(id('c'), t0.Add(3*time.Second))
	require.False(t, ok)
	_, ok = x.Lookup(id('a'), t0.Add(3*time.Second))
	require.False(t, ok, "a removed container is forgotten at the next read")

	require.NoError(t, os.RemoveAll(dir))
	for k := range 3 {
		_, ok = x.Lookup(id('d'), t0.Add(time.Duration(10+k)*time.Second))
		require.False(t, ok)
	}
	require.Equal(t, 1, logs.FilterMessageSnippet("Container log directory unreadable").Len())
	_, ok = x.Lookup(id('b'), t0.Add(20*time.Second))
	require.True(t, ok, "what was read before an outage is kept")
}

func claim(ns, name, ctr, claimName string, devices ...*podresourcesv1.ClaimResource) *podresourcesv1.PodResources {
	return &podresourcesv1.PodResources{Namespace: ns, Name: name, Containers: []*podresourcesv1.ContainerResources{
		{Name: ctr, DynamicResources: []*podresourcesv1.DynamicResource{{ClaimName: claimName, ClaimNamespace: ns, ClaimResources: devices}}},
	}}
}

// gpuClaimed is a GPU of node n1's pool.
func gpuClaimed(device string) *podresourcesv1.ClaimResource {
	return &podresourcesv1.ClaimResource{DriverName: "gpu.nvidia.com", PoolName: "n1", DeviceName: device}
}

// TestClaimedDevices: a claim's devices are its pod's; a claim several
// pods share names no pod; a device two claims hold is no one's; another
// driver's devices are not GPUs.
func TestClaimedDevices(t *testing.T) {
	twice := claim("ml", "a", "main", "a-gpu", gpuClaimed("gpu-0"), gpuClaimed("gpu-3"))
	twice.Containers = append(twice.Containers, &podresourcesv1.ContainerResources{Name: "sidecar", DynamicResources: []*podresourcesv1.DynamicResource{
		{ClaimName: "a-gpu", ClaimNamespace: "ml", ClaimResources: []*podresourcesv1.ClaimResource{gpuClaimed("gpu-3")}},
	}})
	m := claimedDevices(&podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		twice,
		claim("lab", "b", "x", "shared", gpuClaimed("gpu-1")),
		claim("lab", "c", "x", "shared", gpuClaimed("gpu-1")),
		claim("lab", "d", "x", "d-gpu", gpuClaimed("gpu-2")),
		claim("ops", "e", "x", "e-gpu", gpuClaimed("gpu-2")),
		claim("ml", "f", "x", "f-nic", &podresourcesv1.ClaimResource{DriverName: "nic.example.com", PoolName: "n1", DeviceName: "gpu-4"}),
	}}, "gpu.nvidia.com")
	require.Equal(t, map[ClaimedDevice]gpu.Pod{
		{Pool: "n1", Device: "gpu-0"}: {Namespace: "ml", Name: "a", Container: "main", Claim: "a-gpu"},
		{Pool: "n1", Device: "gpu-3"}: {Namespace: "ml", Name: "a", Claim: "a-gpu"},
		{Pool: "n1", Device: "gpu-1"}: {Namespace: "lab", Claim: "shared"},
	}, m)
}

// resolver answers from a map, at a generation the test sets.
type resolver struct {
	uuids map[ClaimedDevice]string
	gen   uint64
}

func (r *resolver) UUID(pool, device string) (string, bool) {
	u, ok := r.uuids[ClaimedDevice{pool, device}]
	return u, ok
}

func (r *resolver) Generation() uint64 { return r.gen }

// TestResolveClaims: claims are named by UUID as the resolver answers,
// again whenever its generation changes, and not otherwise.
func TestResolveClaims(t *testing.T) {
	r := &resolver{uuids: map[ClaimedDevice]string{{"n1", "gpu-0"}: "GPU-0"}}
	c := NewCache("", time.Hour, zap.NewNop())
	c.ResolveDRA("gpu.nvidia.com", r)
	c.byClaim = map[ClaimedDevice]gpu.Pod{{"n1", "gpu-0"}: {Namespace: "ml", Claim: "x"}}
	c.draStale = true
	c.resolveClaims()
	p, ok := c.Lookup("GPU-0")
	require.True(t, ok)
	require.Equal(t, "x", p.Claim)

	r.uuids = map[ClaimedDevice]string{{"n1", "gpu-0"}: "GPU-9"}
	c.resolveClaims()
	_, ok = c.Lookup("GPU-9")
	require.False(t, ok, "the same generation is not resolved again")
	r.gen++
	c.resolveClaims()
	_, ok = c.Lookup("GPU-9")
	require.True(t, ok)
	_, ok = c.Lookup("GPU-0")
	require.False(t, ok)
}
