// Package analysis turns GPU samples into verdicts: each GPU's bottleneck
// class, stragglers among the GPUs of one job, and alerts with `for`
// durations and hysteresis. Time comes only from the samples, so a recorded
// trace replays to the same verdicts. It knows nothing of OTLP.
package analysis

import "time"

// Class is a bottleneck class.
type Class uint8

// The bottleneck vocabulary, in the order the rules are tried.
const (
	Unknown Class = iota
	Faulted
	Throttled
	Idle
	MemoryBound
	LaunchBound
	InputBound
	ComputeBound
	NumClasses
)

var classNames = [NumClasses]string{"unknown", "faulted", "throttled", "idle", "memory_bound", "launch_bound", "input_bound", "compute_bound"}

func (c Class) String() string { return classNames[c] }

// Classes lists every class.
func Classes() []Class {
	cs := make([]Class, NumClasses)
	for i := range cs {
		cs[i] = Class(i)
	}
	return cs
}

// Rules are the thresholds of the bottleneck classes.
type Rules struct {
	Window           time.Duration
	FaultLookback    time.Duration
	CriticalXIDs     []uint32
	ThrottleMask     uint64
	ThrottleFraction float64
	IdleSMActive     float64
	IdleGPUUtil      float64 // percent
	MemoryBoundDRAM  float64
	LaunchBoundSM    float64
	LaunchBoundUtil  float64 // percent
	InputBoundSM     float64
}

// StragglerRules are the thresholds of straggler detection.
type StragglerRules struct {
	MinGroupSize    int
	StepRatio       float64
	ClockRatio      float64
	ClockMinGroupSM float64
	MADThreshold    float64
	MinSMDeviation  float64
	Sustain         time.Duration
}

// AlertName names an alert.
type AlertName uint8

// The alerts.
const (
	GPUFaulted AlertName = iota
	GPUOverheating
	GPUMemoryPressure
	GPUThrottled
	GPUStraggler
	GPUIdle
	NumAlerts
)

var alertNames = [NumAlerts]string{"GPUFaulted", "GPUOverheating", "GPUMemoryPressure", "GPUThrottled", "GPUStraggler", "GPUIdle"}

func (a AlertName) String() string { return alertNames[a] }

// AlertRule configures one alert. Threshold and Resolve are used by the
// alerts on a reading (temperature, memory use); the others follow a class
// or the straggler state.
type AlertRule struct {
	Enabled   bool
	For       time.Duration
	Threshold float64
	Resolve   float64
	Severity  string
}

// Config is everything the analyzer needs.
type Config struct {
	Rules     Rules
	Straggler StragglerRules
	Alerts    [NumAlerts]AlertRule
	// MaxGPUs bounds the tracked GPUs; more are passed through unanalysed.
	MaxGPUs int
	// TTL forgets GPUs that have not reported for this long (data time).
	TTL time.Duration
	// UsageReport is the longest time between two Usage.Report verdicts
	// of a GPU.
	UsageReport time.Duration
}
