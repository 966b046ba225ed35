package analysis

import (
	"math"
	"math/bits"
	"slices"
)

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
	// NVLink is the bytes moved over NVLink, both directions, and PCIeRx
	// the bytes received over PCIe: cumulative counters, turned into rates.
	NVLink    Counter
	PCIeRx    Counter
	Occupancy float64 // ratio
	Tensor    float64 // tensor pipe activity, ratio
	FBUsed    float64 // bytes
	FBFree    float64 // bytes
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

// AlertState is where an alert stands.
type AlertState uint8

// Alert states, as Prometheus names them.
const (
	Inactive AlertState = iota
	Pending
	Firing
)

func (s AlertState) String() string { return [...]string{"inactive", "pending", "firing"}[s] }

// Verdict is the analysis of one GPU at one sample.
type Verdict struct {
	ID string
	// Seq is the sample's position among those accepted since the last
	// Evaluate: the caller's index to what it keeps per sample, without a
	// map lookup by ID.
	Seq   int
	Time  int64
	Class Class
	// PrevClass is the class at the GPU's previous sample; it equals Class
	// unless the class just changed (or this is the GPU's first sample).
	PrevClass Class
	// HasPeers says whether the GPU belongs to a peer group.
	HasPeers  bool
	Straggler bool
	// Score is the largest deviation from the GPU's peers, scaled so that
	// 1 is the threshold; 0 without peers.
	Score float64
	// Hint is the next step for Class; PrevHint the hint at the previous
	// sample.
	Hint, PrevHint Hint
	Alerts         [NumAlerts]AlertState
	// ClassSeconds is the time spent in each class since ClassStart.
	ClassSeconds [NumClasses]float64
	ClassStart   int64
	// Usage is the GPU's wall time and cost per usage state since
	// UsageStart. Unlike the class time, it is not kept across a restart,
	// so it has a start of its own. On a shared GPU it is what its owners
	// did not use: Shares holds theirs.
	Usage      Usage
	UsageStart int64
	// Shares is each owner's part of a shared GPU's usage, for the owners
	// of this sample's Shares, in their order. It is only valid during the
	// Evaluate callback.
	Shares []ShareUsage
	// Report says the verdict is due to be sent: always, unless
	// Config.VerdictReport is set; then at the GPU's first verdict, when its
	// class, hint, straggler state or an alert's state changed, when its
	// usage is due, and at least every VerdictReport.
	Report bool
}

// EventKind is a transition worth a log line.
type EventKind uint8

// Transitions.
const (
	AlertFiring EventKind = iota
	AlertResolved
	StragglerStarted
	StragglerEnded
	// ClassChanged: the bottleneck class changed from Prev to Class.
	ClassChanged
)

// Event is a transition of one GPU.
type Event struct {
	ID    string
	Seq   int // as Verdict.Seq
	Time  int64
	Kind  EventKind
	Alert AlertName
	Class Class
	Prev  Class
	Hint  Hint
	Score float64
}

// Counters are the analyzer's own figures.
type Counters struct {
	Rejected   int64 // new GPUs refused at MaxGPUs
	Evicted    int64 // GPUs forgotten after TTL
	OutOfOrder int64 // samples not newer than the GPU's last
}

// The readings averaged over the window.
const (
	wSM = iota
	wDRAM
	wUtil
	wClock
	wStep
	wNVLink // bytes per second, both directions
	wPCIeRx // bytes per second
	wOccupancy
	wTensor
	wPower // W
	wUMC   // AMD memory controller activity, ratio
	numWindowed
)

// windowed maps each windowed reading to its presence bit in Sample.Has.
// The two rates have no bit: they are present when the counter gave a rate.
var windowed = [numWindowed]uint32{wSM: HasSMActive, wDRAM: HasDRAMActive, wUtil: HasGPUUtil, wClock: HasSMClock, wStep: HasStep,
	wOccupancy: HasOccupancy, wTensor: HasTensor, wPower: HasPower, wUMC: HasUMCActive}

// point is one sample as the window keeps it: 56 bytes. wNVLink holds an
// AMD GPU's XGMI rate: a GPU has one or the other, and a slot more would
// grow every point by 8 bytes.
type point struct {
	t int64
	v [numWindowed]float32
	// present has bit i set when v[i] was reported.
	present uint16
	flags   uint8
}

const (
	pReasons uint8 = 1 << iota
	pThrottled
)

// maxWindowPoints bounds each GPU's window (90 points of 56 bytes, 4.9
// KiB), so that a GPU's whole state stays within 8 KiB with the memory leak
// fit (TestStateSize). A 30 s window holds 30 points at a 1 s interval;
// above 3 Hz it keeps the most recent 90 points only (DCGM samples a field
// at most once a second unless told otherwise).
const maxWindowPoints = 90

// resumEvery recomputes a window's running sums from its points after this
// many pushes, so that rounding in adding and removing cannot accumulate.
const resumEvery = 4096

// stats are a window's means.
type stats struct {
	mean                 [numWindowed]float64
	n                    [numWindowed]int
	nReasons, nThrottled int
}

type tracker struct {
	code  uint32
	start int64
	value float64
}

// rater turns a cumulative counter into a rate between consecutive samples.
type rater struct {
	start, t int64
	value    float64
	known    bool
}

// rate returns the counter's rate since the previous sample, if it had one
// under the same start time and the count did not go down (a reset).
func (r *rater) rate(c Counter, t int64) (float64, bool) {
	prev := *r
	*r = rater{start: c.Start, t: t, value: c.Value, known: true}
	if !prev.known || prev.start != c.Start || c.Value < prev.value || t <= prev.t {
		return 0, false
	}
	return (c.Value - prev.value) / (float64(t-prev.t) / 1e9), true
}

type gpuState struct {
	id        string
	group     *group
	groupIdx  int
	firstSeen int64
	last      int64
	seen      bool
	// interval is the time between the GPU's last two samples, and
	// cadence its usual sampling interval, learnt from its own samples.
	interval int64
	cadence  cadence
	// widened says the window kept its previous sample past the window's
	// length (push), so that it holds two.
	widened bool
	ring    []point
	head, n int
	// Running sums of the window's points, and the pushes since they were
	// last recomputed.
	sum                  [numWindowed]float64
	cnt                  [numWindowed]int32
	nReasons, nThrottled int32
	pushes               int32

	// nvlink rates NVLink's counter, or XGMI's on an AMD GPU; xgmiCap is
	// what its XGMI links carry at most, bytes per second.
	nvlink, pcieRx rater
	xgmiCap        float64
	// leak fits the frame buffer use; allocated at the first FB reading.
	leak  *leakFit
	hasFB bool
	// classStart is when the class time counters started; restored across
	// a restart, unlike firstSeen, the baseline of fault counters.
	classStart int64
	restored   bool

	faultAt  int64
	hasFault bool
	dbe      tracker
	hasDBE   bool
	fatalRAS tracker
	hasRAS   bool
	xids     []tracker

	cur      stats
	activity activity
	// power holds the reference power and what the GPU drew; waiting says
	// the window shows it busy at a small fraction of it (power.go), and
	// holding that it is the near-idle GPU its waiting peers wait for.
	power   powerRef
	waiting bool
	holding bool
	// fbHeld: the GPU's frame buffer holds a workload's memory.
	fbHeld        bool
	temp, memRat  float64
	hasTemp       bool
	hasMem        bool
	podAttributed bool
	// shareUsage is the usage of the owners of a shared GPU at its latest
	// sample; owners holds each owner's since it first had a share.
	shareUsage []ShareUsage
	owners     map[string]*ShareUsage

	devSince  int64
	calmSince int64
	deviating bool
	straggler bool
	score     float64
	class     Class
	prevClass Class
	hint      Hint
	prevHint  Hint
	evaluated bool

	alerts     [NumAlerts]AlertState
	alertSince [NumAlerts]int64

	classSeconds [NumClasses]float64
	usage        usage
	inBatch      bool
	seq          int // position in the batch, while inBatch

	// What the last reported verdict said, with VerdictReport.
	reported          bool
	reportedAt        int64
	reportedStraggler bool
	reportedAlerts    [NumAlerts]AlertState
}

type group struct {
	key     string
	members []*gpuState
	touched bool
	// held says, at the group's latest comparison, that most of its
	// members waited for one near-idle member.
	held bool
}

// Analyzer keeps the state of every tracked GPU. It is not safe for
// concurrent use; the processor serialises batches.
type Analyzer struct {
	cfg      Config
	gpus     map[string]*gpuState
	groups   map[string]*group
	batch    []*gpuState
	touched  []*group
	critical map[uint32]bool
	lastSwp  int64
	counters Counters
	// Notify, if set, hears of alert and straggler transitions.
	Notify func(Event)

	scratch []float64
	// own is the scratch of usageStats: one GPU's latest sample alone.
	own stats
	// since is the reporting cut-off of the group being compared.
	since int64
}

// New returns an analyzer.
func New(cfg Config) *Analyzer {
	crit := make(map[uint32]bool, len(cfg.Rules.CriticalXIDs))
	for _, x := range cfg.Rules.CriticalXIDs {
		crit[x] = true
	}
	return &Analyzer{cfg: cfg, gpus: map[string]*gpuState{}, groups: map[string]*group{}, critical: crit}
}

// Tracked is the number of GPUs with state.
func (a *Analyzer) Tracked() int { return len(a.gpus) }

// Counters returns the analyzer's own figures.
func (a *Analyzer) Counters() Counters { return a.counters }

// Result says what Ingest did with a sample.
type Result uint8

// Ingest results.
const (
	// Accepted: the sample will be evaluated by the next Evaluate.
	Accepted Result = iota
	// Rejected: the GPU is new and MaxGPUs are already tracked.
	Rejected
	// OutOfOrder: the sample is not newer than the GPU's last one.
	OutOfOrder
	// Flush: the batch already holds an older sample of this GPU; call
	// Evaluate, then Ingest this sample again.
	Flush
)

// Ingest records a sample of the GPU id.
func (a *Analyzer) Ingest(id string, s *Sample) Result {
	g, ok := a.gpus[id]
	switch {
	case !ok:
		if len(a.gpus) >= a.cfg.MaxGPUs {
			// Full: forget the GPUs gone for the TTL first. Under churn a
			// batch may hold only new GPUs, so Evaluate's sweep never runs
			// and the GPUs gone would keep the new ones out for good.
			a.sweep(s.Time)
		}
		if len(a.gpus) >= a.cfg.MaxGPUs {
			a.counters.Rejected++
			return Rejected
		}
		g = &gpuState{id: id, firstSeen: s.Time, classStart: s.Time, ring: make([]point, 8)}
		a.gpus[id] = g
	case g.restored && s.Time-g.last > int64(a.cfg.TTL):
		// Saved too long ago to be continued: start afresh.
		a.forget(id, g)
		return a.Ingest(id, s)
	case s.Time <= g.last:
		a.counters.OutOfOrder++
		return OutOfOrder
	case g.inBatch:
		return Flush
	}
	a.setGroup(g, s.Group)
	g.ingest(s, a)
	g.inBatch, g.seq = true, len(a.batch)
	a.batch = append(a.batch, g)
	return Accepted
}

func (a *Analyzer) setGroup(g *gpuState, key string) {
	if g.group != nil && g.group.key == key {
		return
	}
	if g.group != nil {
		a.leave(g)
	}
	if key == "" {
		return
	}
	gr, ok := a.groups[key]
	if !ok {
		gr = &group{key: key}
		a.groups[key] = gr
	}
	g.group, g.groupIdx = gr, len(gr.members)
	gr.members = append(gr.members, g)
}

func (a *Analyzer) leave(g *gpuState) {
	gr := g.group
	last := len(gr.members) - 1
	gr.members[g.groupIdx] = gr.members[last]
	gr.members[g.groupIdx].groupIdx = g.groupIdx
	gr.members[last] = nil
	gr.members = gr.members[:last]
	if len(gr.members) == 0 {
		delete(a.groups, gr.key)
	}
	g.group = nil
}

func (g *gpuState) ingest(s *Sample, a *Analyzer) {
	t := s.Time
	if g.restored {
		// Counters seen by the previous run are not a baseline for this one.
		g.restored, g.firstSeen = false, t
	}
	window := int64(a.cfg.Rules.Window)
	if g.seen {
		g.interval = t - g.last
		// Time since the previous sample goes to the class it ended in; a
		// gap is time the analyzer did not see, counted in neither.
		gap := g.interval > g.cadence.gapLimit(window)
		if !gap {
			g.classSeconds[g.class] += float64(g.interval) / 1e9
		}
		g.accountUsage(t, gap, s.Shares)
		g.cadence.add(g.interval)
	}
	g.usage.price = s.PricePerHour
	g.seen, g.last = true, t

	p := point{t: t}
	// The window keeps float32s. DCGM reports GPU utilization in whole
	// percent and clocks in whole MHz, which float32 holds exactly at those
	// scales but not as ratios or in Hz (0.07 and 1395e6 are not float32s):
	// rounding would move the means and medians that thresholds decide on.
	// So these two are kept scaled; the scale shows nowhere else, as the
	// utilization's means are scaled back before a threshold sees them
	// (classify) and only ratios of clocks are taken.
	values := [numWindowed]float64{wSM: s.SMActive, wDRAM: s.DRAMActive, wUtil: s.GPUUtil * 100, wClock: s.SMClock / 1e6, wStep: s.Step,
		wOccupancy: s.Occupancy, wTensor: s.Tensor, wPower: s.Power, wUMC: s.UMCActive}
	for i, bit := range windowed {
		if bit != 0 && s.Has&bit != 0 {
			p.v[i], p.present = float32(values[i]), p.present|1<<i
		}
	}
	if s.Has&HasNVLink != 0 {
		if r, ok := g.nvlink.rate(s.NVLink, t); ok {
			p.v[wNVLink], p.present = float32(r), p.present|1<<wNVLink
		}
	}
	if s.Has&HasXGMI != 0 {
		g.xgmiCap = s.XGMICapacity
		if r, ok := g.nvlink.rate(s.XGMI, t); ok {
			p.v[wNVLink], p.present = float32(r), p.present|1<<wNVLink
		}
	}
	if s.Has&HasPCIeRx != 0 {
		if r, ok := g.pcieRx.rate(s.PCIeRx, t); ok {
			p.v[wPCIeRx], p.present = float32(r), p.present|1<<wPCIeRx
		}
	}
	g.hasFB = s.Has&HasFB != 0
	if g.hasFB {
		if g.leak == nil {
			g.leak = newLeakFit(a.cfg.Leak.Window)
		}
		g.leak.add(t, s.FBUsed, s.FBFree)
	}
	if s.Has&HasReasons != 0 {
		p.flags |= pReasons
		if s.Reasons&a.cfg.Rules.ThrottleMask != 0 {
			p.flags |= pThrottled
		}
	}
	if s.Has&HasViolation != 0 && s.ViolationPresent&a.cfg.Rules.ViolationMask != 0 {
		// Held back more than the residency by any reason counted makes
		// the sample throttled, as a throttle reason's bit does on NVIDIA.
		p.flags |= pReasons
		for r, v := range s.Violation {
			if s.ViolationPresent&a.cfg.Rules.ViolationMask&(1<<r) != 0 && v > a.cfg.Rules.ThrottleResidency {
				p.flags |= pThrottled
				break
			}
		}
	}
	g.push(p, window, g.cadence.gapLimit(window))

	g.hasTemp, g.temp = s.Has&HasTemp != 0, s.Temp
	g.hasMem, g.memRat = s.Has&HasMemRatio != 0, s.MemRatio
	g.podAttributed = s.PodAttributed
	g.power.observe(s)
	g.fbHeld = s.Has&HasFBUsed != 0 && s.FBUsed >= fbHeldBytes

	// Fault evidence: an increase of the uncorrectable ECC count, a critical
	// XID, a failed row remapping (on AMD, retired pages at the driver's
	// threshold), a fatal RAS record.
	if s.Has&HasDBE != 0 {
		var inc bool
		inc, g.dbe = g.increase(g.hasDBE, g.dbe, s.DBE, t)
		g.hasDBE = true
		if inc {
			g.faultAt, g.hasFault = t, true
		}
	}
	for _, x := range s.XIDs {
		i := slices.IndexFunc(g.xids, func(tr tracker) bool { return tr.code == x.Code })
		var tr tracker
		if i >= 0 {
			tr = g.xids[i]
		}
		inc, next := g.increase(i >= 0, tr, x.Counter, t)
		next.code = x.Code
		if i >= 0 {
			g.xids[i] = next
		} else {
			g.xids = append(g.xids, next)
		}
		if inc && a.critical[x.Code] {
			g.faultAt, g.hasFault = t, true
		}
	}
	if s.Has&HasRowRemapFailure != 0 && s.RowRemapFail > 0 {
		g.faultAt, g.hasFault = t, true
	}
	if s.Has&HasFatalRAS != 0 {
		var inc bool
		inc, g.fatalRAS = g.increase(g.hasRAS, g.fatalRAS, s.FatalRAS, t)
		g.hasRAS = true
		if inc {
			g.faultAt, g.hasFault = t, true
		}
	}
}

// increase reports whether a cumulative counter grew since it was last
// seen. A new start time is a reset, not an increase: its count is new only
// if the counter started no earlier than this GPU was first seen (so every
// event it counts happened while the analyzer watched), or at this very
// sample. A value that went down under the same start time is a reset too.
func (g *gpuState) increase(known bool, prev tracker, c Counter, t int64) (bool, tracker) {
	next := tracker{code: prev.code, start: c.Start, value: c.Value}
	switch {
	case known && c.Start == prev.start:
		return c.Value > prev.value, next
	case c.Start >= g.firstSeen || c.Start == t:
		return c.Value > 0, next
	default:
		return false, next
	}
}

// push adds a point to the window and drops the points that left it,
// keeping the running sums that the window's means come from. A GPU sampled
// more slowly than the window would leave it holding its latest sample
// alone: the previous sample stays in, so that the window holds at least
// two, unless the time since it is a gap (longer than gapLimit, itself
// longer than the window).
func (g *gpuState) push(p point, window, gapLimit int64) {
	g.widened = false
	for g.n > 0 && g.ring[g.head].t <= p.t-window {
		if g.n == 1 && gapLimit > window && p.t-g.ring[g.head].t <= gapLimit {
			g.widened = true
			break
		}
		g.drop()
	}
	if g.n == len(g.ring) {
		if len(g.ring) < maxWindowPoints {
			grown := make([]point, min(2*len(g.ring), maxWindowPoints))
			for i := 0; i < g.n; i++ {
				grown[i] = g.ring[(g.head+i)%len(g.ring)]
			}
			g.ring, g.head = grown, 0
		} else {
			g.drop()
		}
	}
	g.ring[(g.head+g.n)%len(g.ring)] = p
	g.n++
	g.account(&p, 1)
	g.pushes++
	if g.pushes >= resumEvery {
		g.resum()
	}
}

// drop removes the oldest point.
func (g *gpuState) drop() {
	g.account(&g.ring[g.head], -1)
	g.head = (g.head + 1) % len(g.ring)
	g.n--
	if g.n == 0 {
		g.resum() // exactly zero, whatever rounding left
	}
}

// account adds (sign 1) or removes (sign -1) a point from the running sums.
func (g *gpuState) account(p *point, sign int32) {
	for m := p.present; m != 0; m &= m - 1 {
		j := bits.TrailingZeros16(m)
		g.sum[j] += float64(sign) * float64(p.v[j])
		g.cnt[j] += sign
	}
	if p.flags&pReasons != 0 {
		g.nReasons += sign
		if p.flags&pThrottled != 0 {
			g.nThrottled += sign
		}
	}
}

// resum recomputes the running sums from the window's points.
func (g *gpuState) resum() {
	g.sum, g.cnt, g.nReasons, g.nThrottled, g.pushes = [numWindowed]float64{}, [numWindowed]int32{}, 0, 0, 0
	for i := 0; i < g.n; i++ {
		g.account(&g.ring[(g.head+i)%len(g.ring)], 1)
	}
}

// window sets s to the window's means, in place (a GPU's stats are
// computed for every GPU of every batch).
func (g *gpuState) window(s *stats) {
	s.nReasons, s.nThrottled = int(g.nReasons), int(g.nThrottled)
	for j := range numWindowed {
		s.mean[j] = 0
		if s.n[j] = int(g.cnt[j]); s.n[j] > 0 {
			s.mean[j] = g.sum[j] / float64(s.n[j])
		}
	}
}

// usageStats are the readings a GPU's usage is read from. With SM activity,
// the window's (unwidened): SM activity is DCGM's own average over its
// sampling period. Without it, the latest sample's own: GPU utilization and
// power are instantaneous readings that flip within a second between work
// and a wait, and a window's mean would bill a 16 s checkpoint wait in a
// 30 s window as work (the real 8×H100 recording in testdata/real).
func (g *gpuState) usageStats(latest *stats) *stats {
	if g.cur.n[wSM] > 0 || g.n == 0 {
		return g.unwidened(&g.cur)
	}
	p := &g.ring[(g.head+g.n-1)%len(g.ring)]
	if p.present&(1<<wUtil|1<<wPower) == 0 {
		return g.unwidened(&g.cur) // the previous sample tells
	}
	s := latest
	*s = stats{}
	for _, j := range [...]int{wUtil, wPower} {
		if p.present&(1<<j) != 0 {
			s.n[j], s.mean[j] = 1, float64(p.v[j])
		}
	}
	return s
}

// unwidened returns the window's means without the previous sample that
// push kept past the window (cur itself when it kept none): what the GPU did
// within the window, for its usage. The class reads the widened window, as
// two samples tell a class better than one; usage is accounting, and
// counting one busy sample into the next interval as well would overstate
// the time a GPU sampled every minute was used. A latest sample without SM
// activity or utilization leaves the previous one to tell.
func (g *gpuState) unwidened(cur *stats) *stats {
	if !g.widened {
		return cur
	}
	p := &g.ring[g.head]
	s := *cur
	for _, j := range [...]int{wSM, wUtil} {
		if p.present&(1<<j) != 0 {
			s.n[j] = int(g.cnt[j]) - 1
			s.mean[j] = 0
			if s.n[j] > 0 {
				s.mean[j] = (g.sum[j] - float64(p.v[j])) / float64(s.n[j])
			}
		}
	}
	if s.n[wSM] == 0 && s.n[wUtil] == 0 {
		return cur // the latest sample has no activity reading: the previous one tells
	}
	return &s
}

func (a *Analyzer) classify(g *gpuState) Class {
	r := &a.cfg.Rules
	s := &g.cur
	sm, hasSM := s.mean[wSM], s.n[wSM] > 0
	// A mean of whole percents equal to a threshold's percent stays equal
	// to it as a ratio: x/100 is correctly rounded, as the ratio is.
	util, hasUtil := s.mean[wUtil]/100, s.n[wUtil] > 0
	switch {
	case g.hasFault && g.last-g.faultAt < int64(r.FaultLookback):
		return Faulted
	case s.nReasons > 0 && float64(s.nThrottled) > r.ThrottleFraction*float64(s.nReasons):
		return Throttled
	case hasSM && sm < r.IdleSMActive, !hasSM && hasUtil && util < r.IdleGPUUtil:
		return Idle
	case !hasSM:
		// Without profiling, DRAM activity is a fallback from the copy
		// engine and SM activity is unknown: power is the evidence left.
		return a.withoutProfiling(g)
	case s.n[wDRAM] > 0 && s.mean[wDRAM] >= r.MemoryBoundDRAM:
		return MemoryBound
	case sm < r.CommunicationSM && s.n[wNVLink] > 0 && s.mean[wNVLink] >= r.CommunicationNVLink:
		return CommunicationBound
	case sm < r.LaunchBoundSM && hasUtil && util >= r.LaunchBoundUtil:
		return LaunchBound
	case sm < r.InputBoundSM:
		return InputBound
	default:
		return ComputeBound
	}
}

// Evaluate classifies the GPUs ingested since the last call, compares them
// with their peers, steps their alerts, and calls fn with each verdict, in
// ingest order. The verdict is reused between calls of fn.
func (a *Analyzer) Evaluate(fn func(*Verdict)) {
	var latest int64
	for _, g := range a.batch {
		g.window(&g.cur)
		g.prevClass = g.class
		if !g.evaluated {
			g.prevClass = Unknown
		}
		g.waiting, g.holding = false, false
		g.class = a.classify(g)
		g.activity = a.activityOf(g, g.usageStats(&a.own))
		if g.group != nil && !g.group.touched {
			g.group.touched = true
			a.touched = append(a.touched, g.group)
		}
		latest = max(latest, g.last)
	}
	// Peers settle what one GPU cannot tell alone: a wait shared by its job
	// is a collective, and the near-idle GPU they wait for holds them.
	for _, gr := range a.touched {
		a.compare(gr)
		gr.touched = false
	}
	a.touched = a.touched[:0]
	for _, g := range a.batch {
		g.prevHint = g.hint
		g.hint = a.hint(g)
		if !g.evaluated {
			g.prevClass, g.prevHint, g.evaluated = g.class, g.hint, true
		}
		if a.Notify != nil && g.class != g.prevClass {
			a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: ClassChanged, Class: g.class, Prev: g.prevClass, Hint: g.hint})
		}
	}

	var v Verdict
	for _, g := range a.batch {
		if g.group == nil {
			g.deviating, g.score = false, 0
		}
		a.stepStraggler(g)
		a.stepAlerts(g)
		v = Verdict{ID: g.id, Seq: g.seq, Time: g.last, Class: g.class, PrevClass: g.prevClass, HasPeers: g.group != nil,
			Straggler: g.straggler, Score: g.score, Hint: g.hint, PrevHint: g.prevHint,
			Alerts: g.alerts, ClassSeconds: g.classSeconds, ClassStart: g.classStart,
			Usage: g.usageVerdict(int64(a.cfg.UsageReport)), UsageStart: g.firstSeen, Shares: g.shareUsage}
		v.Report = g.due(int64(a.cfg.VerdictReport), v.Usage.Report)
		fn(&v)
		g.inBatch = false
	}
	a.batch = a.batch[:0]
	a.sweep(latest)
}

// due says whether the GPU's verdict is to be reported (Verdict.Report).
// Every change is reported, so the previous class and hint are the last
// reported ones.
func (g *gpuState) due(every int64, usageDue bool) bool {
	if every <= 0 {
		return true
	}
	if g.reported && !usageDue && g.class == g.prevClass && g.hint == g.prevHint &&
		g.straggler == g.reportedStraggler && g.alerts == g.reportedAlerts && g.last-g.reportedAt < every {
		return false
	}
	g.reported, g.reportedAt, g.reportedStraggler, g.reportedAlerts = true, g.last, g.straggler, g.alerts
	return true
}

// compare decides which of a group's GPUs in this batch deviate from their
// peers' medians.
func (a *Analyzer) compare(gr *group) {
	r := &a.cfg.Straggler
	// Peers are the members that reported within the latest sampling
	// interval: in a replay, the rows of this timestamp; live, the agents
	// that scraped since the slowest of this batch last did.
	// The interval is the members' usual one, learnt per GPU: at a scrape
	// every 60 s, agents scraped at other offsets within the minute are
	// still peers; a missed scrape does not stretch it.
	var now, interval int64
	for _, m := range gr.members {
		if m.inBatch {
			now = max(now, m.last)
			interval = max(interval, m.cadence.typical())
		}
	}
	if interval <= 0 {
		interval = int64(a.cfg.Rules.Window)
	}
	a.since = now - interval
	// GPUs waiting at low power (withoutProfiling) with another of their
	// job: a collective. With at least half the others waiting, a member
	// near idle by its utilization is the one they wait for.
	reporting, waiting := 0, 0
	for _, m := range gr.members {
		if m.last > a.since {
			reporting++
			if m.waiting {
				waiting++
			}
		}
	}
	peers := reporting >= r.MinGroupSize
	held := peers && waiting >= 2 && 2*waiting >= reporting-1
	gr.held = held
	var medSM, mad, medClock, medStep, medPower, madPower float64
	var hasSM, hasClock, hasStep, hasPower bool
	if peers {
		medSM, hasSM = a.median(gr, wSM, func(x float64) float64 { return x })
		mad, _ = a.median(gr, wSM, func(x float64) float64 { return math.Abs(x - medSM) })
		medClock, hasClock = a.median(gr, wClock, func(x float64) float64 { return x })
		medStep, hasStep = a.median(gr, wStep, func(x float64) float64 { return x })
		medPower, madPower, hasPower = a.powerSpread(gr)
	}
	for _, m := range gr.members {
		if !m.inBatch {
			continue
		}
		m.deviating, m.score = false, 0
		if m.waiting && waiting >= 2 {
			m.class = CommunicationBound
		}
		if !peers {
			continue
		}
		if held {
			// Waiting peers are never stragglers for the one they wait on;
			// the holder is one, by the share of the others that wait.
			if !m.waiting && m.cur.n[wSM] == 0 && m.cur.n[wUtil] > 0 && m.cur.mean[wUtil]/100 < r.HolderUtil {
				m.holding = true
				m.score = 2 * float64(waiting) / float64(reporting-1)
				m.deviating = true
			}
			if m.waiting || m.holding {
				continue
			}
		}
		s := &m.cur
		score := 0.0
		if hasStep && s.n[wStep] > 0 && medStep > 0 {
			score = max(score, s.mean[wStep]/(r.StepRatio*medStep))
		}
		if hasClock && hasSM && medSM >= r.ClockMinGroupSM && s.n[wClock] > 0 && s.mean[wClock] > 0 {
			score = max(score, r.ClockRatio*medClock/s.mean[wClock])
		}
		if hasSM && s.n[wSM] > 0 {
			limit := max(r.MADThreshold*1.4826*mad, r.MinSMDeviation)
			score = max(score, math.Abs(s.mean[wSM]-medSM)/limit)
		}
		// Without profiling, the ranks of a synchronous job that finish
		// their step first spin in the collective at a fraction of their
		// power until the slowest arrives: the one they wait for is the
		// one that works while they draw less. Upward only: a member that
		// draws less than its peers waits more, or is throttled (a class
		// of its own).
		if ratio, ok := m.powerRatio(); ok && hasPower && s.n[wSM] == 0 && ratio >= a.cfg.Rules.WorkingPower {
			limit := max(r.MADThreshold*1.4826*madPower, r.MinPowerDeviation)
			score = max(score, (ratio-medPower)/limit)
		}
		m.score = score
		m.deviating = score >= 1
	}
}

// median is the median of f applied to a windowed reading's mean, over the
// group's reporting members that have the reading.
func (a *Analyzer) median(gr *group, reading int, f func(float64) float64) (float64, bool) {
	a.scratch = a.scratch[:0]
	for _, m := range gr.members {
		if m.last > a.since && m.cur.n[reading] > 0 {
			a.scratch = append(a.scratch, f(m.cur.mean[reading]))
		}
	}
	if len(a.scratch) == 0 {
		return 0, false
	}
	return medianOf(a.scratch), true
}

// powerSpread is the median and the median absolute deviation of the power
// ratios (powerRatio) of the group's reporting members without SM activity.
func (a *Analyzer) powerSpread(gr *group) (median, mad float64, ok bool) {
	a.scratch = a.scratch[:0]
	for _, m := range gr.members {
		if m.last <= a.since || m.cur.n[wSM] > 0 {
			continue
		}
		if ratio, ok := m.powerRatio(); ok {
			a.scratch = append(a.scratch, ratio)
		}
	}
	if len(a.scratch) == 0 {
		return 0, 0, false
	}
	median = medianOf(a.scratch)
	for i, x := range a.scratch {
		a.scratch[i] = math.Abs(x - median)
	}
	return median, medianOf(a.scratch), true
}

func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// stepStraggler makes a GPU a straggler once it has deviated at every
// evaluation for the sustain time, and not one once it has not deviated at
// any evaluation for as long: a GPU near a threshold does not flap.
func (a *Analyzer) stepStraggler(g *gpuState) {
	was := g.straggler
	sustain := int64(a.cfg.Straggler.Sustain)
	if g.deviating {
		g.calmSince = 0
		if g.devSince == 0 {
			g.devSince = g.last
		}
		if g.last-g.devSince >= sustain {
			g.straggler = true
		}
	} else {
		g.devSince = 0
		if g.calmSince == 0 {
			g.calmSince = g.last
		}
		if g.last-g.calmSince >= sustain {
			g.straggler = false
		}
	}
	if a.Notify != nil && was != g.straggler {
		kind := StragglerStarted
		if was {
			kind = StragglerEnded
		}
		a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: kind, Score: g.score})
	}
}

func (a *Analyzer) stepAlerts(g *gpuState) {
	for name := AlertName(0); name < NumAlerts; name++ {
		rule := &a.cfg.Alerts[name]
		if !rule.Enabled {
			g.alerts[name] = Inactive
			continue
		}
		hold, resolve := a.condition(g, name, rule)
		st, since := g.alerts[name], g.alertSince[name]
		was := st
		switch st {
		case Inactive:
			if hold {
				st, since = Pending, g.last
			}
		case Pending:
			if !hold {
				st = Inactive
			}
		case Firing:
			if resolve {
				st = Inactive
			}
		}
		if st == Pending && g.last-since >= int64(rule.For) {
			st = Firing
		}
		g.alerts[name], g.alertSince[name] = st, since
		if a.Notify != nil && was != st && (st == Firing || was == Firing) {
			kind := AlertFiring
			if was == Firing {
				kind = AlertResolved
			}
			a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: kind, Alert: name, Class: g.class})
		}
	}
}

// condition returns whether the alert's condition holds and whether its
// resolve condition holds. A reading that is absent proves neither.
func (a *Analyzer) condition(g *gpuState, name AlertName, rule *AlertRule) (hold, resolve bool) {
	switch name {
	case GPUFaulted:
		return g.class == Faulted, g.class != Faulted
	case GPUOverheating:
		if !g.hasTemp {
			return false, false
		}
		return g.temp >= rule.Threshold, g.temp < rule.Resolve
	case GPUMemoryPressure:
		if !g.hasMem {
			return false, false
		}
		return g.memRat >= rule.Threshold, g.memRat < rule.Resolve
	case GPUThrottled:
		return g.class == Throttled, g.class != Throttled
	case GPUStraggler:
		return g.straggler, !g.straggler
	case GPUIdle:
		idle := g.class == Idle && g.podAttributed
		return idle, !idle
	case GPUMemoryLeak:
		if !g.hasFB {
			return false, false
		}
		return g.leak.verdict(&a.cfg.Leak)
	}
	return false, false
}

// sweep forgets GPUs that have not reported for the TTL, at most once per
// quarter TTL.
func (a *Analyzer) sweep(now int64) {
	ttl := int64(a.cfg.TTL)
	if now-a.lastSwp < ttl/4 {
		return
	}
	a.lastSwp = now
	for id, g := range a.gpus {
		if now-g.last > ttl && !g.inBatch {
			a.forget(id, g)
			a.counters.Evicted++
		}
	}
}

func (a *Analyzer) forget(id string, g *gpuState) {
	if g.group != nil {
		a.leave(g)
	}
	delete(a.gpus, id)
}

// hint picks the next step for the GPU's class from its window's means.
func (a *Analyzer) hint(g *gpuState) Hint {
	h, s := &a.cfg.Hints, &g.cur
	if g.holding && g.fbHeld {
		// Near idle with its memory allocated while its job waits: the
		// work is on the host (a checkpoint written, data loaded).
		return ReduceHostWork
	}
	switch g.class {
	case Faulted:
		return ReplaceOrDrain
	case Throttled:
		return CheckCoolingOrPower
	case MemoryBound:
		return ReduceMemoryTraffic
	case CommunicationBound:
		if g.waiting && g.group != nil && g.group.held {
			return FixStraggler
		}
		return OverlapCommunication
	case LaunchBound:
		return UseCUDAGraphs
	case InputBound:
		if s.n[wPCIeRx] > 0 && s.mean[wPCIeRx] < h.DataLoadingPCIeRx {
			return FixHostPreprocessing
		}
		return FixDataLoading
	case ComputeBound:
		if s.n[wOccupancy] > 0 && s.mean[wSM] >= h.BatchSizeSMActive && s.mean[wOccupancy] < h.BatchSizeOccupancy {
			return IncreaseBatchSize
		}
		if s.n[wTensor] > 0 && s.mean[wTensor] < h.MixedPrecisionTensor {
			return EnableMixedPrecision
		}
	}
	return NoHint
}
