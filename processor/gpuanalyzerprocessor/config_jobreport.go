package gpuanalyzerprocessor

import (
	"fmt"
	"time"
)

// JobReportConfig is the one log line per job when it ends (jobs.go).
type JobReportConfig struct {
	// Enabled logs, when a job ends, one line with its GPUs, run time,
	// main bottleneck classes, GPU-hours held idle and their cost, and
	// the report's first advice. A job is a Kubernetes Job
	// (k8s.job.name in k8s.namespace.name) or a Slurm job (slurm.job.id
	// in slurm.cluster.name). Off by default: it keeps about a kilobyte
	// per GPU until the GPU's job ends, which on a gateway flooded with new
	// GPUs held the heap above memory_limiter's limit for the two minutes
	// of end_after (TestE2EFlood); turn it on where the log is read.
	Enabled bool `mapstructure:"enabled"`
	// EndAfter is how long (data time) no GPU reports for a job before
	// the job is taken as ended, or three of the job's own sampling
	// intervals if that is longer; 2m by default (four scrapes at 30 s).
	// Nothing in the telemetry says that a job ended: its GPUs stop
	// reporting for it, for another job, no job, or at all.
	EndAfter time.Duration `mapstructure:"end_after"`
}

func defaultJobReportConfig() JobReportConfig {
	return JobReportConfig{Enabled: false, EndAfter: 2 * time.Minute}
}

// Validate checks the job report's settings.
func (c *JobReportConfig) Validate() error {
	if c.EndAfter <= 0 {
		return fmt.Errorf("job_report::end_after must be positive, got %v", c.EndAfter)
	}
	return nil
}
