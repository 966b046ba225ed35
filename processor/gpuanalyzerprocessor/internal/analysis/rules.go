// Package analysis turns GPU samples into verdicts: each GPU's bottleneck
// class and the hint of what to do about it, stragglers among the GPUs of
// one job, and alerts with `for` durations and hysteresis, a least-squares
// memory leak fit among them. Time comes only from the samples, so a recorded
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
	CommunicationBound
	LaunchBound
	InputBound
	ComputeBound
	NumClasses
)

var classNames = [NumClasses]string{"unknown", "faulted", "throttled", "idle", "memory_bound", "communication_bound", "launch_bound", "input_bound", "compute_bound"}

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
	IdleGPUUtil      float64 // ratio
	MemoryBoundDRAM  float64
	// CommunicationSM and CommunicationNVLink (bytes per second, transmit
	// plus receive) tell collectives: NCCL kernels on a few SMs while
	// NVLink carries the traffic.
	CommunicationSM     float64
	CommunicationNVLink float64
	LaunchBoundSM       float64
	LaunchBoundUtil     float64 // ratio
	InputBoundSM        float64
	// Without profiling, the window's mean power over the GPU's reference
	// (power.go): busy by utilization under WaitingPower is waiting, at
	// WorkingPower or more is working, and with power alone under IdlePower
	// is idle.
	WaitingPower, WorkingPower, IdlePower float64
	// AMD GPUs report no SM activity but say what holds them back and how
	// busy their memory controllers and XGMI links are. A sample is
	// throttled when the GPU was held back for more than ThrottleResidency
	// of its interval by a reason in ViolationMask (bit r for
	// ViolationReason r); the window is throttled as with NVIDIA's clock
	// event reasons (ThrottleFraction). A GPU whose memory controllers are
	// busy MemoryBoundUMC or more of the time is memory bound; one whose
	// XGMI links carry CommunicationXGMI or more of what they can is
	// communication bound.
	ViolationMask     uint8
	ThrottleResidency float64
	MemoryBoundUMC    float64
	CommunicationXGMI float64
	// Without SM activity, a GPU whose graphics engine is busy computes
	// with its tensor pipes at ComputeTensor or more, or at ComputePower of
	// its reference power or more; it is launch bound under LaunchPower
	// with its tensor pipes under ComputeTensor.
	ComputeTensor, ComputePower, LaunchPower float64
	// CommunicationPCIe: bytes per second each way over PCIe at or above
	// which symmetric traffic is a collective's through the NIC, once the
	// job's peers show it too.
	CommunicationPCIe float64
	// Without clock event reasons, a GPU whose mean SM clock is at most
	// ThrottleClock of its maximum is throttled when it draws PowerCap of
	// its reference power or more, or runs at ThermalTemp or hotter.
	ThrottleClock, PowerCap, ThermalTemp float64
}

// Hint is the one next step an engineer would take for a verdict.
type Hint uint8

// The hints; NoHint where there is nothing to say (idle, unknown, or a
// compute-bound GPU already using its tensor pipes at good occupancy).
const (
	NoHint Hint = iota
	IncreaseBatchSize
	EnableMixedPrecision
	FixDataLoading
	FixHostPreprocessing
	UseCUDAGraphs
	OverlapCommunication
	ReduceMemoryTraffic
	ReplaceOrDrain
	CheckCoolingOrPower
	// ReduceHostWork: the GPU a job waits on is near idle with its memory
	// allocated: the work is on the host (checkpoints, data loading).
	ReduceHostWork
	// FixStraggler: the GPU waits in a collective for the one its job
	// waits on; the fix is there.
	FixStraggler
	// The hints a cause found on the node gives (causes.go).
	RaiseCPULimit
	SpreadCPULoad
	RaiseMemoryLimit
	SpeedUpStorage
	AddNetworkBandwidth
	CheckFabric
	NumHints
)

var hintNames = [NumHints]string{"", "increase_batch_size", "enable_mixed_precision", "fix_data_loading", "fix_host_preprocessing",
	"use_cuda_graphs", "overlap_communication", "reduce_memory_traffic", "replace_or_drain", "check_cooling_or_power",
	"reduce_host_work", "fix_straggler", "raise_cpu_limit", "spread_cpu_load", "raise_memory_limit", "speed_up_storage",
	"add_network_bandwidth", "check_fabric"}

// String is the hint's name; empty for NoHint.
func (h Hint) String() string { return hintNames[h] }

// HintRules are the thresholds that pick a hint within a class.
type HintRules struct {
	// A compute-bound GPU with SM activity at least BatchSizeSMActive and
	// occupancy below BatchSizeOccupancy runs too few warps per SM.
	BatchSizeSMActive  float64
	BatchSizeOccupancy float64
	// A compute-bound GPU whose tensor pipes are below MixedPrecisionTensor
	// (where the GPU reports them) computes in FP32.
	MixedPrecisionTensor float64
	// An input-bound GPU receiving at least DataLoadingPCIeRx bytes per
	// second over PCIe waits on the data pipeline; below, on the host.
	DataLoadingPCIeRx float64
}

// LeakRules configure GPUMemoryLeak: a least-squares line through the
// frame buffer use over Window.
type LeakRules struct {
	Window    time.Duration
	MinSpan   time.Duration // no verdict before the samples span this
	MinR2     float64       // steady growth
	FullIn    time.Duration // holds when full within this
	ResolveR2 float64       // resolves below this R²
	ResolveIn time.Duration // or when full in more than this
}

// StragglerRules are the thresholds of straggler detection.
type StragglerRules struct {
	MinGroupSize    int
	StepRatio       float64
	ClockRatio      float64
	ClockMinGroupSM float64
	MADThreshold    float64
	MinSMDeviation  float64
	// HolderUtil: a member without profiling under this utilization,
	// while most of its peers wait at low power, is the one they wait on.
	HolderUtil float64
	// MinPowerDeviation: a member without profiling that works drawing at
	// least this much more of its reference power than its peers' median
	// (and MADThreshold MADs) is the one they wait on part of each step.
	MinPowerDeviation float64
	// Sustain is how long a GPU must deviate at every evaluation to become
	// a straggler, and not deviate at any to stop being one.
	Sustain time.Duration
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
	GPUMemoryLeak
	NumAlerts
)

var alertNames = [NumAlerts]string{"GPUFaulted", "GPUOverheating", "GPUMemoryPressure", "GPUThrottled", "GPUStraggler", "GPUIdle", "GPUMemoryLeak"}

func (a AlertName) String() string { return alertNames[a] }

// AlertRule configures one alert. Threshold and Resolve are used by the
// alerts on a reading (temperature, memory use); the others follow a class
// or the straggler state.
type AlertRule struct {
	Enabled   bool
	For       time.Duration
	Threshold float64
	Resolve   float64
}

// Config is everything the analyzer needs.
type Config struct {
	Rules     Rules
	Straggler StragglerRules
	Hints     HintRules
	Leak      LeakRules
	Alerts    [NumAlerts]AlertRule
	// MaxGPUs bounds the tracked GPUs; more are passed through unanalysed.
	MaxGPUs int
	// TTL forgets GPUs that have not reported for this long (data time).
	TTL time.Duration
	// UsageReport is the longest time between two Usage.Report verdicts
	// of a GPU.
	UsageReport time.Duration
	// VerdictReport, if positive, is the longest time between two
	// Verdict.Report verdicts of a GPU; 0 reports every verdict.
	VerdictReport time.Duration
	// HealthHold is how long a fault event (an XID, an ECC error, a fatal
	// RAS record) holds the GPU's health state after it (data time).
	HealthHold time.Duration
	// Causes explains waits and stragglers by the node's evidence; nil
	// looks for no cause.
	Causes Explainer
}

// hint picks the next step for the GPU's class from its window's means.
func (a *Analyzer) hint(g *gpuState) Hint {
	h, s := &a.cfg.Hints, &g.cur
	if g.holding && g.fbHeld {
		// Near idle with its memory allocated while its job waits: the
		// work is on the host (a checkpoint written, data loaded).
		return ReduceHostWork
	}
	switch g.class {
	case Faulted:
		return ReplaceOrDrain
	case Throttled:
		return CheckCoolingOrPower
	case MemoryBound:
		return ReduceMemoryTraffic
	case CommunicationBound:
		if g.waiting && g.group != nil && g.group.held {
			return FixStraggler
		}
		return OverlapCommunication
	case LaunchBound:
		return UseCUDAGraphs
	case InputBound:
		if s.n[wPCIeRx] > 0 && s.mean[wPCIeRx] < h.DataLoadingPCIeRx {
			return FixHostPreprocessing
		}
		return FixDataLoading
	case ComputeBound:
		if s.n[wOccupancy] > 0 && s.mean[wSM] >= h.BatchSizeSMActive && s.mean[wOccupancy] < h.BatchSizeOccupancy {
			return IncreaseBatchSize
		}
		if s.n[wTensor] > 0 && s.mean[wTensor] < h.MixedPrecisionTensor {
			return EnableMixedPrecision
		}
	}
	return NoHint
}
