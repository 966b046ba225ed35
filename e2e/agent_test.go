//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// agentBinary is the lean node agent, OTELCOL_GPU_AGENT_BIN or the one
// `make build-agent` writes.
func agentBinary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("OTELCOL_GPU_AGENT_BIN")
	if bin == "" {
		bin = filepath.Join("..", "bin", "otelcol-gpu-agent")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("otelcol-gpu-agent binary not found at %s (run make build-agent, or set OTELCOL_GPU_AGENT_BIN): %v", bin, err)
	}
	return bin
}

// TestE2EAgentComponents: the agent carries exactly the components a GPU
// node needs, and nothing else: the GPUs (dcgm) and the node's evidence
// (gpu_node: pods' cgroups, pressure, NICs). No k8s_attributes: the dcgm
// receiver names each GPU's pod itself, and the gateway adds the workload.
func TestE2EAgentComponents(t *testing.T) {
	out, err := exec.Command(agentBinary(t), "components").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("components: %v\n%s", err, out)
	}
	want := map[string][]string{
		"receivers":  {"dcgm", "gpu_node"},
		"processors": {"batch", "memory_limiter"},
		"exporters":  {"otlp_grpc", "otlp_http", "prometheus"},
		"extensions": {"file_storage", "health_check"},
		"connectors": nil,
	}
	for kind, names := range want {
		var have []string
		list, _ := got[kind].([]any)
		for _, c := range list {
			have = append(have, fmt.Sprint(c.(map[string]any)["name"]))
		}
		slices.Sort(have)
		if !slices.Equal(have, names) {
			t.Errorf("%s: got %v, want %v", kind, have, names)
		}
	}
}

// TestE2EAgentExample runs examples/agent/config.yaml on the agent: all 32
// simulated GPUs are served, and the health check answers.
func TestE2EAgentExample(t *testing.T) {
	port, hport := freePort(t), freePort(t)
	c := &collector{logs: &syncBuffer{}, done: make(chan error, 1)}
	c.cmd = exec.Command(agentBinary(t), "--config", filepath.Join("..", "examples", "agent", "config.yaml"),
		fmt.Sprintf("--set=exporters::prometheus::endpoint=127.0.0.1:%d", port),
		fmt.Sprintf("--set=extensions::health_check::endpoint=127.0.0.1:%d", hport))
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
			t.Logf("agent output:\n%s", c.logs.String())
		}
	})
	waitForGPUs(t, c, fmt.Sprintf("http://127.0.0.1:%d/metrics", port), "hw_id", 32, 15*time.Second)
	if _, err := scrape(fmt.Sprintf("http://127.0.0.1:%d/", hport)); err != nil {
		t.Errorf("health check: %v", err)
	}
	c.stop(t)
}
