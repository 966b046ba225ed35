package analysis

import "github.com/otelcol-gpu/otelcol-gpu/internal/gpu"

// Presence bits of Sample.Has.
const (
	HasSMActive uint32 = 1 << iota
	HasDRAMActive
	HasGPUUtil
	HasSMClock
	HasTemp
	HasMemRatio
	HasStep
	HasReasons
	HasRowRemapFailure
	HasDBE
	HasNVLink
	HasPCIeRx
	HasOccupancy
	HasTensor
	HasFB
	// HasPower: board power draw, Sample.Power.
	HasPower
	// HasFBUsed: the frame buffer in use is known (Sample.FBUsed), with or
	// without the free memory that HasFB needs.
	HasFBUsed
	// HasUMCActive: an AMD GPU's memory controller activity,
	// Sample.UMCActive.
	HasUMCActive
	// HasXGMI: the bytes an AMD GPU moved over its XGMI links,
	// Sample.XGMI, and what they can carry, Sample.XGMICapacity.
	HasXGMI
	// HasViolation: an AMD GPU's violation residency, Sample.Violation.
	HasViolation
	// HasFatalRAS: the count of an AMD GPU's fatal RAS (CPER) records,
	// Sample.FatalRAS.
	HasFatalRAS
	// HasGREngine: the graphics engine's active ratio as DCGM profiles it
	// (DCGM_FI_PROF_GR_ENGINE_ACTIVE), Sample.GREngine; not GPU
	// utilization standing in for it.
	HasGREngine
	// HasPCIeTx: the bytes sent over PCIe, Sample.PCIeTx.
	HasPCIeTx
	// HasRecovery: the recovery action the driver asks for,
	// Sample.Recovery.
	HasRecovery
	// HasBadPages: an AMD GPU's retired pages and the driver's threshold,
	// Sample.BadPages and Sample.BadPageLimit.
	HasBadPages
)

// ViolationReason is one reason an AMD GPU reports for holding its clocks
// back (amdsmi's violation status).
type ViolationReason uint8

// The violation reasons, as the receiver names them.
const (
	ViolationPower ViolationReason = iota
	ViolationSocketThermal
	ViolationVRThermal
	ViolationHBMThermal
	ViolationProchot
	NumViolationReasons
)

// Counter is a cumulative counter's value and start time.
type Counter struct {
	Value float64
	Start int64 // Unix ns
}

// XIDCount is the cumulative count of one XID code.
type XIDCount struct {
	Code uint32
	Counter
}

// Sample is one reading of one GPU.
type Sample struct {
	// Time is the reading's time, Unix nanoseconds.
	Time int64
	// Group is the GPU's peer group; empty means it has no peers.
	Group string
	// PodAttributed says a pod holds the GPU (for GPUIdle).
	PodAttributed bool
	Has           uint32
	SMActive      float64 // ratio
	DRAMActive    float64 // ratio
	GPUUtil       float64 // ratio
	SMClock       float64 // Hz
	Temp          float64 // Celsius
	MemRatio      float64 // used / total
	Step          float64 // seconds of compute per training step
	Reasons       uint64  // DCGM clock event reasons
	PricePerHour  float64 // the GPU's price, for Verdict.Usage
	RowRemapFail  float64
	DBE           Counter
	XIDs          []XIDCount
	// NVLink is the bytes moved over NVLink, both directions, PCIeRx the
	// bytes received over PCIe and PCIeTx those sent: cumulative counters,
	// turned into rates.
	NVLink Counter
	PCIeRx Counter
	PCIeTx Counter
	// GREngine is the fraction of time the graphics engine was active: an
	// upper bound of SM activity, which dcgm-exporter's default counters
	// carry where they leave SM activity out.
	GREngine float64
	// MaxSMClock is the SM clock the GPU's model reaches at most, Hz; 0
	// where it is not known (the analyzer then takes the most it has seen).
	MaxSMClock float64
	Occupancy  float64 // ratio
	Tensor     float64 // tensor pipe activity, ratio
	FBUsed     float64 // bytes
	FBFree     float64 // bytes
	// Power is the board's power draw, W. RefPower is what the GPU draws
	// at full work, W: its enforced power limit, or its model's board
	// power; 0 if neither is known, and the analyzer learns it.
	Power, RefPower float64
	// UMCActive is the fraction of the interval an AMD GPU's memory
	// controllers were busy: its memory traffic, as DRAMActive is an
	// NVIDIA GPU's.
	UMCActive float64
	// XGMI is the bytes an AMD GPU moved over its XGMI links, both
	// directions, a cumulative counter; XGMICapacity is what the links
	// carry at most, bytes per second, both directions.
	XGMI         Counter
	XGMICapacity float64
	// Violation is the fraction of the interval an AMD GPU was held back
	// for each reason; ViolationPresent has bit r set where reason r was
	// reported.
	Violation        [NumViolationReasons]float64
	ViolationPresent uint8
	// FatalRAS counts an AMD GPU's fatal RAS (CPER) records.
	FatalRAS Counter
	// Recovery is the recovery action the driver asks for (NVML's
	// nvmlDeviceGpuRecoveryAction_t; 0 for none).
	Recovery int
	// BadPages are an AMD GPU's retired and pending pages, BadPageLimit
	// the count at which its driver marks it bad.
	BadPages, BadPageLimit float64
	// Health is the health check's result per subsystem (the receiver's
	// nvidia.gpu.health); Health.Watched is 0 where none was read.
	Health gpu.Health
	// Shares are the parts of a shared GPU (time-slicing, MPS) that its
	// pods used over the interval this sample closes, one per pod (or the
	// host's processes); nil for a GPU no one shares. Its usage is split
	// between them (Verdict.Shares).
	Shares []Share
}

// Share is what one of a shared GPU's owners used of it over a sample's
// interval.
type Share struct {
	// Key names the owner; the same owner has the same key at every
	// sample.
	Key string
	// Util is the fraction of the interval its processes kept the GPU
	// busy (NVML's per-process SM utilization).
	Util float64
}

// Reset empties the sample for reuse, keeping its slices' storage.
func (s *Sample) Reset() { *s = Sample{XIDs: s.XIDs[:0], Shares: s.Shares[:0]} }
