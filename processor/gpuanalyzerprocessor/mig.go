package gpuanalyzerprocessor

import (
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// A MIG-enabled GPU comes as its own resource and one per MIG instance,
// each instance naming its GPU in hw.parent (and nvidia.gpu.mig.parent_id).
// Priced each at the board's price, one GPU would cost as much as its
// instances plus one.
// An instance is priced instead at its share of the board's compute slices
// (a 2g.20gb instance of a 7-slice H100 at 2/7 of the H100's price) and the
// GPU's own resource at what its instances leave unallocated, so that the
// dollars of a GPU and its instances add up to the board's price. Wall time
// (otelgpu.time) stays each device's own: an instance is a device for
// its whole life, and a GPU-hour of a 1g instance is priced, not counted,
// as a seventh of one.

// migSlices is the number of compute slices of a MIG-capable board: 7 for
// the A100, H100, H200 and Blackwell parts, 4 for the A30 (NVIDIA's MIG
// user guide, "Supported MIG Profiles").
func migSlices(model string) int {
	if containsWord(model, "A30") {
		return 4
	}
	return 7
}

// migShare is the part of its board that an instance with these attributes
// holds: its profile's slices ("2g.20gb": 2) over the board's. ok is false
// where the profile does not say, and the instance is priced as a board.
func migShare(attrs pcommon.Map) (share float64, ok bool) {
	v, found := attrs.Get(metricnames.AttrNvidiaGPUMIGProfile)
	if !found {
		return 0, false
	}
	g, _, found := strings.Cut(v.AsString(), "g.")
	n, err := strconv.Atoi(g)
	if !found || err != nil || n <= 0 {
		return 0, false
	}
	var model string
	if m, found := attrs.Get(metricnames.AttrHWModel); found {
		model = m.AsString()
	}
	return min(float64(n)/float64(migSlices(model)), 1), true
}

// migParent returns the hw.id of the GPU a MIG instance lives on: its
// hw.parent, or, from a receiver that predates it, its
// nvidia.gpu.mig.parent_id. An AMD partition's hw.parent is no MIG
// parent: partitions are priced as GPUs of their own.
func migParent(attrs pcommon.Map) (string, bool) {
	if v, ok := attrs.Get(metricnames.AttrHWVendor); !ok || v.AsString() != gpu.VendorAMD {
		if p, ok := attrs.Get(metricnames.AttrHWParent); ok && p.AsString() != "" {
			return p.AsString(), true
		}
	}
	if p, ok := attrs.Get(metricnames.AttrNvidiaGPUMIGParentID); ok && p.AsString() != "" {
		return p.AsString(), true
	}
	return "", false
}

// findMIG sums, per GPU, the shares of its instances in the batch (the
// receiver sends a GPU and its instances together).
func (p *analyzerProcessor) findMIG(attrs pcommon.Map) {
	parent, ok := migParent(attrs)
	if !ok {
		return
	}
	share, ok := migShare(attrs)
	if !ok {
		share = 1
	}
	if p.migAllocated == nil {
		p.migAllocated = map[string]float64{}
	}
	p.migAllocated[parent] += share
}

// priceFactor scales the price of the device id by the part of its board
// it stands for: an instance its share, a MIG-enabled GPU what its
// instances leave, any other GPU all of it.
func (p *analyzerProcessor) priceFactor(id string, attrs pcommon.Map) float64 {
	if _, ok := migParent(attrs); ok {
		if share, ok := migShare(attrs); ok {
			return share
		}
		return 1
	}
	if allocated, ok := p.migAllocated[id]; ok {
		return max(1-allocated, 0)
	}
	return 1
}
