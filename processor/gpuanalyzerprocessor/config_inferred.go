package gpuanalyzerprocessor

import (
	"errors"
	"fmt"
)

// InferredConfig holds the thresholds of the classes told without SM
// activity or clock event reasons: from the graphics engine's activity with
// tensor activity and power (dcgm-exporter's default counters, MIG
// instances), from symmetric PCIe traffic (a collective over the network),
// and from power, temperature and clocks (throttling). Its keys sit in
// bottleneck:: beside the others.
type InferredConfig struct {
	// Without SM activity, a GPU whose graphics engine is busy computes when
	// its tensor pipes are active ComputeBoundTensorActive of the time or
	// more, or it draws ComputeBoundPowerRatio of its reference power or
	// more; with its tensor pipes under that and its power under
	// LaunchBoundPowerRatio, kernels are resident doing little.
	ComputeBoundTensorActive float64 `mapstructure:"compute_bound_tensor_active" stability:"development"`
	ComputeBoundPowerRatio   float64 `mapstructure:"compute_bound_power_ratio" stability:"development"`
	LaunchBoundPowerRatio    float64 `mapstructure:"launch_bound_power_ratio" stability:"development"`
	// CommunicationBoundPCIeBytes is the PCIe traffic each way, bytes per
	// second, at or above which symmetric traffic on half a job's GPUs is a
	// collective through their NICs.
	CommunicationBoundPCIeBytes float64 `mapstructure:"communication_bound_pcie_bytes" stability:"development"`
	// Without clock event reasons, a GPU whose SM clock is at most
	// ThrottleClockRatio of its model's maximum is throttled when it draws
	// PowerCapRatio of its reference power or more (power_cap), or runs at
	// ThermalTemperature °C or hotter (thermal).
	ThrottleClockRatio float64 `mapstructure:"throttle_clock_ratio" stability:"development"`
	PowerCapRatio      float64 `mapstructure:"power_cap_ratio" stability:"development"`
	ThermalTemperature float64 `mapstructure:"thermal_temperature" stability:"development"`
}

// defaultInferred are the defaults, chosen on the physics and checked on the
// shared traces replayed with dcgm-exporter's default counters (the
// processor README's table): a compute-bound H100 or T4 draws 0.82 to 0.92
// of its board power with its tensor pipes at half, a launch-bound one 0.36
// to 0.46 with them near idle; a ring all-reduce sends what it receives; a
// T4 capped at 68 W of 70 W runs at 660 MHz of 1,590.
func defaultInferred() InferredConfig {
	return InferredConfig{
		ComputeBoundTensorActive:    0.3,
		ComputeBoundPowerRatio:      0.7,
		LaunchBoundPowerRatio:       0.5,
		CommunicationBoundPCIeBytes: 4e9,
		ThrottleClockRatio:          0.75,
		PowerCapRatio:               0.95,
		ThermalTemperature:          85,
	}
}

// Validate checks each threshold, naming its key.
func (c *InferredConfig) Validate() error {
	var errs []error
	ratio := func(key string, v float64) {
		if !(v > 0 && v <= 1) {
			errs = append(errs, fmt.Errorf("bottleneck::%s must be above 0 and at most 1, got %v", key, v))
		}
	}
	ratio("compute_bound_tensor_active", c.ComputeBoundTensorActive)
	ratio("compute_bound_power_ratio", c.ComputeBoundPowerRatio)
	ratio("launch_bound_power_ratio", c.LaunchBoundPowerRatio)
	ratio("throttle_clock_ratio", c.ThrottleClockRatio)
	ratio("power_cap_ratio", c.PowerCapRatio)
	if c.LaunchBoundPowerRatio > c.ComputeBoundPowerRatio {
		errs = append(errs, fmt.Errorf("bottleneck: want launch_bound_power_ratio (%v) <= compute_bound_power_ratio (%v)",
			c.LaunchBoundPowerRatio, c.ComputeBoundPowerRatio))
	}
	if !(c.CommunicationBoundPCIeBytes > 0) {
		errs = append(errs, fmt.Errorf("bottleneck::communication_bound_pcie_bytes must be a positive rate in bytes per second, got %v", c.CommunicationBoundPCIeBytes))
	}
	if !(c.ThermalTemperature > 0 && c.ThermalTemperature <= 200) {
		errs = append(errs, fmt.Errorf("bottleneck::thermal_temperature must be between 0 and 200 °C, got %v", c.ThermalTemperature))
	}
	return errors.Join(errs...)
}
