package metricnames_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	ot "github.com/prometheus/otlptranslator"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// root is the module root, from this package's directory.
const root = "../.."

// promNames is every name the collector's metrics and attributes have in
// Prometheus, as the prometheus and prometheusremotewrite exporters write
// them (Prometheus' own OTLP translation, unit and type suffixes on, as in
// examples/prometheus): metric names and label names.
func promNames(t *testing.T) map[string]bool {
	t.Helper()
	type declared struct {
		Unit  string
		Gauge *struct{}
		Sum   *struct{ Monotonic bool }
	}
	files := map[string]map[string]declared{}
	kinds := func(origin string) map[string]declared {
		if md, ok := files[origin]; ok {
			return md
		}
		name := "metadata.yaml"
		if origin == "internal/metricnames" {
			name = "undeclared.yaml"
		}
		raw, err := os.ReadFile(filepath.Join(root, origin, name))
		require.NoError(t, err)
		var md struct{ Metrics map[string]declared }
		require.NoError(t, yaml.Unmarshal(raw, &md), origin)
		files[origin] = md.Metrics
		return md.Metrics
	}
	names := map[string]bool{}
	for _, m := range &metricnames.Metrics {
		d, ok := kinds(m.Origin)[m.Name]
		require.Truef(t, ok, "%s is not in %s", m.Name, m.Origin)
		typ := ot.MetricType(ot.MetricTypeGauge)
		if d.Sum != nil {
			typ = ot.MetricTypeNonMonotonicCounter
			if d.Sum.Monotonic {
				typ = ot.MetricTypeMonotonicCounter
			}
		}
		n, err := (&ot.MetricNamer{WithMetricSuffixes: true}).Build(ot.Metric{Name: m.Name, Unit: m.Unit, Type: typ})
		require.NoError(t, err)
		names[n] = true
	}
	for _, a := range &metricnames.Attributes {
		n, err := (&ot.LabelNamer{}).Build(a.Name)
		require.NoError(t, err)
		names[n] = true
	}
	return names
}

var (
	// quoted is a PromQL string: label values and regular expressions,
	// which are no names.
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'` + "|`[^`]*`")
	// ours is a name in the collector's namespaces, not part of a longer
	// one (a recording rule's level:metric:operations has colons).
	ours = regexp.MustCompile(`(?:^|[^a-zA-Z0-9_:])((?:hw|nvidia|amd|otelgpu|gpu)_[a-zA-Z0-9_]*)`)
)

// unknownNames returns the names in expr, in the collector's namespaces,
// that no metric or attribute of the collector has in Prometheus.
func unknownNames(expr string, known map[string]bool) []string {
	var out []string
	for _, m := range ours.FindAllStringSubmatch(quoted.ReplaceAllString(expr, `""`), -1) {
		if !known[m[1]] {
			out = append(out, m[1])
		}
	}
	return out
}

// TestRulesAndDashboardsNameWhatTheCollectorWrites: every metric and label
// name in the collector's namespaces that a Prometheus rule
// (examples/prometheus/rules.yaml, from the mixin) or a dashboard query
// (examples/grafana) spells is one the collector writes. promtool's rule
// tests feed series by the names the rules spell, and the end-to-end
// Prometheus test reads only what its collectors run (no autoscaler, no
// remediation), so a rule on a misspelt or renamed metric would load,
// pass its tests, and never fire.
func TestRulesAndDashboardsNameWhatTheCollectorWrites(t *testing.T) {
	known := promNames(t)
	require.True(t, known["gpu_autoscale_serving_queue_wait_seconds"], "a gauge in seconds gets _seconds")
	require.True(t, known["otelgpu_bottleneck_time_seconds_total"], "a counter gets _total")
	require.True(t, known["hw_id"], "attributes are labels")

	var exprs []string
	raw, err := os.ReadFile(filepath.Join(root, "examples/prometheus/rules.yaml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert, Record, Expr string
			}
		}
	}
	require.NoError(t, yaml.Unmarshal(raw, &rules))
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			exprs = append(exprs, r.Expr)
		}
	}
	dashboards, err := filepath.Glob(filepath.Join(root, "examples/grafana/*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, dashboards)
	for _, path := range dashboards {
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		var d any
		require.NoError(t, json.Unmarshal(raw, &d), path)
		exprs = append(exprs, queries(d)...)
	}
	require.Greater(t, len(exprs), 40, "the rules' and the panels' queries were read")

	unknown := map[string]bool{}
	for _, e := range exprs {
		for _, n := range unknownNames(e, known) {
			unknown[n] = true
		}
	}
	var list []string
	for n := range unknown {
		list = append(list, n)
	}
	sort.Strings(list)
	require.Empty(t, list, "names the collector does not write (a typo, or a metric renamed in metadata.yaml)")
}

// queries collects the "expr" and "query" strings of a dashboard's panels
// and variables.
func queries(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && (k == "expr" || k == "query") {
				out = append(out, s)
				continue
			}
			out = append(out, queries(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, queries(e)...)
		}
	}
	return out
}

// The check finds a misspelt metric and a misspelt label, and passes
// label values and recording rules' names.
func TestUnknownNamesFindsMisspellings(t *testing.T) {
	known := map[string]bool{"gpu_autoscale_serving_queue_wait_seconds": true, "hw_id": true}
	require.Empty(t, unknownNames(`max by (hw_id) (gpu_autoscale_serving_queue_wait_seconds{x=~"hw_thermal|gpu_x"}) > 2`, known))
	require.Empty(t, unknownNames(`sum(class:otelgpu_bottleneck_time:gpu_hours_1h)`, known), "a recording rule's name")
	require.Equal(t, []string{"gpu_autoscale_serving_queue_wait_second"}, unknownNames(`gpu_autoscale_serving_queue_wait_second > 2`, known))
	require.Equal(t, []string{"hw_uuid"}, unknownNames(`count by (hw_uuid) (gpu_autoscale_serving_queue_wait_seconds)`, known))
}
