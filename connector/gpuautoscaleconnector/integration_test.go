package gpuautoscaleconnector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/goleak"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

var (
	apiServer    *kubetest.Server
	apiServerErr error
)

// runWithAPIServer starts one kube-apiserver with etcd for the package's
// tests, stops it after them, checks that no goroutine leaked, and exits.
// The generated TestMain calls it first, so its own goleak check is never
// reached: this one runs after the server is stopped.
func runWithAPIServer(m *testing.M) {
	if kubetest.Fuzzing() {
		apiServerErr = errors.New("no kube-apiserver while fuzzing")
		os.Exit(m.Run())
	}
	apiBin, etcdBin, err := kubetest.Binaries("../..")
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

// server returns the test API server; under `make test` a missing one
// fails the test.
func server(t *testing.T) *kubetest.Server {
	t.Helper()
	return kubetest.Require(t, apiServer, apiServerErr)
}

var nsCounter atomic.Int32

// namespace creates a fresh namespace for one test.
func namespace(t *testing.T, cs kubernetes.Interface) string {
	t.Helper()
	name := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e6, nsCounter.Add(1))
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return name
}

func podTemplate(app string) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": app}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "server", Image: "example.com/inference:1"}}},
	}
}

func createDeployment(t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	_, err := cs.AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name),
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
}

// syncPods does what a workload's controller and the kubelet would: pods
// NAME-0 .. NAME-(n-1), labelled app=NAME, running; any others of the
// workload deleted.
func syncPods(t *testing.T, cs kubernetes.Interface, ns, name string, n int) {
	t.Helper()
	ctx := context.Background()
	list, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	require.NoError(t, err)
	have := map[string]bool{}
	for _, p := range list.Items {
		have[p.Name] = true
	}
	for i := range n {
		podName := fmt.Sprintf("%s-%d", name, i)
		if have[podName] {
			delete(have, podName)
			continue
		}
		pod, err := cs.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: podName, Namespace: ns, Labels: map[string]string{"app": name}},
			Spec:       podTemplate(name).Spec,
		}, metav1.CreateOptions{})
		require.NoError(t, err)
		pod.Status.Phase = corev1.PodRunning
		_, err = cs.CoreV1().Pods(ns).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	for podName := range have {
		// Never bound to a node, the pod goes at once.
		require.NoError(t, cs.CoreV1().Pods(ns).Delete(ctx, podName, metav1.DeleteOptions{}))
	}
}

func deploymentReplicas(t *testing.T, cs kubernetes.Interface, ns, name string) int32 {
	t.Helper()
	d, err := cs.AppsV1().Deployments(ns).Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(t, err)
	return *d.Spec.Replicas
}

// gpuMetrics builds one batch: pods x 1 GPU, each at the given SM activity.
// The pods are named after the workload: NAME-0, NAME-1, ...
func gpuMetrics(ns string, workload map[string]string, pods int, sm float64, at time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	prefix := "pod"
	for _, v := range workload {
		prefix = v
	}
	for p := range pods {
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr("k8s.namespace.name", ns)
		for k, v := range workload {
			a.PutStr(k, v)
		}
		a.PutStr("k8s.pod.name", fmt.Sprintf("%s-%d", prefix, p))
		a.PutStr("hw.id", fmt.Sprintf("GPU-%s-%d", ns, p))
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("nvidia.gpu.sm.active")
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		dp.SetDoubleValue(sm)
	}
	return md
}

type harness struct {
	a       *autoscaler
	in      connector.Metrics // the metrics-to-metrics instance, as a pipeline sees it
	metrics *consumertest.MetricsSink
	logs    *consumertest.LogsSink
	host    *statusHost
}

type statusHost struct {
	component.Host
	last atomic.Pointer[componentstatus.Event]
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }
func (h *statusHost) Report(ev *componentstatus.Event)                    { h.last.Store(ev) }

// start runs a connector (both of its instances) with cfg.
func start(t *testing.T, name string, cfg *Config) *harness {
	t.Helper()
	f := NewFactory()
	set := connectortest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(metadata.Type, name)
	h := &harness{metrics: new(consumertest.MetricsSink), logs: new(consumertest.LogsSink), host: &statusHost{}}
	mm, err := f.CreateMetricsToMetrics(context.Background(), set, cfg, h.metrics)
	require.NoError(t, err)
	ml, err := f.CreateMetricsToLogs(context.Background(), set, cfg, h.logs)
	require.NoError(t, err)
	require.NoError(t, mm.Start(context.Background(), h.host))
	require.NoError(t, ml.Start(context.Background(), h.host))
	t.Cleanup(func() {
		require.NoError(t, mm.Shutdown(context.Background()))
		require.NoError(t, ml.Shutdown(context.Background()))
	})
	h.a, h.in = mm.(*instance).Value, mm
	require.Same(t, h.a, ml.(*instance).Value, "one autoscaler per component ID")
	return h
}

func kubeConfig(t *testing.T, s *kubetest.Server, token string, targets ...TargetConfig) *Config {
	t.Helper()
	path, err := s.Kubeconfig(t.TempDir(), token)
	require.NoError(t, err)
	cfg := createDefaultConfig()
	cfg.Interval = time.Hour // the tests evaluate by hand
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: path}
	cfg.LeaderElection.Enabled = false
	cfg.Targets = targets
	require.NoError(t, cfg.Validate())
	return cfg
}

func deploymentTarget(ns, name string) TargetConfig {
	return TargetConfig{
		ScaleTargetRef: kube.Ref{APIVersion: "apps/v1", Kind: "Deployment", Name: name, Namespace: ns},
		TargetValue:    0.5, MinReplicas: 1, MaxReplicas: 10,
	}
}

func TestScaleDeploymentStatefulSetAndCustomResource(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	ctx := context.Background()

	createDeployment(t, cs, ns, "inference", 2)
	sts := int32(2)
	_, err := cs.AppsV1().StatefulSets(ns).Create(ctx, &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "kv-cache", Namespace: ns},
		Spec: appsv1.StatefulSetSpec{Replicas: &sts, ServiceName: "kv-cache",
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kv-cache"}}, Template: podTemplate("kv-cache")},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	pool := createInferencePool(t, s, ns, "pool", 2)

	crTarget := TargetConfig{
		ScaleTargetRef: kube.Ref{APIVersion: "gpu.example.com/v1", Kind: "InferencePool", Name: "pool", Namespace: ns},
		Match:          map[string]string{"k8s.namespace.name": ns, "app": "pool"},
		TargetValue:    0.5, MinReplicas: 1, MaxReplicas: 10,
	}
	stsTarget := TargetConfig{
		ScaleTargetRef: kube.Ref{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "kv-cache", Namespace: ns},
		TargetValue:    0.5, MinReplicas: 1, MaxReplicas: 10,
	}
	for _, app := range []string{"inference", "kv-cache", "pool"} {
		syncPods(t, cs, ns, app, 2)
	}
	h := start(t, "kinds", kubeConfig(t, s, kubetest.AdminToken, deploymentTarget(ns, "inference"), stsTarget, crTarget))

	now := time.Now()
	// 2 pods at SM 1.0 against a target of 0.5: ceil(2 x 2) = 4.
	require.NoError(t, h.a.consume(ctx, gpuMetrics(ns, map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	require.NoError(t, h.a.consume(ctx, gpuMetrics(ns, map[string]string{"k8s.statefulset.name": "kv-cache"}, 2, 1.0, now)))
	require.NoError(t, h.a.consume(ctx, gpuMetrics(ns, map[string]string{"app": "pool"}, 2, 1.0, now)))
	h.a.evaluate(ctx, now)

	require.Equal(t, int32(4), deploymentReplicas(t, cs, ns, "inference"))
	got, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "kv-cache", metav1.GetOptions{})
	require.NoError(t, err)
	require.Equal(t, int32(4), *got.Spec.Replicas)
	cr, err := pool.Get(ctx, "pool", metav1.GetOptions{})
	require.NoError(t, err)
	replicas, _, _ := unstructured.NestedInt64(cr.Object, "spec", "replicas")
	require.Equal(t, int64(4), replicas)

	// Outputs: the decision as metrics, the action as one log record each.
	require.Equal(t, 3, h.logs.LogRecordCount())
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	require.Contains(t, lr.Body().Str(), "scaled "+ns+"/Deployment/inference from 2 to 4 replicas: Scaled")
	before, _ := lr.Attributes().Get("gpu.autoscale.replicas.before")
	require.Equal(t, int64(2), before.Int())
	md := h.metrics.AllMetrics()[0]
	require.Equal(t, 3, md.ResourceMetrics().Len())
	require.Equal(t, componentstatus.StatusOK, h.host.last.Load().Status())
}

// createInferencePool installs a CRD with a scale subresource and one
// object of it.
func createInferencePool(t *testing.T, s *kubetest.Server, ns, name string, replicas int64) dynamic.ResourceInterface {
	t.Helper()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	crdGVR := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "inferencepools.gpu.example.com"},
		"spec": map[string]any{
			"group": "gpu.example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "inferencepools", "singular": "inferencepool", "kind": "InferencePool"},
			"versions": []any{map[string]any{
				"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
				"subresources": map[string]any{"scale": map[string]any{
					"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
			}},
		},
	}}
	if _, err := dyn.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil && !isAlreadyExists(err) {
		require.NoError(t, err)
	}
	gvr := schema.GroupVersionResource{Group: "gpu.example.com", Version: "v1", Resource: "inferencepools"}
	pools := dyn.Resource(gvr).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gpu.example.com/v1", "kind": "InferencePool",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"replicas": replicas},
		"status":   map[string]any{"selector": "app=" + name},
	}}
	// The CRD takes a moment to be served.
	require.Eventually(t, func() bool {
		_, err := pools.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil || isAlreadyExists(err)
	}, 30*time.Second, 200*time.Millisecond)
	return pools
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }

func TestDryRunLeavesReplicasAlone(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	createDeployment(t, cs, ns, "inference", 2)
	syncPods(t, cs, ns, "inference", 2)
	target := deploymentTarget(ns, "inference")
	target.DryRun = true
	h := start(t, "dryrun", kubeConfig(t, s, kubetest.AdminToken, target))
	now := time.Now()
	require.NoError(t, h.a.consume(context.Background(), gpuMetrics(ns, map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	h.a.evaluate(context.Background(), now)
	require.Equal(t, int32(2), deploymentReplicas(t, cs, ns, "inference"), "dry run writes nothing")
	require.Equal(t, 1, h.logs.LogRecordCount())
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	require.Contains(t, lr.Body().Str(), "would scale (dry run) "+ns+"/Deployment/inference from 2 to 4")
}

func TestConflictIsRetried(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	createDeployment(t, cs, ns, "inference", 2)
	syncPods(t, cs, ns, "inference", 2)
	h := start(t, "conflict", kubeConfig(t, s, kubetest.AdminToken, deploymentTarget(ns, "inference")))
	// The first time, someone else changes the Deployment between our read
	// and our write: the write gets 409 Conflict. The change is made by the
	// client's transport, just before it sends the write.
	var writes atomic.Int32
	rc := s.Config(kubetest.AdminToken)
	rc.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if req.Method == http.MethodPut && strings.HasSuffix(req.URL.Path, "/scale") && writes.Add(1) == 1 {
				_, err := cs.AppsV1().Deployments(ns).Patch(context.Background(), "inference", types.MergePatchType,
					[]byte(`{"metadata":{"labels":{"touched":"yes"}}}`), metav1.PatchOptions{})
				require.NoError(t, err)
			}
			return rt.RoundTrip(req)
		})
	})
	scaler, err := kube.NewScaler(rc, 10*time.Second)
	require.NoError(t, err)
	h.connected(t)
	h.a.evalMu.Lock()
	h.a.api = scaler
	h.a.evalMu.Unlock()
	now := time.Now()
	require.NoError(t, h.a.consume(context.Background(), gpuMetrics(ns, map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	h.a.evaluate(context.Background(), now)
	require.Equal(t, int32(2), writes.Load(), "write, conflict, read again, write")
	require.Equal(t, int32(4), deploymentReplicas(t, cs, ns, "inference"))
}

func TestForbiddenNamesVerbAndResource(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	createDeployment(t, cs, ns, "inference", 2)
	syncPods(t, cs, ns, "inference", 2)
	// The limited user may read the scale and list pods, not update the scale.
	_, err := cs.RbacV1().Roles(ns).Create(context.Background(), &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-reader", Namespace: ns},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"apps"}, Resources: []string{"deployments/scale"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"list"}},
		},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.RbacV1().RoleBindings(ns).Create(context.Background(), &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "scale-reader", Namespace: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "scale-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "User", Name: kubetest.LimitedUser}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	// Discovery needs no extra grant: system:discovery covers authenticated users.

	h := start(t, "forbidden", kubeConfig(t, s, kubetest.LimitedToken, deploymentTarget(ns, "inference")))
	now := time.Now()
	require.NoError(t, h.a.consume(context.Background(), gpuMetrics(ns, map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	require.Eventually(t, func() bool {
		h.a.evaluate(context.Background(), now)
		ev := h.host.last.Load()
		return ev != nil && ev.Err() != nil && strings.Contains(ev.Err().Error(), "forbidden")
	}, 10*time.Second, 100*time.Millisecond, "RBAC may take a moment to apply")
	ev := h.host.last.Load()
	require.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	require.ErrorContains(t, ev.Err(), `forbidden to update apps/deployments/scale in namespace `+ns)
	require.ErrorContains(t, ev.Err(), `grant the collector's service account the verb "update" on "apps/deployments/scale"`)
	require.Equal(t, int32(2), deploymentReplicas(t, cs, ns, "inference"), "nothing was written")
}

func TestUnreachableAPIBacksOff(t *testing.T) {
	dir := t.TempDir()
	kc := dir + "/kubeconfig"
	// A port nothing listens on.
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters: [{name: x, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]
users: [{name: x, user: {token: t}}]
contexts: [{name: x, context: {cluster: x, user: x}}]
current-context: x
`), 0o600))
	cfg := createDefaultConfig()
	cfg.Interval = 15 * time.Second
	cfg.APITimeout = time.Second
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: kc}
	cfg.LeaderElection.Enabled = false
	cfg.Targets = []TargetConfig{deploymentTarget("ml", "inference")}
	h := start(t, "unreachable", cfg)
	now := time.Now()
	require.NoError(t, h.a.consume(context.Background(), gpuMetrics("ml", map[string]string{"k8s.deployment.name": "inference"}, 2, 1.0, now)))
	h.a.evaluate(context.Background(), now)
	ev := h.host.last.Load()
	require.Equal(t, componentstatus.StatusRecoverableError, ev.Status())
	require.ErrorContains(t, ev.Err(), "ml/Deployment/inference (retrying in 15s)")
	require.ErrorContains(t, ev.Err(), "connection refused")
	require.Zero(t, h.logs.LogRecordCount(), "nothing written, no action logged")
	// While backing off, evaluations do not call the API; after, the
	// back-off doubles.
	tgt := h.a.targets[0]
	h.a.evaluate(context.Background(), now.Add(5*time.Second))
	require.Equal(t, 15*time.Second, tgt.backoff)
	h.a.evaluate(context.Background(), now.Add(20*time.Second))
	require.Equal(t, 30*time.Second, tgt.backoff)
	require.ErrorContains(t, h.host.last.Load().Err(), "retrying in 30s")
}

// connected builds the harness's Kubernetes client if the loop has not yet,
// and returns it.
func (h *harness) connected(t *testing.T) cluster {
	t.Helper()
	h.a.evalMu.Lock()
	defer h.a.evalMu.Unlock()
	h.a.connect(time.Now())
	require.NoError(t, h.a.apiErr)
	return h.a.api
}

// TestRemovedPodsDoNotCount: after a scale-down, the removed pods' last
// values are younger than metric_max_age, but the pods are gone from the
// API: as the HPA, which lists pods, the connector does not count them.
func TestRemovedPodsDoNotCount(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	ctx := context.Background()
	createDeployment(t, cs, ns, "inference", 4)
	syncPods(t, cs, ns, "inference", 4)
	target := deploymentTarget(ns, "inference")
	target.Behavior.ScaleDown = &RulesConfig{StabilizationWindow: new(time.Duration)}
	h := start(t, "removed", kubeConfig(t, s, kubetest.AdminToken, target))
	workload := map[string]string{"k8s.deployment.name": "inference"}
	now := time.Now()
	// Pods 2 and 3 idle, 0 and 1 on target (0.5).
	require.NoError(t, h.a.consume(ctx, gpuMetrics(ns, workload, 4, 0, now)))
	require.NoError(t, h.a.consume(ctx, gpuMetrics(ns, workload, 2, 0.5, now.Add(time.Second))))
	// Someone scales to 2; the Deployment's controller removes pods 2 and 3.
	_, err := cs.AppsV1().Deployments(ns).Patch(ctx, "inference", types.MergePatchType, []byte(`{"spec":{"replicas":2}}`), metav1.PatchOptions{})
	require.NoError(t, err)
	syncPods(t, cs, ns, "inference", 2)
	h.a.evaluate(ctx, now.Add(15*time.Second))
	require.Equal(t, int32(2), deploymentReplicas(t, cs, ns, "inference"), "pods 2 and 3 are gone: 2 pods on target hold")
	require.Zero(t, h.logs.LogRecordCount())
	// Had they counted, the average would be 0.25 and the count would halve.
}

// TestBoundsWithoutMetrics: with leader election and no metrics anywhere,
// a count below min_replicas is still raised, as the HPA does without
// consulting metrics; one replica takes the Lease to do it.
func TestBoundsWithoutMetrics(t *testing.T) {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := namespace(t, cs)
	createDeployment(t, cs, ns, "inference", 1)
	target := deploymentTarget(ns, "inference")
	target.MinReplicas = 3
	cfg := kubeConfig(t, s, kubetest.AdminToken, target)
	cfg.LeaderElection = LeaderElectionConfig{Enabled: true, LeaseName: "gpu-autoscaler", LeaseNamespace: ns, Identity: "only",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	require.NoError(t, cfg.Validate())
	h := start(t, "bounds", cfg)
	require.Eventually(t, func() bool {
		h.a.evaluate(context.Background(), time.Now())
		return deploymentReplicas(t, cs, ns, "inference") == 3
	}, 30*time.Second, 200*time.Millisecond)
	lr := h.logs.AllLogs()[0].ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	require.Contains(t, lr.Body().Str(), "from 1 to 3 replicas: TooFewReplicas")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
