package jobreport

import (
	"math"
	"slices"
)

// Sample is one GPU's reading and the analyzer's verdict on it, at one
// time, for the job the GPU ran then. Zero values mean "not reported" only
// where said: a NaN Util or Mem field is absent, an empty string is none.
type Sample struct {
	// Time is Unix seconds.
	Time float64
	// UUID identifies the GPU; Name is how a person calls it
	// (host/gpu3), Host its node.
	UUID, Name, Host string
	// Util is GPU utilization in percent (nvidia-smi's, DCGM's
	// DCGM_FI_DEV_GPU_UTIL); NaN where absent.
	Util float64
	// MemUsed and MemTotal are the frame buffer in bytes; NaN where
	// absent.
	MemUsed, MemTotal float64
	// Class is the bottleneck class from this sample on
	// (otelgpu.bottleneck.class), Hint its hint.
	Class, Hint string
	// Cause is why the GPU waits by its node's evidence
	// (otelgpu.bottleneck.cause; empty where none), Why that in words.
	Cause, Why string
	// Straggler and Score: the GPU's straggler state among its job's
	// GPUs and its score (1 is the threshold).
	Straggler bool
	Score     float64
	// Firing and Pending name the alerts in each state.
	Firing, Pending []string
	// Usage is the GPU's usage state from this sample on (used, waiting,
	// workload_idle, cluster_idle, unknown); PricePerHour its price, 0
	// where none is configured.
	Usage        string
	PricePerHour float64
	// Health is the GPU's hw.status state (ok, degraded, failed,
	// predicted_failure); empty is ok.
	Health string
	// CPUSeconds is the cumulative CPU time of the pod (or job cgroup)
	// feeding the GPU and CPULimit its CPUs, from the node's evidence;
	// NaN where absent. Pod names that cgroup, so that two GPUs of one
	// pod count its CPU once.
	CPUSeconds, CPULimit float64
	Pod                  string
}

// NewSample returns a sample with every optional reading absent.
func NewSample() Sample {
	nan := math.NaN()
	return Sample{Util: nan, MemUsed: nan, MemTotal: nan, CPUSeconds: nan, CPULimit: nan}
}

// Bounds on what a job keeps of episodes, so that a job that flaps for a
// week costs the analyzer no more than a few kilobytes: the first ones are
// kept, the rest counted.
const (
	maxEpisodes = 32
)

// gpuAcc is what a job keeps of one of its GPUs: aggregates and episodes,
// never the samples.
type gpuAcc struct {
	uuid, name, host  string
	first, last       float64
	dt                float64 // the latest interval between two samples
	n                 int
	utilSum           float64
	utilN             int
	memPeak, memTotal float64 // NaN until seen
	prev              Sample  // the state the interval since it is charged to
	// Seconds per class, usage state and cause, and cost per usage state:
	// a few keys each, so a slice searched in order beats a map (the
	// analyzer feeds the verdicts of every GPU of a fleet through here).
	classSec, usageSec, costSum, causeSec tally
	causeWhy                              []keyWords        // the latest words per cause
	straggler                             *Straggler        // open
	alerts                                map[string]*Alert // open, by name
	incident                              *Incident         // open
}

// Job gathers one job's samples into its facts.
type Job struct {
	key         Key
	gpus        map[string]*gpuAcc
	first, last float64
	stragglers  []Straggler
	alerts      []*Alert
	incidents   []*Incident
	dropped     int // episodes past maxEpisodes
	pendingOnly map[string]int
	pods        map[string]*podAcc
}

// podAcc follows one pod's (or job cgroup's) CPU time.
type podAcc struct {
	firstT, lastT, firstCPU, lastCPU, limit float64
}

// NewJob starts an empty job.
func NewJob(k Key) *Job {
	return &Job{key: k, gpus: map[string]*gpuAcc{}, pods: map[string]*podAcc{}, pendingOnly: map[string]int{}, first: math.Inf(1), last: math.Inf(-1)}
}

// Key is the job's identity.
func (j *Job) Key() Key { return j.key }

// Last is the time of the job's latest sample (Unix seconds).
func (j *Job) Last() float64 { return j.last }

// Add takes one sample of one of the job's GPUs, in time order per GPU; a
// sample older than the GPU's latest is ignored. The interval since the
// GPU's previous sample is charged to the previous sample's class, usage
// and cause, as the analyzer's own counters charge it.
func (j *Job) Add(s *Sample) {
	g := j.gpus[s.UUID]
	if g == nil {
		nan := math.NaN()
		g = &gpuAcc{uuid: s.UUID, first: s.Time, last: s.Time, memPeak: nan, memTotal: nan}
		j.gpus[s.UUID] = g
	} else if s.Time < g.last {
		return
	}
	if s.Name != "" || g.name == "" {
		g.name = cmpOr(s.Name, s.UUID)
	}
	g.host = s.Host
	if g.n > 0 {
		dt := s.Time - g.prev.Time
		g.dt = dt
		p := &g.prev
		g.classSec.add(p.Class, dt)
		if p.Usage != "" {
			g.usageSec.add(p.Usage, dt)
			price := p.PricePerHour
			if price == 0 {
				price = s.PricePerHour // a price learnt only now (gpureplay's first sample)
			}
			g.costSum.add(p.Usage, dt/3600*price)
		}
		if p.Cause != "" {
			g.causeSec.add(p.Cause, dt)
		}
	}
	if s.Why != "" && s.Cause != "" {
		g.setWhy(s.Cause, s.Why)
	}
	g.n++
	g.last = s.Time
	j.first, j.last = math.Min(j.first, s.Time), math.Max(j.last, s.Time)
	if !math.IsNaN(s.Util) {
		g.utilSum += s.Util
		g.utilN++
	}
	if !math.IsNaN(s.MemUsed) && (math.IsNaN(g.memPeak) || s.MemUsed > g.memPeak) {
		g.memPeak = s.MemUsed
	}
	if !math.IsNaN(s.MemTotal) && s.MemTotal > 0 && (math.IsNaN(g.memTotal) || s.MemTotal > g.memTotal) {
		g.memTotal = s.MemTotal
	}
	j.addStraggler(g, s)
	j.addAlerts(g, s)
	j.addIncident(g, s)
	j.addCPU(s)
	g.prev = *s
	g.prev.Firing, g.prev.Pending = nil, nil // the caller's slices, not ours to keep
}

func (j *Job) addStraggler(g *gpuAcc, s *Sample) {
	switch {
	case s.Straggler && g.straggler == nil:
		g.straggler = &Straggler{GPU: g.name, UUID: g.uuid, From: s.Time, To: s.Time, MaxScore: s.Score, Cause: s.Cause, Why: s.Why}
	case s.Straggler:
		g.straggler.To = s.Time
		if s.Score > g.straggler.MaxScore {
			g.straggler.MaxScore = s.Score
		}
		if g.straggler.Cause == "" && s.Cause != "" {
			g.straggler.Cause, g.straggler.Why = s.Cause, s.Why
		}
	case g.straggler != nil:
		st := *g.straggler
		st.To = s.Time
		g.straggler = nil
		if len(j.stragglers) < maxEpisodes {
			j.stragglers = append(j.stragglers, st)
		} else {
			j.dropped++
		}
	}
}

func (j *Job) addAlerts(g *gpuAcc, s *Sample) {
	if len(s.Firing) == 0 && len(s.Pending) == 0 && len(g.alerts) == 0 {
		return // most samples: nothing to open, nothing to resolve
	}
	seen := func(a string) bool { return slices.Contains(s.Firing, a) || slices.Contains(s.Pending, a) }
	open := func(a string) *Alert {
		if e := g.alerts[a]; e != nil {
			return e
		}
		if len(j.alerts) >= maxEpisodes {
			j.dropped++
			return nil
		}
		e := &Alert{Alert: a, GPU: g.name}
		if g.alerts == nil {
			g.alerts = map[string]*Alert{}
		}
		g.alerts[a] = e
		j.alerts = append(j.alerts, e)
		return e
	}
	for _, a := range s.Pending {
		if e := open(a); e != nil && e.Pending == 0 && e.Firing == 0 {
			e.Pending = s.Time
		}
	}
	for _, a := range s.Firing {
		if e := open(a); e != nil && e.Firing == 0 {
			e.Firing = s.Time
		}
	}
	for a, e := range g.alerts {
		if seen(a) {
			continue
		}
		e.Resolved = s.Time
		delete(g.alerts, a)
		if e.Firing == 0 {
			// Pending and resolved without firing: counted, not listed, or
			// a flapping rule would crowd out the alerts that fired.
			j.pendingOnly[a]++
			if i := slices.Index(j.alerts, e); i >= 0 {
				j.alerts = slices.Delete(j.alerts, i, i+1)
			}
		}
	}
}

func (j *Job) addIncident(g *gpuAcc, s *Sample) {
	bad := s.Health != "" && s.Health != "ok"
	switch {
	case bad && (g.incident == nil || g.incident.State != s.Health):
		if g.incident != nil {
			g.incident.To = s.Time
		}
		if len(j.incidents) >= maxEpisodes {
			j.dropped++
			g.incident = nil
			return
		}
		g.incident = &Incident{GPU: g.name, State: s.Health, From: s.Time}
		j.incidents = append(j.incidents, g.incident)
	case !bad && g.incident != nil:
		g.incident.To = s.Time
		g.incident = nil
	}
}

func (j *Job) addCPU(s *Sample) {
	if math.IsNaN(s.CPUSeconds) || s.Pod == "" {
		return
	}
	p := j.pods[s.Pod]
	if p == nil {
		if len(j.pods) >= 4*maxEpisodes {
			return
		}
		p = &podAcc{firstT: s.Time, firstCPU: s.CPUSeconds}
		j.pods[s.Pod] = p
	}
	if s.Time < p.lastT {
		return
	}
	if s.CPUSeconds < p.lastCPU { // the cgroup was made anew: count from here
		p.firstCPU -= p.lastCPU - s.CPUSeconds
	}
	p.lastT, p.lastCPU = s.Time, s.CPUSeconds
	if !math.IsNaN(s.CPULimit) && s.CPULimit > 0 {
		p.limit = s.CPULimit
	}
}

// tally sums a value per key over a few keys.
type tally []keyValue

type keyValue struct {
	k string
	v float64
}

type keyWords struct{ k, words string }

func (t *tally) add(k string, v float64) {
	for i := range *t {
		if (*t)[i].k == k {
			(*t)[i].v += v
			return
		}
	}
	*t = append(*t, keyValue{k, v})
}

func (t tally) get(k string) float64 {
	for _, e := range t {
		if e.k == k {
			return e.v
		}
	}
	return 0
}

func (g *gpuAcc) setWhy(k, words string) {
	for i := range g.causeWhy {
		if g.causeWhy[i].k == k {
			g.causeWhy[i].words = words
			return
		}
	}
	g.causeWhy = append(g.causeWhy, keyWords{k, words})
}

func (g *gpuAcc) why(k string) string {
	for _, e := range g.causeWhy {
		if e.k == k {
			return e.words
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
