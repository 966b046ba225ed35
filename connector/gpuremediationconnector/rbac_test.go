package gpuremediationconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

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
	for what, err := range forbidden {
		require.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
}
