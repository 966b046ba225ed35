package cause

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// Store holds the node evidence by host: pods, node pressure, NICs and the
// rails that tie a GPU to its NIC. It is not safe for concurrent use; the
// analyzer's processor holds it under its lock.
type Store struct {
	window, maxAge int64
	pods           map[string]*history[PodCounters] // host \x00 pod UID
	nodes          map[string]*history[Pressure]    // host
	nics           map[string]*nicState             // host \x00 NIC
	byHost         map[string][]string              // host -> its NICs' keys, sorted
	rails          map[string][]string              // host \x00 GPU bus ID -> its NICs' keys
	gpuPod         map[string]string                // GPU hw.id -> pod key
	podByName      map[podRef]string                // a pod's host, namespace and name -> its UID (podnames.go)
	lastSweep      int64
}

type nicState struct {
	name string
	key  string   // host \x00 name, its key in the store's maps
	rail []string // the rail's GPUs its last reading named
	h    history[NICCounters]
	// The rates last worked out, from the reading at time at (nicRates):
	// every GPU of a host, and every verdict until the next reading, costs
	// no new pass over the NIC's counters. memo says they are valid.
	at    int64
	rates NICRates
	ok    bool
	memo  bool
}

// maxEntries bounds each map: a gateway that receives a whole fleet's
// evidence keeps at most this many of each, and forgets the oldest first
// when sweeping.
const maxEntries = 1 << 16

// NewStore keeps readings for window and reads none older than maxAge.
func NewStore(window, maxAge time.Duration) *Store {
	return &Store{window: int64(window), maxAge: int64(maxAge),
		pods: map[string]*history[PodCounters]{}, nodes: map[string]*history[Pressure]{},
		nics: map[string]*nicState{}, byHost: map[string][]string{}, rails: map[string][]string{}, gpuPod: map[string]string{},
		podByName: map[podRef]string{}}
}

func key(host, id string) string { return host + "\x00" + id }

// Empty says no evidence is held: the analyzer then asks nothing of the
// store, so that a fleet without the gpu_node receiver pays nothing.
func (s *Store) Empty() bool { return len(s.pods) == 0 && len(s.nodes) == 0 && len(s.nics) == 0 }

// AddPod records a pod's cgroup figures at t (ns).
func (s *Store) AddPod(host, uid string, t int64, c PodCounters) {
	// Looked up by a key the lookup alone uses (no copy on the heap),
	// made to keep only for a new pod.
	h := s.pods[host+"\x00"+uid]
	if h == nil {
		if len(s.pods) >= maxEntries {
			return
		}
		h = &history[PodCounters]{}
		s.pods[key(host, uid)] = h
	}
	h.add(t, c, s.window, podReset)
}

func podReset(a, b *PodCounters) bool {
	return b.CPUSeconds < a.CPUSeconds || b.Periods < a.Periods || b.Throttled < a.Throttled || pressureReset(&a.Pressure, &b.Pressure)
}

// AddNode records a node's pressure at t.
func (s *Store) AddNode(host string, t int64, p Pressure) {
	h := s.nodes[host]
	if h == nil {
		if len(s.nodes) >= maxEntries {
			return
		}
		h = &history[Pressure]{}
		s.nodes[host] = h
	}
	h.add(t, p, s.window, pressureReset)
}

// AddNIC records a NIC port's figures at t, with the PCI bus IDs of the
// GPUs it serves (its rail; none where unknown). c.Errors is not kept: the
// store keeps its own copy, or the last reading's where the counts are the
// same, as a port's error counters mostly are from one reading to the next.
func (s *Store) AddNIC(host, name string, t int64, c NICCounters, railGPUs []string) {
	st := s.nics[host+"\x00"+name]
	if st == nil {
		if len(s.nics) >= maxEntries {
			return
		}
		k := key(host, name)
		st = &nicState{name: name, key: k}
		s.nics[k] = st
		s.byHost[host] = append(s.byHost[host], k)
		sort.Strings(s.byHost[host])
	}
	c.Errors = st.keepErrors(c.Errors)
	st.h.add(t, c, s.window, nicReset)
	st.memo = false
	if slices.Equal(st.rail, railGPUs) {
		return // the rail is known already: every reading names it again
	}
	st.rail = append(st.rail[:0], railGPUs...)
	for _, bus := range railGPUs {
		rk := key(host, NormBusID(bus))
		if !contains(s.rails[rk], st.key) && len(s.rails) < maxEntries {
			s.rails[rk] = append(s.rails[rk], st.key)
		}
	}
}

// keepErrors is the error counts to keep in a reading: the last reading's
// slice where the counts are the same (readings are never changed once
// kept, so they may share it), else a copy of errs.
func (st *nicState) keepErrors(errs []Count) []Count {
	if len(errs) == 0 {
		return nil
	}
	if n := len(st.h.v); n > 0 && slices.Equal(st.h.v[n-1].Errors, errs) {
		return st.h.v[n-1].Errors
	}
	return slices.Clone(errs)
}

func nicReset(a, b *NICCounters) bool {
	if b.RxBytes < a.RxBytes || b.TxBytes < a.TxBytes {
		return true
	}
	for i, c := range b.Errors {
		if v, ok := countOf(a.Errors, i, c.Name); ok && c.Value < v {
			return true
		}
	}
	return false
}

// BindGPU ties a GPU to the pod whose processes run on it (the dcgm
// receiver's per-process resources).
func (s *Store) BindGPU(gpuID, host, podUID string) {
	if podUID == "" || (len(s.gpuPod) >= maxEntries && s.gpuPod[gpuID] == "") {
		return
	}
	if cur, ok := s.gpuPod[gpuID]; ok && isKeyOf(cur, host) && cur[len(host)+1:] == podUID {
		return // bound already: every batch binds it again
	}
	s.gpuPod[gpuID] = key(host, podUID)
}

// NormBusID spells a PCI bus ID as sysfs does: a four-digit domain, lower
// case. NVML and DCGM give an eight-digit domain ("00000000:18:00.0").
func NormBusID(id string) string {
	id = strings.ToLower(strings.TrimSpace(id))
	if i := strings.IndexByte(id, ':'); i > 4 && strings.Trim(id[:i-4], "0") == "" {
		id = id[i-4:]
	}
	return id
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// Evidence is what the store holds for one GPU.
type Evidence struct {
	Pod     PodRates
	HasPod  bool
	Node    Stalls
	HasNode bool
	// Rail is the GPU's own NICs; Others the host's other NICs.
	Rail, Others []NICRates
}

// Any says there is some evidence to explain a wait by.
func (e *Evidence) Any() bool { return e.HasPod || e.HasNode || len(e.Rail) > 0 || len(e.Others) > 0 }

// Of is the evidence for the GPU gpuID on host, with PCI bus ID busID
// ("" unknown), at now.
func (s *Store) Of(now int64, gpuID, host, busID string) Evidence {
	var e Evidence
	s.OfInto(&e, now, gpuID, host, busID)
	return e
}

// OfInto is Of written into e, whose Rail and Others keep their arrays: a
// caller that asks for many GPUs' evidence reuses one Evidence.
func (s *Store) OfInto(e *Evidence, now int64, gpuID, host, busID string) {
	*e = Evidence{Rail: e.Rail[:0], Others: e.Others[:0]}
	if pk, ok := s.gpuPod[gpuID]; ok && isKeyOf(pk, host) {
		if h := s.pods[pk]; h != nil {
			e.Pod, e.HasPod = s.podRates(now, h)
		}
	}
	if h := s.nodes[host]; h != nil {
		if a, b, secs, ok := h.span(now, s.maxAge); ok {
			e.Node, e.HasNode = stalls(a, b, secs), true
		}
	}
	var rail []string
	if busID != "" {
		rail = s.rails[key(host, NormBusID(busID))]
	}
	for _, k := range s.byHost[host] {
		r, ok := s.nicRates(now, s.nics[k])
		if !ok {
			continue
		}
		if contains(rail, k) {
			e.Rail = append(e.Rail, r)
		} else {
			e.Others = append(e.Others, r)
		}
	}
}

// isKeyOf says the store key k (host \x00 id) is host's, without
// building host's prefix.
func isKeyOf(k, host string) bool {
	return len(k) > len(host) && k[len(host)] == 0 && k[:len(host)] == host
}

func (s *Store) podRates(now int64, h *history[PodCounters]) (PodRates, bool) {
	a, b, secs, ok := h.span(now, s.maxAge)
	if !ok || secs <= 0 {
		return PodRates{}, false
	}
	r := PodRates{LimitCPUs: b.LimitCPUs, UsedCPUs: max(0, b.CPUSeconds-a.CPUSeconds) / secs,
		MemoryBytes: b.MemoryBytes, MemoryLimit: b.MemoryLimit, Stall: stalls(&a.Pressure, &b.Pressure, secs)}
	if p := b.Periods - a.Periods; b.LimitCPUs > 0 && p > 0 {
		r.ThrottledFrac, r.HasThrottle = clamp01((b.Throttled-a.Throttled)/p), true
	}
	return r, true
}

// nicRates are the NIC's rates at now, worked out again only when a
// reading came since: they depend on now only through whether the newest
// reading is older than maxAge, so one reading's rates serve every GPU of
// its host at every verdict until the next reading (a gateway's analyzer
// asks for a straggler's peers' NICs at each batch of GPUs; the NICs are
// read every 30 s).
func (s *Store) nicRates(now int64, st *nicState) (NICRates, bool) {
	last := st.h.lastTime()
	fresh := now-last <= s.maxAge
	if st.memo && st.at == last && fresh {
		return st.rates, st.ok
	}
	r, ok := s.workOutNICRates(now, st)
	st.at, st.rates, st.ok, st.memo = last, r, ok, fresh
	return r, ok
}

func (s *Store) workOutNICRates(now int64, st *nicState) (NICRates, bool) {
	r := NICRates{Name: st.name}
	last, ok := st.h.latest(now, s.maxAge)
	if !ok {
		return r, false
	}
	r.RateBytes, r.Up, r.HasUp = last.RateBytes, last.Up, last.HasUp
	a, b, secs, ok := st.h.span(now, s.maxAge)
	if !ok || secs <= 0 {
		// One reading: a link down is evidence by itself; a link up
		// says nothing until its counters give a rate, or the first
		// reading would explain a wait as none_found.
		return r, r.HasUp && !r.Up
	}
	if a.HasBytes && b.HasBytes && b.RateBytes > 0 {
		r.RxUtil, r.TxUtil = (b.RxBytes-a.RxBytes)/secs/b.RateBytes, (b.TxBytes-a.TxBytes)/secs/b.RateBytes
		r.Util, r.HasUtil = max(r.RxUtil, r.TxUtil), true
	}
	perMin := 60 / secs
	// The counts' increases are whole numbers, so their sum is the same in
	// any order; of two counters rising alike, the first by name is named.
	var errs float64
	for i, c := range b.Errors {
		was, _ := countOf(a.Errors, i, c.Name)
		inc := c.Value - was
		if inc <= 0 {
			continue
		}
		errs += inc
		if d := inc * perMin; d > r.WorstPerMin || (d == r.WorstPerMin && c.Name < r.WorstError) {
			r.WorstPerMin, r.WorstError = d, c.Name
		}
	}
	r.ErrorsPerMin = errs * perMin
	var worst float64
	for _, n := range sortedKeys(b.Allowance) {
		d := (b.Allowance[n] - a.Allowance[n]) * perMin
		if d <= 0 {
			continue
		}
		r.AllowancePerMin += d
		if d > worst {
			worst, r.WorstAllowance = d, n
		}
	}
	return r, true
}

func sortedKeys(m map[string]float64) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Sweep forgets what has not been updated for ten times maxAge, at most
// once per maxAge.
func (s *Store) Sweep(now int64) {
	if now-s.lastSweep < s.maxAge {
		return
	}
	s.lastSweep = now
	old := now - 10*s.maxAge
	for k, h := range s.pods {
		if h.lastTime() < old {
			delete(s.pods, k)
		}
	}
	for k, h := range s.nodes {
		if h.lastTime() < old {
			delete(s.nodes, k)
		}
	}
	for host, ks := range s.byHost {
		kept := ks[:0]
		for _, k := range ks {
			if s.nics[k].h.lastTime() < old {
				delete(s.nics, k)
				continue
			}
			kept = append(kept, k)
		}
		if len(kept) == 0 {
			delete(s.byHost, host)
		} else {
			s.byHost[host] = kept
		}
	}
	for rk, ks := range s.rails {
		kept := ks[:0]
		for _, k := range ks {
			if s.nics[k] != nil {
				kept = append(kept, k)
			}
		}
		if len(kept) == 0 {
			delete(s.rails, rk)
		} else {
			s.rails[rk] = kept
		}
	}
	for g, pk := range s.gpuPod {
		if s.pods[pk] == nil {
			delete(s.gpuPod, g)
		}
	}
	s.sweepNames()
}

// RailCollective says whether the GPU's rail carries a collective over the
// window: one of its NICs moving at least minUtil of its rate each way,
// the two directions within half of each other. A ring or tree all-reduce
// sends what it receives; a dataset read or a checkpoint write moves one
// way. It returns the NIC that does.
func (s *Store) RailCollective(now int64, host, busID string, minUtil float64) (NICRates, bool) {
	if busID == "" {
		return NICRates{}, false
	}
	for _, k := range s.rails[key(host, NormBusID(busID))] {
		r, ok := s.nicRates(now, s.nics[k])
		if !ok || !r.HasUtil {
			continue
		}
		lo, hi := min(r.RxUtil, r.TxUtil), max(r.RxUtil, r.TxUtil)
		if lo >= minUtil && lo >= hi/2 {
			return r, true
		}
	}
	return NICRates{}, false
}
