// Package jobreport is the per-job report: the facts Princeton's jobstats
// prints for a Slurm job (GPUs per node, utilization and memory per GPU,
// run time against the limit, CPU efficiency), what only this product
// knows (time per bottleneck class, causes on the node's evidence,
// stragglers, GPU-hours used, waiting and idle and their cost, alerts and
// incidents), and advice in plain words drawn from those facts.
//
// One model, three outputs: gpureplay -job prints it as text, the HTML
// report embeds it, and the gpu_analyzer processor logs one line of it
// when a job ends. The facts are built from a stream of per-GPU samples
// (Job.Add), keeping aggregates only, so the analyzer can follow every job
// of a fleet in bounded memory.
package jobreport

import (
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Slurm's resource attributes, as the project names them for a GPU
// attributed to a Slurm job (no k8s.* on such a GPU).
const (
	AttrSlurmJobID       = "slurm.job.id"
	AttrSlurmJobName     = "slurm.job.name"
	AttrSlurmJobUser     = "slurm.job.user"
	AttrSlurmJobAccount  = "slurm.job.account"
	AttrSlurmClusterName = "slurm.cluster.name"
)

// The schedulers a Key can name.
const (
	Kubernetes = "kubernetes"
	Slurm      = "slurm"
)

// Key is a job's identity, the same one the analyzer groups stragglers by:
// k8s.job.name within k8s.namespace.name on Kubernetes, slurm.job.id
// within slurm.cluster.name (when set) on Slurm.
type Key struct {
	// Scheduler is Kubernetes or Slurm.
	Scheduler string `json:"scheduler"`
	// Scope is the namespace (Kubernetes) or the cluster (Slurm; empty
	// when the GPU does not say).
	Scope string `json:"scope,omitempty"`
	// ID is the Kubernetes Job's name or the Slurm job id.
	ID string `json:"id"`
}

// KeyOf reads a GPU's job from its resource attributes. A Slurm job wins
// over Kubernetes: on Slurm on Kubernetes (Soperator, SUNK) the pod is
// where the job runs, the Slurm job its owner. ok is false for a GPU of no
// job (a serving Deployment, an idle GPU).
func KeyOf(attrs pcommon.Map) (Key, bool) {
	if id := str(attrs, AttrSlurmJobID); id != "" {
		return Key{Scheduler: Slurm, Scope: str(attrs, AttrSlurmClusterName), ID: id}, true
	}
	ns, name := str(attrs, metricnames.AttrK8sNamespaceName), str(attrs, metricnames.AttrK8sJobName)
	if name == "" {
		return Key{}, false
	}
	return Key{Scheduler: Kubernetes, Scope: ns, ID: name}, true
}

// KubernetesKey is the key of a Kubernetes Job, for sources that know the
// namespace and the Job's name without resource attributes (a trace).
func KubernetesKey(namespace, name string) (Key, bool) {
	if name == "" {
		return Key{}, false
	}
	return Key{Scheduler: Kubernetes, Scope: namespace, ID: name}, true
}

func str(attrs pcommon.Map, k string) string {
	v, ok := attrs.Get(k)
	if !ok {
		return ""
	}
	return v.AsString()
}

// String names the job as a person types it: namespace/name for
// Kubernetes, "slurm job 4242" (on cluster c: "slurm job c/4242").
func (k Key) String() string {
	switch {
	case k.Scheduler == Slurm && k.Scope != "":
		return "slurm job " + k.Scope + "/" + k.ID
	case k.Scheduler == Slurm:
		return "slurm job " + k.ID
	case k.Scope != "":
		return k.Scope + "/" + k.ID
	}
	return k.ID
}

// Matches says whether q names the job: its ID alone, scope/ID, or
// String(). Case matters, as it does to both schedulers.
func (k Key) Matches(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" {
		return false
	}
	return q == k.ID || q == k.Scope+"/"+k.ID || q == k.String()
}
