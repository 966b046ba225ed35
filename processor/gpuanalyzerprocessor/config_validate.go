package gpuanalyzerprocessor

import (
	"errors"
	"fmt"
	"math"
)

// Validate checks the configuration; each error names its key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Window <= 0 {
		bad("window must be positive, got %v", cfg.Window)
	}
	for i, k := range cfg.GroupBy {
		if k == "" {
			bad("group_by[%d] is empty", i)
		}
	}
	if cfg.MaxGPUs <= 0 {
		bad("max_gpus must be positive, got %d", cfg.MaxGPUs)
	}
	if cfg.HealthHold <= 0 {
		bad("health_hold must be positive, got %v", cfg.HealthHold)
	}
	if cfg.VerdictInterval < 0 {
		bad("verdict_interval must not be negative, got %v", cfg.VerdictInterval)
	}
	if cfg.FirstSummaryAfter < 0 || (cfg.FirstSummaryAfter > 0 && cfg.FirstSummaryAfter > cfg.SummaryInterval) {
		bad("first_summary_after must be between 0 and summary_interval (%v), got %v", cfg.SummaryInterval, cfg.FirstSummaryAfter)
	}
	if cfg.SummaryInterval < 0 {
		bad("summary_interval must not be negative, got %v", cfg.SummaryInterval)
	}
	if cfg.GPUTTL < cfg.Window {
		bad("gpu_ttl (%v) must not be shorter than window (%v)", cfg.GPUTTL, cfg.Window)
	}

	b := &cfg.Bottleneck
	if b.FaultLookback < 0 {
		bad("bottleneck::fault_lookback must not be negative, got %v", b.FaultLookback)
	}
	for i, r := range b.ThrottleReasons {
		if _, ok := throttleReasonBits[r]; !ok {
			bad("bottleneck::throttle_reasons[%d]: unknown reason %q; want one of hw_slowdown, sw_thermal, hw_thermal, hw_power_brake, sw_power_cap, sync_boost, gpu_idle, applications_clocks_setting, display_clocks_setting", i, r)
		}
	}
	for i, r := range b.AMDThrottleReasons {
		if _, ok := violationReasons[r]; !ok {
			bad("bottleneck::amd_throttle_reasons[%d]: unknown reason %q; want one of power, socket_thermal, vr_thermal, hbm_thermal, prochot", i, r)
		}
	}
	ratio := func(key string, v float64) {
		if !(v >= 0 && v <= 1) {
			bad("%s must be between 0 and 1, got %v", key, v)
		}
	}
	ratio("bottleneck::throttle_residency", b.ThrottleResidency)
	ratio("bottleneck::memory_bound_umc_activity", b.MemoryBoundUMCActivity)
	ratio("bottleneck::communication_bound_xgmi_ratio", b.CommunicationBoundXGMIRatio)
	percent := func(key string, v float64) {
		if !(v >= 0 && v <= 100) {
			bad("%s must be a percentage between 0 and 100, got %v", key, v)
		}
	}
	ratio("bottleneck::throttle_fraction", b.ThrottleFraction)
	ratio("bottleneck::idle_sm_active", b.IdleSMActive)
	// A deprecated percent key is checked as the user wrote it, instead of
	// the ratio made of it.
	for _, k := range b.percentKeys() {
		if k.percent != nil {
			percent("bottleneck::"+k.old, *k.percent)
		} else {
			ratio("bottleneck::"+k.new, *k.ratio)
		}
	}
	ratio("bottleneck::memory_bound_dram_active", b.MemoryBoundDRAMActive)
	ratio("bottleneck::communication_bound_sm_active", b.CommunicationBoundSMActive)
	if !(b.CommunicationBoundNVLinkBytes > 0) {
		bad("bottleneck::communication_bound_nvlink_bytes must be positive, got %v", b.CommunicationBoundNVLinkBytes)
	}
	ratio("bottleneck::launch_bound_sm_active", b.LaunchBoundSMActive)
	ratio("bottleneck::input_bound_sm_active", b.InputBoundSMActive)
	ratio("bottleneck::waiting_power_ratio", b.WaitingPowerRatio)
	ratio("bottleneck::working_power_ratio", b.WorkingPowerRatio)
	ratio("bottleneck::idle_power_ratio", b.IdlePowerRatio)
	if !(b.IdlePowerRatio <= b.WaitingPowerRatio && b.WaitingPowerRatio <= b.WorkingPowerRatio) {
		bad("bottleneck: want idle_power_ratio (%v) <= waiting_power_ratio (%v) <= working_power_ratio (%v)",
			b.IdlePowerRatio, b.WaitingPowerRatio, b.WorkingPowerRatio)
	}
	for model, w := range b.BoardPower {
		if !(w > 0) || math.IsInf(w, 1) {
			bad("bottleneck::board_power::%s must be a positive number of watts, got %v", model, w)
		}
	}

	s := &cfg.Straggler
	if s.MinGroupSize < 2 {
		bad("straggler::min_group_size must be at least 2, got %d", s.MinGroupSize)
	}
	if s.StepRatio <= 1 {
		bad("straggler::step_ratio must be greater than 1, got %v", s.StepRatio)
	}
	if !(s.ClockRatio > 0 && s.ClockRatio < 1) {
		bad("straggler::clock_ratio must be between 0 and 1, got %v", s.ClockRatio)
	}
	ratio("straggler::clock_min_group_sm_active", s.ClockMinGroupSMActive)
	if s.MADThreshold <= 0 {
		bad("straggler::mad_threshold must be positive, got %v", s.MADThreshold)
	}
	ratio("straggler::min_sm_active_deviation", s.MinSMActiveDeviation)
	ratio("straggler::holder_gpu_utilization_ratio", s.HolderGPUUtilization)
	if !(s.MinPowerDeviation > 0 && s.MinPowerDeviation <= 1) {
		bad("straggler::min_power_deviation must be above 0 and at most 1, got %v", s.MinPowerDeviation)
	}
	if s.Sustain < 0 {
		bad("straggler::sustain must not be negative, got %v", s.Sustain)
	}

	h := &cfg.Hints
	ratio("hints::increase_batch_size_sm_active", h.IncreaseBatchSizeSMActive)
	ratio("hints::increase_batch_size_occupancy", h.IncreaseBatchSizeOccupancy)
	ratio("hints::enable_mixed_precision_tensor_active", h.MixedPrecisionTensorActive)
	if !(h.DataLoadingPCIeRxBytes >= 0) {
		bad("hints::fix_data_loading_pcie_rx_bytes must not be negative, got %v", h.DataLoadingPCIeRxBytes)
	}

	l := &cfg.MemoryLeak
	if l.Window <= 0 {
		bad("memory_leak::window must be positive, got %v", l.Window)
	}
	if l.MinSpan < 0 || l.MinSpan > l.Window {
		bad("memory_leak::min_span must be between 0 and window (%v), got %v", l.Window, l.MinSpan)
	}
	if !(l.ResolveRSquared >= 0 && l.ResolveRSquared <= l.MinRSquared && l.MinRSquared <= 1) {
		bad("memory_leak: want 0 <= resolve_r_squared <= min_r_squared <= 1, got %v and %v", l.ResolveRSquared, l.MinRSquared)
	}
	if l.FullWithin <= 0 || l.ResolveFullAfter < l.FullWithin {
		bad("memory_leak: want 0 < full_within <= resolve_full_after, got %v and %v", l.FullWithin, l.ResolveFullAfter)
	}
	if cfg.CheckpointInterval < 0 {
		bad("checkpoint_interval must not be negative, got %v", cfg.CheckpointInterval)
	}

	for i, a := range cfg.Alerts.byName() {
		key := "alerts::" + alertKeys[i]
		if a.For < 0 {
			bad("%s::for must not be negative, got %v", key, a.For)
		}
		switch a.Severity {
		case "critical", "warning", "info":
		default:
			bad("%s::severity: unknown severity %q; want critical, warning or info", key, a.Severity)
		}
	}
	if o := cfg.Alerts.Overheating; o.Resolve > o.Threshold {
		bad("alerts::gpu_overheating::resolve (%v) must not be above threshold (%v)", o.Resolve, o.Threshold)
	}
	if m := cfg.Alerts.MemoryPressure; m.Resolve > m.Threshold || m.Threshold > 1 || m.Resolve < 0 {
		bad("alerts::gpu_memory_pressure: want 0 <= resolve <= threshold <= 1, got resolve %v and threshold %v", m.Resolve, m.Threshold)
	}
	return errors.Join(errs...)
}
