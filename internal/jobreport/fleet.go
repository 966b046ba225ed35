package jobreport

import (
	"math"
	"slices"
)

// Fleet follows many jobs at once, in bounded memory.
type Fleet struct {
	jobs  map[Key]*Job
	order []Key // by first sample
	max   int
	// Refused counts samples of new jobs past max.
	Refused int
}

// NewFleet follows at most max jobs at a time (0: no bound).
func NewFleet(maxJobs int) *Fleet {
	return &Fleet{jobs: map[Key]*Job{}, max: maxJobs}
}

// Add takes one sample of the job k; a new job past the bound is refused.
func (f *Fleet) Add(k Key, s *Sample) {
	j := f.jobs[k]
	if j == nil {
		if f.max > 0 && len(f.jobs) >= f.max {
			f.Refused++
			return
		}
		j = NewJob(k)
		f.jobs[k] = j
		f.order = append(f.order, k)
	}
	j.Add(s)
}

// Jobs lists the jobs in the order of their first sample.
func (f *Fleet) Jobs() []*Job {
	out := make([]*Job, 0, len(f.order))
	for _, k := range f.order {
		out = append(out, f.jobs[k])
	}
	return out
}

// Find returns the jobs q names (Key.Matches): one, or more where an ID
// alone is in several namespaces or clusters.
func (f *Fleet) Find(q string) []*Job {
	var out []*Job
	for _, k := range f.order {
		if k.Matches(q) {
			out = append(out, f.jobs[k])
		}
	}
	return out
}

// Ended removes and returns the jobs that have ended by data time now: no
// GPU has sent a sample for the job for quiet seconds, nor for three of
// the job's own sampling intervals if that is longer. The job's GPUs may
// go on reporting, for another job or none: what ends a job is that
// nothing is reported for it any more. Waiting a few intervals, rather
// than ending the job at the first sample without it, keeps a job that is
// only between scrapes (or whose attribution missed one scrape) from
// ending, and from being reported twice.
func (f *Fleet) Ended(now, quiet float64) []*Job {
	var out []*Job
	keep := f.order[:0]
	for _, k := range f.order {
		j := f.jobs[k]
		if j.EndedBy(now, quiet) {
			out = append(out, j)
			delete(f.jobs, k)
			continue
		}
		keep = append(keep, k)
	}
	clear(f.order[len(keep):])
	f.order = keep
	return out
}

// DefaultQuiet is how long, in seconds, no GPU reports for a job before
// it is taken as ended, unless three of its sampling intervals are longer:
// two minutes is four scrapes at Prometheus' usual 30 s, and far under the
// analyzer's gpu_ttl, which forgets the GPUs themselves.
const DefaultQuiet = 120

// EndedBy says whether the job has ended by data time now, by Ended's rule.
func (j *Job) EndedBy(now, quiet float64) bool {
	// The quiet test first: it needs no look at the GPUs, and a fleet's
	// jobs are nearly all running.
	return now-j.last > quiet && now-j.last > 3*j.interval()
}

// Len is the number of jobs followed.
func (f *Fleet) Len() int { return len(f.jobs) }

// interval is the job's sampling interval: the longest of its GPUs'
// latest intervals between two samples.
func (j *Job) interval() float64 {
	var iv float64
	for _, g := range j.gpus {
		iv = math.Max(iv, g.dt)
	}
	return iv
}

// Keys lists the jobs' names, sorted, for an error that says which jobs
// there are.
func (f *Fleet) Keys() []string {
	out := make([]string, 0, len(f.order))
	for _, k := range f.order {
		out = append(out, k.String())
	}
	slices.Sort(out)
	return out
}
