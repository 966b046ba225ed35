package gpuremediationconnector

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// answerReset writes the reset actor's answer on the node, as the
// gpu_reset extension does: the result, the request removed.
func (f *fixture) answerReset(node, gpu, incident, outcome, detail string) {
	f.t.Helper()
	res := nodeagent.Result{UUIDs: []string{gpu}, Incident: incident, Outcome: outcome, Detail: detail, Time: f.now}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		nodeagent.ResetResult: res.Encode(), nodeagent.ResetRequest: nil, nodeagent.ResetIncident: nil,
	}}})
	require.NoError(f.t, err)
	_, err = f.cs.CoreV1().Nodes().Patch(context.Background(), node, types.MergePatchType, patch, metav1.PatchOptions{})
	require.NoError(f.t, err)
}

// escalateToReset drives XID 13 in three incidents a minute apart on one
// GPU, which escalates to a reset, and returns the reset's incident.
func escalateToReset(t *testing.T, f *fixture, node, gpu string) string {
	t.Helper()
	f.feed(gpuReport{node: node, gpu: gpu, pod: "job"})
	for i := int64(1); i <= 3; i++ {
		f.step(time.Minute)
		f.feed(gpuReport{node: node, gpu: gpu, pod: "job", xids: map[int64]int64{13: i}})
	}
	n := f.getNode(node)
	require.Equal(t, gpu, n.Annotations[nodeagent.ResetRequest])
	inc := n.Annotations[nodeagent.ResetIncident]
	require.NotEmpty(t, inc)
	require.Equal(t, "awaiting_reset", f.r.plans[0].state())
	return inc
}

// The reset actor resets the GPU; after a clean health check the GPU's
// taint goes and GPUHealthy turns True. Every line of the story carries
// the incident's id.
func TestResetVerifiedThenGivenBack(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	cfg := testConfig()
	cfg.Recovery.HealthyFor = time.Minute
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	inc := escalateToReset(t, f, node, gpu)

	f.step(time.Second)
	require.Empty(t, f.tick(), "no answer yet")
	f.answerReset(node, gpu, inc, nodeagent.ResetOK, "reset in 4.1 s")
	f.step(time.Second)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})
	require.Equal(t, []string{"xid_13:reset_gpu:reset_ok"}, reasons(ds))
	require.Equal(t, inc, ds[0].Incident)
	require.Equal(t, "verifying", f.r.plans[0].state())
	f.step(61 * time.Second)
	ds = f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})
	require.Equal(t, []string{"xid_13:uncordon:healthy"}, reasons(ds))
	require.Equal(t, inc, ds[0].Incident)
	n := f.getNode(node)
	require.False(t, hasTaint(n, gpu))
	require.Equal(t, "True", string(condition(n).Status))
	require.NotContains(t, n.Annotations, nodeagent.ResetResult)
	for _, lr := range f.logRecords() {
		if v, ok := lr.Attributes().Get("gpu.remediation.reason"); ok && v.Str() != reasonPolicy && v.Str() != reasonEscalated {
			continue
		}
		id, ok := lr.Attributes().Get("gpu.remediation.incident.id")
		require.True(t, ok)
		require.NotEmpty(t, id.Str())
	}
}

// A reset that fails (or cannot be done) falls back to a drain of the node
// and a reboot request, in the same incident.
func TestResetFailureFallsBackToReboot(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	f.pod("other", node, nil, true)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	inc := escalateToReset(t, f, node, gpu)
	require.False(t, f.getNode(node).Spec.Unschedulable, "a reset does not cordon")
	require.True(t, f.podExists("other"))

	f.answerReset(node, gpu, inc, nodeagent.ResetFailed, "nvidia-smi: GPU reset failed")
	f.step(time.Second)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})
	require.Equal(t, []string{"xid_13:drain:reset_failed"}, reasons(ds))
	require.Equal(t, inc, ds[0].Incident)
	f.step(time.Second)
	f.tick()
	n := f.getNode(node)
	require.True(t, n.Spec.Unschedulable, "cordoned for the reboot")
	require.False(t, f.podExists("other"), "the whole node drained")
	require.NotEmpty(t, n.Annotations[kube.RebootRequestAnnotation])
	require.Len(t, f.events(node), 3, "one Event per incident (two crashes, the escalation), none more for the fallback")
}

// A GPU that faults again during its health check stays out of service,
// and a person is asked; it is never reset again on its own (no loop)
// until a person takes the node back.
func TestFailedHealthCheckAsksAPersonAndNeverLoops(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	cfg := testConfig()
	cfg.Recovery.HealthyFor = 5 * time.Minute
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	inc := escalateToReset(t, f, node, gpu)
	f.answerReset(node, gpu, inc, nodeagent.ResetOK, "")
	f.step(time.Second)
	f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})

	f.step(time.Minute)
	ds := f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3, 31: 1}})
	require.Equal(t, []string{"xid_13:reset_gpu:needs_person", "xid_31:restart_app:policy"}, reasons(ds))
	n := f.getNode(node)
	require.True(t, hasTaint(n, gpu), "stays out of service")
	c := condition(n)
	require.Equal(t, "NeedsPerson", c.Reason)
	require.Contains(t, c.Message, "a person must look")
	require.Contains(t, c.Message, inc)
	require.Equal(t, int64(1), f.gauge("gpu.remediation.nodes"))

	// More crashes: recorded, never acted on.
	for i := int64(4); i <= 6; i++ {
		f.step(time.Minute)
		f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: i, 31: 1}})
	}
	require.Empty(t, f.getNode(node).Annotations[nodeagent.ResetRequest], "no second reset")
	require.Empty(t, f.r.plans)

	// A person removes the taint: the GPU is theirs again, and a new fault
	// is acted on.
	n = f.getNode(node)
	var kept []corev1.Taint
	for _, tn := range n.Spec.Taints {
		if tn.Key != kube.TaintKey(gpu) {
			kept = append(kept, tn)
		}
	}
	n.Spec.Taints = kept
	_, err := f.cs.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{})
	require.NoError(t, err)
	f.step(time.Second)
	require.Equal(t, []string{"::" + reasonPerson}, reasons(f.tick()))
	f.step(time.Minute)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 6, 31: 1, 79: 1}})))
}

// A burst of XID lines from one fault, even when a scrape splits it, is one
// incident: one decision, and it counts once towards escalation.
func TestBurstSplitByAScrapeIsOneIncident(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.remediator(testConfig(), nil)
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"xid_13:restart_app:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 10}})))
	f.step(10 * time.Second)
	require.Empty(t, f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 16}}), "the rest of the burst")
	f.step(time.Minute)
	require.Equal(t, []string{"xid_13:restart_app:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 17}})),
		"a second crash minutes later is a second incident, not yet an escalation")
	require.Len(t, f.events(node), 2)
}

// twoReplicas makes a leader and a standby on one Lease, each fed the same
// evidence, as the shipped topology feeds both.
func twoReplicas(t *testing.T, f *fixture, cfg *Config) (leader, standby *remediator) {
	t.Helper()
	_, err := f.cs.CoordinationV1().Leases(f.ns).Create(context.Background(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: cfg.LeaderElection.LeaseName, Namespace: f.ns},
	}, metav1.CreateOptions{})
	require.NoError(t, err)
	standby = f.remediator(cfg, nil)
	standby.leaseNS, standby.leading = f.ns, false
	leader = f.remediator(cfg, nil)
	leader.leaseNS, leader.leading = f.ns, true
	return leader, standby
}

// feedBoth sends one batch to both replicas and ticks both, as the agents'
// fault pipeline sends to both; it returns the leader's decisions.
func (f *fixture) feedBoth(standby *remediator, reports ...gpuReport) []string {
	f.t.Helper()
	leader := f.r
	f.r = standby
	require.Empty(f.t, f.feed(reports...), "the standby records nothing")
	f.r = leader
	return reasons(f.feed(reports...))
}

// The leader killed mid-drain: the standby takes the Lease, resumes the
// drain from the Lease's record without writing the Event again, and
// requests the reboot once the PodDisruptionBudget lets the last pod go.
func TestTakeoverResumesADrain(t *testing.T) {
	f := newFixture(t)
	node := f.node("bad", nil)
	other := f.node("other", nil)
	app := map[string]string{"app": "trainer"}
	f.pod("trainer-0", node, app, true)
	f.pod("trainer-1", node, app, true)
	f.pod("trainer-2", other, app, true)
	f.pdb("trainer", app, 2, 1)
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	leader, standby := twoReplicas(t, f, cfg)
	gpu := gpuID(node, 0)
	f.feedBoth(standby, gpuReport{node: node, gpu: gpu})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, f.feedBoth(standby, gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}}))
	require.True(t, f.podExists("trainer-1"), "the budget holds the second pod")
	require.Equal(t, "draining", leader.plans[0].state())

	// The leader dies; the standby takes over the Lease.
	f.step(20 * time.Second)
	standby.setLeading(true)
	f.r = standby
	f.tick()
	require.Len(t, standby.plans, 1, "resumed from the Lease")
	require.Equal(t, "draining", standby.plans[0].state())
	require.Equal(t, leader.plans[0].incident, standby.plans[0].incident)
	f.pod("trainer-3", other, app, true)
	f.waitPDB("trainer", 1)
	f.step(time.Second)
	f.tick()
	n := f.getNode(node)
	require.False(t, f.podExists("trainer-1"), "the new leader finished the drain")
	require.NotEmpty(t, n.Annotations[kube.RebootRequestAnnotation])
	require.Len(t, f.events(node), 1, "the Event is not written twice")
}

// The breaker's count survives a change of leader: a new leader counts the
// nodes its predecessor acted on.
func TestBreakerCountCarriesOverATakeover(t *testing.T) {
	f := newFixture(t)
	nodes := make([]string, 8)
	for i := range nodes {
		nodes[i] = f.node(string(rune('a'+i)), nil)
	}
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	cfg.Breaker = BreakerConfig{MaxShare: 0.25, MaxNodes: 10, Window: time.Hour} // 2 of 8
	cfg.Drain.MaxConcurrent = 8
	_, standby := twoReplicas(t, f, cfg)
	all := func(xid map[int]int64) []gpuReport {
		var out []gpuReport
		for i, n := range nodes {
			out = append(out, gpuReport{node: n, gpu: gpuID(n, 0), xids: map[int64]int64{79: xid[i]}})
		}
		return out
	}
	f.feedBoth(standby, all(nil)...)
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy", "xid_79:drain:policy"}, f.feedBoth(standby, all(map[int]int64{0: 1, 1: 1})...))

	f.step(20 * time.Second)
	standby.setLeading(true)
	f.r = standby
	f.tick()
	f.step(time.Second)
	ds := reasons(f.feed(all(map[int]int64{0: 1, 1: 1, 2: 1})...))
	require.Equal(t, []string{"xid_79:drain:" + reasonBreakerOpen}, ds, "the third node of eight opens the breaker")
	require.False(t, f.getNode(nodes[2]).Spec.Unschedulable)
}

// XID 154 with the recovery action read beside it: the action decides
// (a node reboot drains the node), the XID joins its incident; one
// decision. A bare XID 154, with no reading, is a GPU reset.
func TestRecoveryActionDecides(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", nil), f.node("b", nil)
	f.remediator(testConfig(), nil)
	ga, gb := gpuID(a, 0), gpuID(b, 0)
	f.feed(gpuReport{node: a, gpu: ga, withRecovery: true}, gpuReport{node: b, gpu: gb})
	f.step(time.Second)
	ds := f.feed(gpuReport{node: a, gpu: ga, withRecovery: true, recovery: 2, xids: map[int64]int64{154: 1}},
		gpuReport{node: b, gpu: gb, xids: map[int64]int64{154: 1}})
	require.Equal(t, []string{"recovery_node_reboot:drain:policy", "xid_154:reset_gpu:policy"}, reasons(ds))
	require.Equal(t, "RecoveryAction", condition(f.getNode(a)).Reason)
	require.True(t, f.getNode(a).Spec.Unschedulable)
	require.False(t, f.getNode(b).Spec.Unschedulable, "a reset does not cordon")
	// The action going back to none is no fault.
	f.step(time.Minute)
	require.Empty(t, f.feed(gpuReport{node: a, gpu: ga, withRecovery: true, recovery: 0, xids: map[int64]int64{154: 1}}))
}

// A GPU waiting for a person stays untouched across a change of leader:
// the new leader reads it from the Lease and does not act on its next
// fault.
func TestNeedsPersonSurvivesATakeover(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	cfg := testConfig()
	cfg.LeaderElection.Enabled = true
	cfg.Recovery.HealthyFor = 5 * time.Minute
	leader, standby := twoReplicas(t, f, cfg)
	gpu := gpuID(node, 0)
	f.feedBoth(standby, gpuReport{node: node, gpu: gpu, pod: "job"})
	for i := int64(1); i <= 3; i++ {
		f.step(time.Minute)
		f.feedBoth(standby, gpuReport{node: node, gpu: gpu, pod: "job", xids: map[int64]int64{13: i}})
	}
	inc := f.getNode(node).Annotations[nodeagent.ResetIncident]
	require.NotEmpty(t, inc)
	f.answerReset(node, gpu, inc, nodeagent.ResetOK, "")
	f.step(time.Second)
	f.feedBoth(standby, gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})
	f.step(time.Minute)
	require.Contains(t, f.feedBoth(standby, gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 4}}), "xid_13:reset_gpu:needs_person")
	require.True(t, leader.handled[gpu].needsPerson)

	f.step(20 * time.Second)
	standby.setLeading(true)
	f.r = standby
	f.tick()
	require.True(t, standby.handled[gpu] != nil && standby.handled[gpu].needsPerson, "read from the Lease")
	for i := int64(5); i <= 7; i++ {
		f.step(time.Minute)
		f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: i}})
	}
	require.Empty(t, f.getNode(node).Annotations[nodeagent.ResetRequest], "no new reset after the takeover")
	require.Empty(t, standby.plans)
}

// The driver still asking for a reset after one was done fails the health
// check, however quiet the GPU is otherwise.
func TestPendingRecoveryActionFailsTheCheck(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	cfg := testConfig()
	cfg.Recovery.HealthyFor = time.Minute
	f.remediator(cfg, nil)
	gpu := gpuID(node, 0)
	rep := func(action int64) gpuReport {
		return gpuReport{node: node, gpu: gpu, pod: "job", withRecovery: true, recovery: action}
	}
	f.feed(rep(0))
	f.step(time.Second)
	require.Equal(t, []string{"recovery_gpu_reset:reset_gpu:policy"}, reasons(f.feed(rep(1))))
	inc := f.getNode(node).Annotations[nodeagent.ResetIncident]
	f.answerReset(node, gpu, inc, nodeagent.ResetOK, "")
	f.step(time.Second)
	require.Equal(t, []string{"recovery_gpu_reset:reset_gpu:reset_ok"}, reasons(f.feed(rep(1))))
	f.step(61 * time.Second)
	require.Equal(t, []string{"recovery_gpu_reset:reset_gpu:needs_person"}, reasons(f.feed(rep(1))))
	require.Contains(t, condition(f.getNode(node)).Message, "still asks for a recovery action")
}
