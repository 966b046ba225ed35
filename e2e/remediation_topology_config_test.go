//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// ---- configurations ----

// shippedConfig returns the collector configuration of a ConfigMap in
// distributions/otelcol-gpu/kubernetes/FILE.
func shippedConfig(t *testing.T, file, configMap string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "distributions", "otelcol-gpu", "kubernetes", file))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc struct {
			Kind     string `yaml:"kind"`
			Metadata struct{ Name string }
			Data     map[string]string `yaml:"data"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "ConfigMap" && doc.Metadata.Name == configMap {
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(doc.Data["config.yaml"]), &cfg); err != nil {
				t.Fatal(err)
			}
			return cfg
		}
	}
	t.Fatalf("%s has no ConfigMap %s", file, configMap)
	return nil
}

// node returns the map at the path of keys, failing the test if it is not
// there: the test changes the shipped configuration only where it knows
// what it changes.
func node(t *testing.T, cfg map[string]any, keys ...string) map[string]any {
	t.Helper()
	m := cfg
	for i, k := range keys {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("the shipped configuration has no %s", strings.Join(keys[:i+1], "::"))
		}
		m = next
	}
	return m
}

// replace sets an existing key.
func replace(t *testing.T, m map[string]any, key string, v any) {
	t.Helper()
	if _, ok := m[key]; !ok {
		t.Fatalf("the shipped configuration has no key %s to change (it has %v)", key, sortedKeys(m))
	}
	m[key] = v
}

// remove deletes an existing key.
func remove(t *testing.T, m map[string]any, key string) {
	t.Helper()
	replace(t, m, key, nil)
	delete(m, key)
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writeConfig(t *testing.T, dir, name string, cfg map[string]any) string {
	t.Helper()
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// replica is one remediation process.
type replica struct {
	name   string // its pod name: the Lease identity
	c      *collector
	otlp   int    // its OTLP port
	health int    // its health_check port
	log    string // the file its decision and action records go to
	killed bool
}

// remediationConfig is the shipped ConfigMap's configuration, adapted to
// the test's environment. Each change, and why:
//   - the OTLP receiver and health_check listen on ports of 127.0.0.1 (two
//     replicas share one host; in the cluster each has its pod's IP);
//   - auth: a kubeconfig naming the test's API server, as the ServiceAccount,
//     instead of the pod's in-cluster credentials;
//   - dry_run: false, to see the writes;
//   - interval 1s (10s), so that a drain and the request after it take
//     seconds, not minutes (the Lease keeps its timings: a takeover takes
//     the 15 s it takes in a cluster);
//   - the Prometheus endpoint is this test's stand-in;
//   - the decision and action records go to a file the test reads, instead
//     of the debug exporter;
//   - the collector's own metrics are off (their port would be shared).
func remediationConfig(t *testing.T, dir, kubeconfig, promURL string, r *replica) string {
	t.Helper()
	cfg := shippedConfig(t, "remediation.yaml", "otelcol-gpu-remediation")
	replace(t, node(t, cfg, "receivers", "otlp", "protocols", "grpc"), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.otlp))
	replace(t, node(t, cfg, "extensions", "health_check"), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.health))
	conn := node(t, cfg, "connectors", "gpu_remediation")
	replace(t, conn, "auth", map[string]any{"type": "kubeconfig", "kubeconfig": kubeconfig})
	replace(t, conn, "dry_run", false)
	conn["interval"] = "1s"
	replace(t, node(t, cfg, "exporters", "otlp_http/prometheus"), "metrics_endpoint", promURL)
	exporters := node(t, cfg, "exporters")
	remove(t, exporters, "debug/remediation")
	exporters["file/remediation"] = map[string]any{"path": r.log, "flush_interval": "100ms"}
	replace(t, node(t, cfg, "service", "pipelines", "logs/remediation"), "exporters", []any{"file/remediation"})
	node(t, cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}
	return writeConfig(t, dir, r.name+".yaml", cfg)
}

// fleet is the scenario's simulated GPUs: hosts named PREFIX0..., one pod
// per GPU (infer-HOST-GPU in namespace NS), and the faults.
type fleet struct {
	prefix string
	hosts  int
	gpus   int
	ns     string
	faults []map[string]any // receivers::dcgm::simulated::faults
}

func (f fleet) node(h int) string   { return fmt.Sprintf("%s%d", f.prefix, h) }
func (f fleet) pod(h, g int) string { return fmt.Sprintf("infer-%d-%d", h, g) }
func xid(code, host, gpu int) map[string]any {
	// 3 s after the fleet starts: the replicas have seen every GPU report
	// without it first, so its counter's appearance is a new fault.
	return xidAt(code, host, gpu, "3s")
}

func xidAt(code, host, gpu int, start string) map[string]any {
	return map[string]any{"kind": "xid", "xid": code, "gpus": fmt.Sprintf("%d/%d", host, gpu), "start": start}
}

// agentConfig is the shipped agent's configuration reduced to its
// metrics/faults pipeline, adapted to the test's environment:
//   - the dcgm receiver reads the simulated fleet, every second, instead of
//     the node's nv-hostengine every 10 s (and without the kubelet's
//     pod-resources socket or DRA's ResourceSlices: the fleet names each
//     GPU's pod itself);
//   - otlp_grpc/remediation-N send to replica N's port on 127.0.0.1
//     instead of its DNS name;
//   - file_storage is in the test's directory;
//   - the metrics pipeline (k8s_attributes, load_balancing to the gateway)
//     and health_check go: no gateway here, and that pipeline needs the
//     cluster's service discovery;
//   - the collector's own metrics are off.
func agentConfig(t *testing.T, dir string, f fleet, replicas []*replica) string {
	t.Helper()
	cfg := shippedConfig(t, "agent.yaml", "otelcol-gpu-agent")
	pipelines := node(t, cfg, "service", "pipelines")
	faults := node(t, pipelines, "metrics/faults")
	for k := range pipelines {
		if k != "metrics/faults" {
			delete(pipelines, k)
		}
	}
	want := map[string]bool{}
	for _, e := range faults["exporters"].([]any) {
		want[e.(string)] = true
	}
	if len(want) != len(replicas) {
		t.Fatalf("metrics/faults exports to %v; want one exporter per replica (%d)", faults["exporters"], len(replicas))
	}
	exporters := node(t, cfg, "exporters")
	for k := range exporters {
		if !want[k] {
			delete(exporters, k)
		}
	}
	for i, r := range replicas {
		replace(t, node(t, exporters, fmt.Sprintf("otlp_grpc/remediation-%d", i)), "endpoint", fmt.Sprintf("127.0.0.1:%d", r.otlp))
	}
	processors := node(t, cfg, "processors")
	for k := range processors {
		if k != "memory_limiter" && k != "filter/faults" {
			delete(processors, k)
		}
	}
	dcgm := node(t, cfg, "receivers", "dcgm")
	replace(t, dcgm, "backend", "simulated")
	replace(t, dcgm, "collection_interval", "1s")
	for _, k := range []string{"endpoint", "hostname", "pod_resources", "dra"} {
		remove(t, dcgm, k)
	}
	dcgm["simulated"] = map[string]any{
		"hosts": f.hosts, "gpus_per_host": f.gpus, "host_prefix": f.prefix,
		"workloads": []any{map[string]any{"name": "infer", "kind": "serving", "namespace": f.ns, "gpus": "*/*",
			"phases": []any{map[string]any{"kind": "compute_bound"}}}},
		"faults": f.faults,
	}
	queue := filepath.Join(dir, "queue")
	fs := node(t, cfg, "extensions", "file_storage")
	replace(t, fs, "directory", queue)
	replace(t, node(t, fs, "compaction"), "directory", queue)
	remove(t, node(t, cfg, "extensions"), "health_check")
	replace(t, node(t, cfg, "service"), "extensions", []any{"file_storage"})
	node(t, cfg, "service")["telemetry"] = map[string]any{"metrics": map[string]any{"level": "none"}}
	return writeConfig(t, dir, "agent.yaml", cfg)
}
