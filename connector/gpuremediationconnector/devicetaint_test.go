package gpuremediationconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	resourcev1 "k8s.io/api/resource/v1"
	resourcev1alpha3 "k8s.io/api/resource/v1alpha3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// draDeviceTaintFlags serve DeviceTaintRules on the tests' kube-apiserver
// (v1.35): resource.k8s.io/v1alpha3 is off by default, and its
// DeviceTaintRules need DRADeviceTaints; DRADeviceTaintRules (new in 1.35,
// needing DRADeviceTaints) is what the scheduler and the eviction
// controller need to honour the rules, turned on as a cluster would.
var draDeviceTaintFlags = []string{
	"--feature-gates=DRADeviceTaints=true,DRADeviceTaintRules=true",
	"--runtime-config=resource.k8s.io/v1alpha3=true",
}

const nvidiaDriver = "gpu.nvidia.com"

// withSteps is a remediator for reading the steps a configuration plans.
func withSteps(t *testing.T, cfg *Config) *remediator {
	t.Helper()
	r, err := newRemediator(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	return r
}

// slice publishes devices of NVIDIA's DRA driver on node, as the driver
// does: one pool per node, each device with its uuid attribute (and a MIG
// instance with its parent's parentUUID).
func (f *fixture) slice(node string, devices map[string]map[string]string) {
	f.t.Helper()
	rs := &resourcev1.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: node + "-" + nvidiaDriver},
		Spec: resourcev1.ResourceSliceSpec{
			Driver:   nvidiaDriver,
			Pool:     resourcev1.ResourcePool{Name: node, Generation: 1, ResourceSliceCount: 1},
			NodeName: ptr.To(node),
		},
	}
	for name, attrs := range devices {
		d := resourcev1.Device{Name: name, Attributes: map[resourcev1.QualifiedName]resourcev1.DeviceAttribute{}}
		for k, v := range attrs {
			d.Attributes[resourcev1.QualifiedName(k)] = resourcev1.DeviceAttribute{StringValue: ptr.To(v)}
		}
		rs.Spec.Devices = append(rs.Spec.Devices, d)
	}
	_, err := f.cs.ResourceV1().ResourceSlices().Create(context.Background(), rs, metav1.CreateOptions{})
	require.NoError(f.t, err)
}

// rules returns the DeviceTaintRules selecting a device of node's pool.
func (f *fixture) rules(node string) map[string]resourcev1alpha3.DeviceTaintRule {
	f.t.Helper()
	list, err := f.cs.ResourceV1alpha3().DeviceTaintRules().List(context.Background(), metav1.ListOptions{})
	require.NoError(f.t, err)
	out := map[string]resourcev1alpha3.DeviceTaintRule{}
	for _, r := range list.Items {
		if sel := r.Spec.DeviceSelector; sel != nil && sel.Pool != nil && *sel.Pool == node {
			out[*sel.Device] = r
		}
	}
	return out
}

func deviceTaintConfig() *Config {
	cfg := testConfig()
	cfg.Actions.DeviceTaint = true
	cfg.Recovery.HealthyFor = time.Minute
	return cfg
}

// An XID 79 on one of a node's two GPUs: a DeviceTaintRule with effect
// NoSchedule for that GPU's device and its MIG instance, nothing for the
// other GPU; the node's condition says GPUHealthy=False; the rule is
// written once however often the step runs; the node's reboot and a clean
// health check remove it.
func TestDeviceTaintJustTheFaultyGPU(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	bad, good := gpuID(node, 0), gpuID(node, 1)
	f.slice(node, map[string]map[string]string{
		"gpu-0":            {"type": "gpu", "uuid": bad},
		"gpu-0-mig-1g10gb": {"type": "mig", "uuid": "MIG-" + bad, "parentUUID": bad},
		"gpu-1":            {"type": "gpu", "uuid": good},
	})
	f.setBootID(node, "boot-1")
	f.remediator(deviceTaintConfig(), nil)
	f.feed(gpuReport{node: node, gpu: bad}, gpuReport{node: node, gpu: good})
	f.step(time.Second)
	ds := f.feed(gpuReport{node: node, gpu: bad, xids: map[int64]int64{79: 1}}, gpuReport{node: node, gpu: good})
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(ds))

	rules := f.rules(node)
	require.Len(t, rules, 2, "the GPU and its MIG instance; not the other GPU")
	require.NotContains(t, rules, "gpu-1")
	for _, dev := range []string{"gpu-0", "gpu-0-mig-1g10gb"} {
		r, ok := rules[dev]
		require.True(t, ok, dev)
		require.Equal(t, kube.DeviceTaintRuleName(bad, kube.Device{Pool: node, Name: dev}), r.Name, "named after the GPU and the device")
		require.Equal(t, nvidiaDriver, *r.Spec.DeviceSelector.Driver)
		require.Equal(t, resourcev1alpha3.DeviceTaint{Key: kube.DeviceTaintKey, Value: "xid-79", Effect: resourcev1alpha3.DeviceTaintEffectNoSchedule, TimeAdded: r.Spec.Taint.TimeAdded}, r.Spec.Taint)
		require.NotNil(t, r.Spec.Taint.TimeAdded, "the API server stamps the taint")
		require.Equal(t, bad, r.Labels[kube.DeviceTaintGPULabel])
		require.Equal(t, ds[0].Incident, r.Annotations[kube.IncidentAnnotation])
	}
	n := f.getNode(node)
	c := condition(n)
	require.NotNil(t, c, "GPUHealthy condition")
	require.Equal(t, "False", string(c.Status))
	require.Equal(t, "XID79", c.Reason)
	require.Contains(t, c.Message, bad)
	require.True(t, hasTaint(n, bad), "a drain taints and cordons the node too")
	require.True(t, n.Spec.Unschedulable)
	require.Equal(t, int64(1), f.counter(stepDeviceTaint, reasonPolicy))
	var detail string
	for _, lr := range f.logRecords() {
		if v, _ := lr.Attributes().Get("gpu.remediation.action"); v.Str() == stepDeviceTaint {
			detail = lr.Body().Str()
		}
	}
	require.Contains(t, detail, rules["gpu-0"].Name)

	// Written again (a retry, a new leader): the same rules, no second set.
	names, err := f.r.api.TaintDevices(context.Background(), nvidiaDriver, node, bad, "xid-79", ds[0].Incident)
	require.NoError(t, err)
	require.Len(t, names, 2)
	require.Len(t, f.rules(node), 2)

	// The reboot, then a clean health check: the rules go with the rest.
	f.setBootID(node, "boot-2")
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:rebooted"}, reasons(f.feed(gpuReport{node: node, gpu: bad, xids: map[int64]int64{79: 1}}, gpuReport{node: node, gpu: good})))
	require.Len(t, f.rules(node), 2, "kept while the GPU is checked")
	f.step(61 * time.Second)
	require.Equal(t, []string{"xid_79:uncordon:healthy"}, reasons(f.feed(gpuReport{node: node, gpu: bad, xids: map[int64]int64{79: 1}}, gpuReport{node: node, gpu: good})))
	require.Empty(t, f.rules(node))
	require.Equal(t, "True", string(condition(f.getNode(node)).Status))
}

// Dry run: the rule it would write is named in the action's record and
// counted, and nothing is written.
func TestDeviceTaintDryRunWritesNothing(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	gpu := gpuID(node, 0)
	f.slice(node, map[string]map[string]string{"gpu-0": {"uuid": gpu}})
	cfg := deviceTaintConfig()
	cfg.DryRun = true
	f.remediator(cfg, nil)
	f.feed(gpuReport{node: node, gpu: gpu})
	rv := f.getNode(node).ResourceVersion
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}})))
	require.Empty(t, f.rules(node))
	require.Equal(t, rv, f.getNode(node).ResourceVersion)
	require.Equal(t, int64(1), f.counter(stepDeviceTaint, reasonDryRun))
	want := kube.DeviceTaintRuleName(gpu, kube.Device{Pool: node, Name: "gpu-0"})
	found := false
	for _, lr := range f.logRecords() {
		if v, _ := lr.Attributes().Get("gpu.remediation.action"); v.Str() == stepDeviceTaint {
			found = strings.Contains(lr.Body().Str(), "would do") && strings.Contains(lr.Body().Str(), want)
		}
	}
	require.True(t, found, "the dry run names the rule it would write")
}

// The breaker counts a node whose device is tainted as it counts every
// node acted on: past circuit_breaker::max_nodes, no rule is written.
func TestDeviceTaintCountedByTheBreaker(t *testing.T) {
	f := newFixture(t)
	a, b := f.node("a", nil), f.node("b", nil)
	ga, gb := gpuID(a, 0), gpuID(b, 0)
	f.slice(a, map[string]map[string]string{"gpu-0": {"uuid": ga}})
	f.slice(b, map[string]map[string]string{"gpu-0": {"uuid": gb}})
	cfg := deviceTaintConfig()
	cfg.Actions.Taint, cfg.Actions.Cordon, cfg.Actions.Drain = false, false, false // the device's taint alone
	cfg.Breaker = BreakerConfig{MaxNodes: 1, Window: time.Hour}
	f.remediator(cfg, nil)
	f.feed(gpuReport{node: a, gpu: ga}, gpuReport{node: b, gpu: gb})
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.feed(gpuReport{node: a, gpu: ga, xids: map[int64]int64{79: 1}}, gpuReport{node: b, gpu: gb})))
	require.Len(t, f.rules(a), 1)
	require.Contains(t, f.r.breaker.Acted(f.now), a, "counted by the breaker")
	f.step(time.Second)
	require.Equal(t, []string{"xid_79:drain:breaker_open"}, reasons(f.feed(gpuReport{node: a, gpu: ga, xids: map[int64]int64{79: 1}}, gpuReport{node: b, gpu: gb, xids: map[int64]int64{79: 1}})))
	require.Empty(t, f.rules(b))
	require.Equal(t, int64(1), f.gauge("gpu.remediation.breaker.state"))
}

// A GPU reset with dra::instead_of_node_taint: the device is tainted and
// the node is not, so its other GPUs keep taking new pods; the GPU's pod is
// evicted and the GPU reset; once healthy, the rule goes. A GPU that is no
// DRA device still gets the node's taint, and no device_taint is counted.
func TestDeviceTaintInsteadOfNodeTaintForAReset(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("job", node, nil, true)
	f.pod("other", node, nil, true)
	gpu, plain := gpuID(node, 0), gpuID(node, 1)
	f.slice(node, map[string]map[string]string{"gpu-0": {"uuid": gpu}})
	cfg := deviceTaintConfig()
	cfg.DRA.InsteadOfNodeTaint = true
	f.remediator(cfg, nil)
	inc := escalateToReset(t, f, node, gpu)
	n := f.getNode(node)
	require.Len(t, f.rules(node), 1)
	require.False(t, hasTaint(n, gpu), "no node taint: the device's does its work")
	require.False(t, n.Spec.Unschedulable)
	require.False(t, f.podExists("job"), "the GPU's pod is evicted before the reset")
	require.True(t, f.podExists("other"))
	require.Equal(t, int64(1), f.counter(stepDeviceTaint, reasonEscalated))
	require.Equal(t, int64(0), f.counter(stepTaint, reasonEscalated))

	f.answerReset(node, gpu, inc, nodeagent.ResetOK, "reset in 3 s")
	f.step(time.Second)
	require.Equal(t, []string{"xid_13:reset_gpu:reset_ok"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})))
	f.step(61 * time.Second)
	require.Equal(t, []string{"xid_13:uncordon:healthy"}, reasons(f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{13: 3}})))
	require.Empty(t, f.rules(node))

	// The other GPU publishes no device: the node's taint, as without DRA.
	f.feed(gpuReport{node: node, gpu: plain})
	f.step(time.Second)
	f.feed(gpuReport{node: node, gpu: plain, xids: map[int64]int64{79: 1}})
	require.True(t, hasTaint(f.getNode(node), plain))
	require.Empty(t, f.rules(node))
	require.Equal(t, int64(0), f.counter(stepDeviceTaint, reasonPolicy), "nothing written, nothing counted")
	require.Equal(t, int64(1), f.counter(stepTaint, reasonPolicy))
}

// The stand-in API publishes no DRA devices.
func (a *recordingAPI) GPUDevices(context.Context, string, string, string) ([]kube.Device, error) {
	return nil, nil
}

func (a *recordingAPI) TaintDevices(context.Context, string, string, string, string, string) ([]string, error) {
	return nil, a.call("device_taint")
}

func (a *recordingAPI) DeviceTaintRules(context.Context, string) ([]string, error) { return nil, nil }

func (a *recordingAPI) UntaintDevices(context.Context, string) ([]string, error) { return nil, nil }
