package gpuanalyzerprocessor

import (
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
)

// Unmarshal reads the configuration with the metrics keys of the deprecated
// names read as the new ones, with a warning at start, for as long as the
// old names exist.
func (cfg *Config) Unmarshal(conf *confmap.Conf) error {
	conf, warnings, err := legacynames.ConfigKeys(conf)
	if err != nil {
		return err
	}
	if err := conf.Unmarshal(cfg); err != nil {
		return err
	}
	cfg.legacyKeys = warnings
	return nil
}
