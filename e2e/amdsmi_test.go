//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
)

// amdConfig is a collector on an AMD node: the default backend (auto,
// which finds neither DCGM nor NVML here and goes on to AMD SMI) opening
// the stand-in library, CPER cursors in file_storage, served by the
// prometheus exporter.
func amdConfig(t *testing.T, lib, storage string, port int, naming string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
receivers:
  dcgm:
    collection_interval: 500ms
    hostname: amd-node-0
    naming: %s
    reconnect: {initial_interval: 100ms, max_interval: 400ms}
    amdsmi:
      library_path: %s
      storage: file_storage
extensions:
  file_storage:
    directory: %s
exporters:
  prometheus:
    endpoint: 127.0.0.1:%d
    resource_to_telemetry_conversion: {enabled: true}
    without_scope_info: true
service:
  extensions: [file_storage]
  telemetry: {metrics: {level: none}}
  pipelines:
    metrics: {receivers: [dcgm], exporters: [prometheus]}
`, naming, lib, storage, port)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitFor scrapes url until re matches want lines, and returns the body.
func waitFor(t *testing.T, c *collector, url string, re *regexp.Regexp, want int) string {
	t.Helper()
	var body string
	for began := time.Now(); time.Since(began) < 30*time.Second; time.Sleep(250 * time.Millisecond) {
		if !c.alive() {
			t.Fatal("collector exited")
		}
		if b, err := scrape(url); err == nil {
			body = b
			if len(re.FindAllString(b, -1)) == want {
				return body
			}
		}
	}
	t.Fatalf("want %d lines matching %s at %s; last body:\n%.3000s", want, re, url, body)
	return ""
}

// TestE2EAMDSMI runs the built binary against the stand-in libamd_smi.so:
// an MI300X in SPX mode, one in CPX mode, an MI250. It reads them through
// the default backend, in both namings, and keeps the CPER cursor across a
// restart.
func TestE2EAMDSMI(t *testing.T) {
	dir := t.TempDir()
	lib, err := amdsmistandin.Build(filepath.Join("..", "receiver", "dcgmreceiver", "testdata", "standin-amdsmi", "libamd_smi.c"), dir)
	if err != nil {
		t.Fatal(err)
	}
	st := amdsmistandin.Fleet()
	st.CPER = []amdsmistandin.CPER{{GPU: 0, Severity: 2, AFIDs: []uint64{30}}, {GPU: 0, Severity: 2, AFIDs: []uint64{30}}}
	st.ECC = []amdsmistandin.ECC{{GPU: 0, Block: "umc", Corrected: 4, Uncorr: 1}}
	state := filepath.Join(dir, "state")
	if err := st.Write(state); err != nil {
		t.Fatal(err)
	}
	env := []string{amdsmistandin.StateEnv + "=" + state}
	storage := t.TempDir()
	cper := regexp.MustCompile(`(?m)^amd_gpu_cper_records_total\{[^}]*amd_gpu_afid="30"[^}]*\} (\d+)$`)

	port := freePort(t)
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	c := startEnv(t, env, "--config", amdConfig(t, lib, storage, port, "otel"))
	body := waitFor(t, c, url, regexp.MustCompile(`(?m)^hw_gpu_memory_usage_bytes\{[^}]*hw_vendor="AMD"`), 10)
	for _, want := range []string{
		`hw_gpu_utilization_ratio{`, `amd_gpu_umc_activity_ratio{`, `amd_gpu_temperature_celsius{`, `amd_gpu_ecc_errors_total{`,
		`hw_model="AMD Instinct MI300X OAM"`, `hw_model="AMD Instinct MI250X / MI250"`, `hw_parent="9fff74b9-0000-1000-8044-4a2fb30adeb0"`,
		`host_name="amd-node-0"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("%s missing from the AMD node's metrics", want)
		}
	}
	if m := cper.FindStringSubmatch(body); len(m) < 2 || m[1] != "2" {
		t.Errorf("want 2 CPER records of AFID 30, got %v", m)
	}
	if strings.Contains(c.logs.String(), "nvidia_gpu") {
		t.Error("no NVIDIA series for AMD GPUs")
	}
	c.stop(t)

	// A restart reads on from the saved cursor: a new record counts, the
	// two already read do not count again.
	st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 2, AFIDs: []uint64{30}})
	if err := st.Write(state); err != nil {
		t.Fatal(err)
	}
	c = startEnv(t, env, "--config", amdConfig(t, lib, storage, port, "otel"))
	body = waitFor(t, c, url, cper, 1)
	if m := cper.FindStringSubmatch(body); m[1] != "1" {
		t.Errorf("after a restart, want the 1 new CPER record counted, got %s", m[1])
	}
	c.stop(t)

	// AMD's exporter's names and labels, as its dashboards query them.
	port = freePort(t)
	url = fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	c = startEnv(t, env, "--config", amdConfig(t, lib, t.TempDir(), port, "device_metrics_exporter"),
		"--set=exporters::prometheus::translation_strategy=UnderscoreEscapingWithoutSuffixes",
		"--set=exporters::prometheus::resource_to_telemetry_conversion::enabled=false")
	body = waitFor(t, c, url, regexp.MustCompile(`(?m)^gpu_total_vram\{`), 10)
	re := regexp.MustCompile(`(?m)^gpu_gfx_activity\{[^}]*gpu_uuid="ccff74a1-0000-1000-80e0-c6d49f5b0d86"[^}]*\} 87$`)
	if !re.MatchString(body) {
		t.Errorf("gpu_gfx_activity of the SPX MI300X missing; body:\n%.3000s", body)
	}
	for _, name := range []string{"gpu_power_usage", "gpu_package_power", "gpu_average_package_power", "gpu_junction_temperature", "gpu_used_vram", "gpu_umc_activity", "gpu_clock", "gpu_ecc_uncorrect_total"} {
		if !regexp.MustCompile(`(?m)^` + name + `\{`).MatchString(body) {
			t.Errorf("%s missing", name)
		}
	}
	c.stop(t)
}

// TestE2EAMDSMIMissing runs backend amdsmi where the library is absent:
// the collector starts, stays up and says which library it tried.
func TestE2EAMDSMIMissing(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libamd_smi.so")
	port := freePort(t)
	c := start(t, "--config", amdConfig(t, missing, t.TempDir(), port, "otel"), "--set=receivers::dcgm::backend=amdsmi")
	time.Sleep(2 * time.Second)
	if !c.alive() {
		t.Fatal("the collector exited because AMD SMI is absent")
	}
	if logs := c.logs.String(); !strings.Contains(logs, missing) || !strings.Contains(logs, "GPU backend unavailable; retrying with back-off") {
		t.Errorf("the log should name %s once and say the backend is retried:\n%s", missing, logs)
	}
	c.stop(t)
}
