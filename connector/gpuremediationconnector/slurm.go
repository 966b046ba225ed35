package gpuremediationconnector

// This file is the Slurm actuator: the remediation's node API answered by
// Slurm instead of Kubernetes (slurm::enabled, auth::type none), so that
// the same incidents, breaker, dry run and recovery state machine act on
// a Slurm cluster. Each step maps to Slurm's own action:
//
//	cordon   scontrol update state=DRAIN reason=<incident>: no new jobs
//	drain    wait for the node's jobs to end, requeueing first those on
//	         the faulted GPU when slurm::requeue_jobs_on_faulted_gpu
//	request  scontrol reboot ASAP nextstate=DOWN (slurm.conf's RebootProgram)
//	await    the node's BootTime moves past the reboot request
//	verify   the GPU reports healthy for recovery::healthy_for, as on Kubernetes
//	uncordon scontrol update state=RESUME, only while the reason is ours
//
// Slurm has no node conditions, Events or taints: the drain reason names
// the incident instead, and a GPU cannot be taken out of service apart
// from its node, so a reset_gpu remediation is a drain (decide).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
)

// SlurmConfig acts on Slurm nodes instead of Kubernetes nodes.
type SlurmConfig struct {
	// Enabled makes Slurm the cluster remediation acts on; auth::type
	// must then be none (no Kubernetes API).
	Enabled bool `mapstructure:"enabled"`
	// Scontrol is the path of scontrol; empty finds it in PATH.
	Scontrol string `mapstructure:"scontrol"`
	// Timeout bounds each scontrol call; past it Slurm counts as
	// unreachable and the step is retried.
	Timeout time.Duration `mapstructure:"timeout"`
	// RequeueJobsOnFaultedGPU requeues the jobs holding the faulted GPU
	// (scontrol requeue) when the node is drained; other jobs run to their
	// end. Off, the drain waits for every job.
	RequeueJobsOnFaultedGPU bool `mapstructure:"requeue_jobs_on_faulted_gpu"`
}

func (c SlurmConfig) validate(cfg *Config) error {
	if !c.Enabled {
		return nil
	}
	var errs []error
	if c.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("slurm::timeout must be positive, got %v", c.Timeout))
	}
	if cfg.Auth.Type != "none" {
		errs = append(errs, fmt.Errorf("slurm::enabled needs auth::type none: remediation acts on Slurm or on Kubernetes, not both (got auth::type %q)", cfg.Auth.Type))
	}
	if cfg.Actions.DeviceTaint {
		errs = append(errs, errors.New("actions::device_taint is Kubernetes' (DRA): turn it off with slurm::enabled"))
	}
	if cfg.Fabric.Enabled {
		errs = append(errs, errors.New("fabric::enabled acts through Kubernetes node conditions: turn it off with slurm::enabled"))
	}
	return errors.Join(errs...)
}

// reasonPrefix starts every drain reason this component writes: it is
// how a drain is known to be ours (and a node given back only then).
const reasonPrefix = "otelcol-gpu"

// slurmNodes answers the remediation's node API from Slurm.
type slurmNodes struct {
	c       *slurm.Client
	requeue bool
	// gpuIndex is the Slurm GRES index of a GPU (its nvidia.gpu.index),
	// false when its metrics did not say.
	gpuIndex func(uuid string) (int, bool)
	now      func() time.Time

	// Per node, as Slurm names it: what this component did, so that a
	// person's resume is seen as one, and a reboot's completion.
	owned    map[string]*kube.Ownership
	reason   map[string]string    // the last reason written
	faulted  map[string][]string  // GPUs (UUIDs) whose faults drained it
	rebootAt map[string]time.Time // when the reboot was asked for
	names    map[string]string    // the metrics' node name → Slurm's
}

func newSlurmNodes(cfg SlurmConfig, gpuIndex func(string) (int, bool)) *slurmNodes {
	return &slurmNodes{
		c:       &slurm.Client{Scontrol: cfg.Scontrol, Timeout: cfg.Timeout},
		requeue: cfg.RequeueJobsOnFaultedGPU, gpuIndex: gpuIndex, now: time.Now,
		owned: map[string]*kube.Ownership{}, reason: map[string]string{}, faulted: map[string][]string{},
		rebootAt: map[string]time.Time{}, names: map[string]string{},
	}
}

// node reads a node from Slurm. The metrics name a node by host.name,
// which may be the FQDN where Slurm's NodeName is the short name: a name
// Slurm does not know is tried again without its domain. Unreachable is
// an error (retried), never "no such node".
func (s *slurmNodes) node(ctx context.Context, name string) (slurm.Node, string, error) {
	if known, ok := s.names[name]; ok {
		n, err := s.c.Node(ctx, known)
		return n, known, err
	}
	n, err := s.c.Node(ctx, name)
	short, _, _ := strings.Cut(name, ".")
	if errors.Is(err, slurm.ErrNotFound) && short != name {
		if n, err = s.c.Node(ctx, short); err == nil {
			s.names[name] = short
			return n, short, nil
		}
	}
	if err == nil {
		s.names[name] = name
	}
	return n, name, err
}

func ours(reason string) bool { return strings.HasPrefix(reason, reasonPrefix) }

func (s *slurmNodes) Node(ctx context.Context, name string) (*kube.Node, error) {
	n, slurmName, err := s.node(ctx, name)
	if err != nil {
		return nil, err
	}
	out := &kube.Node{Name: name, Unschedulable: n.Drained(), Annotations: map[string]string{}}
	if own := s.owned[slurmName]; own != nil {
		out.Owner = own
	} else if n.Drained() && ours(n.Reason) {
		// Drained by this component before a restart: the reason says so.
		out.Owner = &kube.Ownership{Cordoned: true}
	}
	// A boot ID only once the node has booted after the reboot asked for:
	// Slurm's BootTime is computed from uptime and wanders by seconds
	// between registrations, so it is no boot ID by itself.
	if at, ok := s.rebootAt[slurmName]; ok && n.BootTime.After(at) {
		out.BootID = n.BootTime.UTC().Format(time.RFC3339)
	}
	return out, nil
}

// drainReason names the incident, fault and GPU, within Slurm's reason
// as slurm.SafeReason keeps it.
func drainReason(incident, fault, gpu string) string {
	return slurm.SafeReason(fmt.Sprintf("%s incident %s: %s on %s", reasonPrefix, incident, fault, gpu))
}

// Quarantine drains the node (taint and cordon are one thing in Slurm: no
// new job starts there). A node drained or down for another reason is
// drained with this incident's reason, as scontrol does, and given back
// later only if the reason is still this component's.
func (s *slurmNodes) Quarantine(ctx context.Context, name, gpu, fault, incident string, taint, cordon bool) (bool, bool, error) {
	if !taint && !cordon {
		return false, false, nil
	}
	n, slurmName, err := s.node(ctx, name)
	if err != nil {
		return false, false, err
	}
	reason := drainReason(incident, fault, gpu)
	if !(n.HasFlag("DRAIN") && n.Reason == reason) {
		if err := s.c.Drain(ctx, slurmName, reason); err != nil {
			return false, false, err
		}
	}
	own := s.owned[slurmName]
	if own == nil {
		own = &kube.Ownership{Since: s.now().UTC().Format(time.RFC3339)}
		s.owned[slurmName] = own
	}
	own.Cordoned = true
	if f := gpu + "/" + fault; !slices.Contains(own.Faults, f) {
		own.Faults = append(own.Faults, f)
	}
	if !slices.Contains(own.Incidents, incident) {
		own.Incidents = append(own.Incidents, incident)
	}
	if !slices.Contains(s.faulted[slurmName], gpu) {
		s.faulted[slurmName] = append(s.faulted[slurmName], gpu)
	}
	s.reason[slurmName] = reason
	return taint, cordon, nil
}

// Drain requeues the jobs on the faulted GPUs (when configured) and
// reports the jobs still running on the node: the drain is done when none
// is left.
func (s *slurmNodes) Drain(ctx context.Context, name string, _ map[string]bool, _ kube.DrainPolicy) (kube.DrainResult, error) {
	_, slurmName, err := s.node(ctx, name)
	if err != nil {
		return kube.DrainResult{}, err
	}
	jobs, err := s.c.JobsOnNode(ctx, slurmName)
	if err != nil {
		return kube.DrainResult{}, err
	}
	var res kube.DrainResult
	for _, j := range jobs {
		if s.requeue && s.onFaultedGPU(slurmName, j) && j.State == "RUNNING" {
			if !j.Requeue {
				res.Refused = append(res.Refused, fmt.Sprintf("job %s: may not be requeued (--no-requeue or JobRequeue=0)", j.ID))
				continue
			}
			if err := s.c.Requeue(ctx, j.ID); err != nil {
				return kube.DrainResult{}, err
			}
			res.Evicted = append(res.Evicted, "job "+j.ID+" (requeued)")
			res.Terminating = append(res.Terminating, "job "+j.ID)
			continue
		}
		res.Terminating = append(res.Terminating, fmt.Sprintf("job %s (%s, %s)", j.ID, j.Name, j.State))
	}
	if len(res.Refused) > 0 {
		// Not a refusal of the drain: the node stays drained and the job
		// runs to its end. Wait for it.
		res.Terminating = append(res.Terminating, res.Refused...)
		res.Refused = nil
	}
	res.Remaining = len(res.Terminating)
	return res, nil
}

// onFaultedGPU says whether job holds a GPU whose fault drained the node.
func (s *slurmNodes) onFaultedGPU(node string, j slurm.Job) bool {
	for _, gpu := range s.faulted[node] {
		if idx, ok := s.gpuIndex(gpu); ok && j.HoldsGPU(node, idx) {
			return true
		}
	}
	return false
}

// Request asks Slurm for the reboot (the reset request is Kubernetes'
// reset actor's; on Slurm a reset is a drain and a reboot).
func (s *slurmNodes) Request(ctx context.Context, name, key, _ string) error {
	if key != kube.RebootRequestAnnotation {
		return fmt.Errorf("slurm: no %s request on Slurm nodes", key)
	}
	_, slurmName, err := s.node(ctx, name)
	if err != nil {
		return err
	}
	reason := s.reason[slurmName]
	if reason == "" {
		reason = reasonPrefix + " reboot"
	}
	at := s.now()
	if err := s.c.Reboot(ctx, slurmName, reason); err != nil {
		return err
	}
	s.rebootAt[slurmName] = at
	return nil
}

func (s *slurmNodes) RequestReset(context.Context, string, string, string) error {
	return errors.New("slurm: a GPU reset is not requested on Slurm nodes (reset_gpu is a drain there)")
}

// Restore resumes the node if its reason is still this component's: a
// drain a person or Slurm wrote since is theirs to end.
func (s *slurmNodes) Restore(ctx context.Context, name, _ string) (bool, error) {
	n, slurmName, err := s.node(ctx, name)
	if err != nil {
		return false, err
	}
	defer func() {
		delete(s.owned, slurmName)
		delete(s.faulted, slurmName)
		delete(s.rebootAt, slurmName)
		delete(s.reason, slurmName)
	}()
	if !n.Drained() {
		return false, nil // a person resumed it already
	}
	if !ours(n.Reason) {
		return false, nil
	}
	return true, s.c.Resume(ctx, slurmName)
}

// SetCondition: Slurm has no node conditions. A person asked for (needs
// person) is said in the drain reason, where sinfo -R shows it.
func (s *slurmNodes) SetCondition(ctx context.Context, name string, healthy bool, reason, message string) error {
	if healthy || reason != "NeedsPerson" {
		return nil
	}
	_, slurmName, err := s.node(ctx, name)
	if err != nil {
		return err
	}
	incident := ""
	if own := s.owned[slurmName]; own != nil && len(own.Incidents) > 0 {
		incident = " incident " + own.Incidents[len(own.Incidents)-1]
	}
	_ = message // the decision log carries the whole message
	return s.c.SetReason(ctx, slurmName, reasonPrefix+incident+": needs a person (recovery failed); see the remediation log")
}

// The rest of the node API is Kubernetes': Slurm has no Events, network
// conditions, Leases or DRA. Events are in the decision log; leader
// election and the Lease are off without Kubernetes (Validate).
func (*slurmNodes) SetNetworkCondition(context.Context, string, bool, string, string) error {
	return nil
}
func (*slurmNodes) Event(context.Context, string, string, string, string) error { return nil }
func (*slurmNodes) Breaker(context.Context, string, string) (string, error)     { return "", nil }
func (*slurmNodes) SetBreaker(context.Context, string, string, string) error    { return nil }
func (*slurmNodes) LeaseAnnotation(context.Context, string, string, string) (string, error) {
	return "", nil
}
func (*slurmNodes) SetLeaseAnnotation(context.Context, string, string, string, string) error {
	return nil
}
func (*slurmNodes) GPUDevices(context.Context, string, string, string) ([]kube.Device, error) {
	return nil, nil
}
func (*slurmNodes) TaintDevices(context.Context, string, string, string, string, string) ([]string, error) {
	return nil, nil
}
func (*slurmNodes) DeviceTaintRules(context.Context, string) ([]string, error) { return nil, nil }
func (*slurmNodes) UntaintDevices(context.Context, string) ([]string, error)   { return nil, nil }
