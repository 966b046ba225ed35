package simulated

// A workload can be a Slurm job rather than Kubernetes pods: its GPUs are
// then owned by the job (slurm.* attributes), as a Slurm node's GPUs are
// once the receiver has read its processes' cgroups or a prolog's mapping
// files and asked scontrol about the job.

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// SlurmJob makes a workload a Slurm job. A training workload is one job
// (JobID, step 0) across every host it selects, as an sbatch of several
// nodes is; a serving workload one job per GPU, and a time_sliced or mig
// workload one per share or instance (two jobs' processes on one GPU, a
// job per MIG instance), numbered up from JobID in the fleet's order.
type SlurmJob struct {
	// JobID is the (first) job's ID, positive.
	JobID     uint32 `mapstructure:"job_id"`
	User      string `mapstructure:"user"`
	Account   string `mapstructure:"account"`
	Partition string `mapstructure:"partition"`
	// Cluster is Slurm's ClusterName (slurm.cluster.name); empty leaves
	// it unset.
	Cluster string `mapstructure:"cluster"`
}

// check checks a workload's slurm block; i is the workload's index.
func (s *SlurmJob) check(i int, w *Workload) []error {
	var errs []error
	if s.JobID == 0 {
		errs = append(errs, fmt.Errorf("workloads[%d]::slurm::job_id must be positive", i))
	}
	if w.DRA {
		errs = append(errs, fmt.Errorf("workloads[%d]: a slurm job holds no ResourceClaim; dra must be false", i))
	}
	if w.Kind == CPX {
		errs = append(errs, fmt.Errorf("workloads[%d]: a cpx workload cannot be a slurm job (not simulated)", i))
	}
	if s.User == "" || s.Account == "" {
		errs = append(errs, errors.New("workloads["+strconv.Itoa(i)+"]::slurm: user and account must be set: a job always has them"))
	}
	return errs
}

// slurmJobs numbers a fleet's Slurm jobs: a training workload has one,
// the others one per GPU, share or instance, counted up from the
// workload's job_id.
type slurmJobs map[*Workload]uint32

// next returns the workload's next job: its one job for training.
func (js slurmJobs) next(w *Workload) gpu.SlurmJob {
	s := w.Slurm
	id := s.JobID
	if w.Kind != Training {
		id += js[w]
		js[w]++
	}
	return gpu.SlurmJob{
		ID: strconv.FormatUint(uint64(id), 10), Step: "0", Name: w.Name,
		User: s.User, Account: s.Account, Partition: s.Partition, Cluster: s.Cluster,
	}
}

// slurmize makes g's pods Slurm jobs: the device, its shares and its MIG
// instances lose their pods and gain their jobs. A GPU several jobs share
// is no one job's, as the receiver has it.
func (js slurmJobs) slurmize(g *simGPU) {
	w := g.workload
	if w == nil || w.Slurm == nil {
		return
	}
	g.dev.Pod = gpu.Pod{}
	switch {
	case len(g.migs) > 0:
		for _, m := range g.migs {
			m.dev.Pod, m.sh = gpu.Pod{}, m.sh.asJob(js.next(w))
			m.dev.Slurm = m.sh.slurm
		}
	case w.Kind == Training:
		g.dev.Slurm = js.next(w)
		for k := range g.shares {
			g.shares[k] = g.shares[k].asJob(g.dev.Slurm)
		}
	default:
		for k := range g.shares {
			g.shares[k] = g.shares[k].asJob(js.next(w))
		}
		if len(g.shares) == 1 {
			g.dev.Slurm = g.shares[0].slurm
		}
	}
}

// asJob is the share as a Slurm job's process: no pod, the job's cgroup.
func (sh share) asJob(j gpu.SlurmJob) share {
	sh.pod, sh.uid, sh.ctrID, sh.slurm = gpu.Pod{}, "", "", j
	return sh
}
