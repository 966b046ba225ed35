package fromdcgmexporterprocessor

import (
	"strconv"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// migID is the hw.id of a MIG GPU instance that dcgm-exporter serves: the
// dcgm receiver's name for a GPU instance without a MIG UUID from the
// driver, PARENT/GPU_INSTANCE/COMPUTE_INSTANCE. dcgm-exporter's entities
// are GPU instances, whose compute instance the receiver reads as 0.
func migID(parent string, gi int) string {
	return parent + "/" + strconv.Itoa(gi) + "/0"
}

// boardField says whether a field served on a MIG instance is its board's:
// with MIG on, dcgm-exporter serves the instances in place of the GPU and
// repeats the board's power, energy and power limit on every one of them.
// Kept there, a sum over the instances would count the board's watts and
// joules once per instance; they go to the GPU's own device instead, as the
// dcgm receiver reports them, once.
func boardField(src source, fl f.Field) bool {
	return src == field && (fl == f.PowerUsage || fl == f.TotalEnergy || fl == f.EnforcedPowerLimit)
}
