//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// The names the shipped manifests give (distributions/otelcol-gpu/kubernetes).
const (
	remediationNS    = "observability"
	remediationLease = "otelcol-gpu-remediation" // the connector's default lease_name
	remediationSA    = "otelcol-gpu-remediation"
	rebootAnnotation = "gpu-remediation.otelcol-gpu.io/reboot"
	resetAnnotation  = "gpu-remediation.otelcol-gpu.io/reset-gpu"
	ownerAnnotation  = "gpu-remediation.otelcol-gpu.io/owner"
	breakerAnno      = "gpu-remediation.otelcol-gpu.io/breaker"
	taintPrefix      = "gpu-remediation.otelcol-gpu.io/"
)

// TestE2ERemediationTopology runs the remediation as shipped
// (distributions/otelcol-gpu/kubernetes/remediation.yaml: two replicas, one
// holding the Lease, both fed every fault) against a real kube-apiserver,
// with etcd and the kube-controller-manager's disruption controller (so
// that a PodDisruptionBudget really holds a drain), as two real otelcol-gpu
// processes, fed by a real agent process running the shipped agent's
// metrics/faults pipeline (distributions/otelcol-gpu/kubernetes/agent.yaml:
// filter/faults, one otlp_grpc exporter per replica, each queued on disk).
//
// The faults are injected by the dcgm receiver's simulated backend, which
// raises an XID on a chosen GPU of a chosen host at a chosen time after the
// fleet starts (receivers::dcgm::simulated::faults), in the receiver's own
// metric shapes: nothing is hand-made between the receiver and the
// replicas. One agent process simulates every node of the scenario (each
// simulated host is one Kubernetes node; its GPUs' metrics carry its name
// in host.name, as a node's agent sets it): N agents would send the same
// metrics through the same pipeline, on a machine that has no cores for
// them.
//
// What differs from the shipped configurations is only what the test
// environment needs; remediationConfig and agentConfig list it, and fail if
// a key they change is no longer where they expect it.
func TestE2ERemediationTopology(t *testing.T) {
	apiBin, etcdBin, err := kubetest.Binaries("..")
	var kcm string
	if err == nil {
		kcm, err = kubetest.ControllerManagerBinary("..")
	}
	var s *kubetest.Server
	if err == nil {
		s, err = kubetest.Start(apiBin, etcdBin)
	}
	if err == nil {
		if err = s.StartDisruptionController(kcm); err != nil {
			s.Stop()
			s = nil
		}
	}
	s = kubetest.Require(t, s, err)
	t.Cleanup(s.Stop)
	env := newTopologyEnv(t, s)

	t.Run("each_fault_acted_on_once", env.exactlyOnce)
	t.Run("breaker_counts_the_cluster", env.breakerCountsCluster)
	// Needs the connector's warm standby: a new leader resumes the drain
	// its predecessor started and acts on what came while none led. A
	// connector whose follower only records not_leader fails it, saying so.
	t.Run("standby_finishes_the_drain", env.standbyFinishesDrain)
}

// topologyEnv is the cluster shared by the scenarios; each scenario has
// nodes of its own (their names start with the scenario's prefix) and
// starts with no Lease, as a new installation does.
type topologyEnv struct {
	s          *kubetest.Server
	cs         kubernetes.Interface
	kubeconfig string // the remediation's ServiceAccount
}

func newTopologyEnv(t *testing.T, s *kubetest.Server) *topologyEnv {
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ctx := context.Background()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: remediationNS}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The shipped RBAC, and nothing more: the replicas act as the
	// ServiceAccount (impersonated by the admin, as a pod's own token
	// would authenticate it), so every write below is one it may make.
	objs, err := kubetest.Decode(filepath.Join("..", "distributions", "otelcol-gpu", "kubernetes", "remediation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rbac := 0
	for _, obj := range objs {
		switch obj.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			if err := s.Create(obj, false); err != nil {
				t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
			rbac++
		}
	}
	if rbac != 5 {
		t.Fatalf("remediation.yaml has %d RBAC objects; want its ServiceAccount, ClusterRole, Role and their bindings", rbac)
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: remediation
  user: {token: %q, as: "system:serviceaccount:%s:%s"}
contexts:
- name: test
  context: {cluster: test, user: remediation}
current-context: test
`, s.URL, kubetest.AdminToken, remediationNS, remediationSA)
	if err := os.WriteFile(kc, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return &topologyEnv{s: s, cs: cs, kubeconfig: kc}
}

// ---- the scenarios ----

// exactlyOnce: XID 79 (drain) on two nodes and XID 62 (a GPU reset) on one
// GPU of a third, in a fleet of 12 nodes (the breaker allows a quarter: 3).
// Each fault reaches both replicas; the leader acts on each once, and on
// nothing else; the standby writes nothing. (That the standby has every
// fault too shows in standby_finishes_the_drain: it acts on one that only
// it received.)
func (env *topologyEnv) exactlyOnce(t *testing.T) {
	f := fleet{prefix: "once-", hosts: 12, gpus: 2, ns: "jobs-once",
		faults: []map[string]any{xid(79, 2, 0), xid(79, 7, 1), xid(62, 4, 1)}}
	sc := env.start(t, f, nil)
	drained := []int{2, 7}
	sc.waitFor(60*time.Second, "the reboot requests of the drained nodes and the reset request", func() bool {
		for _, h := range drained {
			if sc.getNode(f.node(h)).Annotations[rebootAnnotation] == "" {
				return false
			}
		}
		return sc.getNode(f.node(4)).Annotations[resetAnnotation] != ""
	})
	time.Sleep(3 * time.Second) // any second write, by either replica, would come within a few ticks

	for _, h := range drained {
		n := sc.getNode(f.node(h))
		if !n.Spec.Unschedulable {
			t.Errorf("%s: not cordoned", n.Name)
		}
		if taints := ownTaints(n); len(taints) != 1 || !strings.HasSuffix(taints[0], "=xid-79:NoSchedule") {
			t.Errorf("%s: taints %v; want the faulty GPU's, once", n.Name, taints)
		}
		if ev := sc.events(n.Name); len(ev) != 1 {
			t.Errorf("%s: %d Events; want 1 for its one fault", n.Name, len(ev))
		}
		for g := 0; g < f.gpus; g++ {
			if !sc.podGone(h, g) {
				t.Errorf("%s: pod %s not evicted by the drain", n.Name, f.pod(h, g))
			}
		}
	}
	reset := sc.getNode(f.node(4))
	if reset.Spec.Unschedulable {
		t.Errorf("%s: cordoned for a GPU reset", reset.Name)
	}
	if taints := ownTaints(reset); len(taints) != 1 || !strings.HasSuffix(taints[0], "=xid-62:NoSchedule") {
		t.Errorf("%s: taints %v; want the faulty GPU's, once", reset.Name, taints)
	}
	if ev := sc.events(reset.Name); len(ev) != 1 {
		t.Errorf("%s: %d Events; want 1", reset.Name, len(ev))
	}
	if !sc.podGone(4, 1) || sc.podGone(4, 0) {
		t.Errorf("%s: want only the faulty GPU's pod %s evicted (gone: %s %v, %s %v)", reset.Name, f.pod(4, 1),
			f.pod(4, 0), sc.podGone(4, 0), f.pod(4, 1), sc.podGone(4, 1))
	}
	for h := 0; h < f.hosts; h++ {
		if h == 2 || h == 4 || h == 7 {
			continue
		}
		n := sc.getNode(f.node(h))
		if n.Spec.Unschedulable || len(ownTaints(n)) > 0 || n.Annotations[ownerAnnotation] != "" || len(sc.events(n.Name)) > 0 {
			t.Errorf("%s has no fault but was written: unschedulable %v, taints %v, owner %q, %d Events",
				n.Name, n.Spec.Unschedulable, ownTaints(n), n.Annotations[ownerAnnotation], len(sc.events(n.Name)))
		}
	}

	// The leader decided each fault once, by policy, and took each step
	// once; the standby took every fault and wrote nothing.
	leader := sc.leader.records(t)
	decided := map[string]int{}
	for _, r := range filterRecords(leader, func(r record) bool { return r.kind == "decision" }) {
		decided[r.node+" "+r.fault+" "+r.reason]++
	}
	want := map[string]int{f.node(2) + " xid_79 policy": 1, f.node(7) + " xid_79 policy": 1, f.node(4) + " xid_62 policy": 1}
	for k, n := range want {
		if decided[k] != n {
			t.Errorf("the leader's decisions: %q %d times; want %d (all: %v)", k, decided[k], n, decided)
		}
	}
	steps := map[string]int{}
	for _, r := range filterRecords(leader, func(r record) bool { return r.kind == "action" }) {
		if r.dry {
			t.Errorf("the leader wrote in dry run: %v", r)
		}
		steps[r.node+" "+r.gpu+" "+r.fault+" "+r.action]++
	}
	for k, n := range steps {
		if n != 1 {
			t.Errorf("the leader took step %q %d times; want once", k, n)
		}
	}
	if len(steps) == 0 {
		t.Error("the leader recorded no action")
	}
	sc.followerWroteNothing(sc.standby)
}

// breakerCountsCluster: XID 79 on 6 of 10 nodes at once, each fault sent
// to both replicas. The breaker's share (0.25) is of the cluster's 10 GPU
// nodes, every one of which reports to the leader: 2 nodes are acted on,
// the other 4 stopped (breaker_open), and the breaker is recorded on the
// Lease. A leader that saw only the nodes routed to it (half of them, as
// the agents' routing by job gave each gateway replica) would have allowed
// one.
func (env *topologyEnv) breakerCountsCluster(t *testing.T) {
	f := fleet{prefix: "storm-", hosts: 10, gpus: 1, ns: "jobs-storm",
		faults: []map[string]any{{"kind": "xid", "xid": 79, "gpus": "0-5/0", "start": "3s"}}}
	sc := env.start(t, f, nil)
	sc.waitFor(60*time.Second, "all 6 faults decided by the leader", func() bool {
		return len(filterRecords(sc.leader.records(t), func(r record) bool {
			return r.kind == "decision" && (r.reason == "policy" || r.reason == "breaker_open")
		})) >= 6
	})
	sc.waitFor(20*time.Second, "the open breaker on the Lease", func() bool {
		l, err := env.cs.CoordinationV1().Leases(remediationNS).Get(context.Background(), remediationLease, metav1.GetOptions{})
		return err == nil && l.Annotations[breakerAnno] != ""
	})
	time.Sleep(3 * time.Second)

	var acted []string
	for h := 0; h < f.hosts; h++ {
		if n := sc.getNode(f.node(h)); n.Spec.Unschedulable || len(ownTaints(n)) > 0 {
			acted = append(acted, n.Name)
		}
	}
	if len(acted) != 2 {
		t.Errorf("nodes acted on: %v; want 2, a quarter of the cluster's 10 GPU nodes", acted)
	}
	leader := sc.leader.records(t)
	stopped := filterRecords(leader, func(r record) bool { return r.kind == "decision" && r.reason == "breaker_open" })
	policy := filterRecords(leader, func(r record) bool { return r.kind == "decision" && r.reason == "policy" })
	if len(stopped) != 4 || len(policy) != 2 {
		t.Errorf("the leader decided %d by policy and stopped %d (breaker_open); want 2 and 4:\n%v", len(policy), len(stopped), leader)
	}
	for _, r := range stopped {
		if !strings.Contains(r.body, "of 10 GPU nodes") {
			t.Errorf("a stopped decision does not count the cluster's 10 GPU nodes: %q", r.body)
		}
	}
	if len(stopped) > 0 {
		t.Logf("breaker: %s", stopped[0].body)
	}
	// In Prometheus each replica's series are its own (service.instance.id):
	// the leader's breaker is open, the standby's, which acts on nothing,
	// is not.
	sc.waitFor(10*time.Second, "the leader's breaker state 1 and the standby's 0 in Prometheus", func() bool {
		l, lok := sc.prom.breakerState(sc.leader.name)
		s, sok := sc.prom.breakerState(sc.standby.name)
		return lok && l == 1 && sok && s == 0
	})
	sc.followerWroteNothing(sc.standby)
}

// standbyFinishesDrain: XID 79 on a node whose one pod a
// PodDisruptionBudget holds, so the leader's drain waits; the leader is
// killed (SIGKILL: no Lease released, nothing flushed) mid-drain, and the
// budget is released. Until the Lease expires (15 s, as shipped) no replica
// leads; meanwhile another node's agent raises XID 79, which only the
// standby can receive. The standby takes the Lease, finishes the drain and
// the reboot request its predecessor started, and acts on the fault that
// came between: nothing is lost to the failover.
func (env *topologyEnv) standbyFinishesDrain(t *testing.T) {
	f := fleet{prefix: "takeover-", hosts: 8, gpus: 1, ns: "jobs-takeover",
		faults: []map[string]any{xid(79, 1, 0)}}
	// One more node, with an agent of its own started once the leader is
	// dead: its XID comes 1 s after that agent's first scrape. With it the
	// cluster has 9 GPU nodes, the breaker allows 2.
	late := fleet{prefix: "takeover-late-", hosts: 1, gpus: 1, ns: "jobs-takeover-late",
		faults: []map[string]any{xidAt(79, 0, 0, "1s")}}
	env.createFleet(t, late)
	held := f.pod(1, 0)
	ctx := context.Background()
	pdbs := env.cs.PolicyV1().PodDisruptionBudgets(f.ns)
	sc := env.start(t, f, func(sc *scenario) {
		one := intstr.FromInt32(1)
		if _, err := pdbs.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: "held"},
			Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"pod": held}}},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The disruption controller has counted the one healthy pod: no
		// disruption allowed.
		sc.waitFor(30*time.Second, "the budget computed", func() bool {
			p, err := pdbs.Get(ctx, "held", metav1.GetOptions{})
			return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.CurrentHealthy == 1 && p.Status.DisruptionsAllowed == 0
		})
	})
	node := f.node(1)
	sc.waitFor(60*time.Second, node+" cordoned by the leader", func() bool { return sc.getNode(node).Spec.Unschedulable })
	time.Sleep(3 * time.Second) // the drain tries, and waits on the budget
	n := sc.getNode(node)
	if sc.podGone(1, 0) || n.Annotations[rebootAnnotation] != "" {
		t.Fatalf("the budget did not hold the drain: pod gone %v, reboot request %q", sc.podGone(1, 0), n.Annotations[rebootAnnotation])
	}
	sc.followerWroteNothing(sc.standby)

	old := sc.leader
	old.c.kill9(t, old.name)
	old.killed = true
	killed := time.Now()
	t.Logf("killed %s mid-drain", old.name)
	sc.agents = append(sc.agents, startEnv(t, nil, "--config", agentConfig(t, t.TempDir(), late, sc.replicas)))
	lateStarted := time.Now()
	if err := pdbs.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	leader := sc.waitLeader(40*time.Second, old)
	took := time.Now()
	t.Logf("%s took the Lease %v after the kill", leader.name, took.Sub(killed).Round(100*time.Millisecond))
	// The late XID is raised 1 s after its agent's first scrape and sent
	// within a second: it must have come while no replica led, or this
	// scenario did not test the failover.
	if gap := took.Sub(lateStarted); gap < 6*time.Second {
		t.Fatalf("the standby took the Lease %v after the late agent started: too soon to be sure its fault came before", gap)
	}

	lateNode := late.node(0)
	deadline := time.Now().Add(30 * time.Second)
	done := func() bool {
		return sc.podGone(1, 0) && sc.getNode(node).Annotations[rebootAnnotation] != "" && sc.getNode(lateNode).Annotations[rebootAnnotation] != ""
	}
	for time.Now().Before(deadline) && !done() {
		if !leader.c.alive() {
			t.Fatalf("%s exited:\n%s", leader.name, leader.c.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	n = sc.getNode(node)
	if !sc.podGone(1, 0) || n.Annotations[rebootAnnotation] == "" {
		t.Errorf("%s holds the Lease but did not finish the drain its predecessor started: pod %s evicted %v, reboot request %q; its records:\n%v",
			leader.name, held, sc.podGone(1, 0), n.Annotations[rebootAnnotation], leader.records(t))
	}
	if !n.Spec.Unschedulable {
		t.Errorf("%s: no longer cordoned", node)
	}
	if ev := sc.events(node); len(ev) != 1 {
		t.Errorf("%s: %d Events; want 1 for its one fault, however many replicas worked on it", node, len(ev))
	}
	// Its records of this tick reach the file after the writes.
	var records, requests, lateDecisions []record
	read := func() {
		records = leader.records(t)
		requests = filterRecords(records, func(r record) bool { return r.kind == "action" && r.action == "request" && r.node == node })
		lateDecisions = filterRecords(records, func(r record) bool { return r.kind == "decision" && r.node == lateNode && r.reason == "policy" })
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		read()
		if len(requests) > 0 && len(lateDecisions) > 0 {
			time.Sleep(time.Second) // and any second one
			read()
			break
		}
	}
	if len(requests) != 1 {
		t.Errorf("%s recorded %d reboot requests for %s; want 1: %v", leader.name, len(requests), node, requests)
	}
	ln := sc.getNode(lateNode)
	if !ln.Spec.Unschedulable || ln.Annotations[rebootAnnotation] == "" || !sc.podGoneIn(late, 0, 0) {
		t.Errorf("%s: the fault raised while no replica led was not acted on: cordoned %v, reboot request %q, pod evicted %v; %s's records:\n%v",
			lateNode, ln.Spec.Unschedulable, ln.Annotations[rebootAnnotation], sc.podGoneIn(late, 0, 0), leader.name, records)
	}
	if ev := sc.events(lateNode); len(ev) != 1 {
		t.Errorf("%s: %d Events; want 1 for its one fault", lateNode, len(ev))
	}
	if len(lateDecisions) != 1 {
		t.Errorf("%s decided %d times by policy on %s; want once: %v", leader.name, len(lateDecisions), lateNode, lateDecisions)
	}
}
