package dcgmreceiver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/hpcjobmap"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmjobs"
)

// SlurmConfig attributes GPUs to Slurm jobs on a Slurm node: the job, its
// step, user, account and partition as slurm.* resource attributes.
type SlurmConfig struct {
	// Enabled turns Slurm attribution on. The job comes from the
	// GPU's processes' cgroups (which needs per_process) or from
	// job_mapping_dir.
	Enabled bool `mapstructure:"enabled"`
	// JobMappingDir is a directory of dcgm-exporter's HPC job mapping
	// files (its --hpc-job-mapping-dir): one file per GPU index, or
	// per GPU index.GPU instance ID for a MIG instance, each line a job
	// ID, as a Slurm prolog writes them (examples/slurm). It names the
	// jobs a GPU is allocated to, busy or not; empty reads the cgroups
	// alone.
	JobMappingDir string `mapstructure:"job_mapping_dir"`
	// ClusterName is slurm.cluster.name (Slurm's ClusterName), which
	// tells two clusters' job IDs apart downstream; empty leaves it unset.
	ClusterName string `mapstructure:"cluster_name"`
	// Details asks Slurm for each job's name, user, account and
	// partition.
	Details SlurmDetailsConfig `mapstructure:"details"`
}

// SlurmDetailsConfig configures the job-details queries (scontrol show
// job).
type SlurmDetailsConfig struct {
	Enabled bool `mapstructure:"enabled"`
	// Scontrol is scontrol's path; empty finds it on PATH.
	Scontrol string `mapstructure:"scontrol"`
	// SlurmConf is slurm.conf's path (SLURM_CONF) for scontrol; empty is
	// scontrol's own default (or the controller's, configless).
	SlurmConf string `mapstructure:"slurm_conf"`
	// Timeout bounds one query.
	Timeout time.Duration `mapstructure:"timeout"`
	// CacheTTL is how long a job's details are used before they are
	// asked again.
	CacheTTL time.Duration `mapstructure:"cache_ttl"`
}

// Validate checks the Slurm settings when they are enabled, on one line as
// PodResourcesConfig does. Needing per_process for the cgroups is checked
// by Config.Validate, which sees both.
func (c *SlurmConfig) Validate() error {
	if !c.Enabled {
		return nil
	}
	var problems []string
	if c.JobMappingDir != "" && !filepath.IsAbs(c.JobMappingDir) {
		problems = append(problems, fmt.Sprintf("job_mapping_dir must be an absolute path or empty, got %q", c.JobMappingDir))
	}
	if strings.ContainsAny(c.ClusterName, " \t\n") {
		problems = append(problems, fmt.Sprintf("cluster_name must be one word, as Slurm's ClusterName is, got %q", c.ClusterName))
	}
	if d := c.Details; d.Enabled {
		if d.Timeout <= 0 {
			problems = append(problems, fmt.Sprintf("details::timeout must be positive, got %v", d.Timeout))
		}
		if d.CacheTTL <= 0 {
			problems = append(problems, fmt.Sprintf("details::cache_ttl must be positive, got %v", d.CacheTTL))
		}
		if d.SlurmConf != "" && !filepath.IsAbs(d.SlurmConf) {
			problems = append(problems, fmt.Sprintf("details::slurm_conf must be an absolute path or empty, got %q", d.SlurmConf))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// slurmAttributor puts each GPU's Slurm job on its sample.
type slurmAttributor struct {
	cfg    SlurmConfig
	logger *zap.Logger
	// details is nil without details::enabled.
	details *slurmjobs.Cache
	// mapping is the mapping directory as last read; mapErr the last
	// error reading it, logged once while it stays the same.
	mapping hpcjobmap.Map
	mapErr  string
	// sharedWarned is set once a GPU several jobs share was seen.
	sharedWarned bool
}

func newSlurmAttributor(cfg SlurmConfig, src slurmjobs.Source, logger *zap.Logger) *slurmAttributor {
	a := &slurmAttributor{cfg: cfg, logger: logger}
	if cfg.Details.Enabled && src != nil {
		opts := slurmjobs.DefaultOptions()
		opts.Timeout, opts.TTL = cfg.Details.Timeout, cfg.Details.CacheTTL
		a.details = slurmjobs.New(src, opts, logger)
	}
	return a
}

func (a *slurmAttributor) close() {
	if a.details != nil {
		a.details.Close()
	}
}

// refresh reads the mapping directory, once per scrape as dcgm-exporter
// does: a prolog's new file counts from the next scrape. A directory that
// cannot be read keeps the jobs last read from it.
func (a *slurmAttributor) refresh() {
	if a.cfg.JobMappingDir == "" {
		return
	}
	m, err := hpcjobmap.Read(a.cfg.JobMappingDir)
	if m != nil {
		a.mapping = m
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	if msg != a.mapErr && msg != "" {
		a.logger.Warn("Slurm job mapping files unreadable; their GPUs are attributed from their processes' cgroups",
			zap.String("job_mapping_dir", a.cfg.JobMappingDir), zap.Error(err))
	}
	a.mapErr = msg
}

// attribute sets the sample's device's Slurm job, and its processes'
// details. The job is, in order: the one the backend names (the simulated
// fleet); the one job the mapping file names for the GPU (an allocation,
// busy or not), with the step of its processes there; the one job the
// GPU's processes' cgroups name (with their step where they agree). A GPU
// several jobs share is no one job's: its per-process resources carry
// each job.
func (a *slurmAttributor) attribute(smp *gpu.Sample) {
	job, shared := smp.Device.Slurm, []string(nil)
	if !job.Known() {
		job, shared = a.fromMapping(smp.Device)
		if shared == nil {
			// The processes name the step the mapping file does not.
			switch procs := a.fromProcesses(smp); {
			case !job.Known():
				job = procs
			case procs.ID == job.ID:
				job.Step = procs.Step
			}
		}
	}
	for i := range smp.Processes {
		if p := &smp.Processes[i]; p.Owner == gpu.OwnerSlurmJob {
			a.complete(&p.Slurm)
		}
	}
	if !job.Known() && shared == nil {
		return
	}
	d := *smp.Device
	if shared != nil {
		// dcgm_exporter naming repeats the GPU's series per job, as
		// dcgm-exporter does.
		d.SharedSlurmJobs = shared
		smp.Device = &d
		return
	}
	a.complete(&job)
	d.Slurm = job
	// On a Slurm node that is a pod (Soperator, SUNK) the pod stays as
	// where the job runs, but the job is the one a straggler is sought
	// in: no k8s.job.name beside slurm.job.id.
	d.Pod.Job = ""
	smp.Device = &d
}

// fromMapping is the one job a mapping file names for d, or the jobs of a
// GPU it names several for.
func (a *slurmAttributor) fromMapping(d *gpu.Device) (gpu.SlurmJob, []string) {
	jobs := a.mapping.Jobs(d)
	switch len(jobs) {
	case 0:
		return gpu.SlurmJob{}, nil
	case 1:
		return gpu.SlurmJob{ID: jobs[0]}, nil
	default:
		a.warnShared(d, jobs)
		return gpu.SlurmJob{}, jobs
	}
}

func (a *slurmAttributor) fromProcesses(smp *gpu.Sample) gpu.SlurmJob {
	var job gpu.SlurmJob
	for _, p := range smp.Processes {
		if p.Owner != gpu.OwnerSlurmJob || p.Slurm.ID == "" {
			continue
		}
		switch {
		case !job.Known():
			job = p.Slurm
		case job.ID != p.Slurm.ID:
			a.warnShared(smp.Device, []string{job.ID, p.Slurm.ID})
			return gpu.SlurmJob{}
		case job.Step != p.Slurm.Step:
			job.Step = "" // one job, several steps on the GPU
		}
	}
	return gpu.SlurmJob{ID: job.ID, Step: job.Step}
}

func (a *slurmAttributor) warnShared(d *gpu.Device, jobs []string) {
	if a.sharedWarned {
		return
	}
	a.sharedWarned = true
	a.logger.Info("A GPU runs several Slurm jobs: its own resource names none, its per-process resources (per_process) each job",
		zap.String("hw.id", d.UUID), zap.Strings("slurm.job.id", jobs))
}

// complete adds the cluster and what Slurm says of the job, where it has
// answered.
func (a *slurmAttributor) complete(j *gpu.SlurmJob) {
	if j.Cluster == "" {
		j.Cluster = a.cfg.ClusterName
	}
	if a.details == nil || j.ID == "" || j.User != "" {
		return
	}
	if d, ok := a.details.Lookup(j.ID); ok {
		j.Name, j.User, j.Account, j.Partition = d.Name, d.User, d.Account, d.Partition
	}
}

// newJobSource asks scontrol show job (internal/slurm) for a job's
// details. A job Slurm no longer knows (purged after MinJobAge) and an
// unreachable controller are both errors the cache retries with back-off.
var newJobSource = func(cfg SlurmDetailsConfig, _ *zap.Logger) slurmjobs.Source {
	c := &slurm.Client{Scontrol: cfg.Scontrol, Timeout: cfg.Timeout}
	if cfg.SlurmConf != "" {
		c.Env = []string{"SLURM_CONF=" + cfg.SlurmConf}
	}
	return slurmjobs.SourceFunc(func(ctx context.Context, id string) (slurmjobs.Details, error) {
		j, err := c.Job(ctx, id)
		if err != nil {
			return slurmjobs.Details{}, err
		}
		return slurmjobs.Details{Name: j.Name, User: j.User, Account: j.Account, Partition: j.Partition}, nil
	})
}
