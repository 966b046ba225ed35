package trace

import (
	"fmt"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// FieldSet is the DCGM fields a collector records: a trace replayed through
// it keeps those and loses the rest, as if recorded by that collector.
type FieldSet struct {
	keep [dcgmfield.Count]bool
}

// ExporterDefaults are the fields of dcgm-exporter's etc/default-counters.csv
// (4.x, what the GPU Operator deploys unless a user edits it) that a trace
// can hold: the DCP section lists the graphics engine, tensor pipe and DRAM
// activity and PCIe bytes, and leaves SM activity, SM occupancy, the FP
// pipes and NVLink bytes commented out; clock event reasons, ECC counts and
// the violation counters are commented out too, as is the enforced power
// limit.
var ExporterDefaults = []dcgmfield.Field{
	dcgmfield.SMClock, dcgmfield.MemClock, dcgmfield.MemoryTemp, dcgmfield.GPUTemp,
	dcgmfield.PowerUsage, dcgmfield.TotalEnergy, dcgmfield.PCIeReplayCounter,
	dcgmfield.GPUUtil, dcgmfield.MemCopyUtil, dcgmfield.EncUtil, dcgmfield.DecUtil,
	dcgmfield.XIDErrors, dcgmfield.FBFree, dcgmfield.FBUsed,
	dcgmfield.UncorrectableRemappedRows, dcgmfield.CorrectableRemappedRows, dcgmfield.RowRemapFailure,
	dcgmfield.GREngineActive, dcgmfield.PipeTensorActive, dcgmfield.DRAMActive,
	dcgmfield.PCIeTxBytes, dcgmfield.PCIeRxBytes,
}

// ParseFieldSet reads a field set: "all" (every field, the trace as it is:
// nil, which Restrict leaves alone), "defaults" (ExporterDefaults), or DCGM
// field names separated by commas.
func ParseFieldSet(s string) (*FieldSet, error) {
	var fs FieldSet
	switch s {
	case "", "all":
		return nil, nil
	case "defaults":
		for _, f := range ExporterDefaults {
			fs.keep[f] = true
		}
		return &fs, nil
	}
	for i, name := range strings.Split(s, ",") {
		f, ok := dcgmfield.ByName(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("field %d of %q: %q is not a DCGM field this trace format has; want all, defaults, or DCGM_FI_* names separated by commas", i+1, s, name)
		}
		fs.keep[f] = true
	}
	return &fs, nil
}

// Restrict returns src with every field outside set blanked, as a collector
// recording only those fields would have recorded it. The step time, which
// the training framework reports and not DCGM, stays.
func Restrict(src Batches, set *FieldSet) Batches {
	if set == nil {
		return src
	}
	return &restricted{src: src, set: set}
}

type restricted struct {
	src Batches
	set *FieldSet
}

func (r *restricted) NextBatch() ([]Row, error) {
	rows, err := r.src.NextBatch()
	for i := range rows {
		for f := range dcgmfield.Count {
			if !r.set.keep[f] {
				rows[i].Values.Clear(f)
			}
		}
	}
	return rows, err
}
