package charts

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The monitoring mixin's generated files (make mixin), and the chart's
// copies of them, which its templates read.
var (
	mixinRules      = filepath.Join("..", "examples", "prometheus", "rules.yaml")
	mixinDashboards = filepath.Join("..", "examples", "grafana")
	chartFiles      = filepath.Join(chart, "files")
)

// TestMonitoringFilesAreTheMixins: the chart installs the rules and
// dashboards that examples/ ships, byte for byte, and no others.
func TestMonitoringFilesAreTheMixins(t *testing.T) {
	same := func(a, b string) {
		t.Helper()
		x, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(b)
		if err != nil {
			t.Fatalf("%v (make mixin writes it)", err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs from %s: run make mixin", b, a)
		}
	}
	same(mixinRules, filepath.Join(chartFiles, "rules.yaml"))
	want, _ := filepath.Glob(filepath.Join(mixinDashboards, "*.json"))
	got, _ := filepath.Glob(filepath.Join(chartFiles, "dashboards", "*.json"))
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%d dashboards in the chart, %d in %s: run make mixin", len(got), len(want), mixinDashboards)
	}
	for _, f := range want {
		same(f, filepath.Join(chartFiles, "dashboards", filepath.Base(f)))
	}
}

// TestMonitoringRender: off by default; asked for, the PrometheusRule holds
// the mixin's rule groups unchanged, and each dashboard is one ConfigMap
// with the sidecar's label and the dashboard's JSON unchanged.
func TestMonitoringRender(t *testing.T) {
	for _, o := range objects(t, render{name: "defaults"}.template(t)) {
		if o.GetKind() == "PrometheusRule" || o.GetLabels()["grafana_dashboard"] != "" {
			t.Errorf("the defaults render %s %s", o.GetKind(), o.GetName())
		}
	}

	raw, err := os.ReadFile(mixinRules)
	if err != nil {
		t.Fatal(err)
	}
	var rules map[string]any
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	dashboards, _ := filepath.Glob(filepath.Join(mixinDashboards, "*.json"))
	objs := objects(t, render{name: "monitoring", values: filepath.Join(chart, "ci", "monitoring-values.yaml")}.template(t))
	var prometheusRules []*unstructured.Unstructured
	configMaps := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		switch {
		case o.GetKind() == "PrometheusRule":
			prometheusRules = append(prometheusRules, o)
		case o.GetKind() == "ConfigMap" && o.GetLabels()["grafana_dashboard"] == "1":
			for k := range o.Object["data"].(map[string]any) {
				configMaps[k] = o
			}
		}
	}
	if len(prometheusRules) != 1 {
		t.Fatalf("%d PrometheusRules rendered; want 1", len(prometheusRules))
	}
	pr := prometheusRules[0]
	if pr.GetAPIVersion() != "monitoring.coreos.com/v1" || pr.GetNamespace() != "monitoring" || pr.GetLabels()["release"] != "kube-prometheus-stack" {
		t.Errorf("PrometheusRule %s in %q, labels %v: want monitoring.coreos.com/v1 in monitoring with release=kube-prometheus-stack", pr.GetAPIVersion(), pr.GetNamespace(), pr.GetLabels())
	}
	groups, _, _ := unstructured.NestedSlice(pr.Object, "spec", "groups")
	if !reflect.DeepEqual(normalize(t, groups), normalize(t, rules["groups"])) {
		t.Errorf("the PrometheusRule's groups are not %s's", mixinRules)
	}
	if len(configMaps) != len(dashboards) {
		t.Errorf("%d dashboard ConfigMaps; want one per dashboard, %d", len(configMaps), len(dashboards))
	}
	for _, f := range dashboards {
		cm, ok := configMaps[filepath.Base(f)]
		if !ok {
			t.Errorf("no ConfigMap holds %s", filepath.Base(f))
			continue
		}
		body, _, _ := unstructured.NestedString(cm.Object, "data", filepath.Base(f))
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// The block scalar drops the file's final newline (|-).
		if body+"\n" != string(raw) {
			t.Errorf("ConfigMap %s: %s is not the mixin's", cm.GetName(), filepath.Base(f))
		}
		if cm.GetNamespace() != namespace || cm.GetLabels()["team"] != "gpu-platform" || cm.GetAnnotations()["grafana_folder"] != "GPUs" {
			t.Errorf("ConfigMap %s in %q, labels %v, annotations %v", cm.GetName(), cm.GetNamespace(), cm.GetLabels(), cm.GetAnnotations())
		}
	}

	// The sidecar's label is the chart user's choice.
	out, err := helm(t, "template", release, chart, "--set", "monitoring.dashboards.enabled=true,monitoring.dashboards.label=dashboards,monitoring.dashboards.labelValue=gpu")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	n := 0
	for _, o := range objects(t, out) {
		if o.GetKind() == "ConfigMap" && o.GetLabels()["dashboards"] == "gpu" {
			n++
		}
	}
	if n != len(dashboards) {
		t.Errorf("%d ConfigMaps labelled dashboards=gpu; want %d", n, len(dashboards))
	}
}

// normalize decodes a value through YAML, so that rule groups from the
// rules file and from the render compare alike.
func normalize(t *testing.T, v any) any {
	t.Helper()
	raw, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := yaml.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
