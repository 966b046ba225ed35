package record

import (
	"fmt"
	"os"

	"go.opentelemetry.io/collector/confmap"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
)

// loadSimulated reads the simulated fleet's settings, the keys that go under
// the dcgm receiver's `simulated:`, over the defaults; "" is the default
// fleet. Errors name the file.
func loadSimulated(path string) (simulated.Config, error) {
	cfg := simulated.DefaultConfig()
	if path == "" {
		return cfg, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("-simulated: %w", err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return cfg, fmt.Errorf("-simulated %s: %w", path, err)
	}
	if err := confmap.NewFromStringMap(m).Unmarshal(&cfg); err != nil {
		return cfg, fmt.Errorf("-simulated %s: %w", path, err)
	}
	if err := cfg.Check(); err != nil {
		return cfg, fmt.Errorf("-simulated %s: %w", path, err)
	}
	return cfg, nil
}
