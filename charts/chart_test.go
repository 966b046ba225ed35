// Package charts tests the Helm chart charts/otelcol-gpu with a real Helm
// (bin/helm, built from the module proxy by `make helm`) and a real
// kube-apiserver: lint, golden renders, every rendered collector
// configuration through `otelcol-gpu validate`, every render through a
// server-side dry run (the OpenTelemetry Operator's resources against the
// Operator's own CRD), install, upgrade and rollback, the schema's refusals,
// and the raw manifests of distributions/otelcol-gpu rendered from the chart.
package charts

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

var update = flag.Bool("update", false, "rewrite the golden renders and the raw manifests from the chart")

const (
	chart     = "otelcol-gpu"
	release   = "otelcol-gpu"
	namespace = "observability"
	// operatorModule holds the OpenTelemetry Operator's CRDs; they are read
	// from the module cache, never copied into this repository.
	operatorModule = "github.com/open-telemetry/opentelemetry-operator@v0.140.0"
	// prometheusOperatorModule holds the Prometheus Operator's CRDs, for the
	// chart's PrometheusRule (monitoring.prometheusRule), read the same way.
	prometheusOperatorModule = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
)

var (
	server    *kubetest.Server
	serverErr error
)

func TestMain(m *testing.M) {
	if !kubetest.Fuzzing() {
		apiBin, etcdBin, err := kubetest.Binaries("..")
		if err == nil {
			server, err = kubetest.Start(apiBin, etcdBin)
		}
		serverErr = err
	}
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

// binary returns the path in env, or bin/NAME in the repository; a missing
// binary fails the test with the make target that builds it.
func binary(t *testing.T, env, name, target string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join("..", "bin", name)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("%s not found at %s (run %s, or set %s): %v", name, abs, target, env, err)
	}
	return abs
}

func helmBin(t *testing.T) string { return binary(t, "HELM", "helm", "make helm") }

// helm runs Helm with its state (cache, config, data) in a temporary
// directory, so that nothing of the user's is read or written.
func helm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data", "KUBECONFIG="+home+"/no-kubeconfig")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// render is one helm template case: the defaults or a ci/*-values.yaml.
type render struct {
	name   string // defaults, or the values file's name without -values.yaml
	values string // path of the values file; empty for the defaults
}

func cases(t *testing.T) []render {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(chart, "ci", "*-values.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no values files under %s/ci: %v", chart, err)
	}
	out := []render{{name: "defaults"}}
	for _, f := range files {
		out = append(out, render{name: strings.TrimSuffix(filepath.Base(f), "-values.yaml"), values: f})
	}
	return out
}

func (r render) template(t *testing.T) string {
	t.Helper()
	args := []string{"template", release, chart, "--namespace", namespace}
	if r.values != "" {
		args = append(args, "--values", r.values)
	}
	out, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm template (%s): %v\n%s", r.name, err, out)
	}
	return out
}

// objects decodes a render's documents.
func objects(t *testing.T, rendered string) []*unstructured.Unstructured {
	t.Helper()
	dec := yaml.NewDecoder(strings.NewReader(rendered))
	var out []*unstructured.Unstructured
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding the render: %v", err)
		}
		if doc == nil {
			continue
		}
		// Through JSON, so that numbers are what the API server decodes.
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		obj := &unstructured.Unstructured{}
		if err := obj.UnmarshalJSON(raw); err != nil {
			t.Fatal(err)
		}
		out = append(out, obj)
	}
}

func TestLint(t *testing.T) {
	for _, r := range cases(t) {
		args := []string{"lint", "--strict", chart, "--namespace", namespace}
		if r.values != "" {
			args = append(args, "--values", r.values)
		}
		if out, err := helm(t, args...); err != nil {
			t.Errorf("helm lint --strict (%s): %v\n%s", r.name, err, out)
		}
	}
}

// TestTemplateGolden compares each render with testdata/NAME.yaml
// (go test ./charts -update rewrites them).
func TestTemplateGolden(t *testing.T) {
	for _, r := range cases(t) {
		got := r.template(t)
		golden := filepath.Join("testdata", r.name+".yaml")
		if *update {
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./charts -update)", err)
		}
		if got != string(want) {
			t.Errorf("%s: the render differs from %s (go test ./charts -update rewrites it):\n%s", r.name, golden, diff(string(want), got))
		}
	}
}

// diff shows the first lines that differ.
func diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a, b)
		}
	}
	return ""
}

// collectorConfig is one rendered collector configuration and the image
// that runs it.
type collectorConfig struct {
	where, image string
	config       string
}

// configs finds every collector configuration in a render: each ConfigMap's
// config.yaml (run by the workload of the same name) and each
// OpenTelemetryCollector's spec.config.
func configs(t *testing.T, objs []*unstructured.Unstructured) []collectorConfig {
	t.Helper()
	images := map[string]string{}
	for _, o := range objs {
		switch o.GetKind() {
		case "DaemonSet", "Deployment", "StatefulSet":
			cs, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
			img, _, _ := unstructured.NestedString(cs[0].(map[string]any), "image")
			images[o.GetName()] = img
		}
	}
	var out []collectorConfig
	for _, o := range objs {
		switch o.GetKind() {
		case "ConfigMap":
			cfg, ok, _ := unstructured.NestedString(o.Object, "data", "config.yaml")
			if !ok {
				continue
			}
			img, ok := images[o.GetName()]
			if !ok {
				t.Errorf("ConfigMap %s: no workload of that name runs it", o.GetName())
			}
			out = append(out, collectorConfig{where: "ConfigMap " + o.GetName(), image: img, config: cfg})
		case "OpenTelemetryCollector":
			cfg, _, _ := unstructured.NestedMap(o.Object, "spec", "config")
			img, _, _ := unstructured.NestedString(o.Object, "spec", "image")
			raw, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, collectorConfig{where: "OpenTelemetryCollector " + o.GetName(), image: img, config: string(raw)})
		}
	}
	return out
}

// TestConfigsValidate runs `validate` on every rendered collector
// configuration with the binary of the image that runs it: the lean agent's
// image with bin/otelcol-gpu-agent, so that the chart never gives the lean
// image a component it lacks.
func TestConfigsValidate(t *testing.T) {
	full := binary(t, "OTELCOL_GPU_BIN", "otelcol-gpu", "make build")
	lean := binary(t, "OTELCOL_GPU_AGENT_BIN", "otelcol-gpu-agent", "make build-agent")
	dir := t.TempDir()
	checked := map[string]int{}
	for _, r := range cases(t) {
		for i, c := range configs(t, objects(t, r.template(t))) {
			bin := full
			if strings.Contains(c.image, "/otelcol-gpu-agent:") || strings.Contains(c.image, "/otelcol-gpu-agent@") {
				bin = lean
			}
			path := filepath.Join(dir, fmt.Sprintf("%s-%d.yaml", r.name, i))
			if err := os.WriteFile(path, []byte(c.config), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "validate", "--config="+path)
			// What the downward API gives the pods.
			cmd.Env = append(os.Environ(), "POD_IP=10.0.0.7", "HOST_IP=10.0.0.1", "K8S_NODE_NAME=gpu-node-0", "POD_NAME="+release+"-remediation-0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: %s (%s): %s validate: %v\n%s", r.name, c.where, c.image, filepath.Base(bin), err, out)
				continue
			}
			checked[filepath.Base(bin)]++
		}
	}
	t.Logf("configurations validated: %v", checked)
	if checked["otelcol-gpu-agent"] == 0 || checked["otelcol-gpu"] < 10 {
		t.Errorf("validated %v; want the lean agent's and at least 10 of the full distribution", checked)
	}
}

func createNamespaces(t *testing.T, cs kubernetes.Interface, names ...string) {
	t.Helper()
	for _, ns := range names {
		_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
}

// TestRendersServerSideDryRun creates every object of every render with a
// server-side dry run and strict field validation; the
// OpenTelemetryCollector resources (the chart's operator mode, and the
// shipped operator/*.yaml) against the Operator's CRD, whose OpenAPI schema
// checks them.
func TestRendersServerSideDryRun(t *testing.T) {
	s := kubetest.Require(t, server, serverErr)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	operatorCRDs(t, s)
	createNamespaces(t, cs, namespace, "serving", "search", "gpu-operator", "ml", "monitoring")
	kinds := map[string]int{}
	for _, r := range cases(t) {
		for _, obj := range objects(t, r.template(t)) {
			if err := s.Create(obj, true); err != nil {
				t.Errorf("%s: %s %s/%s: %v", r.name, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
				continue
			}
			kinds[obj.GetKind()]++
		}
	}
	operator, _ := filepath.Glob(filepath.Join("..", "distributions", "otelcol-gpu", "operator", "*.yaml"))
	for _, f := range operator {
		objs, err := kubetest.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if err := s.Create(obj, true); err != nil {
				t.Errorf("%s: %s %s: %v", f, obj.GetKind(), obj.GetName(), err)
				continue
			}
			kinds[obj.GetKind()]++
		}
	}
	t.Logf("passed a server-side dry run: %v", kinds)
	for _, k := range []string{"DaemonSet", "Deployment", "StatefulSet", "OpenTelemetryCollector", "ClusterRole", "Role", "Service", "PodDisruptionBudget", "PrometheusRule"} {
		if kinds[k] == 0 {
			t.Errorf("no %s was checked", k)
		}
	}
	// An OpenTelemetryCollector the CRD's schema refuses is refused: the
	// check above would catch a wrong field.
	bad := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
		"metadata": map[string]any{"name": "wrong", "namespace": namespace},
		"spec":     map[string]any{"mode": "daemonset", "hostPID": true, "config": map[string]any{}},
	}}
	if err := s.Create(bad, true); err == nil {
		t.Error("an OpenTelemetryCollector with an unknown field (spec.hostPID) passed the dry run")
	}
}

// TestInstallUpgradeRollback installs the chart into the API server with
// Helm, upgrades it with a value changed and rolls it back, checking the
// objects after each step.
func TestInstallUpgradeRollback(t *testing.T) {
	s := kubetest.Require(t, server, serverErr)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	kubeconfig, err := s.Kubeconfig(t.TempDir(), kubetest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	const ns = "helm-test"
	ctx := context.Background()
	run := func(args ...string) string {
		t.Helper()
		out, err := helm(t, append(args, "--kubeconfig", kubeconfig, "--namespace", ns)...)
		if err != nil {
			t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	gatewayReplicas := func() int32 {
		t.Helper()
		d, err := cs.AppsV1().Deployments(ns).Get(ctx, "otelcol-gpu-gateway", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return *d.Spec.Replicas
	}

	notes := run("install", release, chart, "--create-namespace", "--set", "remediation.enabled=true")
	if !strings.Contains(notes, "count(count by (hw_id) (hw_temperature_celsius))") {
		t.Errorf("the install's notes do not give the query that shows it works:\n%s", notes)
	}
	if _, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "otelcol-gpu-agent", metav1.GetOptions{}); err != nil {
		t.Errorf("after install: %v", err)
	}
	if _, err := cs.AppsV1().StatefulSets(ns).Get(ctx, "otelcol-gpu-remediation", metav1.GetOptions{}); err != nil {
		t.Errorf("after install: %v", err)
	}
	if _, err := cs.RbacV1().ClusterRoles().Get(ctx, "otelcol-gpu-remediation", metav1.GetOptions{}); err != nil {
		t.Errorf("after install: %v", err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "otelcol-gpu-remediation", metav1.GetOptions{})
	if err != nil || !strings.Contains(cm.Data["config.yaml"], "dry_run: true") {
		t.Errorf("after install, the remediation is not in dry run (%v):\n%s", err, cm.Data["config.yaml"])
	}
	if got := gatewayReplicas(); got != 2 {
		t.Errorf("after install: %d gateway replicas; want 2", got)
	}

	run("upgrade", release, chart, "--reuse-values", "--set", "gateway.replicas=4")
	if got := gatewayReplicas(); got != 4 {
		t.Errorf("after upgrade: %d gateway replicas; want 4", got)
	}

	run("rollback", release, "1")
	if got := gatewayReplicas(); got != 2 {
		t.Errorf("after rollback: %d gateway replicas; want 2", got)
	}
	history := run("history", release, "--output", "json")
	var revisions []struct {
		Revision int    `json:"revision"`
		Status   string `json:"status"`
	}
	if err := json.Unmarshal([]byte(history), &revisions); err != nil {
		t.Fatalf("helm history: %v\n%s", err, history)
	}
	if len(revisions) != 3 || revisions[2].Status != "deployed" {
		t.Errorf("helm history: %+v; want 3 revisions, the last deployed", revisions)
	}

	run("uninstall", release)
	if _, err := cs.AppsV1().DaemonSets(ns).Get(ctx, "otelcol-gpu-agent", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after uninstall the DaemonSet is still there: %v", err)
	}
}

// TestSchemaRefuses: a wrong type and an unknown key fail helm template
// with values.schema.json's message, naming the value.
func TestSchemaRefuses(t *testing.T) {
	for _, c := range []struct{ values, want string }{
		{"agent:\n  enabled: \"yes\"\n", "at '/agent/enabled': got string, want boolean"},
		{"gateway:\n  replica: 3\n", "at '/gateway': additional properties 'replica' not allowed"},
		{"colour: red\n", "additional properties 'colour' not allowed"},
		{"dcgmExporter:\n  mode: both\n", "at '/dcgmExporter/mode'"},
		{"gateway:\n  replicas: 0\n", "at '/gateway/replicas'"},
	} {
		f := filepath.Join(t.TempDir(), "values.yaml")
		if err := os.WriteFile(f, []byte(c.values), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := helm(t, "template", release, chart, "--values", f)
		if err == nil {
			t.Errorf("%q: helm template succeeded", c.values)
			continue
		}
		if !strings.Contains(out, c.want) {
			t.Errorf("%q: helm template failed without %q:\n%s", c.values, c.want, out)
		}
	}
	// Combinations the schema cannot express fail with the chart's message.
	out, err := helm(t, "template", release, chart, "--set", "dcgmExporter.mode=alongside")
	if err == nil || !strings.Contains(out, "set agent.enabled: false") {
		t.Errorf("alongside with the agent on: %v\n%s", err, out)
	}
	out, err = helm(t, "template", release, chart, "--set", "remediation.enabled=true,remediation.fabric=true,nodeEvidence.network.enabled=false")
	if err == nil || !strings.Contains(out, "set nodeEvidence.enabled and nodeEvidence.network.enabled") {
		t.Errorf("fabric faults without the NIC ports: %v\n%s", err, out)
	}
}

// rawManifests: which file of distributions/otelcol-gpu each chart
// template renders into, and from which values. kubernetes/FILE.yaml is
// every template named FILE*.yaml of the ci/manifests values;
// operator/daemonset.yaml is the agent's OpenTelemetryCollector of the
// ci/operator values. namespace.yaml and operator/sidecar.yaml are not the
// chart's (Helm does not create its namespace; the chart has no sidecar)
// and stay written by hand.
var rawManifests = []struct {
	file, values string
	templates    []string
}{
	{"kubernetes/agent.yaml", "manifests", []string{"agent-rbac.yaml", "agent.yaml"}},
	{"kubernetes/gateway.yaml", "manifests", []string{"gateway.yaml"}},
	{"kubernetes/rbac.yaml", "manifests", []string{"rbac.yaml"}},
	{"kubernetes/remediation.yaml", "manifests", []string{"remediation.yaml"}},
	{"operator/daemonset.yaml", "operator", []string{"operator-agent.yaml"}},
}

// TestRawManifestsFromChart: the raw manifests are the chart's render, so
// that they cannot drift from it (go test ./charts -update rewrites them).
func TestRawManifestsFromChart(t *testing.T) {
	for _, m := range rawManifests {
		args := []string{"template", release, chart, "--namespace", namespace,
			"--values", filepath.Join(chart, "ci", m.values+"-values.yaml")}
		for _, tpl := range m.templates {
			args = append(args, "--show-only", "templates/"+tpl)
		}
		out, err := helm(t, args...)
		if err != nil {
			t.Fatalf("%s: helm %s: %v\n%s", m.file, strings.Join(args, " "), err, out)
		}
		valuesFile := "charts/otelcol-gpu/ci/" + m.values + "-values.yaml"
		got := fmt.Sprintf("# Rendered from the Helm chart charts/otelcol-gpu: do not edit; change the\n"+
			"# chart and run `go test ./charts -update`. For kubectl apply as it is, or\n"+
			"# the same with Helm:\n"+
			"#   helm template %s charts/otelcol-gpu --namespace %s \\\n"+
			"#     --values %s %s\n%s", release, namespace, valuesFile, showOnly(m.templates), out)
		path := filepath.Join("..", "distributions", "otelcol-gpu", m.file)
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("%s is not the chart's render (go test ./charts -update rewrites it):\n%s", m.file, diff(string(want), got))
		}
	}
}

func showOnly(templates []string) string {
	s := append([]string(nil), templates...)
	sort.Strings(s)
	var b strings.Builder
	for _, tpl := range s {
		b.WriteString("--show-only templates/" + tpl + " ")
	}
	return strings.TrimSpace(b.String())
}

// TestRemediationDRARBACExample: examples/kubernetes/remediation-dra-rbac.yaml,
// which the connector's TestDRARBAC applies, grants exactly what the chart
// renders with remediation.deviceTaints (ci/remediation-live values), to
// the same ServiceAccount; and the chart grants none of it without.
func TestRemediationDRARBACExample(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "examples", "kubernetes", "remediation-dra-rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	example := objects(t, string(raw))
	with := objects(t, render{name: "remediation-live", values: filepath.Join(chart, "ci", "remediation-live-values.yaml")}.template(t))
	without := objects(t, render{name: "defaults"}.template(t))
	for _, o := range example {
		var got *unstructured.Unstructured
		for _, c := range with {
			if c.GetKind() == o.GetKind() && c.GetName() == o.GetName() {
				got = c
			}
		}
		if got == nil {
			t.Errorf("the chart renders no %s %s with remediation.deviceTaints", o.GetKind(), o.GetName())
			continue
		}
		for _, field := range []string{"rules", "roleRef", "subjects"} {
			if a, b := fmt.Sprint(o.Object[field]), fmt.Sprint(got.Object[field]); a != b {
				t.Errorf("%s %s: %s differ:\nexample: %s\nchart:   %s", o.GetKind(), o.GetName(), field, a, b)
			}
		}
		for _, c := range without {
			if c.GetKind() == o.GetKind() && c.GetName() == o.GetName() {
				t.Errorf("%s %s rendered without remediation.deviceTaints", o.GetKind(), o.GetName())
			}
		}
	}
}
