package gpu

// SlurmJob is the Slurm job a device or a process is attributed to, in the
// terms of the slurm.* resource attributes. ID and Step come from the node
// itself (the processes' cgroups, a prolog's mapping file); the others from
// Slurm (scontrol), where it was reachable.
type SlurmJob struct {
	// ID is slurm.job.id: the job ID as Slurm prints it ("4242"); for an
	// array task, its own (raw) job ID.
	ID string
	// Step is slurm.job.step: "0", "1", "batch", "extern", "interactive";
	// empty where the source names the job only (a mapping file), or where
	// a GPU's processes are in several steps.
	Step      string
	Name      string
	User      string
	Account   string
	Partition string
	// Cluster is slurm.cluster.name, Slurm's ClusterName, where known.
	Cluster string
}

// Known reports whether a job is set.
func (j SlurmJob) Known() bool { return j.ID != "" }

// OwnerOf is the owner of a process in a pod or not, in a Slurm job or
// not: a Slurm job owns its processes wherever it runs, a pod those of no
// job, the host the rest.
func OwnerOf(inPod, inSlurmJob bool) Owner {
	switch {
	case inSlurmJob:
		return OwnerSlurmJob
	case inPod:
		return OwnerPod
	default:
		return OwnerHost
	}
}
