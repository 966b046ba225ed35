package gpuautoscaleconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// TestExampleRBAC applies examples/kubernetes/rbac.yaml and checks, as the
// gateway's service account, that it is enough and no more: scale the one
// target, list the pods of its namespace, hold its Lease, and nothing else.
func TestExampleRBAC(t *testing.T) {
	s := server(t)
	ctx := context.Background()
	admin := s.Config(kubetest.AdminToken)
	cs := kubernetes.NewForConfigOrDie(admin)
	for _, ns := range []string{"serving", "observability"} {
		_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !isAlreadyExists(err) {
			require.NoError(t, err)
		}
	}
	applyFile(t, "../../examples/kubernetes/rbac.yaml")
	freshDeployment(t, cs, "serving", "llm-inference", 2)
	freshDeployment(t, cs, "serving", "other", 2)

	as := s.Config(kubetest.AdminToken)
	as.Impersonate.UserName = "system:serviceaccount:observability:otelcol-gpu-gateway"
	sc, err := kube.NewScaler(as, 10*time.Second)
	require.NoError(t, err)
	ref := kube.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "serving", Name: "llm-inference"}
	require.Eventually(t, func() bool { // RBAC may take a moment to apply
		_, err := sc.Set(ctx, ref, 5)
		return err == nil
	}, 10*time.Second, 100*time.Millisecond)
	require.Equal(t, int32(5), deploymentReplicas(t, cs, "serving", "llm-inference"))

	_, err = sc.Set(ctx, kube.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "serving", Name: "other"}, 5)
	require.ErrorContains(t, err, "forbidden to get apps/deployments/scale", "only its own target")

	// The target's pods, listed as the HPA lists them; only in its namespace.
	_, err = sc.Pods(ctx, "serving", "app=llm-inference")
	require.NoError(t, err)
	_, err = sc.Pods(ctx, "observability", "app=llm-inference")
	require.ErrorContains(t, err, "forbidden to list pods in namespace observability")

	// The target's Lease, in its own namespace.
	leases, err := kube.NewLeases(as, kube.LeaseConfig{Prefix: "otelcol-gpu-autoscaler", Namespace: "observability", Identity: "gw-0",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}, nil)
	require.NoError(t, err)
	leases.Want(ref, true)
	require.Eventually(t, func() bool { return leases.Leading(ref) }, 20*time.Second, 100*time.Millisecond,
		"the service account could not take the target's Lease")
	leases.Stop()
}

// applyFile creates every object of a multi-document YAML file.
func applyFile(t *testing.T, path string) {
	t.Helper()
	objs, err := kubetest.Decode(path)
	require.NoError(t, err)
	for _, obj := range objs {
		if err := server(t).Create(obj, false); err != nil && !isAlreadyExists(err) {
			require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
		}
	}
}
