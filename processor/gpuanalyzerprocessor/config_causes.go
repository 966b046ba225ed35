package gpuanalyzerprocessor

import (
	"errors"
	"fmt"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
)

// CausesConfig sets how a wait is put down to a cause by the node's
// evidence: the gpu_node receiver's pods, pressure and NICs, where they
// reach the analyzer. Without that evidence no cause is given.
type CausesConfig struct {
	// Enabled looks for causes (true by default); the evidence passes
	// through either way.
	Enabled bool `mapstructure:"enabled"`
	// Window is the span the evidence's counters are turned into rates
	// over (1m by default): long enough for a 15 s scrape to give four
	// readings, short enough to follow a job's phases.
	Window time.Duration `mapstructure:"window"`
	// MaxAge is how old the newest reading may be and still speak for a
	// verdict (2m by default): evidence that stopped arriving is no
	// evidence.
	MaxAge time.Duration `mapstructure:"max_age"`
	// CPUThrottled is the share of CFS periods throttled from which a
	// pod's CPU limit is the cause (0.10).
	CPUThrottled float64 `mapstructure:"cpu_throttled"`
	// CPUPressure, MemoryPressure and IOPressure are the shares of time
	// some tasks stalled (PSI) from which pressure is the cause (0.20,
	// 0.10, 0.20).
	CPUPressure    float64 `mapstructure:"cpu_pressure"`
	MemoryPressure float64 `mapstructure:"memory_pressure"`
	IOPressure     float64 `mapstructure:"io_pressure"`
	// NetworkSaturated is the share of its link rate from which a NIC is
	// saturated (0.80).
	NetworkSaturated float64 `mapstructure:"network_saturated"`
	// FabricErrorsPerMinute is how fast a rail's error counters must rise
	// to be the cause (10).
	FabricErrorsPerMinute float64 `mapstructure:"fabric_errors_per_minute"`
	// NetworkCollective is the share of its rate a GPU's rail NIC must
	// move each way (the directions within half of each other) for a
	// waiting GPU to read communication bound over the network, evidence
	// nic (0.20).
	NetworkCollective float64 `mapstructure:"network_collective"`
}

func defaultCausesConfig() CausesConfig {
	th := cause.DefaultThresholds()
	return CausesConfig{Enabled: true, Window: time.Minute, MaxAge: 2 * time.Minute,
		CPUThrottled: th.Throttled, CPUPressure: th.CPUPressure, MemoryPressure: th.MemoryPressure, IOPressure: th.IOPressure,
		NetworkSaturated: th.Saturated, FabricErrorsPerMinute: th.FabricErrors, NetworkCollective: th.RailCollective}
}

// Validate checks the section; each error names its key under causes.
func (c *CausesConfig) Validate() error {
	var errs []error
	if c.Window <= 0 {
		errs = append(errs, fmt.Errorf("causes::window must be positive, got %v", c.Window))
	}
	if c.MaxAge < c.Window {
		errs = append(errs, fmt.Errorf("causes::max_age (%v) must be at least causes::window (%v)", c.MaxAge, c.Window))
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"cpu_throttled", c.CPUThrottled}, {"cpu_pressure", c.CPUPressure}, {"memory_pressure", c.MemoryPressure},
		{"io_pressure", c.IOPressure}, {"network_saturated", c.NetworkSaturated}, {"network_collective", c.NetworkCollective}} {
		if !(f.v > 0 && f.v <= 1) {
			errs = append(errs, fmt.Errorf("causes::%s must be a share in (0, 1], got %v", f.key, f.v))
		}
	}
	if !(c.FabricErrorsPerMinute > 0) {
		errs = append(errs, fmt.Errorf("causes::fabric_errors_per_minute must be positive, got %v", c.FabricErrorsPerMinute))
	}
	return errors.Join(errs...)
}

func (c *CausesConfig) thresholds() cause.Thresholds {
	return cause.Thresholds{Throttled: c.CPUThrottled, CPUPressure: c.CPUPressure, MemoryPressure: c.MemoryPressure,
		IOPressure: c.IOPressure, Saturated: c.NetworkSaturated, FabricErrors: c.FabricErrorsPerMinute, RailCollective: c.NetworkCollective}
}
