package manifests

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// at walks a decoded YAML document by map keys.
func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		out = append(out, fmt.Sprint(x))
	}
	return out
}

// find returns the object of that kind (and name, if given) in objs.
func find(t *testing.T, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o
		}
	}
	t.Fatalf("no %s %q", kind, name)
	return nil
}

// TestRemediationTopology checks what ties the agents to the remediation
// StatefulSet, which a server-side dry run cannot see: every agent sends its
// fault evidence to every replica, each by the replica's stable DNS name,
// through a queue on disk that never gives up; the filter keeps exactly the
// metrics gpu_remediation reads; and the replicas elect one leader on the
// Lease their RBAC allows.
func TestRemediationTopology(t *testing.T) {
	objs := decode(t, filepath.Join("kubernetes", "remediation.yaml"))
	sts := find(t, objs, "StatefulSet", "")
	ns, name := sts.GetNamespace(), sts.GetName()
	r, _, _ := unstructured.NestedFieldNoCopy(sts.Object, "spec", "replicas")
	var replicas int
	if _, err := fmt.Sscan(fmt.Sprint(r), &replicas); err != nil {
		t.Fatalf("%s: spec.replicas %v: %v", sts.GetName(), r, err)
	}
	service, _, _ := unstructured.NestedString(sts.Object, "spec", "serviceName")
	if replicas != 2 {
		t.Errorf("%s has %d replicas; the design is one leader and one standby", name, replicas)
	}
	if p, _, _ := unstructured.NestedString(sts.Object, "spec", "podManagementPolicy"); p != "Parallel" {
		t.Errorf("podManagementPolicy %q; want Parallel", p)
	}

	// The headless Service the replicas' names come from.
	svc := find(t, objs, "Service", service)
	if ip, _, _ := unstructured.NestedString(svc.Object, "spec", "clusterIP"); ip != "None" {
		t.Errorf("Service %s is not headless (clusterIP %q): its replicas have no names of their own", service, ip)
	}
	selector, _, _ := unstructured.NestedStringMap(sts.Object, "spec", "selector", "matchLabels")
	if sel, _, _ := unstructured.NestedStringMap(svc.Object, "spec", "selector"); !reflect.DeepEqual(sel, selector) {
		t.Errorf("Service %s selects %v, the StatefulSet's pods are %v", service, sel, selector)
	}
	pdb := find(t, objs, "PodDisruptionBudget", "")
	if sel, _, _ := unstructured.NestedStringMap(pdb.Object, "spec", "selector", "matchLabels"); !reflect.DeepEqual(sel, selector) {
		t.Errorf("the PodDisruptionBudget selects %v, the StatefulSet's pods are %v", sel, selector)
	}

	// The Lease identity is the pod's name, from the downward API.
	containers, _, _ := unstructured.NestedSlice(sts.Object, "spec", "template", "spec", "containers")
	podName := false
	env, _ := at(containers[0], "env").([]any)
	for _, e := range env {
		if at(e, "name") == "POD_NAME" && at(e, "valueFrom", "fieldRef", "fieldPath") == "metadata.name" {
			podName = true
		}
	}
	if !podName {
		t.Error("the container has no POD_NAME from metadata.name, the Lease identity")
	}

	// The collector configuration.
	var cfg map[string]any
	raw, _, _ := unstructured.NestedString(find(t, objs, "ConfigMap", "").Object, "data", "config.yaml")
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatal(err)
	}
	conn := at(cfg, "connectors", "gpu_remediation")
	if at(conn, "dry_run") != true {
		t.Error("the remediation must ship in dry run (dry_run: true)")
	}
	le := at(conn, "leader_election")
	if at(le, "enabled") != true || at(le, "lease_namespace") != ns || at(le, "identity") != "${env:POD_NAME}" {
		t.Errorf("leader_election %v: want enabled, lease_namespace %s, identity ${env:POD_NAME}", le, ns)
	}
	if got := strs(at(cfg, "service", "pipelines", "metrics", "exporters")); !reflect.DeepEqual(got, []string{"gpu_remediation"}) {
		t.Errorf("pipeline metrics exports to %v; want [gpu_remediation]", got)
	}

	// The Lease the connector takes (its default name, unless set) is the
	// one the Role lets the ServiceAccount update, in the namespace it runs in.
	lease := "otelcol-gpu-remediation"
	if n, ok := at(le, "lease_name").(string); ok {
		lease = n
	}
	role := find(t, objs, "Role", "otelcol-gpu-remediation-lease")
	if role.GetNamespace() != ns || !strings.Contains(fmt.Sprint(role.Object["rules"]), "resourceNames:["+lease+"]") {
		t.Errorf("Role %s/%s does not grant the Lease %s/%s: %v", role.GetNamespace(), role.GetName(), ns, lease, role.Object["rules"])
	}
	sa, _, _ := unstructured.NestedString(sts.Object, "spec", "template", "spec", "serviceAccountName")
	for _, kind := range []string{"RoleBinding", "ClusterRoleBinding"} {
		b := find(t, objs, kind, "")
		if s := fmt.Sprint(b.Object["subjects"]); !strings.Contains(s, "name:"+sa) || !strings.Contains(s, "namespace:"+ns) {
			t.Errorf("%s %s binds %s, not the pods' ServiceAccount %s/%s", kind, b.GetName(), s, ns, sa)
		}
	}

	// Every agent: pipeline metrics/faults to every replica.
	want := map[string]string{}
	for i := range replicas {
		want[fmt.Sprintf("otlp_grpc/remediation-%d", i)] = fmt.Sprintf("%s-%d.%s.%s.svc:4317", name, i, service, ns)
	}
	agents := map[string]map[string]any{}
	for where, c := range collectorConfigs(t) {
		if strings.Contains(where, "agent") || strings.Contains(where, "daemonset") {
			if at(c, "receivers", "dcgm") != nil && at(c, "exporters", "load_balancing") != nil {
				agents[where] = c
			}
		}
	}
	if len(agents) != 3 {
		t.Fatalf("found the agent configurations %v; want kubernetes/agent.yaml, operator/daemonset.yaml and examples/gateway/agent.yaml", keys(agents))
	}
	for where, c := range agents {
		p := at(c, "service", "pipelines", "metrics/faults")
		if p == nil {
			t.Errorf("%s: no pipeline metrics/faults", where)
			continue
		}
		if got := strs(at(p, "processors")); !reflect.DeepEqual(got, []string{"memory_limiter", "filter/faults"}) {
			t.Errorf("%s: metrics/faults processors %v; want [memory_limiter filter/faults]", where, got)
		}
		exporters := strs(at(p, "exporters"))
		sort.Strings(exporters)
		if !reflect.DeepEqual(exporters, keys(want)) {
			t.Errorf("%s: metrics/faults exports to %v; want one exporter per replica, %v", where, exporters, keys(want))
		}
		for id, endpoint := range want {
			e := at(c, "exporters", id)
			if got := at(e, "endpoint"); got != endpoint {
				t.Errorf("%s: %s sends to %v; want replica %s", where, id, got, endpoint)
			}
			q := at(e, "sending_queue")
			if at(q, "enabled") != true || at(q, "storage") != "file_storage" {
				t.Errorf("%s: %s: the queue must be on disk (sending_queue: enabled, storage: file_storage), got %v", where, id, q)
			}
			r := at(e, "retry_on_failure")
			if at(r, "enabled") != true || fmt.Sprint(at(r, "max_elapsed_time")) != "0s" {
				t.Errorf("%s: %s: a replica down must be retried without end (max_elapsed_time: 0s), got %v", where, id, r)
			}
		}
		if !contains(strs(at(c, "service", "extensions")), "file_storage") {
			t.Errorf("%s: file_storage is not among the service's extensions", where)
		}
		checkFaultFilter(t, where, at(c, "processors", "filter/faults"))
	}
}

// checkFaultFilter: filter/faults drops every metric but the fault evidence
// gpu_remediation reads from the dcgm receiver, NVIDIA's and AMD's, and
// from the gpu_node receiver's NIC ports (its fabric faults).
func checkFaultFilter(t *testing.T, where string, filter any) {
	t.Helper()
	conds := strs(at(filter, "metric_conditions"))
	if len(conds) != 1 {
		t.Errorf("%s: filter/faults has conditions %q; want the one that drops all but the faults", where, conds)
		return
	}
	clause := regexp.MustCompile(`^metric\.name != "([^"]+)"$`)
	var kept []string
	for _, c := range strings.Split(conds[0], " and ") {
		m := clause.FindStringSubmatch(c)
		if m == nil {
			t.Errorf("%s: filter/faults: %q is not of the form metric.name != \"NAME\"", where, c)
			continue
		}
		kept = append(kept, m[1])
	}
	sort.Strings(kept)
	want := []string{metricnames.HWErrors, metricnames.NvidiaGPURowRemapFailure, metricnames.NvidiaGPUXIDErrors, metricnames.NvidiaGPURecoveryAction, metricnames.NvidiaGPUHealth,
		metricnames.AmdGPUCperRecords, metricnames.AmdGPUBadPages, metricnames.AmdGPUBadPagesThreshold,
		metricnames.HWNetworkUp, metricnames.HWNetworkBandwidthLimit}
	sort.Strings(want)
	if !reflect.DeepEqual(kept, want) {
		t.Errorf("%s: filter/faults keeps %v; want %v", where, kept, want)
	}
}

// TestRemediationRBACExample: examples/kubernetes/remediation-rbac.yaml,
// which the connector's tests apply, grants exactly what the shipped
// remediation.yaml grants, to the same ServiceAccount.
func TestRemediationRBACExample(t *testing.T) {
	shipped := decode(t, filepath.Join("kubernetes", "remediation.yaml"))
	example := decode(t, filepath.Join("..", "..", "examples", "kubernetes", "remediation-rbac.yaml"))
	rbac := 0
	for _, o := range example {
		s := find(t, shipped, o.GetKind(), o.GetName())
		if s.GetNamespace() != o.GetNamespace() {
			t.Errorf("%s %s: namespace %q in the example, %q shipped", o.GetKind(), o.GetName(), o.GetNamespace(), s.GetNamespace())
		}
		for _, field := range []string{"rules", "roleRef", "subjects"} {
			if !reflect.DeepEqual(o.Object[field], s.Object[field]) {
				t.Errorf("%s %s: %s differ:\nexample: %v\nshipped: %v", o.GetKind(), o.GetName(), field, o.Object[field], s.Object[field])
			}
		}
		rbac++
	}
	for _, s := range shipped {
		switch s.GetKind() {
		case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			rbac--
		}
	}
	if rbac != 0 {
		t.Errorf("the example and the shipped manifest differ in their RBAC objects by %d", rbac)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
