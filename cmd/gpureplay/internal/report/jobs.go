package report

// The job report (internal/jobreport) of each job in the trace: the rows
// of a GPU with a job column go to that job, with the verdict on them.

import (
	"fmt"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// addJob feeds a row of a job to its report.
func (c *Collector) addJob(r *trace.Row, v *Verdict, name string) {
	k, ok := jobreport.KubernetesKey(r.Namespace, r.Job)
	if !ok {
		return
	}
	s := jobreport.NewSample()
	s.Time, s.UUID, s.Name, s.Host = r.Time, r.UUID, name, r.Host
	if u, ok := r.Values.Get(dcgmfield.GPUUtil); ok {
		s.Util = u
	}
	// The frame buffer in MiB, as DCGM reports it; jobstats prints bytes.
	used, okU := r.Values.Get(dcgmfield.FBUsed)
	free, okF := r.Values.Get(dcgmfield.FBFree)
	if okU {
		s.MemUsed = used * (1 << 20)
		if okF {
			s.MemTotal = (used + free) * (1 << 20)
		}
	}
	s.Class, s.Hint, s.Cause, s.Why = v.Class, v.Hint, v.Cause, v.Why
	s.Straggler, s.Score = v.Straggler, v.Score
	s.Firing, s.Pending = v.Firing, v.Pending
	s.Usage, s.PricePerHour, s.Health = v.Usage, v.Price, v.Health
	if n := r.Node; n != nil && n.Pod.Has[trace.PodCPUSeconds] {
		s.CPUSeconds, s.Pod = n.Pod.V[trace.PodCPUSeconds], cmpOr(n.PodUID, r.Pod)
		if n.Pod.Has[trace.PodCPULimit] {
			s.CPULimit = n.Pod.V[trace.PodCPULimit]
		}
	}
	c.jobs.Add(k, &s)
}

// JobOptions choose the jobs a report covers.
type JobOptions struct {
	// Job names the one job to report (jobreport.Key.Matches); "" all.
	Job string
	// TimeLimit is the job's time limit in seconds, 0 where unknown: a
	// trace does not say.
	TimeLimit float64
	// Currency is the analyzer's, for the cost.
	Currency string
}

// JobReports builds the report of each job the options choose, in the
// order of their first rows. A job whose GPUs reported for it until the
// trace's end, by the analyzer's rule for a job's end
// (jobreport.DefaultQuiet), is still running. A name that matches no job
// is an error that lists the trace's jobs.
func (c *Collector) JobReports(o JobOptions) ([]jobreport.Report, error) {
	jobs := c.jobs.Jobs()
	if o.Job != "" {
		jobs = c.jobs.Find(o.Job)
		if len(jobs) == 0 {
			if c.jobs.Len() == 0 {
				return nil, fmt.Errorf("no job %q: the trace names no job (its job column is empty or absent)", o.Job)
			}
			return nil, fmt.Errorf("no job %q in the trace; its jobs: %s", o.Job, strings.Join(c.jobs.Keys(), ", "))
		}
	}
	out := make([]jobreport.Report, 0, len(jobs))
	for _, j := range jobs {
		r := j.Build(!j.EndedBy(c.end, jobreport.DefaultQuiet), o.TimeLimit)
		r.Currency = o.Currency
		out = append(out, r)
	}
	return out, nil
}
