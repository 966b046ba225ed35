package mixin

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The generated files this module checks, relative to mixin/.
var (
	rulesFile      = filepath.Join("..", "examples", "prometheus", "rules.yaml")
	dashboardsGlob = filepath.Join("..", "examples", "grafana", "*.json")
	runbooksDir    = filepath.Join("..", "docs", "runbooks")
	analyzerSource = filepath.Join("..", "processor", "gpuanalyzerprocessor", "internal", "analysis", "rules.go")
	exporterSource = filepath.Join("..", "exporter", "gpualertmanagerexporter", "consume.go")
	// alertRemediation = "GPURemediationUnderway" and the like.
	exporterAlertRE = regexp.MustCompile(`(?m)^\s*alert\w+\s*=\s*"(GPU\w+)"`)
)

func TestDashboardsLint(t *testing.T) {
	files, err := filepath.Glob(dashboardsGlob)
	if err != nil || len(files) < 4 {
		t.Fatalf("found %d dashboards in %s (run make mixin): %v", len(files), dashboardsGlob, err)
	}
	uids := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		uid, errs := LintDashboard(raw)
		for _, err := range errs {
			t.Errorf("%s: %v", f, err)
		}
		if other, dup := uids[uid]; dup && uid != "" {
			t.Errorf("%s: uid %q is also %s's", f, uid, other)
		}
		uids[uid] = f
	}
}

// TestLintDashboardFindsFaults: each fault the lint looks for, in one
// dashboard, is reported.
func TestLintDashboardFindsFaults(t *testing.T) {
	bad := `{
	  "title": "bad",
	  "templating": {"list": [
	    {"name": "vendor", "type": "query", "datasource": {"uid": "${datasource}"}, "query": {"query": "label_values(up{, instance)"}}
	  ]},
	  "panels": [
	    {"id": 1, "title": "a", "type": "stat", "datasource": {"uid": "P1234"}, "targets": [{"refId": "A", "expr": "sum(up"}]},
	    {"id": 1, "title": "b", "type": "stat", "datasource": {"uid": "${datasource}"}, "targets": [{"refId": "A", "expr": "up{job=~\"$job\"}"}, {"refId": "A", "expr": "up"}]},
	    {"id": 2, "title": "c", "type": "stat", "datasource": {"uid": "${datasource}"}}
	  ]
	}`
	_, errs := LintDashboard([]byte(bad))
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"no uid",
		"no datasource variable",
		`variable "vendor": query "up{" does not parse`,
		`panel 1 "a": datasource uid "P1234" is not a datasource variable`,
		`panel 1 "a": target A: query "sum(up" does not parse`,
		`panel 1 "b": id 1 is also panel "a"'s`,
		`panel 1 "b": target A: query "up{job=~\"$job\"}" uses undefined variables [job]`,
		`panel 1 "b": target refId "A" missing or repeated`,
		`panel 2 "c": no targets`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("lint did not report %q; it reported:\n%s", want, all)
		}
	}
	if _, errs := LintDashboard([]byte("{")); len(errs) != 1 {
		t.Errorf("invalid JSON: %v", errs)
	}
}

func analyzerAlerts(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(analyzerSource)
	if err != nil {
		t.Fatal(err)
	}
	names, err := AnalyzerAlerts(src)
	if err != nil || len(names) < 5 {
		t.Fatalf("%s: %v %v", analyzerSource, names, err)
	}
	return names
}

// exporterAlerts are the alerts the gpu_alertmanager exporter makes of the
// remediation's incidents: their names are its consume.go constants.
func exporterAlerts(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(exporterSource)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range exporterAlertRE.FindAllSubmatch(src, -1) {
		names = append(names, string(m[1]))
	}
	if len(names) < 2 {
		t.Fatalf("%s: found only %v", exporterSource, names)
	}
	return names
}

// TestRunbooks: every alert of the shipped rules links its runbook, and
// every runbook is there, the forwarded analyzer alerts' included.
func TestRunbooks(t *testing.T) {
	raw, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	analyzer := append(analyzerAlerts(t), exporterAlerts(t)...)
	checked, errs := CheckRunbooks(raw, analyzer, runbooksDir)
	for _, err := range errs {
		t.Error(err)
	}
	for _, n := range append([]string{"GPUCriticalXID", "GPUStragglerSlowsJob"}, analyzer...) {
		if !contains(checked, n) {
			t.Errorf("runbook %s not checked; checked %v", n, checked)
		}
	}
}

// TestCheckRunbooksFindsFaults: an alert without a link, a link to a
// runbook that is missing or misnamed, a runbook without its sections and
// one no alert links are reported.
func TestCheckRunbooksFindsFaults(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("A.md", "# A\n\n## Meaning\n\n## Impact\n\n## Diagnosis\n\n## Mitigation\n")
	write("B.md", "# B\n\n## Meaning\n\n## Mitigation\n")
	write("Orphan.md", "# Orphan\n")
	write("X.md", "# X\n\n## Meaning\n\n## Impact\n\n## Diagnosis\n\n## Mitigation\n")
	rules := `groups:
  - name: g
    rules:
      - record: r
        expr: up
      - alert: A
        expr: up == 0
        labels: {severity: critical}
        annotations: {runbook_url: "https://example.com/docs/runbooks/A.md"}
      - alert: B
        expr: up == 0
        labels: {severity: warning}
        annotations: {runbook_url: "https://example.com/docs/runbooks/B.md"}
      - alert: C
        expr: up == 0
        annotations: {summary: "no link"}
      - alert: D
        expr: up == 0
        labels: {severity: warning}
        annotations: {runbook_url: "https://example.com/docs/runbooks/A.md"}
      - alert: E
        expr: up == 0
        labels: {severity: warning}
        annotations: {runbook_url: "https://example.com/docs/runbooks/{{ $labels.gpu_alert }}.md"}
`
	_, errs := CheckRunbooks([]byte(rules), []string{"X", "Y"}, dir)
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`alert B: ` + filepath.Join(dir, "B.md") + `: no "## Impact" section`,
		`alert C: no severity label`,
		`alert C: runbook_url "" is not .../docs/runbooks/NAME.md`,
		`alert D: runbook_url names the runbook A, not the alert's`,
		`alert E: no runbook: open ` + filepath.Join(dir, "Y.md"),
		`runbook ` + filepath.Join(dir, "Orphan.md") + ` is no alert's`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("CheckRunbooks did not report %q; it reported:\n%s", want, all)
		}
	}
	if len(errs) != 6 {
		t.Errorf("%d faults reported; want 6:\n%s", len(errs), all)
	}
}

func TestAnalyzerAlerts(t *testing.T) {
	got, err := AnalyzerAlerts([]byte(`var alertNames = [NumAlerts]string{"GPUFaulted", "GPUIdle"}`))
	if err != nil || !reflect.DeepEqual(got, []string{"GPUFaulted", "GPUIdle"}) {
		t.Errorf("got %v, %v", got, err)
	}
	if _, err := AnalyzerAlerts([]byte("package analysis")); err == nil {
		t.Error("no names and no error")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
