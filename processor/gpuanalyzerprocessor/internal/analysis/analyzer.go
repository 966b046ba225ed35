package analysis

import (
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
)

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
	// Basis is what Class rests on; PrevBasis what the previous class did.
	Basis, PrevBasis Basis
	Alerts           [NumAlerts]AlertState
	// PrevAlerts are the alerts' states at the previous verdict, which was
	// reported whenever they differ (Report): where a state was left, its
	// series is ended with a 0.
	PrevAlerts [NumAlerts]AlertState
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
	// Health is the GPU's state by internal/gpuhealth, HealthWhy the
	// evidence it rests on ("" for ok).
	Health    gpuhealth.State
	HealthWhy string
	// Cause is why the GPU waits or straggles, by its node's evidence
	// (Config.Causes); PrevCause the cause at the previous sample.
	Cause     cause.Finding
	PrevCause cause.Kind
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
	// HealthChanged: the GPU's health changed from PrevHealth to Health,
	// for the reason Why.
	HealthChanged
	// CauseChanged: the GPU's wait (or straggling) was put down to a new
	// Cause; Hint is the hint that follows it.
	CauseChanged
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
	// Basis is what Class rests on, for ClassChanged.
	Basis Basis
	Score float64
	// Health, PrevHealth and Why, for HealthChanged.
	Health, PrevHealth gpuhealth.State
	Why                string
	// Cause and Straggler, for CauseChanged.
	Cause     cause.Finding
	Straggler bool
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

// wGR is an NVIDIA GPU's graphics engine activity, a ratio, in the slot of
// an AMD GPU's memory controller activity: AMD reports no graphics engine
// ratio apart from its utilization, NVIDIA no memory controller activity, and
// a slot more would grow every point by 8 bytes. gpuState.grSlot says which
// the slot holds.
const wGR = wUMC

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
	// pPCIe: both PCIe directions gave a rate; pCollective: they were a
	// collective's (symmetricPCIe), which a window decides by majority as
	// it does throttling. Two flags, where a transmit rate would take a
	// slot.
	pPCIe
	pCollective
	// pClocked: a sample without clock event reasons whose SM clock tells
	// a throttle; pCapped and pHot: a power cap or heat held it down
	// (throttle.go).
	pClocked
	pCapped
	pHot
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
	// nPCIe points had both PCIe rates, nCollective of them a
	// collective's.
	nPCIe, nCollective int
	// nClocked points told a throttle by their clock, nCapped of them held
	// by a power cap, nHot by heat.
	nClocked, nCapped, nHot int
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
	nPCIe, nCollective   int32
	nClocked, nCapped    int32
	nHot                 int32
	// grSlot: the wUMC slot holds graphics engine activity (wGR), since
	// the GPU last reported it (a sample whose engine activity was only
	// its utilization standing in for it reports none).
	grSlot bool
	pushes int32

	// nvlink rates NVLink's counter, or XGMI's on an AMD GPU; xgmiCap is
	// what its XGMI links carry at most, bytes per second.
	nvlink, pcieRx, pcieTx rater
	xgmiCap                float64
	// clocks is the most the GPU's SM clock reaches, for throttling told
	// without clock event reasons (throttle.go).
	clocks clockRef
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
	// cause is why the GPU waits by its node's evidence (causes.go);
	// prevCause the previous verdict's. Kinds only: what a cause rests on
	// is the verdict's, not kept (the state of a GPU stays within 8 KiB).
	cause, prevCause cause.Kind
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
	// basis is what the class rests on, prevBasis what the previous one
	// did; netCollective says the window shows the symmetric PCIe traffic
	// of a collective over the network, which peers confirm (compare).
	basis, prevBasis Basis
	netCollective    bool
	evaluated        bool

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
	reportedHealth    gpuhealth.State

	// health is the GPU's fault evidence (health.go), nil until it has
	// some: most GPUs never do, and their state stays small; healthState
	// is the state of its last verdict.
	health      *gpuhealth.GPU
	healthState gpuhealth.State
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
	cfg     Config
	gpus    map[string]*gpuState
	groups  map[string]*group
	batch   []*gpuState
	touched []*group
	// peerIDs is the scratch of a straggler's peers for Explain, query
	// the question explain asks of it.
	peerIDs  []string
	query    CauseQuery
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

// Evaluate classifies the GPUs ingested since the last call, compares them
// with their peers, steps their alerts, and calls fn with each verdict, in
// ingest order. The verdict is reused between calls of fn.
func (a *Analyzer) Evaluate(fn func(*Verdict)) {
	var latest int64
	for _, g := range a.batch {
		g.window(&g.cur)
		g.prevClass, g.prevBasis = g.class, g.basis
		if !g.evaluated {
			g.prevClass, g.prevBasis = Unknown, Basis{}
		}
		g.waiting, g.holding = false, false
		g.class = a.classify(g)
		a.onRail(g)
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
			g.prevClass, g.prevHint, g.prevBasis, g.evaluated = g.class, g.hint, g.basis, true
		}
		if a.Notify != nil && g.class != g.prevClass {
			a.Notify(Event{ID: g.id, Seq: g.seq, Time: g.last, Kind: ClassChanged, Class: g.class, Prev: g.prevClass, Hint: g.hint, Basis: g.basis})
		}
	}

	var v Verdict
	for _, g := range a.batch {
		if g.group == nil {
			g.deviating, g.score = false, 0
		}
		a.stepStraggler(g)
		prevAlerts := g.alerts
		a.stepAlerts(g)
		found := a.explain(g)
		v = Verdict{ID: g.id, Seq: g.seq, Time: g.last, Class: g.class, PrevClass: g.prevClass, HasPeers: g.group != nil,
			Straggler: g.straggler, Score: g.score, Hint: g.hint, PrevHint: g.prevHint, Basis: g.basis, PrevBasis: g.prevBasis,
			Alerts: g.alerts, PrevAlerts: prevAlerts, ClassSeconds: g.classSeconds, ClassStart: g.classStart,
			Usage: g.usageVerdict(int64(a.cfg.UsageReport)), UsageStart: g.firstSeen, Shares: g.shareUsage,
			Cause: found, PrevCause: g.prevCause}
		v.Health, v.HealthWhy = a.stepHealth(g)
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
	if g.reported && !usageDue && g.class == g.prevClass && g.hint == g.prevHint && g.basis == g.prevBasis &&
		g.cause == g.prevCause && g.straggler == g.reportedStraggler && g.alerts == g.reportedAlerts && g.healthState == g.reportedHealth && g.last-g.reportedAt < every {
		return false
	}
	g.reported, g.reportedAt, g.reportedStraggler, g.reportedAlerts, g.reportedHealth = true, g.last, g.straggler, g.alerts, g.healthState
	return true
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
