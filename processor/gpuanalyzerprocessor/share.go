package gpuanalyzerprocessor

import (
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// A shared GPU (time-slicing, MPS) comes with one resource per owner of
// its processes beside its own, the dcgm receiver's per_process series:
// each owner's utilization over the interval. The analyzer splits the GPU's
// usage and cost between them by that utilization (analysis.Share), so that
// otelgpu.time and otelgpu.cost summed by namespace add up to the
// GPU's wall time: each owner's part on its resource, what they left idle
// on the GPU's. The bottleneck class stays the GPU's: an owner's part of
// the utilization says nothing of what held the SMs back.
//
// The split needs the GPU's resource and its owners' in the same batch, as
// the receiver emits them: a gateway tier that routes by namespace must
// route the per-process resources with their GPU's (by hw.id or host.name).

// shareKey finds an owner's resource in the batch.
type shareKey struct {
	id, owner string
	t         pcommon.Timestamp
}

// shareRef is an owner's resource in the batch.
type shareRef struct {
	owner string
	t     pcommon.Timestamp
	util  float64
}

// batchShares are the owners' resources of one batch.
type batchShares struct {
	byGPU map[string][]shareRef
	rms   map[shareKey]pmetric.ResourceMetrics
	// owners interns the owners' keys from batch to batch, buf builds
	// them: the same pods come back every scrape.
	owners map[string]string
	buf    []byte
}

// maxOwners bounds owners: past it the keys are made anew.
const maxOwners = 1 << 16

func (b *batchShares) reset() {
	clear(b.byGPU)
	clear(b.rms)
}

// add takes an owner's resource of the GPU id.
func (b *batchShares) add(id string, rm pmetric.ResourceMetrics) {
	attrs := rm.Resource().Attributes()
	owner := b.ownerOf(attrs)
	util, t, ok := processUtilization(rm)
	if !ok {
		return // no reading: not an owner of this interval
	}
	if b.byGPU == nil {
		b.byGPU = map[string][]shareRef{}
		b.rms = map[shareKey]pmetric.ResourceMetrics{}
	}
	b.byGPU[id] = append(b.byGPU[id], shareRef{owner: owner, t: t, util: util})
	b.rms[shareKey{id, owner, t}] = rm
}

// of appends the shares of the GPU id's sample at t.
func (b *batchShares) of(id string, t int64, dst []analysis.Share) []analysis.Share {
	for _, r := range b.byGPU[id] {
		if int64(r.t) == t {
			dst = append(dst, analysis.Share{Key: r.owner, Util: r.util})
		}
	}
	return dst
}

// ownerKey names an owner by every attribute the receiver groups its
// processes by.
func ownerKey(attrs pcommon.Map) string { return string(appendOwnerKey(nil, attrs)) }

func appendOwnerKey(b []byte, attrs pcommon.Map) []byte {
	for i, k := range [...]string{metricnames.AttrOTelGPUProcessOwner, metricnames.AttrK8sPodUid,
		metricnames.AttrK8sNamespaceName, metricnames.AttrK8sPodName, metricnames.AttrK8sContainerName,
		metricnames.AttrSlurmClusterName, metricnames.AttrSlurmJobID, metricnames.AttrSlurmJobStep} {
		if i > 0 {
			b = append(b, 0)
		}
		if v, ok := attrs.Get(k); ok {
			if v.Type() == pcommon.ValueTypeStr {
				b = append(b, v.Str()...)
			} else {
				b = append(b, v.AsString()...)
			}
		}
	}
	return b
}

// ownerOf is ownerKey, interned: a key seen before costs no allocation.
func (b *batchShares) ownerOf(attrs pcommon.Map) string {
	b.buf = appendOwnerKey(b.buf[:0], attrs)
	if k, ok := b.owners[string(b.buf)]; ok {
		return k
	}
	if b.owners == nil || len(b.owners) >= maxOwners {
		b.owners = map[string]string{}
	}
	k := string(b.buf)
	b.owners[k] = k
	return k
}

// processUtilization reads an owner's utilization (the general task) and
// its time (the receiver stamps all of a scrape's points alike). An owner
// whose processes report no utilization (NVML without per-process
// utilization, MIG) has a share of 0.
func processUtilization(rm pmetric.ResourceMetrics) (util float64, t pcommon.Timestamp, ok bool) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		if sms.At(i).Scope().Name() == metadata.ScopeName {
			continue
		}
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			dps, isNumber := metricpoints.Of(m)
			if !isNumber || dps.Len() == 0 {
				continue
			}
			t, ok = dps.At(0).Timestamp(), true
			if m.Name() != metricnames.OTelGPUProcessUtilization {
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				if attrStr(dp, metricnames.AttrHWGPUTask) != metricnames.AttrHWGPUTaskGeneral {
					continue
				}
				if v := metricpoints.Value(dp); v >= 0 && v <= 1 {
					util = v
				}
			}
		}
	}
	return util, t, ok
}

// emitShares records each owner's part of its GPU's usage on the owner's
// resource, at every sample it has a share: an owner may be gone at the
// next.
func (p *analyzerProcessor) emitShares(v *analysis.Verdict) {
	ts := pcommon.Timestamp(v.Time)
	for i := range v.Shares {
		su := &v.Shares[i]
		rm, ok := p.shares.rms[shareKey{v.ID, su.Key, ts}]
		if !ok {
			continue
		}
		mb := p.mb
		mb.SetStartTime(pcommon.Timestamp(su.Start))
		for _, st := range analysis.UsageStates() {
			if su.Nanos[st] > 0 || st == analysis.Used {
				mb.RecordOtelgpuTimeDataPoint(ts, float64(su.Nanos[st])/1e9, usageStateAttrs[st])
				if p.costOn {
					mb.RecordOtelgpuCostDataPoint(ts, su.Cost[st], usageStateAttrs[st])
				}
			}
		}
		sm := rm.ScopeMetrics().AppendEmpty()
		sm.Scope().SetName(metadata.ScopeName)
		mb.EmitTo(sm.Metrics())
		if p.costOn {
			p.setCostUnit(sm.Metrics(), 0)
		}
		legacynames.AppendOld(sm.Metrics(), 0)
	}
}
