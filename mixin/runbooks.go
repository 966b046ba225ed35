package mixin

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// runbookSections are the headings every runbook has, in this order.
var runbookSections = []string{"## Meaning", "## Impact", "## Diagnosis", "## Mitigation"}

// labelTemplate is a runbook link templated on a label of the alert.
var labelTemplate = regexp.MustCompile(`^\{\{ \$labels\.(\w+) \}\}$`)

// CheckRunbooks checks every alert of a Prometheus rules file: a
// severity, and a runbook_url that is one base (ending in
// /docs/runbooks/) followed by a runbook's name and ".md", with that
// runbook in dir. A link templated on the gpu_alert label (the forwarded
// analyzer alerts) must have a runbook for every name in analyzerAlerts.
// Every runbook in dir must be some alert's. It returns the runbooks
// checked.
func CheckRunbooks(rulesYAML []byte, analyzerAlerts []string, dir string) ([]string, []error) {
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(rulesYAML, &rules); err != nil {
		return nil, []error{fmt.Errorf("rules: %w", err)}
	}
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	base := ""
	linked := map[string]bool{}
	alerts := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				continue
			}
			alerts++
			if r.Labels["severity"] == "" {
				fail("alert %s: no severity label", r.Alert)
			}
			url := r.Annotations["runbook_url"]
			i := strings.LastIndex(url, "/docs/runbooks/")
			if i < 0 || !strings.HasSuffix(url, ".md") {
				fail("alert %s: runbook_url %q is not .../docs/runbooks/NAME.md", r.Alert, url)
				continue
			}
			b, name := url[:i], strings.TrimSuffix(url[i+len("/docs/runbooks/"):], ".md")
			if base == "" {
				base = b
			} else if b != base {
				fail("alert %s: runbook_url %q is not under %s/docs/runbooks/ as the others are", r.Alert, url, base)
			}
			names := []string{name}
			if m := labelTemplate.FindStringSubmatch(name); m != nil {
				if m[1] != "gpu_alert" {
					fail("alert %s: runbook_url templated on %s, whose values are not known", r.Alert, m[1])
					continue
				}
				names = analyzerAlerts
			} else if name != r.Alert {
				fail("alert %s: runbook_url names the runbook %s, not the alert's", r.Alert, name)
			}
			for _, n := range names {
				linked[n] = true
				if err := checkRunbook(filepath.Join(dir, n+".md"), n); err != nil {
					fail("alert %s: %v", r.Alert, err)
				}
			}
		}
	}
	if alerts == 0 {
		fail("no alerts in the rules")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range files {
		n := strings.TrimSuffix(filepath.Base(f), ".md")
		if n != "README" && !linked[n] {
			fail("runbook %s is no alert's", f)
		}
	}
	out := make([]string, 0, len(linked))
	for n := range linked {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, errs
}

// checkRunbook: the file exists, is titled with the alert's name, and has
// the sections in order.
func checkRunbook(path, name string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("no runbook: %w", err)
	}
	text := string(raw)
	if first, _, _ := strings.Cut(text, "\n"); first != "# "+name {
		return fmt.Errorf("%s: first line %q; want %q", path, first, "# "+name)
	}
	at := 0
	for _, s := range runbookSections {
		i := strings.Index(text[at:], "\n"+s+"\n")
		if i < 0 {
			return fmt.Errorf("%s: no %q section after the previous one (want %s)", path, s, strings.Join(runbookSections, ", "))
		}
		at += i + 1
	}
	return nil
}

// analyzerNames is where the analyzer names its alerts.
var analyzerNames = regexp.MustCompile(`alertNames = \[NumAlerts\]string\{([^}]*)\}`)

// AnalyzerAlerts reads the analyzer's alert names from its source, so
// that a new analyzer alert without a runbook fails the test.
func AnalyzerAlerts(rulesGo []byte) ([]string, error) {
	m := analyzerNames.FindSubmatch(rulesGo)
	if m == nil {
		return nil, fmt.Errorf("no alertNames = [NumAlerts]string{...} in the analyzer's source")
	}
	var out []string
	for _, s := range strings.Split(string(m[1]), ",") {
		if s = strings.Trim(strings.TrimSpace(s), `"`); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
