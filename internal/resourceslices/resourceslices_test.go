package resourceslices

import (
	"context"
	"crypto/tls"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	resourcev1beta1 "k8s.io/api/resource/v1beta1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// adminConfig reaches s as its administrator.
func adminConfig(s *kubetest.Server) *Config {
	return &Config{Host: s.URL, TLS: &tls.Config{InsecureSkipVerify: true}, Token: kubetest.AdminToken}
}

// TestFallbackToV1beta1 runs a real kube-apiserver that serves
// resource.k8s.io/v1beta1 and not v1, as Kubernetes 1.32 and 1.33 do with
// DRA turned on: the watcher reads v1beta1, whose devices keep their
// attributes under basic, MIG instances included.
func TestFallbackToV1beta1(t *testing.T) {
	var s *kubetest.Server
	apiBin, etcdBin, err := kubetest.Binaries("../..")
	if err == nil {
		s, err = kubetest.Start(apiBin, etcdBin, "--runtime-config=resource.k8s.io/v1=false,resource.k8s.io/v1beta1=true")
	}
	s = kubetest.Require(t, s, err)
	t.Cleanup(s.Stop)
	ctx := context.Background()
	admin := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))

	core, logs := observer.New(zap.InfoLevel)
	w := New(adminConfig(s), "gpu.nvidia.com", "node-a", zap.New(core))
	w.Start(ctx)
	t.Cleanup(w.Stop)
	require.Eventually(t, w.Synced, 20*time.Second, 20*time.Millisecond)
	require.Equal(t, V1beta1, w.Version())
	require.Equal(t, 1, logs.FilterMessage("Following DRA ResourceSlices").Len())

	attrs := func(kv map[string]string) map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute {
		m := map[resourcev1beta1.QualifiedName]resourcev1beta1.DeviceAttribute{}
		for k, v := range kv {
			m[resourcev1beta1.QualifiedName(k)] = resourcev1beta1.DeviceAttribute{StringValue: ptr.To(v)}
		}
		return m
	}
	gen := w.Generation()
	_, err = admin.ResourceV1beta1().ResourceSlices().Create(ctx, &resourcev1beta1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: "node-a-gpus"},
		Spec: resourcev1beta1.ResourceSliceSpec{
			Driver: "gpu.nvidia.com", NodeName: "node-a",
			Pool: resourcev1beta1.ResourcePool{Name: "node-a", Generation: 1, ResourceSliceCount: 1},
			Devices: []resourcev1beta1.Device{
				{Name: "gpu-0", Basic: &resourcev1beta1.BasicDevice{Attributes: attrs(map[string]string{"uuid": "GPU-aaaa", "type": "gpu"})}},
				{Name: "gpu-1-mig-1g10gb-0", Basic: &resourcev1beta1.BasicDevice{Attributes: attrs(map[string]string{
					"gpu.nvidia.com/uuid": "MIG-bbbb", "parentUUID": "GPU-cccc", "type": "mig", "profile": "1g.10gb"})}},
			},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := w.UUID("node-a", "gpu-0"); return ok }, 20*time.Second, 20*time.Millisecond)
	require.NotEqual(t, gen, w.Generation())
	d, ok := w.Resolve("node-a", "gpu-1-mig-1g10gb-0")
	require.True(t, ok)
	require.Equal(t, Device{UUID: "MIG-bbbb", ParentUUID: "GPU-cccc", Type: "mig", Profile: "1g.10gb"}, d)
	_, ok = w.Resolve("node-b", "gpu-0")
	require.False(t, ok, "another pool")

	require.NoError(t, admin.ResourceV1beta1().ResourceSlices().Delete(ctx, "node-a-gpus", metav1.DeleteOptions{}))
	require.Eventually(t, func() bool { _, ok := w.UUID("node-a", "gpu-0"); return !ok }, 20*time.Second, 20*time.Millisecond)
}

// TestNoResourceSlices: an API server that serves no ResourceSlices (DRA
// off) is reported once, and nothing resolves.
func TestNoResourceSlices(t *testing.T) {
	var s *kubetest.Server
	apiBin, etcdBin, err := kubetest.Binaries("../..")
	if err == nil {
		s, err = kubetest.Start(apiBin, etcdBin, "--runtime-config=resource.k8s.io/v1=false")
	}
	s = kubetest.Require(t, s, err)
	t.Cleanup(s.Stop)
	core, logs := observer.New(zap.InfoLevel)
	w := New(adminConfig(s), "gpu.nvidia.com", "", zap.New(core))
	w.retry = 10 * time.Millisecond
	w.Start(context.Background())
	require.Eventually(t, func() bool { return logs.FilterMessage("DRA attribution unavailable; retrying").Len() == 1 }, 20*time.Second, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond) // several retries
	w.Stop()
	require.Equal(t, 1, logs.FilterMessage("DRA attribution unavailable; retrying").Len(), "one warning, not one per retry")
	require.Contains(t, logs.All()[0].ContextMap()["error"], "resource.k8s.io/v1")
	require.Empty(t, w.Version())
}
