//go:build e2e

// Package e2e runs the built otelcol-gpu binary (OTELCOL_GPU_BIN, built by
// `make build`) and checks what a user would see.
package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_GPU_BIN")
	if bin == "" {
		bin = filepath.Join("..", "bin", "otelcol-gpu")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("otelcol-gpu binary not found at %s (run make build, or set OTELCOL_GPU_BIN): %v", bin, err)
	}
	return bin
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects a process's output for concurrent reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type collector struct {
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan error
}

// start runs otelcol-gpu with the given arguments and stops it, by PID, when
// the test ends.
func start(t *testing.T, args ...string) *collector {
	t.Helper()
	return startEnv(t, nil, args...)
}

// startEnv is start with extra environment variables.
func startEnv(t *testing.T, env []string, args ...string) *collector {
	t.Helper()
	return startBinary(t, binary(t), env, args...)
}

// startBinary is startEnv with another binary (the agent).
func startBinary(t *testing.T, bin string, env []string, args ...string) *collector {
	t.Helper()
	c := &collector{logs: &syncBuffer{}, done: make(chan error, 1)}
	c.cmd = exec.Command(bin, args...)
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.Stdout, c.cmd.Stderr = c.logs, c.logs
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { c.done <- c.cmd.Wait() }()
	t.Cleanup(func() {
		if c.cmd.ProcessState == nil {
			_ = c.cmd.Process.Kill()
			<-c.done //nolint:errcheck // killed above: Wait can only report the kill
		}
		if t.Failed() {
			t.Logf("collector output:\n%s", c.logs.String())
		}
	})
	return c
}

// stop sends SIGTERM and waits for a clean exit.
func (c *collector) stop(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("collector exited with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("collector did not stop within 30 s of SIGTERM")
	}
}

func (c *collector) alive() bool {
	select {
	case err := <-c.done:
		c.done <- err
		return false
	default:
		return true
	}
}

func scrape(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

// waitForGPUs polls a Prometheus endpoint until want distinct GPU UUIDs
// appear in the label, or the deadline passes.
func waitForGPUs(t *testing.T, c *collector, url, label string, want int, deadline time.Duration) (string, time.Duration) {
	t.Helper()
	re := regexp.MustCompile(label + `="(GPU-[0-9a-f-]{36})"`)
	began := time.Now()
	var body string
	for time.Since(began) < deadline {
		if !c.alive() {
			t.Fatal("collector exited")
		}
		if b, err := scrape(url); err == nil {
			body = b
			ids := map[string]bool{}
			for _, m := range re.FindAllStringSubmatch(b, -1) {
				ids[m[1]] = true
			}
			if len(ids) == want {
				return body, time.Since(began)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("no %d GPUs labelled %s at %s within %v; last body:\n%.2000s", want, label, url, deadline, body)
	return "", 0
}

// TestE2ELocalExample runs the README's `make run` configuration and reads
// every simulated GPU's metrics back from the Prometheus endpoint.
func TestE2ELocalExample(t *testing.T) {
	port := freePort(t)
	c := start(t, "--config", filepath.Join("..", "examples", "local", "config.yaml"),
		fmt.Sprintf("--set=exporters::prometheus::endpoint=127.0.0.1:%d", port))
	// 16 NVIDIA GPUs on gpu-node-0 and 1, 8 on the second fleet's rack-b-0
	// to 3 (the AMD GPUs' UUIDs are not NVIDIA's GPU-...).
	body, took := waitForGPUs(t, c, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), "hw_id", 24, 15*time.Second)
	t.Logf("24 NVIDIA GPUs served %v after start", took.Round(100*time.Millisecond))
	// Two receivers feed the page: the first fleet's per-pod and AMD
	// series can come a batch after the second fleet's GPUs.
	amdDevices := regexp.MustCompile(`(?m)^hw_gpu_memory_usage_bytes\{[^}]*hw_vendor="AMD"[^}]*\}`)
	for deadline := time.Now().Add(10 * time.Second); len(amdDevices.FindAllString(body, -1)) < 15 && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		if b, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/metrics", port)); err == nil {
			body = b
		}
	}

	for _, family := range []string{
		"hw_gpu_utilization_ratio", "hw_gpu_memory_usage_bytes", "hw_power_watts", "hw_temperature_celsius",
		"hw_energy_joules_total", "nvidia_gpu_sm_active_ratio", "nvidia_gpu_dram_active_ratio",
		"nvidia_gpu_clock_frequency_hertz", "nvidia_gpu_clock_event_reasons",
	} {
		if !regexp.MustCompile(`(?m)^` + family + `\{[^}]*hw_id="GPU-`).MatchString(body) {
			t.Errorf("metric family %s missing or without hw_id", family)
		}
	}
	if !strings.Contains(body, `k8s_job_name="llm-pretrain"`) {
		t.Error("the training job's GPUs should carry k8s_job_name")
	}
	// The shared GPUs: gpu-node-1/gpu7 split between its three pods, each
	// with its own utilization; gpu-node-1/gpu5's three MIG instances
	// under their MIG UUIDs, each its pod's; the notebook's GPU held
	// through a DRA claim.
	perPod := regexp.MustCompile(`(?m)^otelgpu_process_utilization_ratio\{[^}]*k8s_pod_name="shared-notebook-1-7-\d"[^}]*\} (\S+)$`)
	values := map[string]bool{}
	for _, m := range perPod.FindAllStringSubmatch(body, -1) {
		values[m[1]] = true
	}
	if len(values) != 3 {
		t.Errorf("gpu-node-1/gpu7 should be split between 3 pods with distinct utilizations, got %v", values)
	}
	mig := regexp.MustCompile(`(?m)^hw_gpu_memory_usage_bytes\{[^}]*hw_id="MIG-[0-9a-f-]{36}"[^}]*\}`)
	migs := 0
	for _, line := range mig.FindAllString(body, -1) {
		if strings.Contains(line, `nvidia_gpu_mig_profile="2g.20gb"`) && strings.Contains(line, `k8s_pod_name="mig-inference-1-5-`) &&
			strings.Contains(line, `hw_name="gpu5/mig`) {
			migs++
		}
	}
	if migs != 3 {
		t.Errorf("want gpu-node-1/gpu5's 3 MIG instances under their MIG UUIDs with profile and pod, got %d", migs)
	}
	// The AMD node: 7 MI300Xs and the 8 partitions of one in CPX mode,
	// each a device, the partitions under their GPU's first.
	amd := regexp.MustCompile(`(?m)^hw_gpu_memory_usage_bytes\{[^}]*hw_vendor="AMD"[^}]*\}`).FindAllString(body, -1)
	parts := 0
	for _, line := range amd {
		if strings.Contains(line, `amd_gpu_partition_compute="CPX"`) && strings.Contains(line, `hw_parent="`) && strings.Contains(line, `k8s_pod_name="cpx-inference-2-7`) {
			parts++
		}
	}
	if len(amd) != 15 || parts != 8 {
		t.Errorf("want gpu-node-2's 15 AMD devices, 8 of them CPX partitions with hw_parent and a pod each; got %d and %d", len(amd), parts)
	}
	if !regexp.MustCompile(`(?m)^amd_gpu_umc_activity_ratio\{[^}]*host_name="gpu-node-2"`).MatchString(body) {
		t.Error("the AMD GPUs' memory controller activity should be served")
	}
	if !regexp.MustCompile(`(?m)^hw_gpu_utilization_ratio\{[^}]*k8s_resourceclaim_name="notebook-1-6-gpu"`).MatchString(body) {
		t.Error("the notebook's GPU should carry its DRA claim, k8s_resourceclaim_name")
	}
	c.stop(t)
}

// TestE2EDCGMExporterNaming checks the dcgm-exporter migration path: its
// metric names and labels, through the same Prometheus exporter.
func TestE2EDCGMExporterNaming(t *testing.T) {
	port := freePort(t)
	c := start(t, "--config", filepath.Join("..", "examples", "local", "config.yaml"),
		fmt.Sprintf("--set=exporters::prometheus::endpoint=127.0.0.1:%d", port),
		"--set=receivers::dcgm::naming=dcgm_exporter",
		// dcgm-exporter's names have no per-process series.
		"--set=receivers::dcgm::per_process::enabled=false",
		"--set=receivers::dcgm::collection_interval=1s",
		"--set=exporters::prometheus::translation_strategy=UnderscoreEscapingWithoutSuffixes")
	body, _ := waitForGPUs(t, c, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), "UUID", 16, 30*time.Second)
	for _, name := range []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_PROF_SM_ACTIVE"} {
		re := regexp.MustCompile(`(?m)^` + name + `\{[^}]*Hostname="gpu-node-[01]"[^}]*modelName="NVIDIA H100 80GB HBM3"`)
		if !re.MatchString(body) {
			t.Errorf("%s with dcgm-exporter labels missing", name)
		}
	}
	c.stop(t)
}

// TestE2ENoGPU runs the default backend on a machine without DCGM, NVML or
// AMD SMI:
// the collector must keep running, say once which libraries it tried, and
// stop cleanly.
func TestE2ENoGPU(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	port := freePort(t)
	err := os.WriteFile(cfg, []byte(fmt.Sprintf(`
receivers:
  dcgm:
    collection_interval: 200ms
    reconnect: {initial_interval: 100ms, max_interval: 400ms}
exporters:
  debug: {}
extensions:
  health_check:
    endpoint: 127.0.0.1:%d
service:
  extensions: [health_check]
  telemetry: {metrics: {level: none}}
  pipelines:
    metrics: {receivers: [dcgm], exporters: [debug]}
`, port)), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	c := start(t, "--config", cfg)
	time.Sleep(3 * time.Second)
	if !c.alive() {
		t.Fatal("the collector exited because no GPU library is present")
	}
	if _, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/", port)); err != nil {
		t.Fatalf("health check: %v", err)
	}
	logs := c.logs.String()
	for _, lib := range []string{"libdcgm.so.4", "libnvidia-ml.so.1", "libamd_smi.so"} {
		if n := strings.Count(logs, lib); n != 1 {
			t.Errorf("%s named %d times in the log; want once, however often it retries", lib, n)
		}
	}
	if !strings.Contains(logs, "GPU backend unavailable; retrying with back-off") {
		t.Error("no warning that the backend is unavailable")
	}
	c.stop(t)
}

// TestE2EAnalyzerVerdicts runs the local example as shipped (5 s interval)
// and waits for the analyzer's verdicts on the simulated faults: the slow
// ranks (gpu-node-0/gpu5 by its SM activity, the AMD gpu-node-2/gpu5 by its
// power) and the thermally throttled GPU (gpu-node-0/gpu2) must be visible
// within two minutes of start.
func TestE2EAnalyzerVerdicts(t *testing.T) {
	port := freePort(t)
	c := start(t, "--config", filepath.Join("..", "examples", "local", "config.yaml"),
		fmt.Sprintf("--set=exporters::prometheus::endpoint=127.0.0.1:%d", port))
	url := fmt.Sprintf("http://127.0.0.1:%d/metrics", port)
	straggler := series{"otelgpu_straggler_state", []string{`host_name="gpu-node-0"`, `hw_name="gpu5"`}, "1"}
	amdStraggler := series{"otelgpu_straggler_state", []string{`host_name="gpu-node-2"`, `hw_name="gpu5"`, `hw_vendor="AMD"`}, "1"}
	throttled := series{"otelgpu_bottleneck_state", []string{`host_name="gpu-node-0"`, `hw_name="gpu2"`, `otelgpu_bottleneck_class="throttled"`}, "1"}
	began := time.Now()
	var seenStraggler, seenAMDStraggler, seenThrottled time.Duration
	for time.Since(began) < 2*time.Minute && (seenStraggler == 0 || seenAMDStraggler == 0 || seenThrottled == 0) {
		if !c.alive() {
			t.Fatal("collector exited")
		}
		body, err := scrape(url)
		if err == nil {
			if seenStraggler == 0 && straggler.in(body) {
				seenStraggler = time.Since(began)
			}
			if seenAMDStraggler == 0 && amdStraggler.in(body) {
				seenAMDStraggler = time.Since(began)
			}
			if seenThrottled == 0 && throttled.in(body) {
				seenThrottled = time.Since(began)
			}
		}
		time.Sleep(time.Second)
	}
	if seenStraggler == 0 || seenAMDStraggler == 0 || seenThrottled == 0 {
		t.Fatalf("within 2 minutes: straggler seen after %v, AMD straggler after %v, throttled after %v (0 = never)",
			seenStraggler, seenAMDStraggler, seenThrottled)
	}
	t.Logf("straggler visible after %v, AMD straggler after %v, throttled GPU after %v",
		seenStraggler.Round(time.Second), seenAMDStraggler.Round(time.Second), seenThrottled.Round(time.Second))
	for _, line := range []string{
		"GPU is a straggler  gpu-node-0/gpu5  ml/llm-pretrain-worker-",
		"GPU is a straggler  gpu-node-2/gpu5  ml/llama-finetune-worker-",
	} {
		if !strings.Contains(c.logs.String(), line) {
			t.Errorf("no %q in the log: a straggler is logged as host/gpu and namespace/pod (console_short)", line)
		}
	}
	// The fleet summary, every 30 s: the notebook's idle GPU is priced.
	// 16 NVIDIA GPUs and gpu-node-1/gpu5's 3 MIG instances, 7 AMD GPUs
	// and the 8 partitions of gpu-node-2's GPU in CPX mode, each a device,
	// and the second fleet's 8 GPUs (rack-b-0 to 3).
	summary := regexp.MustCompile(`42 GPUs: [^\n]*1 idle \(1 held by a pod: \$6\.88/h wasted\)[^\n]*straggler[^\n]*gpu-node-0/gpu5 in ml/llm-pretrain`)
	for deadline := time.Now().Add(time.Minute); !summary.MatchString(c.logs.String()) && time.Now().Before(deadline); {
		time.Sleep(time.Second)
	}
	if !summary.MatchString(c.logs.String()) {
		t.Errorf("no fleet summary matching %s in the log", summary)
	}
	c.stop(t)
}

// series matches a Prometheus text-format sample by name, labels (in any
// order) and value.
type series struct {
	name   string
	labels []string
	value  string
}

func (s series) in(body string) bool {
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, s.name+"{") || !strings.HasSuffix(line, "} "+s.value) {
			continue
		}
		all := true
		for _, l := range s.labels {
			all = all && strings.Contains(line, l)
		}
		if all {
			return true
		}
	}
	return false
}

// TestE2EValidateExamples checks every shipped configuration against the
// built distribution: components, keys and values.
func TestE2EValidateExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	validated := 0
	for _, f := range files {
		// Kubernetes manifests live beside the configurations; a collector
		// configuration is the YAML with a service section.
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if yaml.Unmarshal(raw, &doc) != nil || doc["service"] == nil {
			continue
		}
		validated++
		out, err := exec.Command(binary(t), "validate", "--config="+f).CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
	if validated < 4 {
		t.Fatalf("validated only %d example configurations", validated)
	}
	// And validation really validates: a bad key is refused.
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("receivers: {dcgm: {backend: rocm}}\nexporters: {debug: {}}\nservice: {pipelines: {metrics: {receivers: [dcgm], exporters: [debug]}}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary(t), "validate", "--config="+bad).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `unknown backend "rocm"`) {
		t.Errorf("a bad backend should fail validation naming it; got %v:\n%s", err, out)
	}
}

// TestE2EValidateManifestConfigs validates the collector configurations
// inside the Kubernetes manifests (ConfigMaps, and the Operator's
// OpenTelemetryCollector resources) against the built distribution.
func TestE2EValidateManifestConfigs(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "distributions", "otelcol-gpu", "*", "*.yaml"))
	env := []string{"HOST_IP=10.0.0.1", "POD_IP=10.0.0.2", "POD_NAME=otelcol-gpu-remediation-0", "K8S_NODE_NAME=node-1", "K8S_POD_NAME=trainer-0"}
	configs := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for {
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				break
			}
			var config []byte
			switch doc["kind"] {
			case "ConfigMap":
				data, _ := doc["data"].(map[string]any)
				if s, ok := data["config.yaml"].(string); ok {
					config = []byte(s)
				}
			case "OpenTelemetryCollector":
				spec, _ := doc["spec"].(map[string]any)
				if spec["config"] != nil {
					config, _ = yaml.Marshal(spec["config"])
				}
			}
			if config == nil {
				continue
			}
			configs++
			path := filepath.Join(t.TempDir(), "config.yaml")
			if err := os.WriteFile(path, config, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(binary(t), "validate", "--config="+path)
			cmd.Env = append(os.Environ(), env...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s: the configuration of %v does not validate: %v\n%s", f, doc["metadata"], err, out)
			}
		}
	}
	if configs < 4 {
		t.Fatalf("found only %d collector configurations in the manifests", configs)
	}
}
