package gpuremediationconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// XID 79 on one node: condition, taint, cordon, and a drain through the
// Eviction API that the PodDisruptionBudget gates (the disruption
// controller computes it), DaemonSet pods left alone, the other node
// untouched.
func TestXID79DrainsTheRightNodeWithThePDBHonoured(t *testing.T) {
	f := newFixture(t)
	bad, good := f.node("bad", nil), f.node("good", nil)
	app := map[string]string{"app": "trainer"}
	f.pod("trainer-0", bad, app, true)
	f.pod("trainer-1", bad, app, true)
	f.pod("trainer-2", good, app, true)
	f.pod("dcgm-exporter", bad, nil, true, metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "dcgm-exporter", UID: "ds-uid", Controller: ptr.To(true)})
	f.pdb("trainer", app, 2, 1) // 3 healthy, 2 must stay: one eviction at a time

	f.remediator(testConfig(), nil)
	gpu := gpuID(bad, 1)
	f.feed(gpuReport{node: bad, gpu: gpu, pod: "trainer-0"}, gpuReport{node: good, gpu: gpuID(good, 1)})
	f.step(5 * time.Second)
	ds := f.feed(gpuReport{node: bad, gpu: gpu, pod: "trainer-0", xids: map[int64]int64{79: 1}}, gpuReport{node: good, gpu: gpuID(good, 1)})
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(ds))

	n := f.getNode(bad)
	c := condition(n)
	require.NotNil(t, c, "GPUHealthy condition")
	require.Equal(t, "False", string(c.Status))
	require.Equal(t, "XID79", c.Reason)
	require.Contains(t, c.Message, gpu)
	require.True(t, hasTaint(n, gpu), "taint naming the GPU")
	require.True(t, n.Spec.Unschedulable, "cordoned")
	require.Contains(t, n.Annotations[kube.OwnerAnnotation], `"cordoned":true`)
	require.NotEmpty(t, f.events(bad), "an Event on the node")

	// One eviction went through; the budget holds the other pod.
	require.False(t, f.podExists("trainer-0"))
	require.True(t, f.podExists("trainer-1"), "the PodDisruptionBudget must hold trainer-1")
	require.True(t, f.podExists("dcgm-exporter"), "DaemonSet pods are never evicted")
	require.Empty(t, n.Annotations[kube.RebootRequestAnnotation], "no reboot request before the drain ends")
	g := f.getNode(good)
	require.False(t, g.Spec.Unschedulable)
	require.Empty(t, ownTaints(g))
	require.Nil(t, condition(g))

	// The budget lets go once a replacement is healthy elsewhere.
	f.step(time.Second)
	require.Empty(t, f.tick())
	require.True(t, f.podExists("trainer-1"))
	f.pod("trainer-3", good, app, true)
	f.waitPDB("trainer", 1)
	f.step(time.Second)
	f.tick()
	require.False(t, f.podExists("trainer-1"))
	require.True(t, f.podExists("dcgm-exporter"))
	require.True(t, f.podExists("trainer-2"))
	require.NotEmpty(t, f.getNode(bad).Annotations[kube.RebootRequestAnnotation], "reboot requested once drained")

	for _, step := range []string{stepEvent, stepCondition, stepTaint, stepCordon, stepDrain, stepRequest} {
		require.Equal(t, int64(1), f.counter(step, reasonPolicy), step)
	}
	require.Equal(t, int64(1), f.gauge("gpu.remediation.nodes"))
	require.Equal(t, int64(0), f.gauge("gpu.remediation.breaker.state"))
}

// XID 13 is the application's error: once, an Event and nothing else;
// three times on one GPU within the window, a GPU reset (condition, taint,
// the GPU's own pod evicted, a reset request), never a cordon.
func TestXID13EventOnceThenEscalates(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job-a", node, nil, true)
	f.pod("job-b", node, nil, true)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	rep := func(count int64) gpuReport {
		return gpuReport{node: node, gpu: gpu, pod: "job-a", xids: map[int64]int64{13: count}}
	}
	f.feed(gpuReport{node: node, gpu: gpu, pod: "job-a"})
	f.step(time.Second)
	require.Equal(t, []string{"xid_13:restart_app:policy"}, reasons(f.feed(rep(1))))
	n := f.getNode(node)
	require.Len(t, f.events(node), 1)
	require.False(t, n.Spec.Unschedulable)
	require.Empty(t, ownTaints(n))
	require.Nil(t, condition(n))
	require.True(t, f.podExists("job-a"))

	f.step(time.Minute)
	require.Equal(t, []string{"xid_13:restart_app:policy"}, reasons(f.feed(rep(2))))
	f.step(time.Minute)
	require.Equal(t, []string{"xid_13:reset_gpu:escalated"}, reasons(f.feed(rep(3))))
	n = f.getNode(node)
	require.True(t, hasTaint(n, gpu))
	require.False(t, n.Spec.Unschedulable, "a GPU reset does not cordon the node")
	require.Equal(t, "False", string(condition(n).Status))
	require.False(t, f.podExists("job-a"), "the pod holding the GPU is evicted")
	require.True(t, f.podExists("job-b"), "other pods stay")
	require.Equal(t, gpu, n.Annotations[kube.ResetRequestAnnotation])
	require.Equal(t, int64(1), f.counter(stepDrain, reasonEscalated))
}

// An uncorrectable ECC error and a row-remap failure each drain their node.
func TestUncorrectableECCAndRowRemapFailureDrain(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("ecc", nil), f.node("remap", nil)
	f.pod("pa", a, nil, true)
	f.pod("pb", b, nil, true)
	f.remediator(testConfig(), nil)
	f.feed(gpuReport{node: a, gpu: gpuID(a, 0)}, gpuReport{node: b, gpu: gpuID(b, 0)})
	f.step(5 * time.Second)
	ds := f.feed(gpuReport{node: a, gpu: gpuID(a, 0), ecc: 2}, gpuReport{node: b, gpu: gpuID(b, 0), remap: 1})
	require.ElementsMatch(t, []string{"ecc_uncorrectable:drain:policy", "row_remap_failure:drain:policy"}, reasons(ds))
	for node, reason := range map[string]string{a: "UncorrectableECC", b: "RowRemapFailure"} {
		n := f.getNode(node)
		require.True(t, n.Spec.Unschedulable, node)
		require.Equal(t, reason, condition(n).Reason)
	}
	require.False(t, f.podExists("pa"))
	require.False(t, f.podExists("pb"))
	// The same evidence again is not a new fault.
	f.step(5 * time.Second)
	require.Empty(t, f.feed(gpuReport{node: a, gpu: gpuID(a, 0), ecc: 2}, gpuReport{node: b, gpu: gpuID(b, 0), remap: 1}))
}

// A fault on 6 of 10 nodes within a minute (a bad driver rollout): the
// breaker lets 3 (max_share 0.3) through, stops the rest, says so, keeps
// it on the Lease, and only a person's removal of the annotation closes it.
func TestBreakerStopsAfterThreshold(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var nodes []string
	for i := range 10 {
		nodes = append(nodes, f.node(string(rune('a'+i)), nil))
	}
	cfg := testConfig()
	cfg.Breaker = BreakerConfig{MaxShare: 0.3, MaxNodes: 10, Window: 10 * time.Minute}
	cfg.LeaderElection = LeaderElectionConfig{Enabled: true, LeaseName: "remediation-" + f.ns, LeaseNamespace: f.ns,
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond, Identity: "test"}
	r := f.remediator(cfg, nil)
	r.leaseNS = f.ns
	ectx, cancel := context.WithCancel(ctx)
	done, err := kube.Elect(ectx, server(t).Config(kubetest.AdminToken), kube.LeaseConfig{Name: cfg.LeaderElection.LeaseName, Namespace: f.ns,
		Identity: "test", LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}, r.setLeading)
	require.NoError(t, err)
	defer func() { cancel(); <-done }()
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.leading }, 20*time.Second, 100*time.Millisecond)

	var healthy []gpuReport
	for _, n := range nodes {
		healthy = append(healthy, gpuReport{node: n, gpu: gpuID(n, 0)})
	}
	f.feed(healthy...)
	var acted, stopped int
	for i := range 6 {
		f.step(10 * time.Second)
		rep := append([]gpuReport(nil), healthy...)
		rep[i].xids = map[int64]int64{79: 1}
		ds := f.feed(rep...)
		require.Len(t, ds, 1)
		switch ds[0].Reason {
		case reasonPolicy:
			acted++
			require.Less(t, i, 3)
			require.True(t, f.getNode(nodes[i]).Spec.Unschedulable)
		case reasonBreakerOpen:
			stopped++
			n := f.getNode(nodes[i])
			require.False(t, n.Spec.Unschedulable, "the breaker stops every write")
			require.Empty(t, ownTaints(n))
			require.Empty(t, f.events(nodes[i]))
		default:
			t.Fatalf("unexpected decision %+v", ds[0])
		}
	}
	require.Equal(t, 3, acted)
	require.Equal(t, 3, stopped)
	require.Equal(t, int64(1), f.gauge("gpu.remediation.breaker.state"))
	require.Equal(t, int64(3), f.counter("drain", reasonBreakerOpen))
	var said bool
	for _, lr := range f.logRecords() {
		if str(lr.Attributes(), "gpu.remediation.reason") == reasonBreakerOpen {
			require.Contains(t, lr.Body().Str(), "circuit breaker open: 4 nodes acted on within 10m0s would exceed the limit of 3 (of 10 GPU nodes)")
			said = true
		}
	}
	require.True(t, said, "the breaker says why in its log records")
	lease, err := f.cs.CoordinationV1().Leases(f.ns).Get(ctx, cfg.LeaderElection.LeaseName, metav1.GetOptions{})
	require.NoError(t, err)
	require.Contains(t, lease.Annotations[kube.BreakerAnnotation], "would exceed the limit of 3")

	// A restart does not close it: a new remediator reads the Lease.
	r2 := f.remediator(cfg, nil)
	r2.leaseNS = f.ns
	r2.leading = true // as if it had won the Lease
	f.step(time.Minute)
	f.tick()
	require.Equal(t, int64(1), f.gauge("gpu.remediation.breaker.state"))

	// A person resets it by removing the annotation.
	require.NoError(t, retry.RetryOnConflict(retry.DefaultRetry, func() error { // the elector renews the Lease meanwhile
		lease, err := f.cs.CoordinationV1().Leases(f.ns).Get(ctx, cfg.LeaderElection.LeaseName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		delete(lease.Annotations, kube.BreakerAnnotation)
		_, err = f.cs.CoordinationV1().Leases(f.ns).Update(ctx, lease, metav1.UpdateOptions{})
		return err
	}))
	f.step(time.Second)
	f.tick()
	require.Equal(t, int64(0), f.gauge("gpu.remediation.breaker.state"))
	require.Equal(t, int64(1), f.counter("breaker", "reset"))
}

// Dry run decides and reports everything and writes nothing.
func TestDryRunWritesNothing(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("p", node, nil, true)
	before := f.getNode(node)
	cfg := testConfig()
	cfg.DryRun = true
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})
	require.Len(t, ds, 1)
	require.True(t, ds[0].Time.Equal(f.now))
	ds[0].Time = f.now
	require.Equal(t, offline.Decision{Time: f.now, Node: node, UUID: gpu, Incident: policy.IncidentID(gpu, policy.Fault{Kind: policy.XID, Code: 79}, f.now),
		Fault: "xid_79", Action: "drain", Reason: reasonPolicy, DryRun: true}, ds[0])
	after := f.getNode(node)
	require.Equal(t, before.ResourceVersion, after.ResourceVersion, "the node is not written")
	require.Empty(t, f.events(node))
	require.True(t, f.podExists("p"))
	for _, step := range []string{stepEvent, stepCondition, stepTaint, stepCordon, stepDrain, stepRequest} {
		require.Equal(t, int64(1), f.counter(step, reasonDryRun), step)
	}
	var dry int
	for _, lr := range f.logRecords() {
		if v, ok := lr.Attributes().Get("gpu.remediation.dry_run"); ok && v.Bool() {
			dry++
		}
	}
	require.Equal(t, 8, dry, "one decision and seven would-be actions (the uncordon after a verified recovery among them), each a log record")
}

// A person who uncordons a node is respected: the same fault seen again
// (after a restart) does not re-cordon it, a drain in progress stops, and
// only a new fault acts again.
func TestPersonUncordonRespected(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	node := f.node("n", nil)
	app := map[string]string{"app": "x"}
	f.pod("x-0", node, app, true)
	f.pdb("x", app, 1, 0) // the only pod must stay: the drain waits
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"row_remap_failure:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, remap: 1})))
	require.True(t, f.getNode(node).Spec.Unschedulable)

	uncordon := func() {
		n := f.getNode(node)
		n.Spec.Unschedulable = false
		_, err := f.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
		require.NoError(t, err)
	}
	uncordon()
	f.step(time.Second)
	require.Equal(t, []string{"row_remap_failure:drain:" + reasonPerson}, reasons(f.tick()), "the drain stops")
	require.False(t, f.getNode(node).Spec.Unschedulable)
	require.True(t, f.podExists("x-0"))

	// A restart sees the same failure still reported: not a new fault.
	f.remediator(testConfig(), nil)
	f.step(time.Second)
	require.Equal(t, []string{"row_remap_failure:drain:" + reasonPerson}, reasons(f.feed(gpuReport{node: node, gpu: gpu, remap: 1})))
	require.False(t, f.getNode(node).Spec.Unschedulable)

	// A new fault does act.
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, remap: 1, xids: map[int64]int64{79: 1}})))
	require.True(t, f.getNode(node).Spec.Unschedulable)
}

// A node with the opt-out label is never written.
func TestOptOutLabelHonoured(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", map[string]string{"gpu-remediation.otelcol-gpu.io/opt-out": "true"})
	before := f.getNode(node)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:" + reasonOptOut}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})))
	require.Equal(t, before.ResourceVersion, f.getNode(node).ResourceVersion)
	require.Empty(t, f.events(node))
	require.Equal(t, int64(1), f.counter("drain", reasonOptOut))
}
