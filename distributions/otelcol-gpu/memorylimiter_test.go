package manifests

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// collectorConfigs returns every collector configuration shipped: the
// examples, the ConfigMaps' config.yaml and the Operator's spec.config,
// by where they are.
func collectorConfigs(t *testing.T) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	examples, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*", "*.yaml"))
	manifests, _ := filepath.Glob(filepath.Join("*", "*.yaml"))
	for _, f := range append(examples, manifests...) {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(raw))
		for i := 0; ; i++ {
			var doc map[string]any
			if dec.Decode(&doc) != nil {
				break
			}
			var cfg map[string]any
			switch {
			case doc["service"] != nil:
				cfg = doc
			case doc["kind"] == "ConfigMap":
				data, _ := doc["data"].(map[string]any)
				if s, ok := data["config.yaml"].(string); ok {
					if err := yaml.Unmarshal([]byte(s), &cfg); err != nil {
						t.Fatalf("%s: %v", f, err)
					}
				}
			case doc["kind"] == "OpenTelemetryCollector":
				spec, _ := doc["spec"].(map[string]any)
				cfg, _ = spec["config"].(map[string]any)
			}
			if cfg != nil {
				out[f+"#"+string(rune('0'+i))] = cfg
			}
		}
	}
	return out
}

// TestMemoryLimiterFirst: every pipeline fed by a receiver (not only by a
// connector) starts with memory_limiter, so that a flood is refused with a
// retryable error before anything holds on to it.
func TestMemoryLimiterFirst(t *testing.T) {
	pipelines := 0
	for where, cfg := range collectorConfigs(t) {
		connectors, _ := cfg["connectors"].(map[string]any)
		service, _ := cfg["service"].(map[string]any)
		ps, _ := service["pipelines"].(map[string]any)
		for name, p := range ps {
			p, _ := p.(map[string]any)
			fed := false
			for _, r := range p["receivers"].([]any) {
				if _, isConnector := connectors[r.(string)]; !isConnector {
					fed = true
				}
			}
			if !fed {
				continue
			}
			pipelines++
			procs, _ := p["processors"].([]any)
			if len(procs) == 0 || !strings.HasPrefix(procs[0].(string), "memory_limiter") {
				t.Errorf("%s: pipeline %s: processors %v do not start with memory_limiter", where, name, procs)
			}
		}
	}
	if pipelines < 10 {
		t.Fatalf("checked only %d pipelines", pipelines)
	}
}
