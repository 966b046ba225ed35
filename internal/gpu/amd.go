package gpu

import "strings"

// AMDDevice describes how an AMD GPU is partitioned. AMD SMI lists each
// compute partition of a partitioned GPU (DPX, TPX, QPX, CPX) as a
// processor of its own; the device plugin allocates each as one amd.com/gpu.
type AMDDevice struct {
	// ComputePartition and MemoryPartition are the GPU's modes as AMD SMI
	// spells them (SPX, CPX, ...; NPS1, NPS4, ...); empty where the GPU
	// does not report one (MI200).
	ComputePartition string
	MemoryPartition  string
	// PartitionID is the partition's index within its GPU, -1 where the
	// driver does not say.
	PartitionID int
	// ParentUUID is, for a partition of a partitioned GPU, the hw.id of the
	// whole GPU: its first partition's. Empty for an unpartitioned GPU.
	ParentUUID string
}

// IsAMDModel reports whether a model name is an AMD GPU's, as AMD SMI's
// market names and the traces recorded from them spell it: "AMD Instinct
// MI300X", "Instinct MI210".
func IsAMDModel(model string) bool {
	return strings.HasPrefix(model, "AMD ") || strings.HasPrefix(model, "Instinct ")
}

// AMDField indexes the scalar figures of AMDValues.
type AMDField uint8

// The scalar AMD figures, in AMD SMI's units.
const (
	// AMDUMCActivity and AMDMMActivity are the memory controllers' and
	// the multimedia engines' busy percentages.
	AMDUMCActivity AMDField = iota
	AMDMMActivity
	// AMDPowerCurrent and AMDPowerAverage are the socket power, in W:
	// current on MI300 and later, averaged by the firmware on MI200. The
	// one read is also the sample's POWER_USAGE.
	AMDPowerCurrent
	AMDPowerAverage
	// AMDPowerCap is the power cap the driver enforces, in W.
	AMDPowerCap
	// Temperatures per sensor, in °C.
	AMDTempEdge
	AMDTempHotspot
	AMDTempVRAM
	// Clocks, in MHz.
	AMDClockGFX
	AMDClockMem
	// Violation residencies, in percent of time.
	AMDViolationPower
	AMDViolationSocketThermal
	AMDViolationVRThermal
	AMDViolationHBMThermal
	AMDViolationProchot
	// AMDPCIeReplays is the cumulative PCIe replay count.
	AMDPCIeReplays
	// Retired pages by state, and the count at which the driver marks
	// the GPU bad.
	AMDBadPagesReserved
	AMDBadPagesPending
	AMDBadPagesUnreservable
	AMDBadPageThreshold
	// AMDProcesses is how many processes use the device.
	AMDProcesses
	// AMDFieldCount is the number of scalar figures.
	AMDFieldCount
)

// AMDValues is what AMD SMI reads of one device beyond the figures both
// vendors share. A figure a call failed to read is absent, never zero.
type AMDValues struct {
	has uint32
	v   [AMDFieldCount]float64
	// ECC is the cumulative ECC counts per RAS block, in block order.
	ECC []ECCBlock
	// Links is the XGMI links' cumulative traffic.
	Links []XGMILink
	// CPER is the CPER records logged since the device's previous sample.
	CPER []CPERRecord
}

// Set records a figure.
func (a *AMDValues) Set(f AMDField, v float64) {
	a.has |= 1 << f
	a.v[f] = v
}

// Get returns a figure and whether it was read.
func (a *AMDValues) Get(f AMDField) (float64, bool) {
	return a.v[f], a.has&(1<<f) != 0
}

// Has reports whether a figure was read.
func (a *AMDValues) Has(f AMDField) bool { return a.has&(1<<f) != 0 }

// Reset empties the values, keeping the slices' storage.
func (a *AMDValues) Reset() {
	a.has = 0
	a.ECC = a.ECC[:0]
	a.Links = a.Links[:0]
	a.CPER = a.CPER[:0]
}

// ECCBlock is one RAS block's cumulative ECC counts.
type ECCBlock struct {
	// Block is the block's name, lower case as AMD SMI spells it (umc,
	// sdma, gfx, ...).
	Block                            string
	Corrected, Uncorrected, Deferred uint64
}

// XGMILink is one XGMI link's cumulative traffic.
type XGMILink struct {
	Index int
	// ReadKB and WriteKB are the data moved since the driver loaded, in
	// KB (1024 bytes), as AMD SMI counts it.
	ReadKB, WriteKB uint64
	// MaxBandwidthGbps is the most the link carries each way, in Gb/s.
	MaxBandwidthGbps float64
}

// CPERRecord is one CPER (RAS) record: its severity and the AMD Field IDs
// it carries.
type CPERRecord struct {
	// Severity is fatal, nonfatal_uncorrected or nonfatal_corrected.
	Severity string
	AFIDs    []uint64
}

// CPER severities, as amd.gpu.cper.severity spells them.
const (
	CPERFatal               = "fatal"
	CPERNonFatalUncorrected = "nonfatal_uncorrected"
	CPERNonFatalCorrected   = "nonfatal_corrected"
)
