//go:build e2e

package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// TestE2EPackageDeb installs the .deb of the binary make build made, as a
// user would (dpkg -i), runs the command line of the unit it installed
// (there is no systemd in CI) as the unit's user against the simulated
// backend, scrapes it, then removes the package and checks that only its
// configuration files are left, and purges it and checks nothing is.
func TestE2EPackageDeb(t *testing.T) {
	if _, err := exec.LookPath("dpkg"); err != nil {
		sharedtest.Need(t, "dpkg: the .deb test needs a Debian-like system")
	}
	if os.Geteuid() != 0 {
		sharedtest.Need(t, "root, to install a .deb")
	}
	const name = "otelcol-gpu"
	if out, err := exec.Command("dpkg-query", "-W", "-f=${db:Status-Status}", name).Output(); err == nil && strings.TrimSpace(string(out)) != "not-installed" && len(out) > 0 {
		t.Fatalf("%s is already installed here (%s): this test installs and purges it, so it will not touch an installed copy", name, out)
	}

	// The package of the binary under test (make deb builds nothing).
	bin, err := filepath.Abs(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	dist := t.TempDir()
	mustRun(t, "make", "-C", "..", "--no-print-directory", "deb", "DEB_BIN="+bin, "DEB_DIR="+dist)
	debs, _ := filepath.Glob(filepath.Join(dist, name+"_*_amd64.deb"))
	if len(debs) != 1 {
		t.Fatalf("make deb left %v in %s, want one %s_*_amd64.deb", debs, dist, name)
	}
	t.Cleanup(func() { _ = exec.Command("dpkg", "--purge", name).Run() })
	mustRun(t, "dpkg", "-i", debs[0])

	files := lines(mustRun(t, "dpkg-query", "-L", name))
	for _, want := range []string{"/usr/bin/" + name, "/usr/lib/systemd/system/" + name + ".service",
		"/etc/" + name + "/config.yaml", "/etc/" + name + "/" + name + ".conf"} {
		if !slices.Contains(files, want) {
			t.Errorf("the package does not install %s; it has %v", want, files)
		}
	}
	if out, err := exec.Command("getent", "passwd", "otelcol-gpu").Output(); err != nil || !strings.Contains(string(out), "/usr/sbin/nologin") {
		t.Errorf("no system user otelcol-gpu without a login after install: %q %v", out, err)
	}
	version := strings.TrimSpace(mustRun(t, "dpkg-query", "-W", "-f=${Version}", name))
	if out := mustRun(t, "/usr/bin/"+name, "--version"); !strings.Contains(out, version) {
		t.Errorf("%s --version says %q; the package's version is %s", name, out, version)
	}

	// The unit's command line, as systemd would build it: the environment
	// file, then ExecStart with $VAR split at whitespace, as the user.
	unit := readUnit(t, "/usr/lib/systemd/system/"+name+".service")
	env := readEnvFile(t, unit["EnvironmentFile"])
	argv := expandExecStart(t, unit["ExecStart"], env)
	if argv[0] != "/usr/bin/"+name {
		t.Fatalf("ExecStart runs %s, not the installed /usr/bin/%s", argv[0], name)
	}
	user := unit["User"]
	if user == "" || user == "root" {
		t.Fatalf("the unit runs as %q: it must have its own unprivileged user", user)
	}
	prom, health := freePort(t), freePort(t)
	cmdline := append([]string{"--reuid=" + user, "--regid=" + unit["Group"], "--init-groups", "--"}, argv...)
	c := startBinary(t, "setpriv", append(envList(env),
		"OTELCOL_GPU_BACKEND=simulated",
		fmt.Sprintf("OTELCOL_GPU_PROMETHEUS_ENDPOINT=127.0.0.1:%d", prom),
		fmt.Sprintf("OTELCOL_GPU_HEALTH_ENDPOINT=127.0.0.1:%d", health)), cmdline...)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", prom)
	body, took := waitForGPUs(t, c, url, "hw_id", 16, 60*time.Second)
	t.Logf("the installed unit's command line, as %s, served 16 simulated GPUs after %v", user, took.Round(time.Millisecond))
	// And the analyzer runs in it, as the packaged configuration says.
	deadline := time.Now().Add(90 * time.Second)
	for !strings.Contains(body, "otelgpu_bottleneck_state{") && time.Now().Before(deadline) {
		time.Sleep(time.Second)
		body, _ = scrape(url)
	}
	if !strings.Contains(body, "otelgpu_bottleneck_state{") {
		t.Errorf("no analyzer verdict (otelgpu_bottleneck_state) within 90 s at %s", url)
	}
	c.stop(t)

	// The agent's configuration, beside it, is one the agent's build takes:
	// validated by the full build, which holds every component it names.
	if out, err := exec.Command(bin, "validate", "--config=../distributions/otelcol-gpu/packaging/otelcol-gpu-agent/config.yaml").CombinedOutput(); err != nil {
		t.Errorf("the agent package's config.yaml: %v\n%s", err, out)
	}

	// Removed: the binary and the unit go, the configuration stays.
	conffiles := conffilesOf(t, name)
	if !slices.Contains(conffiles, "/etc/"+name+"/config.yaml") {
		t.Errorf("config.yaml is not marked as a configuration file: conffiles %v", conffiles)
	}
	mustRun(t, "dpkg", "--remove", name)
	if st := strings.TrimSpace(mustRun(t, "dpkg-query", "-W", "-f=${db:Status-Status}", name)); st != "config-files" {
		t.Errorf("after dpkg --remove the package is %q, want config-files", st)
	}
	for _, f := range files {
		fi, err := os.Lstat(f)
		if err != nil || fi.IsDir() {
			continue
		}
		if !slices.Contains(conffiles, f) {
			t.Errorf("%s is left after dpkg --remove and is not a configuration file", f)
		}
	}
	// Purged: nothing of the package is left.
	mustRun(t, "dpkg", "--purge", name)
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil && !isSystemDir(f) {
			t.Errorf("%s is left after dpkg --purge", f)
		}
	}
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// readUnit reads the [Service] keys of a unit file (the last of a repeated
// key wins; the test reads only keys set once).
func readUnit(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string]string{}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		switch {
		case l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";"):
		case strings.HasPrefix(l, "["):
			section = l
		case section == "[Service]":
			k, v, ok := strings.Cut(l, "=")
			if ok {
				keys[k] = v
			}
		}
	}
	if keys["ExecStart"] == "" {
		t.Fatalf("%s has no ExecStart in [Service]", path)
	}
	return keys
}

var envLine = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=(.*)$`)

// readEnvFile reads a systemd EnvironmentFile: KEY=value lines, a value
// in double quotes taken as one word, # comments. A leading "-" (file may
// be missing) is not allowed here: the package must ship the file.
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	if path == "" || strings.HasPrefix(path, "-") {
		t.Fatalf("EnvironmentFile=%q: the unit must name the file the package installs, not an optional one", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		m := envLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s: %q is not KEY=value", path, l)
		}
		env[m[1]] = strings.Trim(m[2], `"`)
	}
	return env
}

// expandExecStart splits ExecStart as systemd does for the forms the unit
// uses: words at whitespace, $VAR replaced by its value split at
// whitespace, ${VAR} by its value as one word.
func expandExecStart(t *testing.T, line string, env map[string]string) []string {
	t.Helper()
	var argv []string
	for _, w := range strings.Fields(line) {
		switch {
		case strings.HasPrefix(w, "${") && strings.HasSuffix(w, "}"):
			argv = append(argv, env[w[2:len(w)-1]])
		case strings.HasPrefix(w, "$"):
			v, ok := env[w[1:]]
			if !ok {
				t.Fatalf("ExecStart uses %s, which the environment file does not set", w)
			}
			argv = append(argv, strings.Fields(v)...)
		default:
			argv = append(argv, w)
		}
	}
	return argv
}

func envList(env map[string]string) []string {
	var out []string
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

func conffilesOf(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, l := range lines(mustRun(t, "dpkg-query", "-W", "-f=${Conffiles}", name)) {
		// " /etc/x/config.yaml <md5sum>"
		if f := strings.Fields(l); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	return out
}

// isSystemDir: directories the package lists but does not own alone.
func isSystemDir(path string) bool {
	switch path {
	case "/.", "/etc", "/usr", "/usr/bin", "/usr/lib", "/usr/lib/systemd", "/usr/lib/systemd/system", "/usr/share", "/usr/share/doc":
		return true
	}
	return false
}
