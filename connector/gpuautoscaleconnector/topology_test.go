package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// shippedGatewayConfig reads the gpu_autoscale settings of the gateway
// ConfigMap that the distribution ships.
func shippedGatewayConfig(t *testing.T) map[string]any {
	t.Helper()
	objs, err := kubetest.Decode("../../distributions/otelcol-gpu/kubernetes/gateway.yaml")
	require.NoError(t, err)
	for _, obj := range objs {
		if obj.GetKind() != "ConfigMap" {
			continue
		}
		raw, _ := unstructuredString(obj.Object, "data", "config.yaml")
		var doc struct {
			Connectors map[string]map[string]any `yaml:"connectors"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(raw), &doc))
		if c, ok := doc.Connectors["gpu_autoscale"]; ok {
			return c
		}
	}
	t.Fatal("the shipped gateway has no gpu_autoscale connector")
	return nil
}

// shippedRoutingAttributes are the attributes the shipped agents'
// load_balancing exporter routes by.
func shippedRoutingAttributes(t *testing.T) []string {
	t.Helper()
	objs, err := kubetest.Decode("../../distributions/otelcol-gpu/kubernetes/agent.yaml")
	require.NoError(t, err)
	for _, obj := range objs {
		raw, ok := unstructuredString(obj.Object, "data", "config.yaml")
		if obj.GetKind() != "ConfigMap" || !ok {
			continue
		}
		var doc struct {
			Exporters struct {
				LoadBalancing struct {
					RoutingKey        string   `yaml:"routing_key"`
					RoutingAttributes []string `yaml:"routing_attributes"`
				} `yaml:"load_balancing"`
			} `yaml:"exporters"`
		}
		require.NoError(t, yaml.Unmarshal([]byte(raw), &doc))
		lb := doc.Exporters.LoadBalancing
		require.Equal(t, "attributes", lb.RoutingKey)
		require.NotEmpty(t, lb.RoutingAttributes)
		return lb.RoutingAttributes
	}
	t.Fatal("the shipped agent has no load_balancing exporter")
	return nil
}

func unstructuredString(obj map[string]any, path ...string) (string, bool) {
	cur := any(obj)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur = m[p]
	}
	s, ok := cur.(string)
	return s, ok
}

// TestShippedTopologyLeadershipFollowsData runs the shipped gateway tier as
// shipped: two replicas with the distribution's gpu_autoscale settings and
// RBAC, against a real API server, where the agents' load_balancing routes
// the target's metrics to one replica only. The replica without the
// target's metrics first holds the target's Lease (it had them before the
// routing changed); it must give the Lease up once its values are stale, and
// the replica that has them must take it and scale the target.
func TestShippedTopologyLeadershipFollowsData(t *testing.T) {
	// The agents route by attributes that all of a workload's pods share,
	// so one replica gets all of a target's metrics.
	for _, attr := range shippedRoutingAttributes(t) {
		require.Contains(t, []string{"k8s.namespace.name", "k8s.job.name", "k8s.deployment.name", "k8s.statefulset.name"}, attr)
	}

	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serving"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	for _, f := range []string{"namespace.yaml", "rbac.yaml", "gateway.yaml"} {
		applyFile(t, filepath.Join("../../distributions/otelcol-gpu/kubernetes", f))
	}
	freshDeployment(t, cs, "serving", "llm-inference", 2)
	syncPods(t, cs, "serving", "llm-inference", 2)

	// Each replica: the shipped settings, as the gateway's service account.
	// What differs from a pod: the kubeconfig instead of the in-cluster
	// account, the identity (a pod's hostname), and the Lease namespace (a
	// pod reads its own, observability).
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(kc, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: gateway, user: {token: %q, as: "system:serviceaccount:observability:otelcol-gpu-gateway"}}]
contexts: [{name: test, context: {cluster: test, user: gateway}}]
current-context: test
`, s.URL, kubetest.AdminToken)), 0o600))
	replica := func(id string) *harness {
		cfg := createDefaultConfig()
		require.NoError(t, confmap.NewFromStringMap(shippedGatewayConfig(t)).Unmarshal(cfg))
		cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: kc}
		cfg.LeaderElection.Identity = id
		cfg.LeaderElection.LeaseNamespace = "observability"
		cfg.Interval = time.Hour // evaluated by hand below
		require.NoError(t, cfg.Validate())
		return start(t, id, cfg)
	}
	a, b := replica("otelcol-gpu-gateway-0"), replica("otelcol-gpu-gateway-1")
	ref := a.a.targets[0].ref
	require.Equal(t, "serving/Deployment/llm-inference", ref.String(), "the shipped target")
	leaseName := kube.LeaseName(a.a.cfg.LeaderElection.LeaseName, ref)
	holder := func() string {
		l, err := cs.CoordinationV1().Leases("observability").Get(ctx, leaseName, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return ""
		}
		return *l.Spec.HolderIdentity
	}
	workload := map[string]string{"k8s.deployment.name": "llm-inference"}

	// Before: the target's metrics went to replica 0, at target: it takes
	// the target's Lease and holds the count.
	t1 := time.Now()
	require.NoError(t, a.a.consume(ctx, gpuMetrics("serving", workload, 2, 0.6, t1)))
	require.Eventually(t, func() bool {
		a.a.evaluate(ctx, t1)
		return holder() == "otelcol-gpu-gateway-0"
	}, 30*time.Second, 200*time.Millisecond, "replica 0 has the values: it takes the Lease")

	// The routing changes (a gateway pod restarted): the target's metrics now
	// reach replica 1 only, and the load rises: 2 pods at 0.9 want 3.
	t2 := t1.Add(2 * time.Minute)
	require.NoError(t, b.a.consume(ctx, gpuMetrics("serving", workload, 2, 0.9, t2)))
	b.a.evaluate(ctx, t2)
	require.Equal(t, int32(2), deploymentReplicas(t, cs, "serving", "llm-inference"), "replica 1 sees the load but does not hold the Lease: it must not write")
	require.Zero(t, b.logs.LogRecordCount())

	// Replica 0's values are now older than metric_max_age: it lets go.
	a.a.evaluate(ctx, t2)
	require.Eventually(t, func() bool {
		b.a.evaluate(ctx, t2)
		return deploymentReplicas(t, cs, "serving", "llm-inference") == 3
	}, 30*time.Second, 200*time.Millisecond, "the replica with the data takes the Lease and scales")
	require.Equal(t, "otelcol-gpu-gateway-1", holder())
	require.Zero(t, a.logs.LogRecordCount(), "the blind replica never wrote")
	require.Equal(t, 1, b.logs.LogRecordCount())
}

// freshDeployment creates a Deployment, replacing one of that name left by
// another test.
func freshDeployment(t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	ctx := context.Background()
	if err := cs.AppsV1().Deployments(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		_, err := cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}, 10*time.Second, 100*time.Millisecond)
	createDeployment(t, cs, ns, name, replicas)
}
