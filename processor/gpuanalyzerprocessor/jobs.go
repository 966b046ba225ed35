package gpuanalyzerprocessor

// The job-end log line: every verdict of a GPU with a job (a Kubernetes
// Job or a Slurm job) goes to that job's report (internal/jobreport, the
// model gpureplay -job prints too), and when no GPU has reported for the
// job for job_report::end_after (or three of its sampling intervals), the
// job has ended: one line is logged and the job forgotten, so it is never
// logged twice. A job that is only between scrapes has not ended.

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// jobReading is what a job's report needs of a sample beyond its verdict:
// utilization and the frame buffer, which the verdict does not carry.
type jobReading struct {
	util, memUsed, memTotal float64 // NaN where absent
}

// jobTracker follows every job's report until it ends.
type jobTracker struct {
	logger   *zap.Logger
	fleet    *jobreport.Fleet
	quiet    float64 // seconds
	currency string
	s        jobreport.Sample // reused
	firing   []string
	pending  []string
	// names caches each GPU's host/name, built once rather than with
	// every verdict; cleared past max entries (GPUs come and go).
	names map[string]string
	max   int
	swept int64 // data time of the last sweep
}

func newJobTracker(logger *zap.Logger, cfg *Config) *jobTracker {
	return &jobTracker{logger: logger, fleet: jobreport.NewFleet(cfg.MaxGPUs), quiet: cfg.JobReport.EndAfter.Seconds(), currency: cfg.Cost.Currency,
		names: map[string]string{}, max: cfg.MaxGPUs}
}

// readingOf takes what the job report needs from an accepted sample.
func readingOf(s *analysis.Sample) jobReading {
	nan := math.NaN()
	r := jobReading{util: nan, memUsed: nan, memTotal: nan}
	if s.Has&analysis.HasGPUUtil != 0 {
		r.util = s.GPUUtil * 100
	}
	if s.Has&analysis.HasFBUsed != 0 {
		r.memUsed = s.FBUsed
	}
	if s.Has&analysis.HasFB != 0 {
		r.memTotal = s.FBUsed + s.FBFree
	}
	return r
}

// observe takes one verdict of a GPU; a GPU of no job is passed by.
func (t *jobTracker) observe(v *analysis.Verdict, attrs pcommon.Map, r jobReading) {
	k, ok := jobreport.KeyOf(attrs)
	if !ok {
		return
	}
	s := &t.s
	*s = jobreport.NewSample()
	s.Time = float64(v.Time) / 1e9
	s.UUID, s.Name = v.ID, t.nameOf(v.ID, attrs)
	if h, ok := attrs.Get(metricnames.AttrHostName); ok {
		s.Host = h.AsString()
	}
	s.Util, s.MemUsed, s.MemTotal = r.util, r.memUsed, r.memTotal
	s.Class, s.Hint = v.Class.String(), v.Hint.String()
	s.Cause, s.Why = v.Cause.Kind.String(), v.Cause.Why
	s.Straggler, s.Score = v.Straggler, v.Score
	t.firing, t.pending = t.firing[:0], t.pending[:0]
	for a, st := range v.Alerts {
		switch st {
		case analysis.Firing:
			t.firing = append(t.firing, analysis.AlertName(a).String())
		case analysis.Pending:
			t.pending = append(t.pending, analysis.AlertName(a).String())
		}
	}
	s.Firing, s.Pending = t.firing, t.pending
	s.Usage, s.PricePerHour, s.Health = v.Usage.State.String(), v.Usage.PricePerHour, v.Health.String()
	t.fleet.Add(k, s)
}

func (t *jobTracker) nameOf(id string, attrs pcommon.Map) string {
	if n, ok := t.names[id]; ok {
		return n
	}
	if len(t.names) >= t.max {
		clear(t.names)
	}
	n := gpuName(id, attrs)
	t.names[id] = n
	return n
}

// sweep logs and forgets the jobs that have ended by data time now (Unix
// nanoseconds).
func (t *jobTracker) sweep(now int64) {
	// Once a second of data time at most: a gateway gets a batch from
	// every agent, and looking at every job with each would cost more than
	// a second's precision on a job's end is worth.
	if now == 0 || now-t.swept < int64(time.Second) {
		return
	}
	t.swept = now
	for _, j := range t.fleet.Ended(float64(now)/1e9, t.quiet) {
		r := j.Build(false, 0)
		r.Currency = t.currency
		msg, fields := jobreport.LogLine(&r)
		t.logger.Info(msg, fields...)
	}
}
