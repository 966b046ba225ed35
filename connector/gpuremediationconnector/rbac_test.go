package gpuremediationconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// TestExampleRBAC applies examples/kubernetes/remediation-rbac.yaml and
// checks, as the remediation StatefulSet's service account, that it is
// enough for every action (event, condition, taint, cordon, drain, request,
// undo, the Lease and its breaker) and no more.
func TestExampleRBAC(t *testing.T) {
	s := server(t)
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "observability"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	objs, err := kubetest.Decode("../../examples/kubernetes/remediation-rbac.yaml")
	require.NoError(t, err)
	for _, obj := range objs {
		if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
		}
	}
	node := f.node("n", nil)
	f.pod("p", node, nil, true)

	as := s.Config(kubetest.AdminToken)
	as.Impersonate.UserName = "system:serviceaccount:observability:otelcol-gpu-remediation"
	c, err := kube.New(as, 10*time.Second)
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, err := c.Node(ctx, node); return err == nil }, 10*time.Second, 100*time.Millisecond, "RBAC applies")

	gpu := gpuID(node, 0)
	require.NoError(t, c.Event(ctx, node, "Warning", "GPUFault", "test"))
	require.NoError(t, c.SetCondition(ctx, node, false, "XID79", "test"))
	_, _, err = c.Quarantine(ctx, node, gpu, "xid_79", "xid_79-00000000", true, true)
	require.NoError(t, err)
	res, err := c.Drain(ctx, node, nil, kube.DrainPolicy{Force: true}) // the test pod has no controller
	require.NoError(t, err)
	require.Equal(t, []string{f.ns + "/p"}, res.Evicted)
	require.NoError(t, c.Request(ctx, node, kube.RebootRequestAnnotation, "now"))
	restored, err := c.Restore(ctx, node, "healthy")
	require.NoError(t, err)
	require.True(t, restored)
	n := f.getNode(node)
	require.False(t, n.Spec.Unschedulable)
	require.Empty(t, ownTaints(n))

	// The Lease: leader election, and the breaker on it.
	lctx, cancel := context.WithCancel(ctx)
	led := make(chan bool, 1)
	done, err := kube.Elect(lctx, as, kube.LeaseConfig{Name: "otelcol-gpu-remediation", Namespace: "observability", Identity: "gw-0",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond},
		func(lead bool) {
			select {
			case led <- lead:
			default:
			}
		})
	require.NoError(t, err)
	select {
	case lead := <-led:
		require.True(t, lead)
	case <-time.After(20 * time.Second):
		t.Fatal("the service account could not take the Lease")
	}
	require.NoError(t, c.SetBreaker(ctx, "observability", "otelcol-gpu-remediation", "test"))
	b, err := c.Breaker(ctx, "observability", "otelcol-gpu-remediation")
	require.NoError(t, err)
	require.Equal(t, "test", b)
	cancel()
	<-done

	// No more than that.
	sa := kubernetes.NewForConfigOrDie(as)
	forbidden := map[string]error{}
	forbidden["delete node"] = sa.CoreV1().Nodes().Delete(ctx, node, metav1.DeleteOptions{})
	_, forbidden["list nodes"] = sa.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	_, forbidden["update node"] = sa.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	forbidden["delete pod"] = sa.CoreV1().Pods(f.ns).Delete(ctx, "p", metav1.DeleteOptions{})
	_, forbidden["get pod"] = sa.CoreV1().Pods(f.ns).Get(ctx, "p", metav1.GetOptions{})
	_, forbidden["list secrets"] = sa.CoreV1().Secrets(f.ns).List(ctx, metav1.ListOptions{})
	_, forbidden["create pod"] = sa.CoreV1().Pods(f.ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}, metav1.CreateOptions{})
	_, forbidden["other lease"] = sa.CoordinationV1().Leases("observability").Get(ctx, "otelcol-gpu-autoscaler", metav1.GetOptions{})
	// DRA device taints only with remediation-dra-rbac.yaml (TestDRARBAC).
	_, forbidden["list resourceslices"] = sa.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
	_, forbidden["list devicetaintrules"] = sa.ResourceV1alpha3().DeviceTaintRules().List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		require.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
}

// TestDRARBAC applies remediation-rbac.yaml and remediation-dra-rbac.yaml
// and checks, as the service account, that the device_taint action works
// (the GPU's device found in the ResourceSlices, its rule written, listed
// and deleted) and that nothing more of resource.k8s.io is granted.
func TestDRARBAC(t *testing.T) {
	s := server(t)
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "observability"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	for _, file := range []string{"remediation-rbac.yaml", "remediation-dra-rbac.yaml"} {
		objs, err := kubetest.Decode("../../examples/kubernetes/" + file)
		require.NoError(t, err)
		for _, obj := range objs {
			if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
				require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
			}
		}
	}
	// Other tests check that the base RBAC alone grants none of this.
	t.Cleanup(func() {
		_ = f.cs.RbacV1().ClusterRoleBindings().Delete(ctx, "otelcol-gpu-remediation-dra", metav1.DeleteOptions{})
	})
	node := f.node("n", nil)
	gpu := gpuID(node, 0)
	f.slice(node, map[string]map[string]string{"gpu-0": {"uuid": gpu}, "gpu-1": {"uuid": gpuID(node, 1)}})

	as := s.Config(kubetest.AdminToken)
	as.Impersonate.UserName = "system:serviceaccount:observability:otelcol-gpu-remediation"
	c, err := kube.New(as, 10*time.Second)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, err := c.DeviceTaintRules(ctx, gpu)
		return err == nil
	}, 10*time.Second, 100*time.Millisecond, "RBAC applies")

	devices, err := c.GPUDevices(ctx, nvidiaDriver, node, gpu)
	require.NoError(t, err)
	require.Equal(t, []kube.Device{{Driver: nvidiaDriver, Pool: node, Name: "gpu-0", UUID: gpu}}, devices)
	names, err := c.TaintDevices(ctx, nvidiaDriver, node, gpu, "xid-79", "xid_79-00000000")
	require.NoError(t, err)
	require.Len(t, names, 1)
	again, err := c.TaintDevices(ctx, nvidiaDriver, node, gpu, "xid-79", "xid_79-00000000")
	require.NoError(t, err, "written again: AlreadyExists is success")
	require.Equal(t, names, again)
	listed, err := c.DeviceTaintRules(ctx, gpu)
	require.NoError(t, err)
	require.Equal(t, names, listed)
	removed, err := c.UntaintDevices(ctx, gpu)
	require.NoError(t, err)
	require.Equal(t, names, removed)
	require.Empty(t, f.rules(node))

	// No more than that.
	sa := kubernetes.NewForConfigOrDie(as)
	rule := &resourcev1alpha3.DeviceTaintRule{ObjectMeta: metav1.ObjectMeta{Name: "x"}, Spec: resourcev1alpha3.DeviceTaintRuleSpec{
		DeviceSelector: &resourcev1alpha3.DeviceTaintSelector{Driver: ptr.To(nvidiaDriver)},
		Taint:          resourcev1alpha3.DeviceTaint{Key: "example.com/x", Effect: resourcev1alpha3.DeviceTaintEffectNoSchedule},
	}}
	created, err := f.cs.ResourceV1alpha3().DeviceTaintRules().Create(ctx, rule, metav1.CreateOptions{})
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = f.cs.ResourceV1alpha3().DeviceTaintRules().Delete(ctx, created.Name, metav1.DeleteOptions{})
	})
	forbidden := map[string]error{}
	_, forbidden["get devicetaintrule"] = sa.ResourceV1alpha3().DeviceTaintRules().Get(ctx, created.Name, metav1.GetOptions{})
	_, forbidden["update devicetaintrule"] = sa.ResourceV1alpha3().DeviceTaintRules().Update(ctx, created, metav1.UpdateOptions{})
	forbidden["delete all devicetaintrules"] = sa.ResourceV1alpha3().DeviceTaintRules().DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	_, forbidden["get resourceslice"] = sa.ResourceV1().ResourceSlices().Get(ctx, node+"-"+nvidiaDriver, metav1.GetOptions{})
	forbidden["delete resourceslice"] = sa.ResourceV1().ResourceSlices().Delete(ctx, node+"-"+nvidiaDriver, metav1.DeleteOptions{})
	_, forbidden["create resourceslice"] = sa.ResourceV1().ResourceSlices().Create(ctx, &resourcev1.ResourceSlice{}, metav1.CreateOptions{})
	_, forbidden["list resourceclaims"] = sa.ResourceV1().ResourceClaims(f.ns).List(ctx, metav1.ListOptions{})
	_, forbidden["list deviceclasses"] = sa.ResourceV1().DeviceClasses().List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		require.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
}
