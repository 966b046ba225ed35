package gpuanalyzerprocessor

// The node's evidence (the gpu_node receiver's pods, pressure and NICs)
// taken into the cause store, and the store asked for a GPU's cause.

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
)

// The gpu_node receiver's names (its metadata.yaml), as the analyzer reads
// them.
const (
	nodeHWTypeNetwork    = "network"
	nodeNetIO            = metricnames.HWNetworkIO
	nodeNetLimit         = metricnames.HWNetworkBandwidthLimit
	nodeNetUp            = metricnames.HWNetworkUp
	nodeNetErrors        = metricnames.HWErrors
	nodeNetAllowance     = metricnames.OTelGPUNetworkAllowanceExceeded
	nodeRailGPUs         = metricnames.AttrOTelGPUNetworkRailGpus
	nodePodCPUTime       = metricnames.OTelGPUPodCPUTime
	nodePodCPULimit      = metricnames.OTelGPUPodCPULimit
	nodePodPeriods       = metricnames.OTelGPUPodCPUPeriods
	nodePodThrottled     = metricnames.OTelGPUPodCPUThrottledPeriods
	nodePodThrottledTime = metricnames.OTelGPUPodCPUThrottledTime
	nodePodMemory        = metricnames.OTelGPUPodMemoryUsage
	nodePodMemoryLimit   = metricnames.OTelGPUPodMemoryLimit
	nodePressure         = metricnames.OTelGPUPressureStallTime
	nodePressureResource = metricnames.AttrOTelGPUPressureResource
	nodePressureScope    = metricnames.AttrOTelGPUPressureScope
	attrNetworkDirection = metricnames.AttrNetworkIODirection
	attrErrorType        = metricnames.AttrErrorType
	attrAllowance        = metricnames.AttrOTelGPUNetworkAllowance
	attrNvidiaPCIBusID   = metricnames.AttrNvidiaGPUPCIBusID
	attrAmdPCIBusID      = metricnames.AttrAmdGPUPCIBusID
	nodeEvidenceMaxGPUs  = 4 // where (host, bus) is kept for up to this many times MaxGPUs
)

// nodeEvidence takes a resource that is node evidence into the store and
// reports whether it was one.
func (p *analyzerProcessor) nodeEvidence(rm pmetric.ResourceMetrics) bool {
	attrs := rm.Resource().Attributes()
	// A GPU's resource, the common case, costs two lookups here.
	if t := strAttr(attrs, metricnames.AttrHWType); t == nodeHWTypeNetwork {
		if host := strAttr(attrs, metricnames.AttrHostName); host != "" {
			p.takeNIC(host, strAttr(attrs, metricnames.AttrHWID), attrs, rm)
		}
		return true
	}
	if _, isHW := attrs.Get(metricnames.AttrHWID); isHW {
		return false
	}
	host := strAttr(attrs, metricnames.AttrHostName)
	if host == "" || !hasMetric(rm, nodePressure, nodePodCPUTime) {
		return false
	}
	if uid := strAttr(attrs, metricnames.AttrK8sPodUid); uid != "" {
		var c cause.PodCounters
		if t := readPod(rm, &c); t > 0 {
			p.causes.AddPod(host, uid, t, c)
			p.causes.NamePod(host, strAttr(attrs, metricnames.AttrK8sNamespaceName), strAttr(attrs, metricnames.AttrK8sPodName), uid)
		}
		return true
	}
	var pr cause.Pressure
	if t := eachPoint(rm, func(name string, dp pmetric.NumberDataPoint) { readPressure(name, dp, &pr) }); t > 0 {
		p.causes.AddNode(host, t, pr)
	}
	return true
}

func (p *analyzerProcessor) takeNIC(host, name string, attrs pcommon.Map, rm pmetric.ResourceMetrics) {
	if name == "" {
		return
	}
	var c cause.NICCounters
	var rx, tx bool
	p.nicErrors = p.nicErrors[:0]
	t := eachPoint(rm, func(n string, dp pmetric.NumberDataPoint) {
		v := metricpoints.Value(dp)
		switch n {
		case nodeNetIO:
			switch attrStr(dp, attrNetworkDirection) {
			case "receive":
				c.RxBytes, rx = v, true
			case "transmit":
				c.TxBytes, tx = v, true
			}
		case nodeNetLimit:
			c.RateBytes = v
		case nodeNetUp:
			c.Up, c.HasUp = v > 0, true
		case nodeNetErrors:
			p.nicErrors = addCount(p.nicErrors, attrStr(dp, attrErrorType), v)
		case nodeNetAllowance:
			if c.Allowance == nil {
				c.Allowance = map[string]float64{}
			}
			c.Allowance[attrStr(dp, attrAllowance)] += v
		}
	})
	c.HasBytes = rx && tx
	if t == 0 {
		return
	}
	c.Errors = p.nicErrors // AddNIC keeps a copy where it needs one
	var rail []string
	if v, ok := attrs.Get(nodeRailGPUs); ok && v.Type() == pcommon.ValueTypeSlice {
		for i := 0; i < v.Slice().Len(); i++ {
			rail = append(rail, v.Slice().At(i).AsString())
		}
	}
	p.causes.AddNIC(host, name, t, c, rail)
}

// addCount adds v to the counter name in cs, appending it if new: a
// counter reported twice (two points of one error.type) is summed, as the
// map it replaces summed it.
func addCount(cs []cause.Count, name string, v float64) []cause.Count {
	for i := range cs {
		if cs[i].Name == name {
			cs[i].Value += v
			return cs
		}
	}
	return append(cs, cause.Count{Name: name, Value: v})
}

func readPod(rm pmetric.ResourceMetrics, c *cause.PodCounters) int64 {
	return eachPoint(rm, func(name string, dp pmetric.NumberDataPoint) {
		v := metricpoints.Value(dp)
		switch name {
		case nodePodCPUTime:
			c.CPUSeconds = v
		case nodePodCPULimit:
			c.LimitCPUs = v
		case nodePodPeriods:
			c.Periods = v
		case nodePodThrottled:
			c.Throttled = v
		case nodePodThrottledTime:
			c.ThrottledSeconds = v
		case nodePodMemory:
			c.MemoryBytes = v
		case nodePodMemoryLimit:
			c.MemoryLimit = v
		default:
			readPressure(name, dp, &c.Pressure)
		}
	})
}

func readPressure(name string, dp pmetric.NumberDataPoint, pr *cause.Pressure) {
	if name != nodePressure {
		return
	}
	r := -1
	switch attrStr(dp, nodePressureResource) {
	case "cpu":
		r = cause.CPU
	case "memory":
		r = cause.Memory
	case "io":
		r = cause.IO
	}
	if r < 0 {
		return
	}
	switch attrStr(dp, nodePressureScope) {
	case "some":
		pr.Some[r], pr.Has[r] = metricpoints.Value(dp), true
	case "full":
		pr.Full[r] = metricpoints.Value(dp)
	}
}

// eachPoint calls fn with each finite, non-negative number data point of
// the resource and returns the latest time among them (0 for none).
func eachPoint(rm pmetric.ResourceMetrics, fn func(name string, dp pmetric.NumberDataPoint)) int64 {
	var t int64
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			dps, ok := metricpoints.Of(m)
			if !ok {
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				if v := metricpoints.Value(dp); math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					continue
				}
				fn(m.Name(), dp)
				t = max(t, int64(dp.Timestamp()))
			}
		}
	}
	return t
}

func hasMetric(rm pmetric.ResourceMetrics, names ...string) bool {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			for _, n := range names {
				if ms.At(j).Name() == n {
					return true
				}
			}
		}
	}
	return false
}

func strAttr(attrs pcommon.Map, k string) string {
	if v, ok := attrs.Get(k); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}

// gpuWhere is where a GPU is, for its cause: its host and PCI bus ID, and
// the pod the kubelet gives it (the dcgm receiver's pod attribution),
// whose cgroup is its pod's evidence.
type gpuWhere struct{ host, bus, namespace, pod string }

// noteGPU keeps where a GPU analysed in this batch is, and binds the GPUs
// of per-process resources to their pods.
func (p *analyzerProcessor) noteGPU(id string, attrs pcommon.Map) {
	if p.where == nil || p.causes.Empty() {
		return // no evidence has arrived: a fleet without gpu_node pays nothing
	}
	bus := strAttr(attrs, attrNvidiaPCIBusID)
	if bus == "" {
		bus = strAttr(attrs, attrAmdPCIBusID)
	}
	w := gpuWhere{host: strAttr(attrs, metricnames.AttrHostName), bus: bus,
		namespace: strAttr(attrs, metricnames.AttrK8sNamespaceName), pod: strAttr(attrs, metricnames.AttrK8sPodName)}
	if old, ok := p.where[id]; ok && old == w {
		return
	}
	if len(p.where) >= nodeEvidenceMaxGPUs*p.cfg.MaxGPUs {
		clear(p.where) // GPUs gone since: the batch's refill it
	}
	p.where[id] = w
}

// Explain is the analyzer's question of the store (analysis.Explainer).
type explainer struct{ p *analyzerProcessor }

func (x explainer) Explain(q *analysis.CauseQuery) cause.Finding {
	p := x.p
	if p.causes.Empty() {
		return cause.Finding{}
	}
	w := p.where[q.ID]
	e := &p.selfEvidence
	p.evidenceOf(e, q.Time, q.ID, w)
	if !q.Straggler {
		return cause.Explain(q.Wait, e, &p.thresholds)
	}
	// Peers on other nodes: the comparison is between nodes.
	peers := p.peerEvidence[:0]
	if p.peerHosts == nil {
		p.peerHosts = map[string]bool{}
	}
	seen := p.peerHosts
	clear(seen)
	seen[w.host] = true
	for _, id := range q.Peers {
		pw, ok := p.where[id]
		if !ok || seen[pw.host] {
			continue
		}
		seen[pw.host] = true
		// Each peer's Evidence keeps its arrays from the last straggler.
		if len(peers) < cap(peers) {
			peers = peers[:len(peers)+1]
		} else {
			peers = append(peers, cause.Evidence{})
		}
		p.evidenceOf(&peers[len(peers)-1], q.Time, id, pw)
	}
	p.peerEvidence = peers
	return cause.Straggler(e, w.host, peers, &p.thresholds)
}

// evidenceOf reads the GPU's evidence into e, its pod's cgroup found by
// the pod's name where the GPU's resource names its pod.
func (p *analyzerProcessor) evidenceOf(e *cause.Evidence, t int64, id string, w gpuWhere) {
	if w.pod != "" {
		p.causes.BindGPUByName(id, w.host, w.namespace, w.pod)
	}
	p.causes.OfInto(e, t, id, w.host, w.bus)
}

func (x explainer) RailCollective(id string, t int64) bool {
	if x.p.causes.Empty() {
		return false
	}
	w, ok := x.p.where[id]
	if !ok {
		return false
	}
	_, on := x.p.causes.RailCollective(t, w.host, w.bus, x.p.thresholds.RailCollective)
	return on
}
