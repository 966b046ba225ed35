package gpuremediationconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// At most drain.max_concurrent nodes drain at once; a drain that a
// PodDisruptionBudget blocks past drain.timeout is given up (the node stays
// cordoned), and the next one starts.
func TestMaxConcurrentDrainsAndTimeout(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", nil), f.node("b", nil)
	app := map[string]string{"app": "solo"}
	f.pod("solo", a, app, true)
	f.pdb("solo", app, 1, 0) // never allows its only pod to go
	f.pod("other", b, nil, true)
	cfg := testConfig()
	cfg.Drain.Timeout = time.Minute
	f.remediator(cfg, nil)
	f.feed(gpuReport{node: a, gpu: gpuID(a, 0)}, gpuReport{node: b, gpu: gpuID(b, 0)})
	f.step(time.Second)
	ds := f.feed(gpuReport{node: a, gpu: gpuID(a, 0), xids: map[int64]int64{79: 1}}, gpuReport{node: b, gpu: gpuID(b, 0), xids: map[int64]int64{79: 1}})
	require.Equal(t, []string{"xid_79:drain:policy", "xid_79:drain:" + reasonDrainDeferred}, reasons(ds))
	require.True(t, f.getNode(a).Spec.Unschedulable)
	require.False(t, f.getNode(b).Spec.Unschedulable, "the deferred node is not touched yet")
	require.True(t, f.podExists("other"))

	f.step(30 * time.Second)
	require.Empty(t, f.tick(), "still waiting on the budget")
	f.step(31 * time.Second)
	require.Equal(t, []string{"xid_79:drain:" + reasonDrainTimeout, "xid_79:drain:policy"}, reasons(f.tick()))
	require.True(t, f.getNode(a).Spec.Unschedulable, "a timed-out drain leaves the node cordoned")
	require.True(t, f.podExists("solo"), "the budget was never overridden")
	require.True(t, f.getNode(b).Spec.Unschedulable)
	require.False(t, f.podExists("other"))
}

// After the reboot it asked for (the node's boot ID changes) and a health
// check, the node is given back, undoing only what this component did:
// its taint and cordon go, a person's taint stays, GPUHealthy turns True.
func TestRebootVerifiedThenGivenBack(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	node := f.node("n", nil)
	n := f.getNode(node)
	n.Spec.Taints = []corev1.Taint{{Key: "example.com/maintenance", Value: "x", Effect: corev1.TaintEffectNoSchedule}}
	_, err := f.cs.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.setBootID(node, "boot-1")
	cfg := testConfig()
	cfg.Recovery.HealthyFor = time.Minute
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})))
	n = f.getNode(node)
	require.True(t, n.Spec.Unschedulable)
	require.Len(t, n.Spec.Taints, 2)
	require.NotEmpty(t, n.Annotations[kube.RebootRequestAnnotation])
	require.Equal(t, "awaiting_reboot", f.r.plans[0].state())

	// No reboot yet: nothing changes, however long the GPU is quiet.
	f.step(2 * time.Minute)
	require.Empty(t, f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}}))
	require.True(t, f.getNode(node).Spec.Unschedulable)

	f.setBootID(node, "boot-2")
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:rebooted"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})))
	f.step(30 * time.Second)
	require.Empty(t, f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}}), "not healthy for long enough")
	require.True(t, f.getNode(node).Spec.Unschedulable)
	f.step(31 * time.Second)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})
	require.Equal(t, []string{"xid_79:uncordon:healthy"}, reasons(ds))
	require.Equal(t, ds[0].Incident, f.r.out[0].Incident)
	n = f.getNode(node)
	require.False(t, n.Spec.Unschedulable)
	require.Equal(t, []corev1.Taint{{Key: "example.com/maintenance", Value: "x", Effect: corev1.TaintEffectNoSchedule}}, n.Spec.Taints)
	require.Equal(t, "True", string(condition(n).Status))
	require.NotContains(t, n.Annotations, kube.OwnerAnnotation)
	require.NotContains(t, n.Annotations, kube.RebootRequestAnnotation)
	require.Equal(t, int64(0), f.gauge("gpu.remediation.nodes"))
	require.Empty(t, f.r.plans)
}

// A replica that does not hold the Lease writes nothing and records no
// decision; it keeps the incident for a takeover.
func TestFollowerWritesNothing(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	before := f.getNode(node).ResourceVersion
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	r := f.remediator(cfg, nil)
	r.leading = false
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Empty(t, f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}}))
	require.Equal(t, before, f.getNode(node).ResourceVersion)
	require.Len(t, r.standby, 1, "kept for a takeover")
	// Evidence older than the standby horizon reached the leader, which acted.
	require.NotNil(t, r.handled[gpu])
	f.step(r.standbyHorizon() + time.Second)
	f.tick()
	require.Empty(t, r.standby)
	require.Nil(t, r.handled[gpu], "the standby does not hold the GPU once the leader has it")
}

// drain.only_gpu_pods evicts only the pod holding the faulty GPU.
func TestDrainOnlyGPUPods(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("holder", node, nil, true)
	f.pod("bystander", node, nil, true)
	cfg := testConfig()
	cfg.Drain.OnlyGPUPods = true
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu, pod: "holder"})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, pod: "holder", xids: map[int64]int64{79: 1}})))
	require.True(t, f.getNode(node).Spec.Unschedulable)
	require.False(t, f.podExists("holder"))
	require.True(t, f.podExists("bystander"))
}

// The factory's path: a kubeconfig, leader election on a Lease, the loop;
// it takes the Lease, acts from its own ticker, and stops cleanly.
func TestConnectorThroughTheFactory(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	node := f.node("n", nil)
	kc, err := server(t).Kubeconfig(t.TempDir(), kubetest.AdminToken)
	require.NoError(t, err)
	cfg := testConfig()
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: kc}
	cfg.Interval = 100 * time.Millisecond
	cfg.LeaderElection = LeaderElectionConfig{Enabled: true, LeaseName: "otelcol-gpu-remediation", LeaseNamespace: f.ns, Identity: "gw-0",
		LeaseDuration: 4 * time.Second, RenewDeadline: 3 * time.Second, RetryPeriod: 500 * time.Millisecond}
	require.NoError(t, cfg.Validate())
	set := connectortest.NewNopSettings(metadata.Type)
	logs := new(consumertest.LogsSink)
	c, err := NewFactory().CreateMetricsToLogs(ctx, set, cfg, logs)
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx, componenttest.NewNopHost()))
	r := c.(*instance).Value
	require.Eventually(t, func() bool { r.mu.Lock(); defer r.mu.Unlock(); return r.leading }, 20*time.Second, 100*time.Millisecond)

	gpu := gpuID(node, 0)
	now := time.Now()
	rep := func(at time.Time, n int64) pmetric.Metrics {
		md := pmetric.NewMetrics()
		ts := pcommon.NewTimestampFromTime(at)
		resource(node, gpu, func(ms pmetric.MetricSlice) { temp(ms, ts); xid(ms, 79, n, ts, ts) }).CopyTo(md.ResourceMetrics().AppendEmpty())
		return md
	}
	require.NoError(t, c.ConsumeMetrics(ctx, rep(now, 0)))
	require.NoError(t, c.ConsumeMetrics(ctx, rep(now.Add(time.Second), 1)))
	require.Eventually(t, func() bool { return f.getNode(node).Spec.Unschedulable }, 10*time.Second, 100*time.Millisecond)
	require.Eventually(t, func() bool { return logs.LogRecordCount() > 0 }, 5*time.Second, 100*time.Millisecond)
	require.NoError(t, c.Shutdown(ctx))
}
