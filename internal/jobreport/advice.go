package jobreport

import (
	"fmt"
	"math"
	"strings"
)

// Thresholds. The utilization and time ones are jobstats' defaults
// (PrincetonUniversity/jobstats, config.py: GPU_UTIL_RED 15, GPU_UTIL_BLACK
// 25, TIME_EFFICIENCY_BLACK 60, MIN_RUNTIME_SECONDS 10 sampling periods of
// 30 s), so that a site moving from jobstats hears the same notes on the
// same jobs; jobstats asks for less time only of a job that ran more than
// three times that minimum and COMPLETED. The rest are this product's.
const (
	MinRunSeconds    = 300  // shorter jobs get no utilization or time advice
	UtilLow          = 15.0 // percent: "only"
	UtilSomewhatLow  = 25.0 // percent: "ask for fewer GPUs"
	TimeUsedLow      = 0.60 // of the limit
	InputShare       = 0.10 // of a GPU's time input bound
	CommShare        = 0.20 // of the job's GPU time communication bound
	ThrottledShare   = 0.05 // of the job's GPU time throttled
	IdleShare        = 0.10 // of the job's GPU time held but idle
	MaxAdvice        = 5    // items in the list
	idleMinGPUSecond = MinRunSeconds
)

// Advice is one thing to do, in plain words. Code names the rule (stable,
// for tests and tools); Text says it with the figure from the report it
// rests on.
type Advice struct {
	Code string `json:"code"`
	Text string `json:"text"`
}

// The rules, most urgent first: the list keeps the first MaxAdvice.
const (
	AdviceGPUUnhealthy  = "gpu_unhealthy"
	AdviceGPUUnused     = "gpu_unused"
	AdviceLowUtil       = "low_utilization"
	AdviceInputStarved  = "input_starved"
	AdviceStraggler     = "straggler"
	AdviceCommunication = "communication"
	AdviceThrottled     = "throttled"
	AdviceIdleHeld      = "idle_held"
	AdviceTimeLimit     = "time_limit"
)

// Advise draws the advice from the facts; none for a job that needs none.
func Advise(f *Facts) []Advice {
	var out []Advice
	add := func(code, format string, args ...any) {
		out = append(out, Advice{Code: code, Text: fmt.Sprintf(format, args...)})
	}
	run := f.RunSeconds()
	// The first incident is enough to say: the incidents table lists the rest.
	if len(f.Incidents) > 0 {
		in := f.Incidents[0]
		results := ""
		if in.State == "failed" {
			results = ", and check the job's results since then"
		}
		add(AdviceGPUUnhealthy, "%s became %s at %s: have its node checked before the next run%s.",
			in.GPU, healthWords(in.State), Clock(in.From), results)
	}
	unused := f.unusedGPUs()
	switch {
	case run < MinRunSeconds || f.GPUs == 0:
	case len(unused) > 0 && len(unused) == f.GPUs && f.GPUs == 1:
		add(AdviceGPUUnused, "This job did not use the GPU: 0 %% utilization over %s. Is the code GPU-enabled?", Duration(run))
	case len(unused) > 0 && len(unused) == f.GPUs:
		add(AdviceGPUUnused, "This job did not use any of its %d GPUs: 0 %% utilization over %s. Is the code GPU-enabled?", f.GPUs, Duration(run))
	case len(unused) > 0:
		add(AdviceGPUUnused, "This job did not use %d of its %d GPUs (%s: 0 %% utilization): ask for %d.",
			len(unused), f.GPUs, list(unused, 3), f.GPUs-len(unused))
	}
	if run >= MinRunSeconds && len(unused) < f.GPUs && !math.IsNaN(f.Util) && f.Util < UtilSomewhatLow {
		only := ""
		if f.Util <= UtilLow {
			only = "only "
		}
		if f.GPUs > 1 {
			add(AdviceLowUtil, "GPU utilization was %s%s over %d GPUs: ask for fewer GPUs, or remove what keeps them waiting.", only, Percent(f.Util/100), f.GPUs)
		} else {
			add(AdviceLowUtil, "GPU utilization was %s%s: find what keeps the GPU waiting before asking for more.", only, Percent(f.Util/100))
		}
	}
	if a, ok := f.inputAdvice(); ok {
		out = append(out, a)
	}
	out = append(out, f.stragglerAdvice()...)
	if sh := f.ClassShare("communication_bound"); sh >= CommShare {
		add(AdviceCommunication, "The GPUs waited on collectives %s of their time%s.", Percent(sh), commRemedy(f.causeOf("network_saturated", "fabric_errors")))
	}
	if sh := f.ClassShare("throttled"); sh >= ThrottledShare {
		add(AdviceThrottled, "The GPUs were throttled %s of their time%s.", Percent(sh), throttleRemedy(f.causeOf("thermal", "power_cap")))
	}
	if idle := f.IdleSeconds(); idle >= idleMinGPUSecond && f.GPUSeconds > 0 && idle/f.GPUSeconds >= IdleShare {
		cost := ""
		if c := f.IdleCost(); c > 0 {
			cost = ", " + Money(c, f.Currency)
		}
		add(AdviceIdleHeld, "The job held its GPUs idle for %s (%s of its GPU time%s): release GPUs when the work is done.",
			GPUHours(idle), Percent(idle/f.GPUSeconds), cost)
	}
	if f.TimeLimit > 0 && !f.Running && run > 3*MinRunSeconds && run/f.TimeLimit < TimeUsedLow {
		add(AdviceTimeLimit, "This job ran %s of its %s time limit (%s): ask for less time, and it will start sooner.",
			Duration(run), Duration(f.TimeLimit), Percent(run/f.TimeLimit))
	}
	if len(out) > MaxAdvice {
		out = out[:MaxAdvice]
	}
	return out
}

// unusedGPUs names the GPUs whose mean utilization was 0 (jobstats'
// "did not use the GPU": a GPU with a utilization of zero).
func (f *Facts) unusedGPUs() []string {
	var out []string
	for _, n := range f.Nodes {
		for _, g := range n.GPUs {
			if !math.IsNaN(g.Util) && g.Util == 0 {
				out = append(out, g.Name)
			}
		}
	}
	return out
}

// inputAdvice names the GPUs the data loader starves: input bound for at
// least InputShare of their time, the worst first, with the cause the
// node's evidence gives.
func (f *Facts) inputAdvice() (Advice, bool) {
	var worst GPU
	var names []string
	for _, n := range f.Nodes {
		for _, g := range n.GPUs {
			if g.Input >= InputShare {
				names = append(names, g.Name)
				if g.Input > worst.Input {
					worst = g
				}
			}
		}
	}
	if len(names) == 0 {
		return Advice{}, false
	}
	who, upTo := worst.Name, ""
	if len(names) > 1 {
		who, upTo = fmt.Sprintf("%d GPUs (%s)", len(names), list(names, 3)), "up to "
	}
	c := f.causeOf("cpu_throttled", "cpu_contention", "memory_pressure", "io_wait", "network_saturated", "none_found")
	return Advice{Code: AdviceInputStarved, Text: fmt.Sprintf("The data loader starves %s, waiting for input %s%s of the time%s.",
		who, upTo, Percent(worst.Input), inputRemedy(c))}, true
}

func (f *Facts) stragglerAdvice() []Advice {
	var out []Advice
	seen := map[string]bool{}
	for _, s := range f.Stragglers {
		if seen[s.GPU] || len(seen) == 2 {
			continue
		}
		seen[s.GPU] = true
		var why string
		switch {
		case s.Cause == "fabric_errors":
			why = ": its rail counts link errors" + paren(s.Why) + "; have the fabric checked, or leave that node out"
		case s.Cause != "" && s.Cause != "none_found":
			why = ": " + causeWords(s.Cause) + paren(s.Why)
		case f.unwellDuring(&s) != "":
			why = ": it was " + f.unwellDuring(&s) + " then; have its node checked"
		default:
			why = ": check that node, or leave it out of the next run"
		}
		out = append(out, Advice{Code: AdviceStraggler, Text: fmt.Sprintf("%s held the job back for %s from %s (score up to %.2f)%s.",
			s.GPU, Duration(s.To-s.From), Clock(s.From), s.MaxScore, why)})
	}
	return out
}

// unwellDuring is the health state of the straggler's GPU during its
// stretch, "" if it was ok.
func (f *Facts) unwellDuring(s *Straggler) string {
	for _, in := range f.Incidents {
		if in.GPU == s.GPU && in.From <= s.To && (in.To == 0 || in.To >= s.From) {
			return healthWords(in.State)
		}
	}
	return ""
}

// causeOf returns the first of these causes the job's GPUs had, in the
// facts' order (most GPU time first).
func (f *Facts) causeOf(kinds ...string) *Cause {
	for i := range f.Causes {
		for _, k := range kinds {
			if f.Causes[i].Cause == k {
				return &f.Causes[i]
			}
		}
	}
	return nil
}

func inputRemedy(c *Cause) string {
	if c == nil {
		return ": give it more workers, pinned memory and prefetching"
	}
	switch c.Cause {
	case "cpu_throttled":
		return ": its CPU limit throttles it" + paren(c.Why) + "; raise the CPU limit or ask for more CPUs per GPU"
	case "cpu_contention":
		return ": it waits for a CPU on a busy node" + paren(c.Why) + "; ask for dedicated CPUs"
	case "memory_pressure":
		return ": it stalls on memory at its limit" + paren(c.Why) + "; raise the memory limit"
	case "io_wait":
		return ": it stalls on reads" + paren(c.Why) + "; stage the data set on local disk or read ahead"
	case "network_saturated":
		return ": the network it reads over is full" + paren(c.Why) + "; stage the data set closer"
	}
	return ": the node shows no CPU, memory, disk or network limit, so look at the loader itself (workers, prefetching)"
}

func commRemedy(c *Cause) string {
	if c == nil {
		return ": overlap communication with compute (larger gradient buckets), or keep the job on fewer nodes"
	}
	if c.Cause == "fabric_errors" {
		return ": the fabric counts link errors" + paren(c.Why) + "; have it checked"
	}
	return ": the network ran near its rate" + paren(c.Why) + "; keep the job on fewer nodes or overlap communication with compute"
}

func throttleRemedy(c *Cause) string {
	if c == nil {
		return ": have the node's cooling and power limits checked"
	}
	if c.Cause == "thermal" {
		return ", too hot" + paren(c.Why) + ": have the node's cooling checked"
	}
	return ", at their power limit" + paren(c.Why) + ": have the node's power limit checked"
}

func causeWords(c string) string {
	switch c {
	case "cpu_throttled":
		return "its CPU limit throttles it"
	case "cpu_contention":
		return "it waits for a CPU on a busy node"
	case "memory_pressure":
		return "it stalls on memory"
	case "io_wait":
		return "it stalls on reads"
	case "network_saturated":
		return "its network ran near its rate"
	case "thermal":
		return "it runs too hot"
	case "power_cap":
		return "it is held at its power limit"
	}
	return strings.ReplaceAll(c, "_", " ")
}

func healthWords(s string) string {
	if s == "predicted_failure" {
		return "likely to fail"
	}
	return s
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// list names the first n items and counts the rest.
func list(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}
