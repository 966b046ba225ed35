package gpuanalyzerprocessor

import (
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// Config is the gpu_analyzer processor's configuration. The defaults are
// the analyzer contract's.
type Config struct {
	// Window is the trailing window the bottleneck rules and the straggler
	// comparison average over, the current sample included.
	Window time.Duration `mapstructure:"window"`
	// GroupBy lists the resource attributes that make a peer group (a job).
	// A GPU missing any of them has no peers and is never a straggler.
	GroupBy []string `mapstructure:"group_by"`
	// MaxGPUs bounds the GPUs tracked; samples of further GPUs pass through
	// unanalysed and are counted.
	MaxGPUs int `mapstructure:"max_gpus"`
	// GPUTTL forgets a GPU that has not reported for this long (data time).
	GPUTTL time.Duration `mapstructure:"gpu_ttl"`

	Bottleneck BottleneckConfig `mapstructure:"bottleneck"`
	Straggler  StragglerConfig  `mapstructure:"straggler"`
	Hints      HintsConfig      `mapstructure:"hints"`
	MemoryLeak MemoryLeakConfig `mapstructure:"memory_leak"`
	Alerts     AlertsConfig     `mapstructure:"alerts"`
	// Cost prices GPU time for otelgpu.cost.
	Cost CostConfig `mapstructure:"cost"`
	// SummaryInterval, if set, logs every interval (data time) each GPU
	// whose class changed and a one-line summary of the fleet. Off by
	// default: on a gateway with thousands of GPUs the metrics are the
	// interface, not the log.
	SummaryInterval time.Duration `mapstructure:"summary_interval"`
	// FirstSummaryAfter, if set, logs the first summary this long (data
	// time) after the first sample instead of one summary_interval after
	// it, so that a person starting the collector sees the fleet early;
	// later summaries stay on the summary_interval grid from the first
	// sample. 0 (the default): the first comes after summary_interval.
	FirstSummaryAfter time.Duration `mapstructure:"first_summary_after"`
	// VerdictInterval sends a GPU's verdict metrics when something changed
	// (class, hint, straggler state, an alert's state), with its usage
	// counters, and otherwise at least this often (data time; 30 s by
	// default), instead of with every sample: fewer points for a backend
	// and a fraction of the analyzer's cost. 0 sends them with every sample.
	VerdictInterval time.Duration `mapstructure:"verdict_interval"`
	// HealthHold is how long a fault event (an XID, an uncorrectable ECC
	// error, a fatal RAS record) holds the GPU's hw.status after it (data
	// time; 1h by default). An XID is a moment; the GPU it failed stays
	// failed until it is reset or its node rebooted, which ends the
	// collector's memory of it too.
	HealthHold time.Duration `mapstructure:"health_hold" stability:"development"`
	// Causes puts waits and stragglers down to the node's evidence
	// (config_causes.go).
	Causes CausesConfig `mapstructure:"causes" stability:"development"`
	// JobReport logs a line per job when it ends (config_jobreport.go).
	JobReport JobReportConfig `mapstructure:"job_report" stability:"development"`

	// Storage names a storage extension (file_storage) that keeps alert
	// timers, straggler and leak state across restarts. Unset: nothing is
	// kept, as before.
	Storage *component.ID `mapstructure:"storage"`
	// CheckpointInterval is how often, in data time, the state is written
	// to Storage besides at shutdown; 0 writes it at shutdown only.
	CheckpointInterval time.Duration `mapstructure:"checkpoint_interval"`

	// MetricsBuilderConfig turns each metric the analyzer adds on or off
	// (metrics::<name>::enabled), as metadata.yaml declares them.
	metadata.MetricsBuilderConfig `mapstructure:",squash"`

	// legacyKeys are the warnings for the deprecated metric names among the
	// metrics keys (config_legacy.go).
	legacyKeys []string

	// prevent unkeyed literal initialization
	_ struct{}
}

// BottleneckConfig holds the thresholds of the bottleneck classes.
type BottleneckConfig struct {
	// FaultLookback is how long ECC, XID or row-remap evidence keeps a GPU faulted.
	FaultLookback time.Duration `mapstructure:"fault_lookback"`
	CriticalXIDs  []uint32      `mapstructure:"critical_xids"`
	// ThrottleReasons are the clock event reasons that count as throttling.
	ThrottleReasons []string `mapstructure:"throttle_reasons"`
	// ThrottleFraction: throttled when more than this share of the window's
	// samples have a throttle reason set.
	ThrottleFraction float64 `mapstructure:"throttle_fraction"`
	IdleSMActive     float64 `mapstructure:"idle_sm_active"`
	// IdleGPUUtilization and LaunchBoundGPUUtil are ratios, as the receiver
	// reports hw.gpu.utilization.
	IdleGPUUtilization    float64 `mapstructure:"idle_gpu_utilization_ratio"`
	MemoryBoundDRAMActive float64 `mapstructure:"memory_bound_dram_active"`
	// CommunicationBoundSMActive and CommunicationBoundNVLinkBytes (bytes per
	// second, transmit plus receive) tell collectives.
	CommunicationBoundSMActive    float64 `mapstructure:"communication_bound_sm_active"`
	CommunicationBoundNVLinkBytes float64 `mapstructure:"communication_bound_nvlink_bytes"`
	LaunchBoundSMActive           float64 `mapstructure:"launch_bound_sm_active"`
	LaunchBoundGPUUtil            float64 `mapstructure:"launch_bound_gpu_utilization_ratio"`
	InputBoundSMActive            float64 `mapstructure:"input_bound_sm_active"`
	// Without profiling fields, power over the GPU's reference power
	// (its enforced limit, its model's board power, or learnt): busy by
	// utilization under WaitingPowerRatio is waiting, at WorkingPowerRatio
	// or more is working; with power alone, under IdlePowerRatio is idle.
	WaitingPowerRatio float64 `mapstructure:"waiting_power_ratio"`
	WorkingPowerRatio float64 `mapstructure:"working_power_ratio"`
	IdlePowerRatio    float64 `mapstructure:"idle_power_ratio"`
	// AMD GPUs: AMDThrottleReasons are the violation reasons that count as
	// throttling; a sample counts as throttled when the GPU was held back
	// for more than ThrottleResidency of its interval by one of them, and
	// the window is throttled past ThrottleFraction of its samples. A GPU
	// whose memory controllers are busy MemoryBoundUMCActivity or more of
	// the time is memory bound, one whose XGMI links carry
	// CommunicationBoundXGMIRatio or more of their bandwidth is
	// communication bound.
	AMDThrottleReasons          []string `mapstructure:"amd_throttle_reasons"`
	ThrottleResidency           float64  `mapstructure:"throttle_residency"`
	MemoryBoundUMCActivity      float64  `mapstructure:"memory_bound_umc_activity"`
	CommunicationBoundXGMIRatio float64  `mapstructure:"communication_bound_xgmi_ratio"`
	// BoardPower adds to or overrides the table of models' board power in
	// W (powerref.go), keyed as cost::per_gpu_hour is: a key matches
	// hw.model as a whole word, the longest wins.
	BoardPower map[string]float64 `mapstructure:"board_power"`
	// Inferred: the classes told without SM activity or clock event
	// reasons (config_inferred.go).
	Inferred InferredConfig `mapstructure:",squash"`

	// Deprecated: the percent keys of earlier releases, read for one more
	// release into their ratio counterparts (with a warning at start).
	IdleGPUUtilizationPercent *float64 `mapstructure:"idle_gpu_utilization"`
	// Deprecated: see IdleGPUUtilizationPercent.
	LaunchBoundGPUUtilPercent *float64 `mapstructure:"launch_bound_gpu_utilization"`
}

// percentKey is a deprecated percent key and the ratio key that replaces it.
type percentKey struct {
	old, new string
	percent  *float64
	ratio    *float64
}

func (b *BottleneckConfig) percentKeys() [2]percentKey {
	return [2]percentKey{
		{"idle_gpu_utilization", "idle_gpu_utilization_ratio", b.IdleGPUUtilizationPercent, &b.IdleGPUUtilization},
		{"launch_bound_gpu_utilization", "launch_bound_gpu_utilization_ratio", b.LaunchBoundGPUUtilPercent, &b.LaunchBoundGPUUtil},
	}
}

// Unmarshal reads the bottleneck settings and converts a deprecated percent
// key into its ratio key, once, at load; both at once is an error.
func (b *BottleneckConfig) Unmarshal(conf *confmap.Conf) error {
	if err := conf.Unmarshal(b); err != nil {
		return err
	}
	for _, k := range b.percentKeys() {
		if k.percent == nil {
			continue
		}
		if conf.IsSet(k.new) {
			return fmt.Errorf("bottleneck::%s (deprecated, percent) and bottleneck::%s are both set; keep %s, a ratio (%v %% is %v)", k.old, k.new, k.new, *k.percent, *k.percent/100)
		}
		*k.ratio = *k.percent / 100
	}
	return nil
}

// deprecations are the warnings for the deprecated keys in use.
func (cfg *Config) deprecations() []string {
	var out []string
	for _, k := range cfg.Bottleneck.percentKeys() {
		if k.percent != nil {
			out = append(out, fmt.Sprintf("bottleneck::%s is deprecated and will be removed in the next release: use bottleneck::%s, a ratio (%v %% is %v)", k.old, k.new, *k.percent, *k.percent/100))
		}
	}
	return append(out, cfg.legacyKeys...)
}

// StragglerConfig holds the thresholds of straggler detection.
type StragglerConfig struct {
	MinGroupSize          int     `mapstructure:"min_group_size"`
	StepRatio             float64 `mapstructure:"step_ratio"`
	ClockRatio            float64 `mapstructure:"clock_ratio"`
	ClockMinGroupSMActive float64 `mapstructure:"clock_min_group_sm_active"`
	MADThreshold          float64 `mapstructure:"mad_threshold"`
	MinSMActiveDeviation  float64 `mapstructure:"min_sm_active_deviation"`
	// HolderGPUUtilization: without profiling, a member under this
	// utilization while at least half of the others wait at low power is
	// the one they wait on, a straggler.
	HolderGPUUtilization float64 `mapstructure:"holder_gpu_utilization_ratio"`
	// MinPowerDeviation: without profiling, a member that works (at least
	// working_power_ratio of its reference) drawing this much more of its
	// reference than its peers' median, and more than mad_threshold MADs,
	// is the one they wait on part of each step, a straggler.
	MinPowerDeviation float64 `mapstructure:"min_power_deviation"`
	// Sustain is how long a GPU must deviate at every evaluation to be a straggler.
	Sustain time.Duration `mapstructure:"sustain"`
}

// HintsConfig holds the thresholds that pick a verdict's next step.
type HintsConfig struct {
	// A compute-bound GPU with SM activity >= IncreaseBatchSizeSMActive and
	// occupancy < IncreaseBatchSizeOccupancy gets increase_batch_size.
	IncreaseBatchSizeSMActive  float64 `mapstructure:"increase_batch_size_sm_active"`
	IncreaseBatchSizeOccupancy float64 `mapstructure:"increase_batch_size_occupancy"`
	// A compute-bound GPU whose tensor pipes are below this gets
	// enable_mixed_precision.
	MixedPrecisionTensorActive float64 `mapstructure:"enable_mixed_precision_tensor_active"`
	// An input-bound GPU receiving at least this over PCIe (bytes per
	// second) gets fix_data_loading, below it fix_host_preprocessing.
	DataLoadingPCIeRxBytes float64 `mapstructure:"fix_data_loading_pcie_rx_bytes"`
}

// MemoryLeakConfig configures the GPUMemoryLeak fit.
type MemoryLeakConfig struct {
	Window           time.Duration `mapstructure:"window"`
	MinSpan          time.Duration `mapstructure:"min_span"`
	MinRSquared      float64       `mapstructure:"min_r_squared"`
	FullWithin       time.Duration `mapstructure:"full_within"`
	ResolveRSquared  float64       `mapstructure:"resolve_r_squared"`
	ResolveFullAfter time.Duration `mapstructure:"resolve_full_after"`
}

// AlertConfig configures one alert. Threshold and Resolve apply to the
// alerts on readings: gpu_overheating (Celsius) and gpu_memory_pressure
// (a ratio); Resolve below Threshold gives hysteresis.
type AlertConfig struct {
	Enabled   bool          `mapstructure:"enabled"`
	For       time.Duration `mapstructure:"for"`
	Threshold float64       `mapstructure:"threshold"`
	Resolve   float64       `mapstructure:"resolve"`
	Severity  string        `mapstructure:"severity"`
}

// AlertsConfig configures the alerts, keyed by snake_case alert name.
type AlertsConfig struct {
	Faulted        AlertConfig `mapstructure:"gpu_faulted"`
	Overheating    AlertConfig `mapstructure:"gpu_overheating"`
	MemoryPressure AlertConfig `mapstructure:"gpu_memory_pressure"`
	Throttled      AlertConfig `mapstructure:"gpu_throttled"`
	Straggler      AlertConfig `mapstructure:"gpu_straggler"`
	Idle           AlertConfig `mapstructure:"gpu_idle"`
	MemoryLeak     AlertConfig `mapstructure:"gpu_memory_leak"`
}

func (a *AlertsConfig) byName() [analysis.NumAlerts]*AlertConfig {
	return [analysis.NumAlerts]*AlertConfig{
		analysis.GPUFaulted:        &a.Faulted,
		analysis.GPUOverheating:    &a.Overheating,
		analysis.GPUMemoryPressure: &a.MemoryPressure,
		analysis.GPUThrottled:      &a.Throttled,
		analysis.GPUStraggler:      &a.Straggler,
		analysis.GPUIdle:           &a.Idle,
		analysis.GPUMemoryLeak:     &a.MemoryLeak,
	}
}

var alertKeys = [analysis.NumAlerts]string{"gpu_faulted", "gpu_overheating", "gpu_memory_pressure", "gpu_throttled", "gpu_straggler", "gpu_idle", "gpu_memory_leak"}

// throttleReasonBits names the bits of DCGM_FI_DEV_CLOCKS_EVENT_REASONS.
var throttleReasonBits = map[string]uint64{
	"gpu_idle":                    dcgmfield.ClocksEventGPUIdle,
	"applications_clocks_setting": dcgmfield.ClocksEventAppClockSetting,
	"sw_power_cap":                dcgmfield.ClocksEventSWPowerCap,
	"hw_slowdown":                 dcgmfield.ClocksEventHWSlowdown,
	"sync_boost":                  dcgmfield.ClocksEventSyncBoost,
	"sw_thermal":                  dcgmfield.ClocksEventSWThermal,
	"hw_thermal":                  dcgmfield.ClocksEventHWThermal,
	"hw_power_brake":              dcgmfield.ClocksEventHWPowerBrake,
	"display_clocks_setting":      dcgmfield.ClocksEventDisplayClockSetting,
}

func defaultConfig() *Config {
	alert := func(forDur time.Duration, severity string) AlertConfig {
		return AlertConfig{Enabled: true, For: forDur, Severity: severity}
	}
	overheating := alert(60*time.Second, "warning")
	overheating.Threshold, overheating.Resolve = 85, 80
	memory := alert(60*time.Second, "warning")
	memory.Threshold, memory.Resolve = 0.95, 0.90
	return &Config{
		Window:  30 * time.Second,
		GroupBy: []string{metricnames.AttrK8sNamespaceName, metricnames.AttrK8sJobName},
		MaxGPUs: 100_000,
		GPUTTL:  10 * time.Minute,
		// Verdicts on change and every 30 s: what a backend needs (well
		// inside Prometheus' 5 min staleness) at under 3x a pass-through's
		// CPU; every sample doubled the analyzer's cost (BENCHMARKS.md).
		VerdictInterval: 30 * time.Second,
		HealthHold:      time.Hour,
		Causes:          defaultCausesConfig(),
		JobReport:       defaultJobReportConfig(),
		Bottleneck: BottleneckConfig{
			FaultLookback:                 5 * time.Minute,
			CriticalXIDs:                  []uint32{48, 64, 74, 79, 95, 119, 120, 140},
			ThrottleReasons:               []string{"hw_slowdown", "sw_thermal", "hw_thermal", "hw_power_brake"},
			ThrottleFraction:              0.5,
			IdleSMActive:                  0.05,
			IdleGPUUtilization:            0.05,
			MemoryBoundDRAMActive:         0.7,
			CommunicationBoundSMActive:    0.5,
			CommunicationBoundNVLinkBytes: 100e9,
			LaunchBoundSMActive:           0.5,
			LaunchBoundGPUUtil:            0.8,
			InputBoundSMActive:            0.5,
			WaitingPowerRatio:             1.0 / 3,
			WorkingPowerRatio:             0.45,
			IdlePowerRatio:                0.15,
			// Package power tracking holds an AMD GPU at its power cap
			// under full load, as sw_power_cap does an NVIDIA GPU: not
			// counted, as that is not.
			AMDThrottleReasons:          []string{"socket_thermal", "vr_thermal", "hbm_thermal", "prochot"},
			ThrottleResidency:           0.5,
			MemoryBoundUMCActivity:      0.7,
			CommunicationBoundXGMIRatio: 0.1,
			Inferred:                    defaultInferred(),
		},
		Straggler: StragglerConfig{
			MinGroupSize:          4,
			StepRatio:             1.10,
			ClockRatio:            0.90,
			ClockMinGroupSMActive: 0.3,
			MADThreshold:          3.5,
			MinSMActiveDeviation:  0.1,
			HolderGPUUtilization:  0.5,
			MinPowerDeviation:     0.1,
			Sustain:               10 * time.Second,
		},
		Hints: HintsConfig{
			IncreaseBatchSizeSMActive:  0.8,
			IncreaseBatchSizeOccupancy: 0.2,
			MixedPrecisionTensorActive: 0.05,
			DataLoadingPCIeRxBytes:     1e9,
		},
		MemoryLeak: MemoryLeakConfig{
			Window:           30 * time.Minute,
			MinSpan:          15 * time.Minute,
			MinRSquared:      0.9,
			FullWithin:       2 * time.Hour,
			ResolveRSquared:  0.5,
			ResolveFullAfter: 4 * time.Hour,
		},
		CheckpointInterval: time.Minute,
		Alerts: AlertsConfig{
			Faulted:        alert(0, "critical"),
			Overheating:    overheating,
			MemoryPressure: memory,
			Throttled:      alert(60*time.Second, "warning"),
			Straggler:      alert(60*time.Second, "warning"),
			Idle:           alert(600*time.Second, "info"),
			MemoryLeak:     alert(600*time.Second, "warning"),
		},
		Cost: CostConfig{Currency: "USD", ReportInterval: 30 * time.Second},

		MetricsBuilderConfig: metadata.NewDefaultMetricsBuilderConfig(),
	}
}

// analysisConfig translates the configuration for the analysis engine.
func (cfg *Config) analysisConfig() analysis.Config {
	var mask uint64
	for _, r := range cfg.Bottleneck.ThrottleReasons {
		mask |= throttleReasonBits[r]
	}
	var violations uint8
	for _, r := range cfg.Bottleneck.AMDThrottleReasons {
		violations |= 1 << violationReasons[r]
	}
	b, s := &cfg.Bottleneck, &cfg.Straggler
	ac := analysis.Config{
		Rules: analysis.Rules{
			Window:              cfg.Window,
			FaultLookback:       b.FaultLookback,
			CriticalXIDs:        b.CriticalXIDs,
			ThrottleMask:        mask,
			ThrottleFraction:    b.ThrottleFraction,
			IdleSMActive:        b.IdleSMActive,
			IdleGPUUtil:         b.IdleGPUUtilization,
			MemoryBoundDRAM:     b.MemoryBoundDRAMActive,
			CommunicationSM:     b.CommunicationBoundSMActive,
			CommunicationNVLink: b.CommunicationBoundNVLinkBytes,
			LaunchBoundSM:       b.LaunchBoundSMActive,
			LaunchBoundUtil:     b.LaunchBoundGPUUtil,
			InputBoundSM:        b.InputBoundSMActive,
			WaitingPower:        b.WaitingPowerRatio,
			WorkingPower:        b.WorkingPowerRatio,
			IdlePower:           b.IdlePowerRatio,
			ViolationMask:       violations,
			ThrottleResidency:   b.ThrottleResidency,
			MemoryBoundUMC:      b.MemoryBoundUMCActivity,
			CommunicationXGMI:   b.CommunicationBoundXGMIRatio,
			ComputeTensor:       b.Inferred.ComputeBoundTensorActive,
			ComputePower:        b.Inferred.ComputeBoundPowerRatio,
			LaunchPower:         b.Inferred.LaunchBoundPowerRatio,
			CommunicationPCIe:   b.Inferred.CommunicationBoundPCIeBytes,
			ThrottleClock:       b.Inferred.ThrottleClockRatio,
			PowerCap:            b.Inferred.PowerCapRatio,
			ThermalTemp:         b.Inferred.ThermalTemperature,
		},
		Hints: analysis.HintRules{
			BatchSizeSMActive:    cfg.Hints.IncreaseBatchSizeSMActive,
			BatchSizeOccupancy:   cfg.Hints.IncreaseBatchSizeOccupancy,
			MixedPrecisionTensor: cfg.Hints.MixedPrecisionTensorActive,
			DataLoadingPCIeRx:    cfg.Hints.DataLoadingPCIeRxBytes,
		},
		Leak: analysis.LeakRules{
			Window:    cfg.MemoryLeak.Window,
			MinSpan:   cfg.MemoryLeak.MinSpan,
			MinR2:     cfg.MemoryLeak.MinRSquared,
			FullIn:    cfg.MemoryLeak.FullWithin,
			ResolveR2: cfg.MemoryLeak.ResolveRSquared,
			ResolveIn: cfg.MemoryLeak.ResolveFullAfter,
		},
		Straggler: analysis.StragglerRules{
			MinGroupSize:      s.MinGroupSize,
			StepRatio:         s.StepRatio,
			ClockRatio:        s.ClockRatio,
			ClockMinGroupSM:   s.ClockMinGroupSMActive,
			MADThreshold:      s.MADThreshold,
			MinSMDeviation:    s.MinSMActiveDeviation,
			HolderUtil:        s.HolderGPUUtilization,
			MinPowerDeviation: s.MinPowerDeviation,
			Sustain:           s.Sustain,
		},
		MaxGPUs:     cfg.MaxGPUs,
		TTL:         cfg.GPUTTL,
		UsageReport: cfg.Cost.ReportInterval,

		VerdictReport: cfg.VerdictInterval,
		HealthHold:    cfg.HealthHold,
	}
	for i, a := range cfg.Alerts.byName() {
		ac.Alerts[i] = analysis.AlertRule{Enabled: a.Enabled, For: a.For, Threshold: a.Threshold, Resolve: a.Resolve}
	}
	return ac
}
