// Package report renders a replay as one self-contained HTML page: the
// report of each job (jobs.go, internal/jobreport), a timeline per GPU of its bottleneck class and key fields, the stragglers
// per job, the alerts from pending to resolved, the cost per namespace and
// the autoscaler's and remediation's decisions, with a written summary on
// top. The page fetches nothing: its charts are inline SVG, and the data
// they show is embedded as JSON (<script type="application/json"
// id="report-data">) for tools and tests to read.
package report

import (
	"math"
	"slices"
	"strconv"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// Verdict is what the analyzer said of one row.
type Verdict struct {
	Class     string
	Straggler bool
	Score     float64
	// Firing and Pending name the alerts in each state, sorted.
	Firing, Pending []string
	Usage           string
	// Cause is why the GPU waits or straggles by its node's evidence
	// (otelgpu.bottleneck.cause; empty where none), Why that evidence in
	// words (the analyzer's log line), Hint the verdict's hint.
	Cause, Why, Hint string
	// Price is the GPU's price per hour by the analyzer's cost settings
	// (0: none), Health its hw.status state.
	Price  float64
	Health string
}

// ScaleEvent is one evaluation of the autoscaler.
type ScaleEvent struct {
	Time             float64
	Target           string
	Current, Desired int
	Reason           string
}

// Decision is one remediation decision.
type Decision struct {
	Time                                float64
	Node, UUID, Incident, Fault, Action string
	Reason                              string
	DryRun                              bool
	// Health is the GPU's hw.status with the decision.
	Health string
}

// CostRow is one namespace's line of -cost's summary, rounded as -cost
// prints it: hours to the microhour, money to 1/10,000.
type CostRow struct {
	Namespace string             `json:"namespace"`
	GPUHours  map[string]float64 `json:"gpu_hours"`
	Cost      map[string]float64 `json:"cost"`
}

// Collector gathers a replay's rows, verdicts and decisions.
type Collector struct {
	gpus     map[string]*gpuTrack
	order    []string // UUIDs in order of first appearance
	scale    []ScaleEvent
	lastEval map[string]ScaleEvent
	evals    int
	fixes    []Decision
	start    float64
	end      float64
	rows     int
	jobs     *jobreport.Fleet // jobs.go
}

// NewCollector returns an empty collector.
func NewCollector() *Collector {
	return &Collector{gpus: map[string]*gpuTrack{}, lastEval: map[string]ScaleEvent{}, start: math.Inf(1), end: math.Inf(-1), jobs: jobreport.NewFleet(0)}
}

// gpuTrack is one GPU's samples and the episodes seen so far.
type gpuTrack struct {
	id                               GPU
	t                                []float64
	class                            []uint8
	util, sm, power, memUsed, memAll []float32 // NaN where absent
	stragglers                       []Span
	openStraggler                    *Span
	alerts                           []*AlertEpisode
	open                             map[string]*AlertEpisode
	usage                            map[string]float64 // seconds per usage state
	lastUsage                        string
	causes                           []CauseSpan // causes.go
	openCause                        *CauseSpan
}

// GPU names one GPU and the workload it ran last.
type GPU struct {
	UUID      string `json:"uuid"`
	Name      string `json:"name"`
	Host      string `json:"host,omitempty"`
	Model     string `json:"model,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	Workload  string `json:"workload,omitempty"`
}

// Span is a stretch of time, in Unix seconds; an open one (still so at the
// end of the trace) has Open set and To at the GPU's last sample.
type Span struct {
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	Open     bool    `json:"open,omitempty"`
	MaxScore float64 `json:"max_score,omitempty"`
}

// AlertEpisode is one alert on one GPU from pending to resolved. Pending
// is when it became pending (0 if it fired at once), Firing when it fired
// (0 if it never did), Resolved when it ended (0 if it had not by the end
// of the trace).
type AlertEpisode struct {
	Alert    string  `json:"alert"`
	UUID     string  `json:"uuid"`
	Pending  float64 `json:"pending,omitempty"`
	Firing   float64 `json:"firing,omitempty"`
	Resolved float64 `json:"resolved,omitempty"`
}

// classes lists the bottleneck classes the analyzer emits
// (otelgpu.bottleneck.class: the shared analysis spec's section 3 and
// processor/gpuanalyzerprocessor/metadata.yaml, whose enum the metricnames
// constants are generated from) in the order of the legend: faulted and
// throttled first, the GPUs that need someone to act and that win over
// every other class in the analyzer; then the busy classes; idle and
// unknown last. A bucket's tie goes to the earlier class, so trouble is
// not hidden by a busy class. A name not in the list shows as unknown.
var classes = []string{
	metricnames.AttrOTelGPUBottleneckClassFaulted,
	metricnames.AttrOTelGPUBottleneckClassThrottled,
	metricnames.AttrOTelGPUBottleneckClassComputeBound,
	metricnames.AttrOTelGPUBottleneckClassMemoryBound,
	metricnames.AttrOTelGPUBottleneckClassCommunicationBound,
	metricnames.AttrOTelGPUBottleneckClassInputBound,
	metricnames.AttrOTelGPUBottleneckClassLaunchBound,
	metricnames.AttrOTelGPUBottleneckClassIdle,
	metricnames.AttrOTelGPUBottleneckClassUnknown, // last: classIndex's default
}

func classIndex(c string) uint8 {
	if i := slices.Index(classes, c); i >= 0 {
		return uint8(i)
	}
	return uint8(len(classes) - 1) // unknown
}

func value(vs *dcgmfield.Values, f dcgmfield.Field) float32 {
	if v, ok := vs.Get(f); ok {
		return float32(v)
	}
	return float32(math.NaN())
}

// Add takes one row and its verdict, in the trace's order.
func (c *Collector) Add(r *trace.Row, v Verdict) {
	c.rows++
	c.start, c.end = min(c.start, r.Time), max(c.end, r.Time)
	g := c.gpus[r.UUID]
	if g == nil {
		g = &gpuTrack{open: map[string]*AlertEpisode{}, usage: map[string]float64{}}
		c.gpus[r.UUID] = g
		c.order = append(c.order, r.UUID)
	}
	g.id = identity(r)
	c.addJob(r, &v, g.id.Name)
	if n := len(g.t); n > 0 && g.lastUsage != "" {
		g.usage[g.lastUsage] += r.Time - g.t[n-1]
	}
	g.lastUsage = v.Usage
	g.addCause(r.Time, &v)
	g.t = append(g.t, r.Time)
	g.class = append(g.class, classIndex(v.Class))
	g.util = append(g.util, value(&r.Values, dcgmfield.GPUUtil))
	g.sm = append(g.sm, value(&r.Values, dcgmfield.SMActive))
	g.power = append(g.power, value(&r.Values, dcgmfield.PowerUsage))
	used, free := value(&r.Values, dcgmfield.FBUsed), value(&r.Values, dcgmfield.FBFree)
	g.memUsed = append(g.memUsed, used)
	g.memAll = append(g.memAll, used+free)

	switch {
	case v.Straggler && g.openStraggler == nil:
		g.openStraggler = &Span{From: r.Time, MaxScore: v.Score}
	case v.Straggler:
		g.openStraggler.MaxScore = max(g.openStraggler.MaxScore, v.Score)
	case g.openStraggler != nil:
		s := *g.openStraggler
		s.To = r.Time
		g.stragglers = append(g.stragglers, s)
		g.openStraggler = nil
	}

	seen := map[string]bool{}
	for _, a := range v.Pending {
		seen[a] = true
		if g.open[a] == nil {
			e := &AlertEpisode{Alert: a, UUID: r.UUID, Pending: r.Time}
			g.open[a] = e
			g.alerts = append(g.alerts, e)
		}
	}
	for _, a := range v.Firing {
		seen[a] = true
		e := g.open[a]
		if e == nil {
			e = &AlertEpisode{Alert: a, UUID: r.UUID}
			g.open[a] = e
			g.alerts = append(g.alerts, e)
		}
		if e.Firing == 0 {
			e.Firing = r.Time
		}
	}
	for a, e := range g.open {
		if !seen[a] {
			e.Resolved = r.Time
			delete(g.open, a)
		}
	}
}

// identity names a row's GPU: host/gpuN where the trace says both.
func identity(r *trace.Row) GPU {
	id := GPU{UUID: r.UUID, Name: r.UUID, Host: r.Host, Model: r.Model, Namespace: r.Namespace}
	if r.Host != "" && r.HasGPU {
		id.Name = r.Host + "/gpu" + strconv.Itoa(r.GPU)
	}
	id.Workload = r.Job
	if id.Workload == "" {
		id.Workload = r.Deployment
	}
	if id.Workload == "" {
		id.Workload = r.Pod
	}
	return id
}

// AddScale takes one autoscaler evaluation. The report keeps those that
// changed the target's desired replicas or reason, and those that scaled.
func (c *Collector) AddScale(e ScaleEvent) {
	c.evals++
	prev, seen := c.lastEval[e.Target]
	c.lastEval[e.Target] = e
	if seen && prev.Desired == e.Desired && prev.Reason == e.Reason && e.Desired == e.Current {
		return
	}
	c.scale = append(c.scale, e)
}

// AddDecision takes one remediation decision.
func (c *Collector) AddDecision(d Decision) { c.fixes = append(c.fixes, d) }
