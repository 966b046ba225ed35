// Package configfuzz fuzzes a component's configuration as the collector
// reads it: YAML, then confmap, then the component's Config, then Validate.
// Whatever the bytes, nothing may panic, and a configuration refused says
// why.
package configfuzz

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"
)

// Seeds adds to f every configuration of the component type typ found in
// the YAML files matched by the globs: a collector configuration's
// receivers, processors, connectors or exporters sections, or a component test
// file's top-level keys (typ and typ/name).
func Seeds(f *testing.F, typ string, globs ...string) int {
	f.Helper()
	n := 0
	for _, g := range globs {
		files, err := filepath.Glob(g)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			raw, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			var doc map[string]any
			if yaml.Unmarshal(raw, &doc) != nil {
				continue
			}
			sections := []any{doc}
			for _, k := range []string{"receivers", "processors", "connectors", "exporters"} {
				sections = append(sections, doc[k])
			}
			for _, s := range sections {
				m, ok := s.(map[string]any)
				if !ok {
					continue
				}
				for k, v := range m {
					if k != typ && !strings.HasPrefix(k, typ+"/") {
						continue
					}
					b, err := yaml.Marshal(v)
					if err != nil {
						f.Fatal(err)
					}
					f.Add(b)
					n++
				}
			}
		}
	}
	return n
}

// Fuzz unmarshals each input into a fresh default configuration and
// validates it. check, if set, runs on each configuration that validates
// (to build the component from it, say).
func Fuzz(f *testing.F, newConfig func() component.Config, check func(t *testing.T, cfg component.Config)) {
	f.Fuzz(func(t *testing.T, data []byte) {
		var raw any
		if err := yaml.Unmarshal(data, &raw); err != nil {
			return // not YAML: the collector refuses it before any component sees it
		}
		m, ok := raw.(map[string]any)
		if !ok && raw != nil {
			return // a component's configuration is a map, or empty
		}
		cfg := newConfig()
		if err := confmap.NewFromStringMap(m).Unmarshal(cfg); err != nil {
			if err.Error() == "" {
				t.Fatal("an unmarshal error without a message")
			}
			return
		}
		if err := confmap.Validate(cfg); err != nil {
			if err.Error() == "" {
				t.Fatal("a validation error without a message")
			}
			return
		}
		if check != nil {
			check(t, cfg)
		}
	})
}
