package gpuremediationconnector

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	corev1 "k8s.io/api/core/v1"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// This file turns the NIC ports of GPU nodes into faults: the gpu_node
// receiver's resources with hw.type network (CONTRACT-36), one per port.
// They go through the GPU faults' incidents, dry run and circuit breaker;
// what they do to the node is fabric::action, never a reset or a drain.

// Names the gpu_node receiver writes.
const (
	hwTypeNetwork  = "network"
	attrLinkLayer  = metricnames.AttrOTelGPUNetworkLinkLayer
	attrRailGPUs   = metricnames.AttrOTelGPUNetworkRailGpus
	metricNetUp    = metricnames.HWNetworkUp
	metricNetLimit = metricnames.HWNetworkBandwidthLimit
	errLinkDowned  = "link_downed"
	// fabric::action values
	fabricNone   = "none"
	fabricTaint  = "taint"
	fabricCordon = "cordon"
	// the Event's reason for a fabric fault
	eventNetworkFault = "GPUNetworkFault"
)

// defaultLinkErrors are the counters of a link's own errors: bad symbols,
// link retraining, bad packets received, the far end's physical errors,
// integrity and buffer overruns (InfiniBand), and the netdev's rx/tx
// errors (Ethernet). Drops and discards are congestion or a slow host.
func defaultLinkErrors() []string {
	return []string{
		"symbol_error", "link_error_recovery", "port_rcv_errors", "port_rcv_remote_physical_errors",
		"local_link_integrity_errors", "excessive_buffer_overrun_errors", "rx_errors", "tx_errors",
	}
}

// validate checks the fabric settings; each error names its key. Config.Validate
// calls it (a Validate of its own would be called twice by confmap).
func (f FabricConfig) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	switch f.Action {
	case fabricNone, fabricTaint, fabricCordon:
	default:
		bad("fabric::action: unknown action %q; want none, taint or cordon", f.Action)
	}
	if f.FlapCount < 2 {
		bad("fabric::flap_count must be at least 2 (one link_downed is a link that went down once), got %d", f.FlapCount)
	}
	if f.FlapWindow <= 0 {
		bad("fabric::flap_window must be positive, got %v", f.FlapWindow)
	}
	if !(f.ErrorRate > 0) {
		bad("fabric::error_rate must be positive, got %v", f.ErrorRate)
	}
	if f.ErrorWindow < 2*time.Minute {
		bad("fabric::error_window must be at least 2m (a rate sustained over two halves of at least a minute), got %v", f.ErrorWindow)
	}
	if len(f.ErrorTypes) == 0 {
		bad("fabric::error_types must name at least one error.type")
	}
	return errors.Join(errs...)
}

// nicPort names a NIC port and the rail it serves.
type nicPort struct {
	id        string   // hw.id, e.g. mlx5_3:1
	linkLayer string   // infiniband, ethernet
	gpus      []string // PCI bus IDs of the GPUs it serves
}

// String names the port and its rail for people.
func (n *nicPort) String() string {
	rail := "no GPUs listed"
	if len(n.gpus) > 0 {
		rail = "GPUs " + strings.Join(n.gpus, ", ")
	}
	return fmt.Sprintf("NIC port %s (%s; rail: %s)", n.id, n.linkLayer, rail)
}

// portState is what is known of one NIC port.
type portState struct {
	node      string
	nic       nicPort
	firstSeen int64
	lastSeen  time.Time
	lastTS    pcommon.Timestamp
	// up: the port's last state, once known.
	up, upKnown bool
	limit       float64 // the rated speed, By/s; 0 unknown
	counters    map[string]counter
	errTotal    float64       // link errors counted since first seen
	samples     []errorSample // errTotal over the error window
	downs       []time.Time   // link_downed increments within the flap window
	flapping    bool          // level: flapping now
	erroring    bool          // level: errors sustained now
	degraded    bool          // level: below its peers' rate now
}

type errorSample struct {
	at    time.Time
	total float64
}

// fabricState is every NIC port's, by node then hw.id.
type fabricState struct {
	ports   map[string]map[string]*portState
	changed map[string]bool // nodes reported in the batch being read
}

func (f *fabricState) port(node, id string) *portState {
	if f.ports == nil {
		f.ports, f.changed = map[string]map[string]*portState{}, map[string]bool{}
	}
	if f.ports[node] == nil {
		f.ports[node] = map[string]*portState{}
	}
	p := f.ports[node][id]
	if p == nil {
		p = &portState{node: node, firstSeen: -1, counters: map[string]counter{}}
		f.ports[node][id] = p
	}
	return p
}

// isNetwork says whether a resource is a NIC port's.
func isNetwork(attrs pcommon.Map) bool { return str(attrs, metricnames.AttrHWType) == hwTypeNetwork }

// detectFabric reads one NIC port's resource and returns its faults.
func (r *remediator) detectFabric(rm pmetric.ResourceMetrics) []detected {
	if !r.cfg.Fabric.Enabled {
		return nil
	}
	attrs := rm.Resource().Attributes()
	node := str(attrs, attrNode)
	if node == "" {
		node = str(attrs, attrHost)
	}
	id := str(attrs, attrGPU)
	if node == "" || id == "" {
		r.bad.noGPU += fabricPoints(rm)
		return nil
	}
	s := r.fab.port(node, id)
	s.nic = nicPort{id: id, linkLayer: str(attrs, attrLinkLayer), gpus: railGPUs(attrs)}
	var out []detected
	add := func(node string, s *portState, at pcommon.Timestamp, k policy.Kind, fresh bool) {
		nic := s.nic
		out = append(out, detected{at: at.AsTime(), node: node, gpu: nic.id, fault: policy.Fault{Kind: k}, fresh: fresh, nic: &nic})
	}
	var last pcommon.Timestamp
	see := func(ts pcommon.Timestamp) {
		if s.firstSeen < 0 {
			s.firstSeen = int64(ts)
		}
		last = max(last, ts)
	}
	errTypes := r.cfg.Fabric.ErrorTypes
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			switch m.Name() {
			case metricNetUp, metricNetLimit:
				dps, ok := metricpoints.Of(m)
				if !ok {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					if !r.bad.level(dp) {
						continue
					}
					see(dp.Timestamp())
					if m.Name() == metricNetLimit {
						s.limit = value(dp)
						continue
					}
					up := value(dp) >= 1
					// Down at first sight is no fault: an unused port (the
					// second port of a dual-port HCA, an uncabled one) is
					// down for good, and a fault for it would take a
					// healthy node out. Only a port seen up, then down.
					if s.upKnown && s.up && !up {
						add(node, s, dp.Timestamp(), policy.NICDown, true)
					}
					s.up, s.upKnown = up, true
				}
			case metricECC:
				if m.Type() != pmetric.MetricTypeSum {
					r.bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				dps := m.Sum().DataPoints()
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					typ := str(dp.Attributes(), attrErrorType)
					linkErr := slices.Contains(errTypes, typ)
					if typ != errLinkDowned && !linkErr {
						continue
					}
					if !r.bad.count(dp) {
						continue
					}
					see(dp.Timestamp())
					key := typ + "/" + str(dp.Attributes(), metricnames.AttrNetworkIODirection)
					n := s.delta(key, dp)
					if typ == errLinkDowned {
						for c := 0; c < int(min(n, float64(r.cfg.Fabric.FlapCount))); c++ {
							s.downs = append(s.downs, dp.Timestamp().AsTime())
						}
					} else {
						s.errTotal += n
					}
				}
			}
		}
	}
	if last == 0 {
		return nil
	}
	at := last.AsTime()
	if at.After(s.lastSeen) {
		s.lastSeen = at
	}
	cfg := r.cfg.Fabric
	// Flapping: flap_count link_downed increments within flap_window.
	s.downs = slices.DeleteFunc(s.downs, func(t time.Time) bool { return at.Sub(t) >= cfg.FlapWindow })
	flapping := len(s.downs) >= cfg.FlapCount
	if flapping && !s.flapping {
		add(node, s, last, policy.NICFlapping, true)
	}
	s.flapping = flapping
	// Errors: at least error_rate a minute over each half of error_window.
	erroring := s.sustained(at, cfg.ErrorRate, cfg.ErrorWindow)
	if erroring && !s.erroring {
		add(node, s, last, policy.NICErrors, true)
	}
	s.erroring = erroring
	s.lastTS = max(s.lastTS, last)
	r.fab.changed[node] = true // its speed is judged once the batch is read
	return out
}

// speedFaults judges, once a batch is read, the rates of the ports of the
// nodes it reported: a port below the most common rate of its node's up
// ports of the same link layer is nic_degraded_speed.
func (r *remediator) speedFaults() []detected {
	var out []detected
	for node := range r.fab.changed {
		for _, p := range r.fab.ports[node] {
			degraded := p.belowPeers(r.fab.ports[node])
			if degraded && !p.degraded {
				nic := p.nic
				out = append(out, detected{at: p.lastTS.AsTime(), node: node, gpu: nic.id, fault: policy.Fault{Kind: policy.NICDegradedSpeed}, fresh: true, nic: &nic})
			}
			p.degraded = degraded
		}
	}
	clear(r.fab.changed)
	return out
}

func railGPUs(attrs pcommon.Map) []string {
	v, ok := attrs.Get(attrRailGPUs)
	if !ok {
		return nil
	}
	if v.Type() != pcommon.ValueTypeSlice {
		if s := v.AsString(); s != "" {
			return []string{s}
		}
		return nil
	}
	out := make([]string, 0, v.Slice().Len())
	for i := 0; i < v.Slice().Len(); i++ {
		out = append(out, v.Slice().At(i).AsString())
	}
	return out
}

// delta is how much a cumulative counter grew since its last point. A
// counter's count from before the port was first seen is history, even
// when the counter is first reported later (a read that failed at first):
// the receiver reports every counter of a port, so, unlike an XID's, its
// first appearance is no event. After a reset, the count from zero.
func (s *portState) delta(key string, dp pmetric.NumberDataPoint) float64 {
	prev, known := s.counters[key]
	c := counter{start: int64(dp.StartTimestamp()), value: value(dp)}
	s.counters[key] = c
	switch {
	case known && c.start == prev.start && c.value >= prev.value:
		return c.value - prev.value
	case known && c.start == prev.start:
		return c.value // reset under the same start time
	case c.start > s.firstSeen:
		return c.value // started since the port was first seen
	default:
		return 0
	}
}

// sustained records the port's error total at at and says whether it rose
// by at least rate a minute over each half of the window ending at at (as
// the samples split it): a rate kept up, not one burst (a burst falls in
// one half only).
func (s *portState) sustained(at time.Time, rate float64, window time.Duration) bool {
	s.samples = append(s.samples, errorSample{at: at, total: s.errTotal})
	// Keep the newest sample at or before the window's start, and after.
	from := at.Add(-window)
	base := -1
	for i, x := range s.samples {
		if !x.at.After(from) {
			base = i
		}
	}
	if base < 0 {
		return false // not a whole window yet
	}
	s.samples = s.samples[base:]
	mid := at.Add(-window / 2)
	first, half := s.samples[0], s.samples[0]
	for _, x := range s.samples {
		if !x.at.After(mid) {
			half = x
		}
	}
	perMinute := func(a, b errorSample) float64 {
		if m := b.at.Sub(a.at).Minutes(); m > 0 {
			return (b.total - a.total) / m
		}
		return 0
	}
	return perMinute(first, half) >= rate && perMinute(half, errorSample{at: at, total: s.errTotal}) >= rate
}

// belowPeers says whether an up port runs below the most common rate of
// its node's up ports of its link layer; that rate must be shared by at
// least two ports and by more ports than any other rate.
func (s *portState) belowPeers(ports map[string]*portState) bool {
	if !s.up || s.limit <= 0 {
		return false
	}
	count := map[float64]int{}
	for _, p := range ports {
		if p.up && p.limit > 0 && p.nic.linkLayer == s.nic.linkLayer {
			count[p.limit]++
		}
	}
	mode, n, tie := 0.0, 0, false
	for rate, c := range count {
		switch {
		case c > n:
			mode, n, tie = rate, c, false
		case c == n:
			tie = true
		}
	}
	return n >= 2 && !tie && s.limit < mode
}

// fabricPoints counts a NIC resource's data points of fault evidence.
func fabricPoints(rm pmetric.ResourceMetrics) int64 {
	var n int64
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			switch m := ms.At(j); m.Name() {
			case metricNetUp, metricNetLimit, metricECC:
				n += int64(metricpoints.Count(m))
			}
		}
	}
	return n
}

// decideFabric files a fabric fault into its incident (keyed by node and
// port) and, for a new incident, plans fabric::action.
func (r *remediator) decideFabric(d detected, record bool) *plan {
	inc, opened := r.policy.Observe(d.node+"/"+d.gpu, d.fault, d.at)
	if !opened {
		return nil
	}
	steps := r.fabricSteps()
	if len(steps) == 0 {
		if record {
			r.decision(d, inc.ID, policy.None, reasonNonCritical, fmt.Sprintf("%s on node %s: %s; fabric::action is none: no node is touched", d.nic, d.node, d.fault))
		}
		return nil
	}
	return &plan{d: d, incident: inc.ID, rem: policy.None, reason: reasonPolicy, steps: steps, arrived: d.arrived}
}

// fabricSteps lists the actions of a fabric fault, as fabric::action and
// the actions settings allow.
func (r *remediator) fabricSteps() []string {
	a, act := r.cfg.Actions, r.cfg.Fabric.Action
	if act == fabricNone {
		return nil
	}
	var s []string
	for _, st := range []struct {
		on   bool
		step string
	}{{a.Event, stepEvent}, {a.Condition, stepCondition}, {a.Taint, stepTaint}, {a.Cordon && act == fabricCordon, stepCordon}} {
		if st.on {
			s = append(s, st.step)
		}
	}
	return s
}

// actionName is the action a decision names: the remediation for a GPU's
// fault, fabric::action for a NIC's.
func (r *remediator) actionName(d detected, rem policy.Remediation) string {
	if d.nic != nil {
		return r.cfg.Fabric.Action
	}
	return rem.String()
}

// nicTaintName is the taint key's name for a NIC port: a key's name holds
// no colon (mlx5_3:1 becomes nic-mlx5_3-1).
func nicTaintName(id string) string {
	var b strings.Builder
	b.WriteString("nic-")
	for _, c := range id {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == '.', c == '-':
			b.WriteRune(c)
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

// fabricReason names a fabric fault as the GPUNetworkHealthy condition's
// reason.
func fabricReason(f policy.Fault) string {
	switch f.Kind {
	case policy.NICDown:
		return "NICDown"
	case policy.NICFlapping:
		return "NICFlapping"
	case policy.NICErrors:
		return "NICErrors"
	}
	return "NICDegradedSpeed"
}

// doFabric runs one step of a fabric fault's plan.
func (r *remediator) doFabric(ctx context.Context, p *plan, step string) (int, string, error) {
	d := p.d
	fault := d.fault.String()
	what := fmt.Sprintf("%s: %s; %s by otelcol-gpu; incident %s", d.nic, fault, r.cfg.Fabric.Action, p.incident)
	taint := nicTaintName(d.gpu)
	switch step {
	case stepEvent:
		return 1, "", r.api.Event(ctx, d.node, corev1.EventTypeWarning, eventNetworkFault, what)
	case stepCondition:
		return 1, kube.NetworkConditionType + "=False", r.api.SetNetworkCondition(ctx, d.node, false, fabricReason(d.fault), what)
	case stepTaint:
		cordon := p.next+1 < len(p.steps) && p.steps[p.next+1] == stepCordon
		_, _, err := r.api.Quarantine(ctx, d.node, taint, fault, p.incident, true, cordon)
		if cordon {
			return 2, kube.TaintKey(taint), err
		}
		return 1, kube.TaintKey(taint), err
	case stepCordon:
		_, _, err := r.api.Quarantine(ctx, d.node, taint, fault, p.incident, false, true)
		return 1, "", err
	}
	return 1, "", nil
}

// describeFabric says what a fabric fault's plan does.
func (r *remediator) describeFabric(p *plan) string {
	verb := "acting"
	if r.dryRun() {
		verb = "would act (dry run)"
	}
	return fmt.Sprintf("%s on %s: %s %s → %s, incident %s: %s", verb, p.d.node, p.d.nic, p.d.fault, r.cfg.Fabric.Action, p.incident, strings.Join(p.steps, ", "))
}

// subject names what a decision or an action is about.
func subject(d detected) string {
	if d.nic != nil {
		return d.nic.String()
	}
	return "GPU " + d.gpu
}

// annotateRail adds a fabric fault's port and rail to a log record.
func annotateRail(at pcommon.Map, d detected) {
	if d.nic == nil {
		return
	}
	at.PutStr(metricnames.AttrHWType, hwTypeNetwork)
	at.PutStr(attrLinkLayer, d.nic.linkLayer)
	gpus := at.PutEmptySlice(attrRailGPUs)
	for _, g := range d.nic.gpus {
		gpus.AppendEmpty().SetStr(g)
	}
}

// forgetFabric drops the ports silent for gpu_ttl, and their incidents.
func (r *remediator) forgetFabric(now time.Time) {
	ttl := r.cfg.GPUTTL
	for node, ports := range r.fab.ports {
		for id, p := range ports {
			if age := now.Sub(p.lastSeen); age > ttl || age < -ttl {
				delete(ports, id)
				r.policy.Forget(node + "/" + id)
			}
		}
		if len(ports) == 0 {
			delete(r.fab.ports, node)
		}
	}
}
