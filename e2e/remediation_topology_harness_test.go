//go:build e2e

package e2e

import (
	"bufio"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// ---- the stand-in Prometheus ----

// promStandIn takes the replicas' OTLP metrics, as Prometheus' OTLP
// receiver would, and keeps the last gpu.remediation.breaker.state of each
// service.instance.id.
type promStandIn struct {
	srv     *httptest.Server
	mu      sync.Mutex
	breaker map[string]int64
}

func newPromStandIn(t *testing.T) *promStandIn {
	p := &promStandIn{breaker: map[string]int64{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := io.Reader(r.Body)
		var err error
		if r.Header.Get("Content-Encoding") == "gzip" { // the exporter's default compression
			in, err = gzip.NewReader(r.Body)
		}
		var body []byte
		if err == nil {
			body, err = io.ReadAll(in)
		}
		req := pmetricotlp.NewExportRequest()
		if err == nil {
			err = req.UnmarshalProto(body)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rms := req.Metrics().ResourceMetrics()
		p.mu.Lock()
		for i := 0; i < rms.Len(); i++ {
			inst := ""
			if v, ok := rms.At(i).Resource().Attributes().Get("service.instance.id"); ok {
				inst = v.AsString()
			}
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); m.Name() == "gpu.remediation.breaker.state" && m.Gauge().DataPoints().Len() > 0 {
						p.breaker[inst] = m.Gauge().DataPoints().At(0).IntValue()
					}
				}
			}
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		answer, _ := pmetricotlp.NewExportResponse().MarshalProto()
		_, _ = w.Write(answer)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *promStandIn) breakerState(instance string) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	v, ok := p.breaker[instance]
	return v, ok
}

// ---- a scenario ----

type scenario struct {
	env      *topologyEnv
	t        *testing.T
	f        fleet
	replicas []*replica
	leader   *replica
	standby  *replica
	agents   []*collector
	prom     *promStandIn
}

// start creates the scenario's nodes and pods, starts the two replicas,
// waits for one to hold the Lease, then starts the agent (one process
// simulating the fleet's nodes): the simulated faults come 3 s later.
func (env *topologyEnv) start(t *testing.T, f fleet, setup func(sc *scenario)) *scenario {
	t.Helper()
	ctx := context.Background()
	sc := &scenario{env: env, t: t, f: f, prom: newPromStandIn(t)}
	// A new installation: no Lease, so no breaker left open by a scenario
	// before (the replicas of which are gone).
	err := env.cs.CoordinationV1().Leases(remediationNS).Delete(ctx, remediationLease, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	env.createFleet(t, f)
	if setup != nil {
		setup(sc)
	}

	dir := t.TempDir()
	for i := 0; i < 2; i++ {
		r := &replica{name: fmt.Sprintf("otelcol-gpu-remediation-%d", i), otlp: freePort(t), health: freePort(t)}
		r.log = filepath.Join(dir, r.name+"-records.json")
		path := remediationConfig(t, dir, env.kubeconfig, sc.prom.srv.URL+"/api/v1/otlp/v1/metrics", r)
		r.c = startEnv(t, []string{"POD_NAME=" + r.name}, "--config", path)
		sc.replicas = append(sc.replicas, r)
	}
	for _, r := range sc.replicas {
		sc.waitFor(20*time.Second, r.name+" healthy", func() bool {
			_, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/", r.health))
			return err == nil
		})
	}
	sc.leader = sc.waitLeader(30*time.Second, nil)
	for _, r := range sc.replicas {
		if r != sc.leader {
			sc.standby = r
		}
	}
	t.Logf("%s holds the Lease; %s stands by", sc.leader.name, sc.standby.name)
	sc.agents = append(sc.agents, startEnv(t, nil, "--config", agentConfig(t, t.TempDir(), f, sc.replicas)))
	return sc
}

// createFleet creates a fleet's namespace, nodes and pods, one pod per GPU,
// as the simulated fleet names them.
func (env *topologyEnv) createFleet(t *testing.T, f fleet) {
	t.Helper()
	ctx := context.Background()
	if _, err := env.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: f.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	yes, zero := true, int64(0)
	for h := 0; h < f.hosts; h++ {
		if _, err := env.cs.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{
			Name: f.node(h), Labels: map[string]string{"nvidia.com/gpu.present": "true"}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for g := 0; g < f.gpus; g++ {
			// As its controller would have made it, running and ready as a
			// kubelet would write it. A grace period of 0: no kubelet runs
			// to finish a graceful deletion, so an evicted pod goes at once.
			p, err := env.cs.CoreV1().Pods(f.ns).Create(ctx, &corev1.Pod{
				ObjectMeta: metav1.ObjectMeta{Name: f.pod(h, g), Labels: map[string]string{"app": "infer", "pod": f.pod(h, g)},
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "infer", UID: types.UID(f.ns + "-infer"), Controller: &yes}}},
				Spec: corev1.PodSpec{NodeName: f.node(h), TerminationGracePeriodSeconds: &zero,
					Containers: []corev1.Container{{Name: "main", Image: "example.com/infer:1"}}},
			}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Status.Phase = corev1.PodRunning
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
			if _, err := env.cs.CoreV1().Pods(f.ns).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// waitFor polls cond every 200 ms, failing the test after within; the
// processes must stay alive meanwhile.
func (sc *scenario) waitFor(within time.Duration, what string, cond func() bool) {
	sc.t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		for _, c := range sc.processes() {
			if !c.alive() {
				sc.t.Fatalf("waiting for %s: a process exited:\n%s", what, c.logs.String())
			}
		}
		if time.Now().After(deadline) {
			sc.t.Fatalf("%s: not within %v", what, within)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (sc *scenario) processes() []*collector {
	var out []*collector
	for _, r := range sc.replicas {
		if !r.killed {
			out = append(out, r.c)
		}
	}
	out = append(out, sc.agents...)
	return out
}

// waitLeader waits for a replica other than not to hold the Lease.
func (sc *scenario) waitLeader(within time.Duration, not *replica) *replica {
	sc.t.Helper()
	var leader *replica
	sc.waitFor(within, "holder of the Lease", func() bool {
		l, err := sc.env.cs.CoordinationV1().Leases(remediationNS).Get(context.Background(), remediationLease, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil {
			return false
		}
		for _, r := range sc.replicas {
			if r.name == *l.Spec.HolderIdentity && r != not {
				leader = r
				return true
			}
		}
		return false
	})
	return leader
}

// record is one log record of the connector: a decision or an action.
type record struct {
	kind, node, gpu, fault, action, reason string
	dry                                    bool
	body                                   string
}

func (r record) String() string {
	return fmt.Sprintf("%s %s %s %s %s %s dry_run=%v: %s", r.kind, r.node, r.gpu, r.fault, r.action, r.reason, r.dry, r.body)
}

// records reads a replica's decision and action records so far.
func (r *replica) records(t *testing.T) []record {
	t.Helper()
	f, err := os.Open(r.log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		ld, err := (&plog.JSONUnmarshaler{}).UnmarshalLogs(sc.Bytes())
		if err != nil {
			continue // a line still being written
		}
		rls := ld.ResourceLogs()
		for i := 0; i < rls.Len(); i++ {
			nodeName, _ := rls.At(i).Resource().Attributes().Get("k8s.node.name")
			sls := rls.At(i).ScopeLogs()
			for j := 0; j < sls.Len(); j++ {
				lrs := sls.At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					a := lrs.At(k).Attributes()
					get := func(key string) string {
						if v, ok := a.Get(key); ok {
							return v.AsString()
						}
						return ""
					}
					dry := false
					if v, ok := a.Get("gpu.remediation.dry_run"); ok {
						dry = v.Bool()
					}
					out = append(out, record{
						kind: get("gpu.remediation.kind"), node: nodeName.AsString(), gpu: get("hw.id"),
						fault: get("gpu.remediation.fault"), action: get("gpu.remediation.action"),
						reason: get("gpu.remediation.reason"), dry: dry, body: lrs.At(k).Body().AsString(),
					})
				}
			}
		}
	}
	return out
}

func filterRecords(rs []record, keep func(record) bool) []record {
	var out []record
	for _, r := range rs {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

func (sc *scenario) getNode(name string) *corev1.Node {
	sc.t.Helper()
	n, err := sc.env.cs.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		sc.t.Fatal(err)
	}
	return n
}

func ownTaints(n *corev1.Node) []string {
	var out []string
	for _, t := range n.Spec.Taints {
		if strings.HasPrefix(t.Key, taintPrefix) {
			out = append(out, t.Key+"="+t.Value+":"+string(t.Effect))
		}
	}
	return out
}

func (sc *scenario) events(node string) []corev1.Event {
	sc.t.Helper()
	list, err := sc.env.cs.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + node})
	if err != nil {
		sc.t.Fatal(err)
	}
	return list.Items
}

// podGone says whether a pod of the scenario's fleet was evicted: deleted,
// or being deleted.
func (sc *scenario) podGone(h, g int) bool {
	sc.t.Helper()
	return sc.podGoneIn(sc.f, h, g)
}

func (sc *scenario) podGoneIn(f fleet, h, g int) bool {
	sc.t.Helper()
	p, err := sc.env.cs.CoreV1().Pods(f.ns).Get(context.Background(), f.pod(h, g), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true
	}
	if err != nil {
		sc.t.Fatal(err)
	}
	return p.DeletionTimestamp != nil
}

// followerWroteNothing: the standby recorded no action and decided to act
// on nothing (at most that another replica acts: not_leader).
func (sc *scenario) followerWroteNothing(standby *replica) {
	sc.t.Helper()
	rs := standby.records(sc.t)
	if w := filterRecords(rs, func(r record) bool { return r.kind == "action" }); len(w) > 0 {
		sc.t.Errorf("the standby %s acted: %v", standby.name, w)
	}
	if d := filterRecords(rs, func(r record) bool { return r.kind == "decision" && r.reason != "not_leader" }); len(d) > 0 {
		sc.t.Errorf("the standby %s decided: %v", standby.name, d)
	}
}
