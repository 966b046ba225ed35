package kube

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

var (
	apiServer    *kubetest.Server
	apiServerErr error
)

// TestMain starts one kube-apiserver with etcd, and the
// kube-controller-manager's disruption controller so that
// PodDisruptionBudgets really refuse evictions, for the package's tests.
func TestMain(m *testing.M) {
	const root = "../../../.."
	apiBin, etcdBin, err := kubetest.Binaries(root)
	var kcm string
	if err == nil {
		kcm, err = kubetest.ControllerManagerBinary(root)
	}
	if err == nil {
		apiServer, err = kubetest.Start(apiBin, etcdBin)
	}
	if err == nil {
		if err = apiServer.StartDisruptionController(kcm); err != nil {
			apiServer = nil
		}
	}
	apiServerErr = err
	code := m.Run()
	if apiServer != nil {
		apiServer.Stop()
	}
	os.Exit(code)
}

var seq atomic.Int32

// cluster is one test's namespace and node on the shared API server.
type cluster struct {
	t    *testing.T
	cs   kubernetes.Interface
	c    *Client
	ns   string
	node string
}

func newCluster(t *testing.T) *cluster {
	s := kubetest.Require(t, apiServer, apiServerErr)
	cfg := s.Config(kubetest.AdminToken)
	cs := kubernetes.NewForConfigOrDie(cfg)
	ns := fmt.Sprintf("d%d-%d", time.Now().UnixNano()%1e6, seq.Add(1))
	ctx := context.Background()
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	_, err = cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-node"}}, metav1.CreateOptions{})
	require.NoError(t, err)
	c, err := New(cfg, 5*time.Second)
	require.NoError(t, err)
	return &cluster{t: t, cs: cs, c: c, ns: ns, node: ns + "-node"}
}

// Ways a test pod differs from the default: a running, ready pod of a
// ReplicaSet (the ReplicaSet need not exist: no garbage collector runs).
func bare(p *corev1.Pod) { p.OwnerReferences = nil }

func withEmptyDir(p *corev1.Pod) {
	p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
}

// daemonSet makes the pod a DaemonSet's, of the API group and version
// given.
func daemonSet(apiVersion string) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: "DaemonSet", Name: "ds", UID: "ds-uid", Controller: ptr.To(true)}}
	}
}

func mirror(p *corev1.Pod) {
	p.OwnerReferences = nil
	p.Annotations = map[string]string{corev1.MirrorPodAnnotationKey: "hash"}
}

// held carries a finalizer, so that its deletion leaves it terminating
// until the test lets it go.
func held(p *corev1.Pod) { p.Finalizers = []string{"example.com/hold"} }

func phase(ph corev1.PodPhase) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Status.Phase = ph } }

func inNamespace(ns string) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Namespace = ns } }

func labelled(k, v string) func(*corev1.Pod) {
	return func(p *corev1.Pod) { p.Labels = map[string]string{k: v} }
}

// pod creates a pod on the cluster's node and writes its status as a
// kubelet would; it returns namespace/name.
func (k *cluster) pod(name string, mods ...func(*corev1.Pod)) string {
	k.t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "rs-uid", Controller: ptr.To(true)},
		}},
		Spec:   corev1.PodSpec{NodeName: k.node, Containers: []corev1.Container{{Name: "c", Image: "example.com/job:1"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	for _, m := range mods {
		m(p)
	}
	status := p.Status
	ctx := context.Background()
	created, err := k.cs.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
	require.NoError(k.t, err)
	created.Status = status
	if status.Phase == corev1.PodRunning {
		created.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	}
	_, err = k.cs.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	require.NoError(k.t, err)
	return p.Namespace + "/" + name
}

func (k *cluster) get(id string) *corev1.Pod {
	k.t.Helper()
	ns, name := split(id)
	p, err := k.cs.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	require.NoError(k.t, err)
	return p
}

func split(id string) (string, string) {
	ns, name, _ := strings.Cut(id, "/")
	return ns, name
}

// release removes the pod's finalizers, as the controller that set them
// would once done.
func (k *cluster) release(id string) {
	k.t.Helper()
	ns, name := split(id)
	_, err := k.cs.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	require.NoError(k.t, err)
}

// remove deletes a pod as someone other than the drain, with the given
// grace period (nil: the pod's own).
func (k *cluster) remove(id string, grace *int64) {
	k.t.Helper()
	ns, name := split(id)
	require.NoError(k.t, k.cs.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: grace}))
}

func (k *cluster) drain(only map[string]bool, pol DrainPolicy) DrainResult {
	k.t.Helper()
	res, err := k.c.Drain(context.Background(), k.node, only, pol)
	require.NoError(k.t, err)
	return res
}

// plain is GracePeriod 0 with every switch off: pods go at once (no
// kubelet runs to finish a graceful deletion) unless a finalizer holds them.
var plain = DrainPolicy{}

// A pod that no controller manages refuses the whole drain, as kubectl
// drain refuses it without --force: nothing is evicted, not even the pods
// that could go. With force, both go.
func TestDrainUnmanagedPodNeedsForce(t *testing.T) {
	k := newCluster(t)
	solo := k.pod("solo", bare)
	web := k.pod("web")
	res := k.drain(nil, plain)
	require.Equal(t, []string{solo + ": no controller (drain::force)"}, res.Refused)
	require.Empty(t, res.Evicted)
	require.Equal(t, 2, res.Remaining)
	require.NotNil(t, k.get(solo))
	require.NotNil(t, k.get(web), "a refused drain evicts nothing")

	pol := plain
	pol.Force = true
	res = k.drain(nil, pol)
	require.Empty(t, res.Refused)
	require.Equal(t, []string{solo, web}, res.Evicted)
	require.Zero(t, res.Remaining)
	require.Nil(t, k.get(solo))
	require.Nil(t, k.get(web))
}

// A pod with an emptyDir volume refuses the drain without
// delete_emptydir_data; a pod that needs both settings names both.
func TestDrainEmptyDirNeedsDeleteEmptyDirData(t *testing.T) {
	k := newCluster(t)
	cache := k.pod("cache", withEmptyDir)
	scratch := k.pod("scratch", withEmptyDir, bare)
	res := k.drain(nil, plain)
	require.Equal(t, []string{
		cache + ": emptyDir volume (drain::delete_emptydir_data)",
		scratch + ": emptyDir volume (drain::delete_emptydir_data)",
		scratch + ": no controller (drain::force)",
	}, res.Refused)
	require.Empty(t, res.Evicted)

	pol := plain
	pol.DeleteEmptyDirData = true
	res = k.drain(nil, pol)
	require.Equal(t, []string{scratch + ": no controller (drain::force)"}, res.Refused, "one setting is not enough for scratch")
	require.NotNil(t, k.get(cache))

	pol.Force = true
	res = k.drain(nil, pol)
	require.Empty(t, res.Refused)
	require.Equal(t, []string{cache, scratch}, res.Evicted)
	require.Zero(t, res.Remaining)
	require.Nil(t, k.get(cache))
}

// DaemonSet pods (running or finished, of apps/v1 or another group's
// DaemonSet) and mirror pods are never evicted and never refuse a drain,
// whatever the settings.
func TestDrainLeavesDaemonSetAndMirrorPods(t *testing.T) {
	k := newCluster(t)
	ds := k.pod("dcgm-exporter", daemonSet("apps/v1"))
	dsDone := k.pod("ds-finished", daemonSet("apps/v1"), phase(corev1.PodSucceeded))
	kruise := k.pod("kruise-agent", daemonSet("apps.kruise.io/v1alpha1"))
	static := k.pod("etcd-static", mirror)
	for _, pol := range []DrainPolicy{plain, {Force: true, DeleteEmptyDirData: true}} {
		res := k.drain(nil, pol)
		require.Empty(t, res.Refused, "a mirror pod has no controller, yet needs no force")
		require.Empty(t, res.Evicted)
		require.Zero(t, res.Remaining, "the node counts as drained")
	}
	for _, id := range []string{ds, dsDone, kruise, static} {
		require.NotNil(t, k.get(id), id)
	}
}

// A pod whose eviction was accepted but that still exists keeps the drain
// not done: it is reported Terminating, apart from the pods evicted, and
// is not evicted again; once it is gone the drain is done.
func TestDrainWaitsForTerminatingPods(t *testing.T) {
	k := newCluster(t)
	slow := k.pod("slow", held)
	quick := k.pod("quick")
	res := k.drain(nil, plain)
	require.Equal(t, []string{quick, slow}, res.Evicted)
	require.Equal(t, []string{slow}, res.Terminating)
	require.Equal(t, 1, res.Remaining)
	p := k.get(slow)
	require.NotNil(t, p)
	require.NotNil(t, p.DeletionTimestamp)

	res = k.drain(nil, plain)
	require.Empty(t, res.Evicted, "a terminating pod is not evicted again")
	require.Equal(t, []string{slow}, res.Terminating)
	require.Equal(t, 1, res.Remaining)
	require.Contains(t, res.Waiting(), "still terminating: "+slow)

	k.release(slow)
	require.Nil(t, k.get(slow))
	res = k.drain(nil, plain)
	require.Empty(t, res.Terminating)
	require.Zero(t, res.Remaining)
}

// A pod someone else deleted, with its own grace period that no kubelet
// here ever ends, is waited for as well, and needs no force though it has
// no controller: its deletion is decided already.
func TestDrainWaitsForPodsDeletedByOthers(t *testing.T) {
	k := newCluster(t)
	job := k.pod("job", bare)
	k.remove(job, nil)
	require.NotNil(t, k.get(job).DeletionTimestamp)
	res := k.drain(nil, plain)
	require.Empty(t, res.Refused)
	require.Empty(t, res.Evicted)
	require.Equal(t, []string{job}, res.Terminating)

	k.remove(job, ptr.To[int64](0)) // as the kubelet confirms the pod stopped
	require.Zero(t, k.drain(nil, plain).Remaining)
}

// skip_wait_for_delete_timeout: a pod whose deletion timestamp is older
// than the timeout is no longer waited for; 0 waits for ever.
func TestDrainSkipWaitForDeleteTimeout(t *testing.T) {
	k := newCluster(t)
	stuck := k.pod("stuck", held)
	t.Cleanup(func() { k.release(stuck) })
	k.remove(stuck, ptr.To[int64](0))
	deleted := k.get(stuck).DeletionTimestamp.Time

	pol := plain
	pol.SkipWaitForDeleteTimeout = time.Minute
	k.c.now = func() time.Time { return deleted.Add(30 * time.Second) }
	require.Equal(t, []string{stuck}, k.drain(nil, pol).Terminating, "deleted 30 s ago: still waited for")

	k.c.now = func() time.Time { return deleted.Add(2 * time.Minute) }
	res := k.drain(nil, pol)
	require.Empty(t, res.Terminating, "deleted 2 min ago: skipped")
	require.Zero(t, res.Remaining)
	require.NotNil(t, k.get(stuck))

	pol.SkipWaitForDeleteTimeout = 0
	require.Equal(t, []string{stuck}, k.drain(nil, pol).Terminating, "0 never skips")
}

// kube-system is no special case, as in kubectl drain: its pods are
// evicted like any other, and refuse the drain like any other; its
// DaemonSet pods stay, as DaemonSet pods.
func TestDrainKubeSystemIsNoSpecialCase(t *testing.T) {
	k := newCluster(t)
	sys := inNamespace(metav1.NamespaceSystem)
	dns := k.pod(k.ns+"-coredns", sys)
	proxy := k.pod(k.ns+"-kube-proxy", sys, daemonSet("apps/v1"))
	bareSys := k.pod(k.ns+"-debug", sys, bare)
	res := k.drain(nil, plain)
	require.Equal(t, []string{bareSys + ": no controller (drain::force)"}, res.Refused)

	pol := plain
	pol.Force = true
	res = k.drain(nil, pol)
	require.Equal(t, []string{dns, bareSys}, res.Evicted)
	require.Zero(t, res.Remaining)
	require.NotNil(t, k.get(proxy))
}

// Finished pods (Succeeded, Failed) are evicted, as kubectl drain deletes
// them, and need neither force nor delete_emptydir_data; their eviction
// deletes them at once, whatever the grace period.
func TestDrainEvictsFinishedPods(t *testing.T) {
	k := newCluster(t)
	done := k.pod("done", bare, withEmptyDir, phase(corev1.PodSucceeded))
	failed := k.pod("failed", phase(corev1.PodFailed))
	pol := plain
	pol.GracePeriod = -1
	res := k.drain(nil, pol)
	require.Empty(t, res.Refused)
	require.Equal(t, []string{done, failed}, res.Evicted)
	require.Zero(t, res.Remaining)
	require.Nil(t, k.get(done))
	require.Nil(t, k.get(failed))
}

// With only set (a GPU reset: the pods holding the GPU), the other pods
// are neither evicted nor able to refuse the drain.
func TestDrainOnlyListedPods(t *testing.T) {
	k := newCluster(t)
	holder := k.pod("holder")
	bystander := k.pod("bystander", bare)
	other := k.pod("other")
	res := k.drain(map[string]bool{holder: true}, plain)
	require.Empty(t, res.Refused)
	require.Equal(t, []string{holder}, res.Evicted)
	require.Zero(t, res.Remaining)
	require.NotNil(t, k.get(bystander))
	require.NotNil(t, k.get(other))

	res = k.drain(map[string]bool{bystander: true}, plain)
	require.Equal(t, []string{bystander + ": no controller (drain::force)"}, res.Refused, "a listed pod is checked")
	require.Empty(t, k.drain(map[string]bool{}, plain).Evicted, "an empty list evicts nothing")
	require.NotNil(t, k.get(other))
}

// pod_selector limits the drain to the pods it matches; a pod it leaves
// out cannot refuse the drain. A selector that does not parse names the key.
func TestDrainPodSelector(t *testing.T) {
	k := newCluster(t)
	a := k.pod("a", labelled("tier", "batch"))
	b := k.pod("b", labelled("tier", "serving"), bare)
	pol := plain
	pol.PodSelector = "tier=batch"
	res := k.drain(nil, pol)
	require.Empty(t, res.Refused)
	require.Equal(t, []string{a}, res.Evicted)
	require.NotNil(t, k.get(b))

	pol.PodSelector = "tier in (batch"
	_, err := k.c.Drain(context.Background(), k.node, nil, pol)
	require.ErrorContains(t, err, "drain::pod_selector: ")
}

// A pod a PodDisruptionBudget holds is Blocked, and a pod whose deletion
// is under way is Terminating: the two are reported apart.
func TestDrainBlockedApartFromTerminating(t *testing.T) {
	k := newCluster(t)
	guarded := k.pod("guarded", labelled("app", "guarded"))
	slow := k.pod("slow", held)
	t.Cleanup(func() { k.release(slow) })
	m := intstr.FromInt32(1)
	ctx := context.Background()
	_, err := k.cs.PolicyV1().PodDisruptionBudgets(k.ns).Create(ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "guarded", Namespace: k.ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &m, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "guarded"}}},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err := k.cs.PolicyV1().PodDisruptionBudgets(k.ns).Get(ctx, "guarded", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1
	}, 30*time.Second, 100*time.Millisecond, "the disruption controller never computed the budget")

	res := k.drain(nil, plain)
	require.Equal(t, []string{slow}, res.Evicted)
	require.Equal(t, []string{guarded}, res.Blocked)
	require.Equal(t, []string{slow}, res.Terminating)
	require.Equal(t, 2, res.Remaining)
	require.Equal(t, "held by PodDisruptionBudgets: "+guarded+"; still terminating: "+slow, res.Waiting())
	require.NotNil(t, k.get(guarded))
}

// A pod in a namespace being deleted cannot be evicted (the API server
// refuses creations there); its namespace's deletion removes it, so the
// drain waits for it as for a terminating pod. No namespace controller
// runs here, so the namespace stays terminating.
func TestDrainWaitsForPodsOfADeletedNamespace(t *testing.T) {
	k := newCluster(t)
	job := k.pod("job")
	ctx := context.Background()
	require.NoError(t, k.cs.CoreV1().Namespaces().Delete(ctx, k.ns, metav1.DeleteOptions{}))
	// The admission plugin that refuses creations reads namespaces from a
	// cache: wait until it has seen this one terminating.
	require.Eventually(t, func() bool {
		_, err := k.cs.CoreV1().ConfigMaps(k.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe"}},
			metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return apierrors.IsForbidden(err)
	}, 10*time.Second, 50*time.Millisecond)
	res := k.drain(nil, plain)
	require.Empty(t, res.Evicted)
	require.Equal(t, []string{job}, res.Terminating)
	require.Equal(t, 1, res.Remaining)
	require.NotNil(t, k.get(job))
}

// decide, pod by pod, as kubectl's filters do, with our documented
// differences.
func TestDecide(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	pod := func(mods ...func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{
				{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: ptr.To(true)},
			}},
			Status: corev1.PodStatus{Phase: corev1.PodRunning},
		}
		for _, m := range mods {
			m(p)
		}
		return p
	}
	deleted := func(ago time.Duration) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.DeletionTimestamp = ptr.To(metav1.NewTime(at.Add(-ago))) }
	}
	notController := func(p *corev1.Pod) {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "u"}}
	}
	force := DrainPolicy{Force: true}
	both := DrainPolicy{Force: true, DeleteEmptyDirData: true}
	skip := DrainPolicy{SkipWaitForDeleteTimeout: time.Minute}
	for _, c := range []struct {
		name string
		pol  DrainPolicy
		pod  *corev1.Pod
		act  podAction
		need []string
	}{
		{"managed", plain, pod(), actEvict, nil},
		{"pending", plain, pod(phase(corev1.PodPending)), actEvict, nil},
		{"no controller", plain, pod(bare), actRefuse, []string{"no controller (drain::force)"}},
		{"no controller, force", force, pod(bare), actEvict, nil},
		{"an owner that is not the controller", plain, pod(notController), actRefuse, []string{"no controller (drain::force)"}},
		{"emptyDir", force, pod(withEmptyDir), actRefuse, []string{"emptyDir volume (drain::delete_emptydir_data)"}},
		{"emptyDir and no controller", plain, pod(withEmptyDir, bare), actRefuse, []string{"emptyDir volume (drain::delete_emptydir_data)", "no controller (drain::force)"}},
		{"emptyDir, allowed", both, pod(withEmptyDir, bare), actEvict, nil},
		{"DaemonSet", both, pod(daemonSet("apps/v1")), actSkip, nil},
		{"finished DaemonSet pod", both, pod(daemonSet("apps/v1"), phase(corev1.PodFailed)), actSkip, nil},
		{"another group's DaemonSet", both, pod(daemonSet("apps.kruise.io/v1alpha1")), actSkip, nil},
		{"mirror", both, pod(mirror), actSkip, nil},
		{"mirror, no settings", plain, pod(mirror, withEmptyDir), actSkip, nil},
		{"succeeded", plain, pod(bare, withEmptyDir, phase(corev1.PodSucceeded)), actEvict, nil},
		{"failed", plain, pod(bare, phase(corev1.PodFailed)), actEvict, nil},
		{"terminating", plain, pod(deleted(time.Hour)), actWait, nil},
		{"terminating, no controller, emptyDir", plain, pod(bare, withEmptyDir, deleted(0)), actWait, nil},
		{"terminating DaemonSet pod", plain, pod(daemonSet("apps/v1"), deleted(0)), actSkip, nil},
		{"terminating for less than the timeout", skip, pod(deleted(59 * time.Second)), actWait, nil},
		{"terminating for the timeout exactly", skip, pod(deleted(time.Minute)), actWait, nil},
		{"terminating for longer", skip, pod(deleted(61 * time.Second)), actSkip, nil},
		{"terminating for longer, no controller", skip, pod(bare, deleted(time.Hour)), actSkip, nil},
		{"within its grace period", skip, pod(deleted(-30 * time.Second)), actWait, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			act, need := c.pol.decide(c.pod, at)
			require.Equal(t, c.act, act)
			require.Equal(t, c.need, need)
		})
	}
}

func TestWaiting(t *testing.T) {
	require.Empty(t, DrainResult{}.Waiting())
	require.Equal(t, "held by PodDisruptionBudgets: a/x, a/y", DrainResult{Blocked: []string{"a/x", "a/y"}}.Waiting())
	require.Equal(t, "refused: a/x: no controller (drain::force)", DrainResult{Refused: []string{"a/x: no controller (drain::force)"}}.Waiting())
}
