package gpuremediationconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
)

// The drain's kubectl switches default to kubectl's (off, no timeout, no
// selector), but for emptyDir data: a GPU pod's /dev/shm is one.
func TestDrainSettingsDefaultAsKubectl(t *testing.T) {
	d := createDefaultConfig().Drain
	require.False(t, d.Force, "kubectl --force defaults to false")
	require.True(t, d.DeleteEmptyDirData, "unlike kubectl: /dev/shm emptyDirs would refuse nearly every GPU node's drain")
	require.Zero(t, d.SkipWaitForDeleteTimeout, "kubectl --skip-wait-for-delete-timeout defaults to 0")
	require.Empty(t, d.PodSelector)

	cfg, err := load(t, "kubectl_drain")
	require.NoError(t, err)
	require.Equal(t, kube.DrainPolicy{
		GracePeriod: -1, Force: true, DeleteEmptyDirData: true,
		SkipWaitForDeleteTimeout: 5 * time.Minute, PodSelector: "tier in (batch, training)",
	}, cfg.Drain.kubePolicy())
}

// Each bad drain setting gets one error that names its key.
func TestBadDrainSettingsNameTheKey(t *testing.T) {
	_, err := load(t, "negative_skip_wait")
	require.EqualError(t, err, "drain::skip_wait_for_delete_timeout must not be negative, got -1s")
	_, err = load(t, "bad_pod_selector")
	require.Error(t, err)
	require.True(t, strings.HasPrefix(err.Error(), "drain::pod_selector: "), err.Error())
	require.Len(t, strings.Split(err.Error(), "\n"), 1, "one error: %v", err)
}

// podWith creates a running, ready pod of a ReplicaSet on the node,
// changed by mod.
func (f *fixture) podWith(name, node string, mod func(*corev1.Pod)) {
	f.t.Helper()
	ctx := context.Background()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)},
		}},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "example.com/job:1"}}},
	}
	mod(p)
	p, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(f.t, err)
	p.Status.Phase = corev1.PodRunning
	p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	_, err = f.cs.CoreV1().Pods(f.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
	require.NoError(f.t, err)
}

// release removes a pod's finalizers, as the controller that set them does
// once it is done.
func (f *fixture) release(name string) {
	f.t.Helper()
	_, err := f.cs.CoreV1().Pods(f.ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(f.t, err)
}

// A drain that kubectl would refuse (a pod without a controller, a pod
// with an emptyDir, and the settings off) evicts nothing and requests
// nothing; its decision names the pods and the keys that would allow it.
func TestDrainRefusedNamesPodsAndKeys(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("notebook", node, nil, true) // no controller
	f.podWith("cache", node, func(p *corev1.Pod) {
		p.Spec.Volumes = []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	})
	f.podWith("web", node, func(*corev1.Pod) {})
	cfg := testConfig()
	cfg.Drain.Force = false
	cfg.Drain.DeleteEmptyDirData = false
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})
	require.Equal(t, []string{"xid_79:drain:policy", "xid_79:drain:" + reasonDrainRefused}, reasons(ds))
	var why string
	for _, lr := range f.logRecords() {
		if str(lr.Attributes(), "gpu.remediation.reason") == reasonDrainRefused {
			why = lr.Body().Str()
		}
	}
	require.Contains(t, why, f.ns+"/cache: emptyDir volume (drain::delete_emptydir_data)")
	require.Contains(t, why, f.ns+"/notebook: no controller (drain::force)")
	require.NotContains(t, why, "/web", "a pod that could go does not refuse")
	for _, pod := range []string{"notebook", "cache", "web"} {
		require.True(t, f.podExists(pod), "%s: a refused drain evicts nothing", pod)
	}
	n := f.getNode(node)
	require.True(t, n.Spec.Unschedulable, "the cordon stays")
	require.Empty(t, n.Annotations[kube.RebootRequestAnnotation])
	require.Equal(t, int64(1), f.counter(stepDrain, reasonDrainRefused))

	// The plan is over: later ticks neither evict nor request.
	f.step(time.Minute)
	require.Empty(t, f.tick())
	require.True(t, f.podExists("web"))
	require.Empty(t, f.getNode(node).Annotations[kube.RebootRequestAnnotation])
}

// The reboot is requested once the pods are gone, not when their
// evictions are accepted: a pod still terminating (a finalizer holds it)
// keeps the drain under way.
func TestRequestWaitsForPodsGone(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.podWith("checkpointing", node, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/upload-checkpoint"} })
	t.Cleanup(func() {
		if f.podExists("checkpointing") {
			f.release("checkpointing")
		}
	})
	f.pod("other", node, nil, true)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})))
	require.False(t, f.podExists("other"))
	require.True(t, f.podExists("checkpointing"), "the finalizer holds it")
	require.Empty(t, f.getNode(node).Annotations[kube.RebootRequestAnnotation], "evicted is not gone")
	require.Equal(t, int64(0), f.counter(stepDrain, reasonPolicy), "the drain is not done")

	f.step(time.Second)
	require.Empty(t, f.tick())
	require.Empty(t, f.getNode(node).Annotations[kube.RebootRequestAnnotation])

	f.release("checkpointing")
	require.False(t, f.podExists("checkpointing"))
	f.step(time.Second)
	f.tick()
	require.NotEmpty(t, f.getNode(node).Annotations[kube.RebootRequestAnnotation], "requested once the pods are gone")
	require.Equal(t, int64(1), f.counter(stepDrain, reasonPolicy))
	require.Equal(t, int64(1), f.counter(stepRequest, reasonPolicy))
}

// drain.timeout applies to a drain waiting on a terminating pod; the
// decision names the pod.
func TestDrainTimeoutNamesTerminatingPods(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.podWith("stuck", node, func(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} })
	t.Cleanup(func() { f.release("stuck") })
	cfg := testConfig()
	cfg.Drain.Timeout = time.Minute
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})
	f.step(61 * time.Second)
	require.Equal(t, []string{"xid_79:drain:" + reasonDrainTimeout}, reasons(f.tick()))
	var why string
	for _, lr := range f.logRecords() {
		if str(lr.Attributes(), "gpu.remediation.reason") == reasonDrainTimeout {
			why = lr.Body().Str()
		}
	}
	require.Contains(t, why, "still terminating: "+f.ns+"/stuck")
	require.Empty(t, f.getNode(node).Annotations[kube.RebootRequestAnnotation])
}
