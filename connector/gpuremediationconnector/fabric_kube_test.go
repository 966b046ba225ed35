package gpuremediationconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// feedNIC sends the ports' batch at the fixture's time and runs one tick.
func (f *fixture) feedNIC(ports ...nicReport) []offline.Decision {
	f.t.Helper()
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(f.now)
	for _, n := range ports {
		start, ok := f.starts[n.node+"/"+n.port]
		if !ok {
			start = ts
			f.starts[n.node+"/"+n.port] = ts
		}
		nicResource(n, start, ts).MoveTo(md.ResourceMetrics().AppendEmpty())
	}
	require.NoError(f.t, f.r.consume(context.Background(), md))
	f.r.tick(context.Background(), f.now)
	return append([]offline.Decision(nil), f.r.out...)
}

func networkCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == kube.NetworkConditionType {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// portDown reports the port up, then down a second later.
func (f *fixture) portDown(node, port string, rail []string) []offline.Decision {
	f.t.Helper()
	f.feedNIC(nicReport{node: node, port: port, up: 1, gpus: rail})
	f.step(time.Second)
	return f.feedNIC(nicReport{node: node, port: port, up: 0, gpus: rail})
}

// Against a real API server: in dry run (the default) a fabric fault is
// decided and nothing is written; live, the node gets GPUNetworkHealthy
// False and the port's NoSchedule taint, is not cordoned, and the incident
// names the node, the port and the GPUs of its rail.
func TestFabricFaultOnARealNode(t *testing.T) {
	f := newFixture(t)
	rail := []string{"0000:18:00.0", "0000:19:00.0"}
	cfg := testConfig()
	cfg.DryRun = createDefaultConfig().DryRun
	require.True(t, cfg.DryRun)
	cfg.Fabric.Enabled = true
	f.remediator(cfg, nil)
	a := f.node("a", nil)
	require.Equal(t, []string{"nic_down:taint:policy"}, reasons(f.portDown(a, "mlx5_3:1", rail)))
	require.True(t, f.r.out[0].DryRun)
	n := f.getNode(a)
	require.Empty(t, ownTaints(n))
	require.Nil(t, networkCondition(n))
	require.Empty(t, n.Annotations[kube.OwnerAnnotation])
	require.Empty(t, f.events(a))

	cfg = testConfig()
	cfg.Fabric.Enabled = true
	f.remediator(cfg, nil)
	b := f.node("b", nil)
	require.Equal(t, []string{"nic_down:taint:policy"}, reasons(f.portDown(b, "mlx5_3:1", rail)))
	n = f.getNode(b)
	c := networkCondition(n)
	require.NotNil(t, c)
	require.Equal(t, corev1.ConditionFalse, c.Status)
	require.Equal(t, "NICDown", c.Reason)
	require.Contains(t, c.Message, "mlx5_3:1")
	require.Contains(t, c.Message, "0000:18:00.0, 0000:19:00.0")
	require.Nil(t, condition(n), "GPUHealthy is the GPUs' own")
	require.True(t, hasTaint(n, "nic-mlx5_3-1"))
	require.Len(t, ownTaints(n), 1)
	require.Equal(t, "nic-down", ownTaints(n)[0].Value)
	require.False(t, n.Spec.Unschedulable, "fabric::action taint does not cordon")
	evs := f.events(b)
	require.Len(t, evs, 1)
	require.Equal(t, eventNetworkFault, evs[0].Reason)
	var decision bool
	for _, lr := range f.logRecords() {
		at := lr.Attributes()
		if str(at, "gpu.remediation.kind") != "decision" {
			continue
		}
		decision = true
		require.Equal(t, "mlx5_3:1", str(at, "hw.id"))
		require.Equal(t, "nic_down", str(at, "gpu.remediation.fault"))
		require.Contains(t, lr.Body().Str(), b)
		require.Contains(t, lr.Body().Str(), "rail: GPUs 0000:18:00.0, 0000:19:00.0")
		gpus, ok := at.Get(attrRailGPUs)
		require.True(t, ok)
		require.Equal(t, []any{"0000:18:00.0", "0000:19:00.0"}, gpus.Slice().AsRaw())
	}
	require.True(t, decision)
	require.Equal(t, int64(1), f.counter(stepTaint, reasonPolicy))
	require.Contains(t, f.r.breaker.Acted(f.now), b, "counted by the breaker")

	// fabric::action cordon: the taint and the cordon in one write; a
	// port below its peers' rate, judged over the batch.
	cfg = testConfig()
	cfg.Fabric.Enabled, cfg.Fabric.Action = true, fabricCordon
	f.remediator(cfg, nil)
	nc := f.node("c", nil)
	ports := []nicReport{
		{node: nc, port: "mlx5_0:1", up: 1, rate: 200 * gbps, gpus: rail},
		{node: nc, port: "mlx5_1:1", up: 1, rate: 400 * gbps}, {node: nc, port: "mlx5_2:1", up: 1, rate: 400 * gbps},
	}
	require.Equal(t, []string{"nic_degraded_speed:cordon:policy"}, reasons(f.feedNIC(ports...)))
	n = f.getNode(nc)
	require.True(t, hasTaint(n, "nic-mlx5_0-1"))
	require.True(t, n.Spec.Unschedulable)
	require.Equal(t, "NICDegradedSpeed", networkCondition(n).Reason)
}

// One budget: with circuit_breaker::max_nodes 1, a GPU fault on node A
// and then a fabric fault on node B: B is held back and the breaker opens.
func TestFabricFaultCountedWithGPUFaultsByTheBreaker(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", nil), f.node("b", nil)
	ga := gpuID(a, 0)
	cfg := testConfig()
	cfg.Fabric.Enabled = true
	cfg.Breaker = BreakerConfig{MaxNodes: 1, Window: time.Hour}
	f.remediator(cfg, nil)
	f.feed(gpuReport{node: a, gpu: ga})
	f.feedNIC(nicReport{node: b, port: "mlx5_0:1", up: 1, gpus: []string{"0000:18:00.0"}})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: a, gpu: ga, xids: map[int64]int64{79: 1}})))
	require.True(t, f.getNode(a).Spec.Unschedulable)
	f.step(time.Second)
	require.Equal(t, []string{"nic_down:taint:breaker_open"}, reasons(f.feedNIC(nicReport{node: b, port: "mlx5_0:1", up: 0, gpus: []string{"0000:18:00.0"}})))
	n := f.getNode(b)
	require.Empty(t, ownTaints(n))
	require.Nil(t, networkCondition(n))
	require.Equal(t, int64(1), f.gauge("gpu.remediation.breaker.state"))
	require.Equal(t, int64(1), f.counter("taint", reasonBreakerOpen))
	var held bool
	for _, lr := range f.logRecords() {
		if str(lr.Attributes(), "gpu.remediation.reason") == reasonBreakerOpen {
			held = strings.Contains(lr.Body().Str(), "circuit breaker open") && str(lr.Attributes(), "hw.id") == "mlx5_0:1"
		}
	}
	require.True(t, held)
}
