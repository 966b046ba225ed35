package jobreport

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
)

// Facts are what the report says of one job. Seconds are GPU-seconds
// where summed over GPUs; times are Unix seconds.
type Facts struct {
	Job Key `json:"job"`
	// Start and End are the job's first and last samples; Running says
	// the job had not ended when the facts were taken (the caller knows).
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Running bool    `json:"running,omitempty"`
	// TimeLimit is the scheduler's limit in seconds; 0 where unknown.
	TimeLimit float64 `json:"time_limit,omitempty"`
	// Nodes lists the job's hosts with their GPUs, by host name.
	Nodes []Node `json:"nodes"`
	GPUs  int    `json:"gpus"`
	// Util is the job's GPU utilization in percent: the mean over its
	// GPUs of each GPU's mean (jobstats' "GPU utilization"); NaN where no
	// GPU reported utilization.
	Util float64 `json:"util"`
	// MemShare is the sum of the GPUs' peak memory used over the sum of
	// their totals (jobstats' "GPU memory usage"); NaN where unknown.
	MemShare float64 `json:"mem_share"`
	// CPUEfficiency is CPU time used over CPU time allocated (limit ×
	// wall time) of the cgroups feeding the GPUs, as jobstats' and seff's
	// "CPU efficiency"; NaN without node evidence. CPUSeconds and
	// CPUAllocSeconds are its parts.
	CPUEfficiency   float64 `json:"cpu_efficiency"`
	CPUSeconds      float64 `json:"cpu_seconds,omitempty"`
	CPUAllocSeconds float64 `json:"cpu_alloc_seconds,omitempty"`
	// GPUSeconds is the job's GPU time: each GPU's first to last sample.
	GPUSeconds float64 `json:"gpu_seconds"`
	// Classes is the GPU time per bottleneck class, largest first.
	Classes []Share `json:"classes"`
	// Causes is the GPU time per cause found on the node's evidence,
	// largest first, with the GPUs it held most and its evidence.
	Causes []Cause `json:"causes,omitempty"`
	// Stragglers are the stretches a GPU held its job back.
	Stragglers []Straggler `json:"stragglers"`
	// Usage is the GPU time and cost per usage state, in Usage's order.
	Usage    []UsageState `json:"usage"`
	Currency string       `json:"currency,omitempty"`
	// Alerts and Incidents: the alerts from pending to resolved, and the
	// stretches a GPU's health was not ok.
	Alerts    []Alert    `json:"alerts"`
	Incidents []Incident `json:"incidents"`
	// PendingOnly counts, per alert, the episodes that went pending and
	// resolved without firing: not listed in Alerts.
	PendingOnly map[string]int `json:"pending_only,omitempty"`
	// Dropped counts episodes (stragglers, alerts, incidents) past the
	// report's bound, left out.
	Dropped int `json:"dropped,omitempty"`
}

// Node is one host of the job.
type Node struct {
	Host string `json:"host"`
	GPUs []GPU  `json:"gpus"`
}

// GPU is one GPU of the job: jobstats' per-GPU lines and its time by
// class.
type GPU struct {
	UUID string `json:"uuid"`
	Name string `json:"name"`
	// Util is the mean utilization in percent (NaN: not reported),
	// MemPeak and MemTotal the peak bytes used and the total (NaN:
	// unknown).
	Util     float64 `json:"util"`
	MemPeak  float64 `json:"mem_peak"`
	MemTotal float64 `json:"mem_total"`
	Seconds  float64 `json:"seconds"`
	// Main is the class it spent most time in, MainShare that share.
	Main      string  `json:"main"`
	MainShare float64 `json:"main_share"`
	// Waits is the share of its time input or communication bound.
	Input         float64 `json:"input_share"`
	Communication float64 `json:"communication_share"`
}

// Share is a part of the job's GPU time.
type Share struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
}

// Cause is the GPU time one cause held, and where.
type Cause struct {
	Cause   string  `json:"cause"`
	Seconds float64 `json:"seconds"`
	Share   float64 `json:"share"`
	// GPUs it held, most time first; Why the evidence in words on the
	// first of them.
	GPUs []string `json:"gpus"`
	Why  string   `json:"why,omitempty"`
}

// Straggler is one stretch a GPU was its job's straggler; Open says it
// still was at the job's last sample.
type Straggler struct {
	GPU      string  `json:"gpu"`
	UUID     string  `json:"uuid"`
	From     float64 `json:"from"`
	To       float64 `json:"to"`
	Open     bool    `json:"open,omitempty"`
	MaxScore float64 `json:"max_score"`
	Cause    string  `json:"cause,omitempty"`
	Why      string  `json:"why,omitempty"`
}

// Alert is one alert on one GPU: when it went pending, fired and
// resolved (0: it did not).
type Alert struct {
	Alert    string  `json:"alert"`
	GPU      string  `json:"gpu"`
	Pending  float64 `json:"pending,omitempty"`
	Firing   float64 `json:"firing,omitempty"`
	Resolved float64 `json:"resolved,omitempty"`
}

// Incident is a stretch a GPU's health was State (degraded, failed,
// predicted_failure); To is 0 while it lasts.
type Incident struct {
	GPU   string  `json:"gpu"`
	State string  `json:"state"`
	From  float64 `json:"from"`
	To    float64 `json:"to,omitempty"`
}

// UsageState is the GPU time and cost in one usage state.
type UsageState struct {
	State   string  `json:"state"`
	Seconds float64 `json:"seconds"`
	Cost    float64 `json:"cost"`
}

// UsageStates are the analyzer's usage states (otelgpu.usage.state), in
// the report's order.
var UsageStates = []string{"used", "waiting", "workload_idle", "cluster_idle", "unknown"}

// Facts takes the job's facts so far; the job can go on taking samples.
func (j *Job) Facts() Facts {
	f := Facts{Job: j.key, Start: j.first, End: j.last, Util: math.NaN(), MemShare: math.NaN(), CPUEfficiency: math.NaN(),
		Stragglers: []Straggler{}, Alerts: []Alert{}, Incidents: []Incident{}, Causes: []Cause{}, Dropped: j.dropped}
	if len(j.gpus) == 0 {
		f.Start, f.End = 0, 0
	}
	classSec, causeSec, usageSec, costSum := map[string]float64{}, map[string]float64{}, map[string]float64{}, map[string]float64{}
	causeGPUs := map[string]map[string]float64{}
	causeWhy := map[string]map[string]string{}
	hosts := map[string][]GPU{}
	var utilSum, peakSum, totalSum float64
	var utilN int
	ids := slices.Sorted(maps.Keys(j.gpus))
	for _, id := range ids {
		g := j.gpus[id]
		gf := GPU{UUID: g.uuid, Name: g.name, Util: math.NaN(), MemPeak: g.memPeak, MemTotal: g.memTotal, Seconds: g.last - g.first}
		if g.utilN > 0 {
			gf.Util = g.utilSum / float64(g.utilN)
			utilSum += gf.Util
			utilN++
		}
		if !math.IsNaN(g.memPeak) && !math.IsNaN(g.memTotal) {
			peakSum += g.memPeak
			totalSum += g.memTotal
		}
		for _, e := range g.classSec {
			c, s := e.k, e.v
			classSec[c] += s
			if gf.Seconds > 0 && (s > gf.MainShare*gf.Seconds || (s == gf.MainShare*gf.Seconds && c < gf.Main)) {
				gf.Main, gf.MainShare = c, s/gf.Seconds
			}
		}
		if gf.Seconds > 0 {
			gf.Input = g.classSec.get("input_bound") / gf.Seconds
			gf.Communication = g.classSec.get("communication_bound") / gf.Seconds
		} else {
			gf.Main, gf.MainShare = g.prev.Class, 1
		}
		for _, e := range g.causeSec {
			c, s := e.k, e.v
			causeSec[c] += s
			if causeGPUs[c] == nil {
				causeGPUs[c], causeWhy[c] = map[string]float64{}, map[string]string{}
			}
			causeGPUs[c][g.name] += s
			causeWhy[c][g.name] = g.why(c)
		}
		for _, e := range g.usageSec {
			usageSec[e.k] += e.v
		}
		for _, e := range g.costSum {
			costSum[e.k] += e.v
		}
		f.GPUSeconds += gf.Seconds
		hosts[g.host] = append(hosts[g.host], gf)
		if g.straggler != nil {
			s := *g.straggler
			s.To, s.Open = g.last, true
			f.Stragglers = append(f.Stragglers, s)
		}
	}
	f.GPUs = len(ids)
	for _, h := range slices.Sorted(maps.Keys(hosts)) {
		gs := hosts[h]
		slices.SortFunc(gs, func(a, b GPU) int { return cmp.Or(natural(a.Name, b.Name), strings.Compare(a.UUID, b.UUID)) })
		f.Nodes = append(f.Nodes, Node{Host: h, GPUs: gs})
	}
	if utilN > 0 {
		f.Util = utilSum / float64(utilN)
	}
	if totalSum > 0 {
		f.MemShare = peakSum / totalSum
	}
	f.Classes = shares(classSec, f.GPUSeconds)
	for _, s := range shares(causeSec, f.GPUSeconds) {
		c := Cause{Cause: s.Name, Seconds: s.Seconds, Share: s.Share}
		byGPU := causeGPUs[s.Name]
		c.GPUs = slices.SortedFunc(maps.Keys(byGPU), func(a, b string) int { return cmp.Or(cmp.Compare(byGPU[b], byGPU[a]), natural(a, b)) })
		c.Why = causeWhy[s.Name][c.GPUs[0]]
		f.Causes = append(f.Causes, c)
	}
	for _, st := range UsageStates {
		if usageSec[st] > 0 || costSum[st] > 0 {
			f.Usage = append(f.Usage, UsageState{State: st, Seconds: usageSec[st], Cost: costSum[st]})
		}
	}
	f.Stragglers = append(slices.Clone(j.stragglers), f.Stragglers...)
	slices.SortStableFunc(f.Stragglers, func(a, b Straggler) int { return cmp.Or(cmp.Compare(a.From, b.From), natural(a.GPU, b.GPU)) })
	for _, a := range j.alerts {
		f.Alerts = append(f.Alerts, *a)
	}
	if len(j.pendingOnly) > 0 {
		f.PendingOnly = maps.Clone(j.pendingOnly)
	}
	for _, in := range j.incidents {
		f.Incidents = append(f.Incidents, *in)
	}
	j.cpuFacts(&f)
	return f
}

func (j *Job) cpuFacts(f *Facts) {
	for _, p := range j.pods {
		if p.limit <= 0 || p.lastT <= p.firstT {
			continue
		}
		f.CPUSeconds += p.lastCPU - p.firstCPU
		f.CPUAllocSeconds += p.limit * (p.lastT - p.firstT)
	}
	if f.CPUAllocSeconds > 0 {
		f.CPUEfficiency = f.CPUSeconds / f.CPUAllocSeconds
	}
}

// shares orders the parts of total, largest first (a tie by name).
func shares(m map[string]float64, total float64) []Share {
	out := []Share{}
	for n, s := range m {
		if s <= 0 || n == "" {
			continue
		}
		sh := Share{Name: n, Seconds: s}
		if total > 0 {
			sh.Share = s / total
		}
		out = append(out, sh)
	}
	slices.SortFunc(out, func(a, b Share) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), strings.Compare(a.Name, b.Name))
	})
	return out
}

// natural orders names with numbers by their value: gpu2 before gpu10.
func natural(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// Seconds returns the job's GPU time in one usage state.
func (f *Facts) Seconds(state string) float64 {
	for _, u := range f.Usage {
		if u.State == state {
			return u.Seconds
		}
	}
	return 0
}

// Cost returns the job's cost in one usage state, or in all with "".
func (f *Facts) Cost(state string) float64 {
	var c float64
	for _, u := range f.Usage {
		if state == "" || u.State == state {
			c += u.Cost
		}
	}
	return c
}

// IdleSeconds is the GPU time the job held its GPUs idle: a GPU that
// reports for a job is the job's, so both the analyzer's idle states
// count (cluster_idle is a GPU without a Kubernetes pod, which a Slurm
// job's GPU is).
func (f *Facts) IdleSeconds() float64 { return f.Seconds("workload_idle") + f.Seconds("cluster_idle") }

// IdleCost is the cost of IdleSeconds.
func (f *Facts) IdleCost() float64 { return f.Cost("workload_idle") + f.Cost("cluster_idle") }

// ClassShare returns the share of the job's GPU time in one class.
func (f *Facts) ClassShare(class string) float64 {
	for _, c := range f.Classes {
		if c.Name == class {
			return c.Share
		}
	}
	return 0
}

// RunSeconds is the job's wall time, first sample to last.
func (f *Facts) RunSeconds() float64 { return f.End - f.Start }
