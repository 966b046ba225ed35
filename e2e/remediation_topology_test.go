//go:build e2e

package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

// ---- configurations ----

// shippedConfig returns the collector configuration of a ConfigMap in
// distributions/otelcol-gpu/kubernetes/FILE.
func shippedConfig(t *testing.T, file, configMap string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "distributions", "otelcol-gpu", "kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct{ Name string }
			Data     map[string]string `yaml:"data"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "ConfigMap" && doc.Metadata.Name == configMap {
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(doc.Data["config.yaml"]), &cfg); err != nil {
				t.Fatal(err)
			}
			return cfg
		}
	}
	t.Fatalf("%s has no ConfigMap %s", file, configMap)
	return nil
}

// node returns the map at the path of keys, failing the test if it is not
// there: the test changes the shipped configuration only where it knows
// what it changes.
func node(t *testing.T, cfg map[string]any, keys ...string) map[string]any {
	t.Helper()
	m := cfg
	for i, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("the shipped configuration has no %s", strings.Join(keys[:i+1], "::"))
		}
		m = next
	}
	return m
}

// replace sets an existing key.
func replace(t *testing.T, m map[string]any, key string, v any) {
	t.Helper()
	if _, ok := m[key]; !ok {
		t.Fatalf("the shipped configuration has no key %s to change (it has %v)", key, sortedKeys(m))
	}
	m[key] = v
}

// remove deletes an existing key.
func remove(t *testing.T, m map[string]any, key string) {
	t.Helper()
	replace(t, m, key, nil)
	delete(m, key)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writeConfig(t *testing.T, dir, name string, cfg map[string]any) string {
	t.Helper()
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replica is one remediation process.
type replica struct {
	name   string // its pod name: the Lease identity
	c      *collector
	otlp   int    // its OTLP port
	health int    // its health_check port
	log    string // the file its decision and action records go to
	killed bool
}

// remediationConfig is the shipped ConfigMap's configuration, adapted to
// the test's environment. Each change, and why:
//   - the OTLP receiver and health_check listen on ports of 127.0.0.1 (two
//     replicas share one host; in the cluster each has its pod's IP);
//   - auth: a kubeconfig naming the test's API server, as the ServiceAccount,
//     instead of the pod's in-cluster credentials;
//   - dry_run: false, to see the writes;
//   - interval 1s (10s), so that a drain and the request after it take
//     seconds, not minutes (the Lease keeps its timings: a takeover takes
//     the 15 s it takes in a cluster);
//   - the Prometheus endpoint is this test's stand-in;
//   - the decision and action records go to a file the test reads, instead
//     of the debug exporter;
//   - the collector's own metrics are off (their port would be shared).
func remediationConfig(t *testing.T, dir, kubeconfig, promURL string, r *replica) string {
	t.Helper()
	cfg := shippedConfig(t, "remediation.yaml", "otelcol-gpu-remediation")
	replace(t, node(t, cfg, "receivers", "otlp", "protocols", "grpc"), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.otlp))
	replace(t, node(t, cfg, "extensions", "health_check"), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.health))
	conn := node(t, cfg, "connectors", "gpu_remediation")
	replace(t, conn, "auth", map[string]any{"type": "kubeconfig", "kubeconfig": kubeconfig})
	replace(t, conn, "dry_run", false)
	conn["interval"] = "1s"
	replace(t, node(t, cfg, "exporters", "otlp_http/prometheus"), "metrics_endpoint", promURL)
	exporters := node(t, cfg, "exporters")
	remove(t, exporters, "debug/remediation")
	exporters["file/remediation"] = map[string]any{"path": r.log, "flush_interval": "100ms"}
	replace(t, node(t, cfg, "service", "pipelines", "logs/remediation"), "exporters", []any{"file/remediation"})
	node(t, cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}
	return writeConfig(t, dir, r.name+".yaml", cfg)
}

// fleet is the scenario's simulated GPUs: hosts named PREFIX0..., one pod
// per GPU (infer-HOST-GPU in namespace NS), and the faults.
type fleet struct {
	prefix string
	hosts  int
	gpus   int
	ns     string
	faults []map[string]any // receivers::dcgm::simulated::faults
}

func (f fleet) node(h int) string   { return fmt.Sprintf("%s%d", f.prefix, h) }
func (f fleet) pod(h, g int) string { return fmt.Sprintf("infer-%d-%d", h, g) }
func xid(code, host, gpu int) map[string]any {
	// 3 s after the fleet starts: the replicas have seen every GPU report
	// without it first, so its counter's appearance is a new fault.
	return xidAt(code, host, gpu, "3s")
}

func xidAt(code, host, gpu int, start string) map[string]any {
	return map[string]any{"kind": "xid", "xid": code, "gpus": fmt.Sprintf("%d/%d", host, gpu), "start": start}
}

// agentConfig is the shipped agent's configuration reduced to its
// metrics/faults pipeline, adapted to the test's environment:
//   - the dcgm receiver reads the simulated fleet, every second, instead of
//     the node's nv-hostengine every 10 s (and without the kubelet's
//     pod-resources socket or DRA's ResourceSlices: the fleet names each
//     GPU's pod itself);
//   - otlp_grpc/remediation-N send to replica N's port on 127.0.0.1
//     instead of its DNS name;
//   - file_storage is in the test's directory;
//   - the metrics pipeline (k8s_attributes, load_balancing to the gateway)
//     and health_check go: no gateway here, and that pipeline needs the
//     cluster's service discovery;
//   - the collector's own metrics are off.
func agentConfig(t *testing.T, dir string, f fleet, replicas []*replica) string {
	t.Helper()
	cfg := shippedConfig(t, "agent.yaml", "otelcol-gpu-agent")
	pipelines := node(t, cfg, "service", "pipelines")
	faults := node(t, pipelines, "metrics/faults")
	for k := range pipelines {
		if k != "metrics/faults" {
			delete(pipelines, k)
		}
	}
	want := map[string]bool{}
	for _, e := range faults["exporters"].([]any) {
		want[e.(string)] = true
	}
	if len(want) != len(replicas) {
		t.Fatalf("metrics/faults exports to %v; want one exporter per replica (%d)", faults["exporters"], len(replicas))
	}
	exporters := node(t, cfg, "exporters")
	for k := range exporters {
		if !want[k] {
			delete(exporters, k)
		}
	}
	for i, r := range replicas {
		replace(t, node(t, exporters, fmt.Sprintf("otlp_grpc/remediation-%d", i)), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.otlp))
	}
	processors := node(t, cfg, "processors")
	for k := range processors {
		if k != "memory_limiter" && k != "filter/faults" {
			delete(processors, k)
		}
	}
	dcgm := node(t, cfg, "receivers", "dcgm")
	replace(t, dcgm, "backend", "simulated")
	replace(t, dcgm, "collection_interval", "1s")
	for _, k := range []string{"endpoint", "hostname", "pod_resources", "dra"} {
		remove(t, dcgm, k)
	}
	dcgm["simulated"] = map[string]any{
		"hosts": f.hosts, "gpus_per_host": f.gpus, "host_prefix": f.prefix,
		"workloads": []any{map[string]any{"name": "infer", "kind": "serving", "namespace": f.ns, "gpus": "*/*",
			"phases": []any{map[string]any{"kind": "compute_bound"}}}},
		"faults": f.faults,
	}
	queue := filepath.Join(dir, "queue")
	fs := node(t, cfg, "extensions", "file_storage")
	replace(t, fs, "directory", queue)
	replace(t, node(t, fs, "compaction"), "directory", queue)
	remove(t, node(t, cfg, "extensions"), "health_check")
	replace(t, node(t, cfg, "service"), "extensions", []any{"file_storage"})
	node(t, cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}
	return writeConfig(t, dir, "agent.yaml", cfg)
}

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
