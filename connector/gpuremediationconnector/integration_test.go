package gpuremediationconnector

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

var (
	apiServer    *kubetest.Server
	apiServerErr error
)

// runWithAPIServer starts one kube-apiserver with etcd and the
// kube-controller-manager's disruption controller for the package's tests,
// stops them after, checks that no goroutine leaked, and exits.
func runWithAPIServer(m *testing.M) {
	if kubetest.Fuzzing() {
		apiServerErr = errors.New("no kube-apiserver while fuzzing")
		os.Exit(m.Run())
	}
	apiBin, etcdBin, err := kubetest.Binaries("../..")
	var kcm string
	if err == nil {
		kcm, err = kubetest.ControllerManagerBinary("../..")
	}
	if err == nil {
		apiServer, err = kubetest.Start(apiBin, etcdBin, draDeviceTaintFlags...)
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
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func server(t *testing.T) *kubetest.Server {
	t.Helper()
	return kubetest.Require(t, apiServer, apiServerErr)
}

var seq atomic.Int32

// fixture is one test's cluster objects and remediator.
type fixture struct {
	t      *testing.T
	cs     kubernetes.Interface
	ns     string // namespace of the test's pods; also the node names' prefix
	r      *remediator
	logs   *consumertest.LogsSink
	ms     *consumertest.MetricsSink
	now    time.Time
	starts map[string]pcommon.Timestamp
}

func newFixture(t *testing.T) *fixture {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ns := fmt.Sprintf("t%d-%d", time.Now().UnixNano()%1e6, seq.Add(1))
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return &fixture{t: t, cs: cs, ns: ns, now: time.Now().Truncate(time.Second), starts: map[string]pcommon.Timestamp{}}
}

// testConfig: live (not dry run), by hand (no ticker), pods deleted at once
// on eviction (no kubelet runs to finish a graceful deletion).
func testConfig() *Config {
	cfg := createDefaultConfig()
	cfg.DryRun = false
	cfg.Interval = time.Second
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: "unused"}
	cfg.LeaderElection.Enabled = false
	cfg.Drain.GracePeriod = 0
	cfg.Drain.Force = true // the fixture's pods declare no controller, as kubectl drain --force allows
	cfg.Breaker = BreakerConfig{MaxNodes: 10, Window: time.Hour}
	return cfg
}

// remediator makes the fixture's remediator on rc (the admin by default).
func (f *fixture) remediator(cfg *Config, rc *rest.Config) *remediator {
	f.t.Helper()
	require.NoError(f.t, cfg.Validate())
	if rc == nil {
		rc = server(f.t).Config(kubetest.AdminToken)
	}
	set := connectortest.NewNopSettings(metadata.Type)
	set.ID = component.NewIDWithName(metadata.Type, f.ns)
	r, err := newRemediator(cfg, set)
	require.NoError(f.t, err)
	c, err := kube.New(rc, 5*time.Second)
	require.NoError(f.t, err)
	r.api = c
	r.now = func() time.Time { return f.now }
	f.logs, f.ms = new(consumertest.LogsSink), new(consumertest.MetricsSink)
	r.logsOut, r.metricsOut = f.logs, f.ms
	f.r = r
	return r
}

func (f *fixture) node(name string, labels map[string]string) string {
	f.t.Helper()
	name = f.ns + "-" + name
	_, err := f.cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	return name
}

// pod creates a pod on a node and, with ready, writes it Running and Ready
// as a kubelet would, so that the disruption controller counts it healthy.
func (f *fixture) pod(name, node string, labels map[string]string, ready bool, owners ...metav1.OwnerReference) { //nolint:unparam // each call says the pod is ready, which the eviction tests depend on
	f.t.Helper()
	ctx := context.Background()
	p, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns, Labels: labels, OwnerReferences: owners},
		Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "example.com/job:1"}}},
	}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	if ready {
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		_, err = f.cs.CoreV1().Pods(f.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{})
		require.NoError(f.t, err)
	}
}

func (f *fixture) pdb(name string, selector map[string]string, minAvailable int, allowed int32) {
	f.t.Helper()
	m := intstr.FromInt32(int32(minAvailable))
	_, err := f.cs.PolicyV1().PodDisruptionBudgets(f.ns).Create(context.Background(), &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: f.ns},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &m, Selector: &metav1.LabelSelector{MatchLabels: selector}},
	}, metav1.CreateOptions{})
	require.NoError(f.t, err)
	f.waitPDB(name, allowed)
}

// waitPDB waits for the disruption controller to compute the budget.
func (f *fixture) waitPDB(name string, allowed int32) {
	f.t.Helper()
	require.Eventually(f.t, func() bool {
		p, err := f.cs.PolicyV1().PodDisruptionBudgets(f.ns).Get(context.Background(), name, metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.DisruptionsAllowed == allowed
	}, 30*time.Second, 100*time.Millisecond, "the disruption controller never allowed %d disruptions for %s", allowed, name)
}

func (f *fixture) getNode(name string) *corev1.Node {
	f.t.Helper()
	n, err := f.cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	require.NoError(f.t, err)
	return n
}

func (f *fixture) podExists(name string) bool {
	f.t.Helper()
	_, err := f.cs.CoreV1().Pods(f.ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false
	}
	require.NoError(f.t, err)
	return true
}

func (f *fixture) events(node string) []corev1.Event {
	f.t.Helper()
	list, err := f.cs.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + node})
	require.NoError(f.t, err)
	return list.Items
}

func condition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == kube.ConditionType {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// ownTaints lists the taints this component writes (the API server adds
// node.kubernetes.io/not-ready to a new node itself).
func ownTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if strings.HasPrefix(t.Key, kube.TaintPrefix) {
			out = append(out, t)
		}
	}
	return out
}

func hasTaint(n *corev1.Node, gpu string) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == kube.TaintKey(gpu) && t.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

// gpuReport is one GPU's metrics in one batch.
type gpuReport struct {
	node, gpu, pod string
	xids           map[int64]int64 // code → cumulative count
	ecc            int64           // uncorrected ECC errors, cumulative
	remap          int64           // row-remap failure, 0 or 1
	// recovery is the driver's recovery action, reported when withRecovery
	recovery     int64
	withRecovery bool
}

// feed sends one batch at the fixture's time and runs one tick.
func (f *fixture) feed(reports ...gpuReport) []offline.Decision {
	f.t.Helper()
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(f.now)
	for _, g := range reports {
		rm := md.ResourceMetrics().AppendEmpty()
		a := rm.Resource().Attributes()
		a.PutStr("k8s.node.name", g.node)
		a.PutStr("hw.id", g.gpu)
		if g.pod != "" {
			a.PutStr("k8s.pod.name", g.pod)
			a.PutStr("k8s.namespace.name", f.ns)
		}
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		start, ok := f.starts[g.gpu]
		if !ok {
			start = ts
			f.starts[g.gpu] = ts
		}
		ecc := ms.AppendEmpty()
		ecc.SetName(metricECC)
		sum := ecc.SetEmptySum()
		sum.SetIsMonotonic(true)
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(g.ecc)
		dp.Attributes().PutStr(attrErrorType, eccUncorrectedV)
		remap := ms.AppendEmpty()
		remap.SetName(metricRowRemap)
		rdp := remap.SetEmptyGauge().DataPoints().AppendEmpty()
		rdp.SetTimestamp(ts)
		rdp.SetIntValue(g.remap)
		if g.withRecovery {
			ra := ms.AppendEmpty()
			ra.SetName(metricRecovery)
			adp := ra.SetEmptyGauge().DataPoints().AppendEmpty()
			adp.SetTimestamp(ts)
			adp.SetIntValue(g.recovery)
		}
		if len(g.xids) > 0 {
			x := ms.AppendEmpty()
			x.SetName(metricXID)
			xs := x.SetEmptySum()
			xs.SetIsMonotonic(true)
			for code, n := range g.xids {
				dp := xs.DataPoints().AppendEmpty()
				dp.SetStartTimestamp(start)
				dp.SetTimestamp(ts)
				dp.SetIntValue(n)
				dp.Attributes().PutInt(attrXID, code)
			}
		}
	}
	require.NoError(f.t, f.r.consume(context.Background(), md))
	f.r.tick(context.Background(), f.now)
	return append([]offline.Decision(nil), f.r.out...)
}

// setBootID sets the node's boot ID, as the kubelet reports it.
func (f *fixture) setBootID(node, id string) {
	f.t.Helper()
	n := f.getNode(node)
	n.Status.NodeInfo.BootID = id
	_, err := f.cs.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
	require.NoError(f.t, err)
}

// step moves the fixture's clock on.
func (f *fixture) step(d time.Duration) { f.now = f.now.Add(d) }

func (f *fixture) tick() []offline.Decision {
	f.r.tick(context.Background(), f.now)
	return append([]offline.Decision(nil), f.r.out...)
}

// counter reads gpu.remediation.actions{action, reason} from the last
// metrics emitted.
func (f *fixture) counter(action, reason string) int64 {
	f.t.Helper()
	all := f.ms.AllMetrics()
	require.NotEmpty(f.t, all)
	ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		if m.Name() != "gpu.remediation.actions" {
			continue
		}
		dps := m.Sum().DataPoints()
		for j := 0; j < dps.Len(); j++ {
			a := dps.At(j).Attributes()
			if str(a, "gpu.remediation.action") == action && str(a, "gpu.remediation.reason") == reason {
				return dps.At(j).IntValue()
			}
		}
	}
	return 0
}

func (f *fixture) gauge(name string) int64 {
	f.t.Helper()
	all := f.ms.AllMetrics()
	require.NotEmpty(f.t, all)
	ms := all[len(all)-1].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	for i := 0; i < ms.Len(); i++ {
		if ms.At(i).Name() == name {
			return ms.At(i).Gauge().DataPoints().At(0).IntValue()
		}
	}
	f.t.Fatalf("no metric %s", name)
	return 0
}

// logRecords returns the log records emitted, each as action/reason.
func (f *fixture) logRecords() []plog.LogRecord {
	var out []plog.LogRecord
	for _, ld := range f.logs.AllLogs() {
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			lrs := rls.At(i).ScopeLogs().At(0).LogRecords()
			for j := 0; j < lrs.Len(); j++ {
				out = append(out, lrs.At(j))
			}
		}
	}
	return out
}

func reasons(ds []offline.Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Fault+":"+d.Action+":"+d.Reason)
	}
	return out
}

func gpuID(node string, i int) string {
	return fmt.Sprintf("GPU-%s-%d", strings.TrimPrefix(node, "t"), i)
}
