// Package dcgmfield is the catalog of the DCGM fields that otelcol-gpu reads:
// their DCGM field IDs, the names dcgm-exporter exposes them under (and the
// newer DCGM aliases of the same IDs), and a compact container for one GPU's
// values at one instant.
//
// The receiver's backends fill Values, the receiver maps them to OTLP, and
// trace replay parses the same names, so that every path shares one table.
package dcgmfield

import "math"

// Field indexes the catalog. It is not a DCGM field ID: see ID.
type Field uint8

// The fields, in catalog order. Units are DCGM's own (see Info.Unit).
const (
	GPUUtil Field = iota
	MemCopyUtil
	EncUtil
	DecUtil
	FBTotal
	FBFree
	FBUsed
	FBReserved
	PowerUsage
	TotalEnergy
	GPUTemp
	MemoryTemp
	SMClock
	MemClock
	ClocksEventReasons
	PowerViolation
	ThermalViolation
	ECCSBEVolTotal
	ECCDBEVolTotal
	XIDErrors
	RowRemapFailure
	CorrectableRemappedRows
	UncorrectableRemappedRows
	PCIeReplayCounter
	GREngineActive
	SMActive
	SMOccupancy
	PipeTensorActive
	DRAMActive
	PipeFP64Active
	PipeFP32Active
	PipeFP16Active
	PCIeTxBytes
	PCIeRxBytes
	NVLinkTxBytes
	NVLinkRxBytes
	EnforcedPowerLimit
	RecoveryAction

	// Count is the number of fields in the catalog.
	Count
)

// Info describes one field.
type Info struct {
	// ID is the DCGM field ID.
	ID uint16
	// Name is the name dcgm-exporter exposes (DCGM_FI_...).
	Name string
	// Alias is the newer DCGM name for the same ID, if there is one.
	Alias string
	// Unit is the field's DCGM unit, in UCUM where one exists.
	Unit string
	// Profiling marks the DCGM profiling fields (IDs 1001-1012), which some
	// GPUs do not support.
	Profiling bool
	// Max is the largest value that makes sense for the field; larger values
	// (and negative ones) are DCGM sentinels or corrupt readings. Zero means
	// unbounded.
	Max float64
}

// fp64Blank is DCGM_FP64_BLANK, the smallest of DCGM's blank sentinels.
const fp64Blank = 140737488355328.0

var catalog = [Count]Info{
	GPUUtil:                   {ID: 203, Name: "DCGM_FI_DEV_GPU_UTIL", Alias: "DCGM_FI_DEV_GPU_UTIL_RATIO", Unit: "%", Max: 100},
	MemCopyUtil:               {ID: 204, Name: "DCGM_FI_DEV_MEM_COPY_UTIL", Unit: "%", Max: 100},
	EncUtil:                   {ID: 206, Name: "DCGM_FI_DEV_ENC_UTIL", Unit: "%", Max: 100},
	DecUtil:                   {ID: 207, Name: "DCGM_FI_DEV_DEC_UTIL", Unit: "%", Max: 100},
	FBTotal:                   {ID: 250, Name: "DCGM_FI_DEV_FB_TOTAL", Unit: "MiBy"},
	FBFree:                    {ID: 251, Name: "DCGM_FI_DEV_FB_FREE", Unit: "MiBy"},
	FBUsed:                    {ID: 252, Name: "DCGM_FI_DEV_FB_USED", Unit: "MiBy"},
	FBReserved:                {ID: 253, Name: "DCGM_FI_DEV_FB_RESERVED", Unit: "MiBy"},
	PowerUsage:                {ID: 155, Name: "DCGM_FI_DEV_POWER_USAGE", Alias: "DCGM_FI_DEV_BOARD_POWER_WATTS", Unit: "W", Max: 10000},
	TotalEnergy:               {ID: 156, Name: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Unit: "mJ"},
	GPUTemp:                   {ID: 150, Name: "DCGM_FI_DEV_GPU_TEMP", Alias: "DCGM_FI_DEV_GPU_TEMP_CELSIUS", Unit: "Cel", Max: 200},
	MemoryTemp:                {ID: 140, Name: "DCGM_FI_DEV_MEMORY_TEMP", Alias: "DCGM_FI_DEV_MEMORY_TEMP_CELSIUS", Unit: "Cel", Max: 200},
	SMClock:                   {ID: 100, Name: "DCGM_FI_DEV_SM_CLOCK", Unit: "MHz", Max: 100000},
	MemClock:                  {ID: 101, Name: "DCGM_FI_DEV_MEM_CLOCK", Unit: "MHz", Max: 100000},
	ClocksEventReasons:        {ID: 112, Name: "DCGM_FI_DEV_CLOCKS_EVENT_REASONS", Alias: "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", Unit: "1"},
	PowerViolation:            {ID: 240, Name: "DCGM_FI_DEV_POWER_VIOLATION", Unit: "us"},
	ThermalViolation:          {ID: 241, Name: "DCGM_FI_DEV_THERMAL_VIOLATION", Unit: "us"},
	ECCSBEVolTotal:            {ID: 310, Name: "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", Unit: "{error}"},
	ECCDBEVolTotal:            {ID: 311, Name: "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", Unit: "{error}"},
	XIDErrors:                 {ID: 230, Name: "DCGM_FI_DEV_XID_ERRORS", Alias: "DCGM_FI_DEV_XID_ERROR", Unit: "1"},
	RowRemapFailure:           {ID: 395, Name: "DCGM_FI_DEV_ROW_REMAP_FAILURE", Alias: "DCGM_FI_DEV_ROW_REMAP_FAILED", Unit: "1", Max: 1},
	CorrectableRemappedRows:   {ID: 394, Name: "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", Alias: "DCGM_FI_DEV_ROW_REMAP_CORRECTABLE_TOTAL", Unit: "{row}"},
	UncorrectableRemappedRows: {ID: 393, Name: "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", Alias: "DCGM_FI_DEV_ROW_REMAP_UNCORRECTABLE_TOTAL", Unit: "{row}"},
	PCIeReplayCounter:         {ID: 202, Name: "DCGM_FI_DEV_PCIE_REPLAY_COUNTER", Alias: "DCGM_FI_DEV_PCIE_REPLAY_TOTAL", Unit: "{replay}"},
	GREngineActive:            {ID: 1001, Name: "DCGM_FI_PROF_GR_ENGINE_ACTIVE", Alias: "DCGM_FI_PROF_GR_ENGINE_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	SMActive:                  {ID: 1002, Name: "DCGM_FI_PROF_SM_ACTIVE", Alias: "DCGM_FI_PROF_SM_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	SMOccupancy:               {ID: 1003, Name: "DCGM_FI_PROF_SM_OCCUPANCY", Alias: "DCGM_FI_PROF_SM_OCCUPANCY_RATIO", Unit: "1", Profiling: true, Max: 1},
	PipeTensorActive:          {ID: 1004, Name: "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", Alias: "DCGM_FI_PROF_TENSOR_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	DRAMActive:                {ID: 1005, Name: "DCGM_FI_PROF_DRAM_ACTIVE", Alias: "DCGM_FI_PROF_DRAM_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	PipeFP64Active:            {ID: 1006, Name: "DCGM_FI_PROF_PIPE_FP64_ACTIVE", Alias: "DCGM_FI_PROF_FP64_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	PipeFP32Active:            {ID: 1007, Name: "DCGM_FI_PROF_PIPE_FP32_ACTIVE", Alias: "DCGM_FI_PROF_FP32_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	PipeFP16Active:            {ID: 1008, Name: "DCGM_FI_PROF_PIPE_FP16_ACTIVE", Alias: "DCGM_FI_PROF_FP16_UTIL_RATIO", Unit: "1", Profiling: true, Max: 1},
	PCIeTxBytes:               {ID: 1009, Name: "DCGM_FI_PROF_PCIE_TX_BYTES", Unit: "By/s", Profiling: true},
	PCIeRxBytes:               {ID: 1010, Name: "DCGM_FI_PROF_PCIE_RX_BYTES", Unit: "By/s", Profiling: true},
	NVLinkTxBytes:             {ID: 1011, Name: "DCGM_FI_PROF_NVLINK_TX_BYTES", Unit: "By/s", Profiling: true},
	NVLinkRxBytes:             {ID: 1012, Name: "DCGM_FI_PROF_NVLINK_RX_BYTES", Unit: "By/s", Profiling: true},
	// The power limit the driver enforces after every limiter (the
	// administrator's, the board's, thermal), the most the board may draw.
	EnforcedPowerLimit: {ID: 164, Name: "DCGM_FI_DEV_ENFORCED_POWER_LIMIT", Alias: "DCGM_FI_DEV_BOARD_POWER_LIMIT_ENFORCED_WATTS", Unit: "W", Max: 5000},
	// What the driver says the GPU needs before it can be trusted again, an
	// nvmlDeviceGpuRecoveryAction_t (see the RecoveryAction* constants):
	// dcgm_fields.h, "GPU Recovery Action (see nvmlDeviceGpuRecoveryAction_t
	// for return values)". DCGM 4.5 named field 1523
	// DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION; 4.6 renamed it and kept the old
	// name as an alias, which dcgm-exporters built on 4.5 still serve.
	// A driver that predates the field answers NOT_SUPPORTED, which DCGM
	// stores as a blank: no value. Max leaves room for actions a newer
	// driver adds while rejecting DCGM's int32 blanks (0x7ffffff0 and up).
	RecoveryAction: {ID: 1523, Name: "DCGM_FI_DEV_GPU_RECOVERY_ACTION", Alias: "DCGM_FI_DEV_GET_GPU_RECOVERY_ACTION", Unit: "1", Max: 255},
}

var byName = func() map[string]Field {
	m := make(map[string]Field, 2*int(Count))
	for f := Field(0); f < Count; f++ {
		m[catalog[f].Name] = f
		if a := catalog[f].Alias; a != "" {
			m[a] = f
		}
	}
	return m
}()

var byID = func() map[uint16]Field {
	m := make(map[uint16]Field, int(Count))
	for f := Field(0); f < Count; f++ {
		m[catalog[f].ID] = f
	}
	return m
}()

// Info returns the field's catalog entry.
func (f Field) Info() Info { return catalog[f] }

// String returns the dcgm-exporter name of the field.
func (f Field) String() string {
	if f >= Count {
		return "invalid"
	}
	return catalog[f].Name
}

// ByName finds a field by its dcgm-exporter name or its DCGM alias.
func ByName(name string) (Field, bool) {
	f, ok := byName[name]
	return f, ok
}

// ByID finds a field by its DCGM field ID.
func ByID(id uint16) (Field, bool) {
	f, ok := byID[id]
	return f, ok
}

// All returns every field in catalog order.
func All() []Field {
	fs := make([]Field, Count)
	for i := range fs {
		fs[i] = Field(i)
	}
	return fs
}

// Values holds at most one value per field. The zero value is empty.
type Values struct {
	present uint64
	v       [Count]float64
}

// Set records a value for f.
func (vs *Values) Set(f Field, v float64) {
	vs.present |= 1 << f
	vs.v[f] = v
}

// Get returns f's value and whether it was set.
func (vs *Values) Get(f Field) (float64, bool) {
	return vs.v[f], vs.present&(1<<f) != 0
}

// Clear removes f's value.
func (vs *Values) Clear(f Field) {
	vs.present &^= 1 << f
	vs.v[f] = 0
}

// Has reports whether f was set.
func (vs *Values) Has(f Field) bool { return vs.present&(1<<f) != 0 }

// Len is the number of fields set.
func (vs *Values) Len() int {
	n := 0
	for p := vs.present; p != 0; p &= p - 1 {
		n++
	}
	return n
}

// Valid reports whether v is a plausible reading of f: finite, not negative,
// and within the field's range. DCGM marks missing data with large sentinel
// values, which this rejects too.
func Valid(f Field, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return false
	}
	if limit := catalog[f].Max; limit > 0 && v > limit {
		return false
	}
	// DCGM marks missing values with blank sentinels: DCGM_FP64_BLANK is
	// 2^47 and the int64 blanks are larger still. No real reading comes
	// near: 2^47 mJ is seven years of a 700 W GPU.
	return v < fp64Blank
}

// Values of DCGM_FI_DEV_GPU_RECOVERY_ACTION and of NVML's field
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION: nvmlDeviceGpuRecoveryAction_t in
// nvml.h. The driver logs XID 154 whenever the action changes.
const (
	RecoveryActionNone              = 0 // NVML_GPU_RECOVERY_ACTION_NONE: no action needed
	RecoveryActionGPUReset          = 1 // NVML_GPU_RECOVERY_ACTION_GPU_RESET: reset the GPU
	RecoveryActionNodeReboot        = 2 // NVML_GPU_RECOVERY_ACTION_NODE_REBOOT: reboot the node
	RecoveryActionDrainP2P          = 3 // NVML_GPU_RECOVERY_ACTION_DRAIN_P2P: drain peer-to-peer traffic
	RecoveryActionDrainAndReset     = 4 // NVML_GPU_RECOVERY_ACTION_DRAIN_AND_RESET: drain P2P, then reset the GPU
	RecoveryActionRecoverIMEXDomain = 5 // NVML_GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN: recover the IMEX domain
)

// Clock event reason bits of DCGM_FI_DEV_CLOCKS_EVENT_REASONS.
const (
	ClocksEventGPUIdle             = 0x1
	ClocksEventAppClockSetting     = 0x2
	ClocksEventSWPowerCap          = 0x4
	ClocksEventHWSlowdown          = 0x8
	ClocksEventSyncBoost           = 0x10
	ClocksEventSWThermal           = 0x20
	ClocksEventHWThermal           = 0x40
	ClocksEventHWPowerBrake        = 0x80
	ClocksEventDisplayClockSetting = 0x100
)
