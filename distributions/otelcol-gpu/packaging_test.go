package manifests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The two units are one unit with two names: a hardening change made to
// one and not the other fails here.
func TestUnitsDifferOnlyInName(t *testing.T) {
	full, err := os.ReadFile("otelcol-gpu.service")
	if err != nil {
		t.Fatal(err)
	}
	agent, err := os.ReadFile("otelcol-gpu-agent.service")
	if err != nil {
		t.Fatal(err)
	}
	// Comments and the description say which is which; the rest must match.
	norm := func(b []byte) []string {
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "Description=") {
				continue
			}
			out = append(out, strings.ReplaceAll(l, "otelcol-gpu-agent", "otelcol-gpu"))
		}
		return out
	}
	f, a := norm(full), norm(agent)
	if len(f) != len(a) {
		t.Fatalf("otelcol-gpu.service has %d lines that matter, otelcol-gpu-agent.service %d", len(f), len(a))
	}
	for i := range f {
		if f[i] != a[i] {
			t.Errorf("line %d: otelcol-gpu.service says %q, the agent's unit %q", i+1, f[i], a[i])
		}
	}
	if !strings.Contains(string(agent), "ExecStart=/usr/bin/otelcol-gpu-agent $OTELCOL_GPU_OPTIONS") ||
		!strings.Contains(string(agent), "User=otelcol-gpu\n") {
		t.Errorf("the agent's unit must run /usr/bin/otelcol-gpu-agent as the shared user otelcol-gpu")
	}
}

// Every ${PKG_...} in nfpm.yaml is one tools/release/package.sh fills in,
// and every file the packages install is in the repository.
func TestNFPMDescriptionIsComplete(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("packaging", "nfpm.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "tools", "release", "package.sh"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`\$\{(PKG_[A-Z]+)\}`).FindAllStringSubmatch(string(raw), -1) {
		if !strings.Contains(string(script), `\${`+m[1]+`}`) {
			t.Errorf("nfpm.yaml uses ${%s}, which package.sh does not fill in", m[1])
		}
	}
	for _, name := range []string{"otelcol-gpu", "otelcol-gpu-agent"} {
		for _, m := range regexp.MustCompile(`(?m)^\s+- src: (\S+)$`).FindAllStringSubmatch(string(raw), -1) {
			src := strings.ReplaceAll(m[1], "${PKG_NAME}", name)
			if strings.Contains(src, "${") {
				continue // the binary and the generated scripts
			}
			if _, err := os.Stat(filepath.Join("..", "..", src)); err != nil {
				t.Errorf("the %s package installs %s, which is not in the repository: %v", name, src, err)
			}
		}
	}
}

// The maintainer scripts are POSIX sh (dpkg and rpm run them with /bin/sh)
// and name the package only through @NAME@.
func TestMaintainerScripts(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("packaging", "scripts", "*.sh"))
	if err != nil || len(scripts) != 4 {
		t.Fatalf("want the four maintainer scripts, have %v (%v)", scripts, err)
	}
	for _, s := range scripts {
		if out, err := exec.Command("sh", "-n", s).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", s, err, out)
		}
		raw, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		body := strings.ReplaceAll(string(raw), "otelcol-gpu collector", "")
		// The shared user and group are otelcol-gpu; a unit or a path is @NAME@.
		for _, l := range strings.Split(body, "\n") {
			if strings.Contains(l, ".service") && !strings.Contains(l, "@NAME@.service") {
				t.Errorf("%s: %q names a unit other than @NAME@'s", s, l)
			}
		}
	}
}
