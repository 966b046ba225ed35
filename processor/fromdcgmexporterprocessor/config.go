package fromdcgmexporterprocessor

import (
	"errors"
	"fmt"
	"time"
)

// Config is the from_dcgm_exporter processor's configuration.
type Config struct {
	// KeepOriginals passes dcgm-exporter's translated DCGM_FI_* series (and
	// DCGM_EXP_XID_ERRORS_COUNT) through beside their translation; by
	// default they are dropped. Series it does not translate always pass.
	KeepOriginals bool `mapstructure:"keep_originals"`
	// MaxGPUs bounds the GPUs and MIG instances the processor keeps state
	// for; data points of further devices are refused (counted).
	MaxGPUs int `mapstructure:"max_gpus"`
	// GPUTTL forgets a device that has not been scraped for this long (data
	// time): its counters and last XID start afresh if it comes back, and
	// its UUID may then be seen on another host. A data point stamped more
	// than GPUTTL ahead of the clock is refused.
	GPUTTL time.Duration `mapstructure:"gpu_ttl"`

	// prevent unkeyed literal initialization
	_ struct{}
}

func defaultConfig() *Config {
	return &Config{
		MaxGPUs: 100_000,
		GPUTTL:  10 * time.Minute,
	}
}

// Validate checks the settings; each error names its key.
func (cfg *Config) Validate() error {
	var errs []error
	if cfg.MaxGPUs <= 0 {
		errs = append(errs, fmt.Errorf("max_gpus must be positive, got %d", cfg.MaxGPUs))
	}
	if cfg.GPUTTL <= 0 {
		errs = append(errs, fmt.Errorf("gpu_ttl must be positive, got %v", cfg.GPUTTL))
	}
	return errors.Join(errs...)
}
