package cgroup

import (
	"fmt"
	"strings"
)

// SlurmStep is the Slurm job step a process runs in, as slurmstepd names
// its cgroups (Slurm's src/plugins/cgroup/v1/xcgroup.c,
// xcgroup_create_hierarchy, and src/plugins/cgroup/v2/cgroup_v2.c,
// cgroup_p_step_create and cgroup_p_task_addto; testdata/README.md quotes
// each form):
//
//	cgroup v1, per controller:  <CgroupPrepend>/uid_<uid>/job_<id>/step_<step>/task_<n>
//	cgroup v2:                  /<slice>/[<node>_]slurmstepd.scope/job_<id>/step_<step>/user/task_<n>
//	                            .../step_<step>/slurm   (slurmstepd's own processes)
//	                            .../step_<step>/user/task_special
//	Slurm 26.05 and later, v2:  .../slurmstepd.scope/<SLUID>/step_<step>/... unless CgroupJobIdPaths=yes
//
// CgroupPrepend is "/slurm" by default, "/slurm_<node>" with several
// slurmd on one host; the slice is CgroupSlice, system.slice by default.
// A Slurm node in a Kubernetes pod (Soperator, SUNK) has the same tree
// under its container's cgroup, or at the root of its own cgroup
// namespace.
type SlurmStep struct {
	// JobID is the numeric job ID ("4242"); for an array task, its own
	// job ID, as Slurm names the cgroup. Empty when the cgroup names the
	// job by its SLUID only.
	JobID string
	// SLUID is the job's Slurm lifetime unique ID ("s" and 13 Crockford
	// base32 digits) where the cgroup names the job by it.
	SLUID string
	// Step is the step as Slurm prints it: "0", "batch", "extern",
	// "interactive", "0+1" for a heterogeneous step's component; empty
	// for a process in the job's cgroup but in no step's.
	Step string
	// Task is the task's rank on the node ("0"), "special" for
	// slurmstepd's task_special, empty where the process is in no task's
	// cgroup (the step's slurm cgroup, or a cgroup v1 step).
	Task string
	// UID is the job owner's numeric user ID, which only cgroup v1 names.
	UID string
	// Node is the node name of a host running several slurmd, where the
	// v2 scope names it (<node>_slurmstepd.scope).
	Node string
}

// InJob reports whether the process runs in a Slurm job.
func (s SlurmStep) InJob() bool { return s.JobID != "" || s.SLUID != "" }

// slurmStepdScope is the v2 scope slurmd creates for its slurmstepds
// (SYSTEM_CGSCOPE in cgroup_v2.c).
const slurmStepdScope = "slurmstepd.scope"

// slurmPath finds a Slurm job step in a cgroup path's components. ok is
// false where the path is in no Slurm job (the host, a pod that is no
// Slurm node, slurmstepd.scope's own "system" cgroup). A path that is
// anchored in Slurm's tree (a slurmstepd scope, or uid_<n>/job_<n>) but
// whose components below the job are in no form Slurm writes is an
// error: attributing it to no job would be a guess.
func slurmPath(parts []string) (SlurmStep, bool, error) {
	for i, p := range parts {
		switch {
		case p == slurmStepdScope || strings.HasSuffix(p, "_"+slurmStepdScope):
			var s SlurmStep
			if node, ok := strings.CutSuffix(p, "_"+slurmStepdScope); ok {
				if node == "" {
					return SlurmStep{}, false, fmt.Errorf("slurmstepd scope %q: no node name before _%s", p, slurmStepdScope)
				}
				s.Node = node
			}
			rest := nonEmpty(parts[i+1:])
			if len(rest) == 0 || rest[0] == "system" {
				// The scope itself, or slurmd's placeholder process
				// (SYSTEM_CGDIR): no job.
				return SlurmStep{}, false, nil
			}
			// readJob fills s in: the error first, then s as it left it.
			err := s.readJob(rest, true)
			return s, true, err
		case strings.HasPrefix(p, "uid_") && isDigits(p[len("uid_"):]):
			rest := nonEmpty(parts[i+1:])
			if len(rest) == 0 || !strings.HasPrefix(rest[0], "job_") {
				continue // a uid_ cgroup that is no Slurm user's
			}
			s := SlurmStep{UID: p[len("uid_"):]}
			err := s.readJob(rest, false)
			return s, true, err
		}
	}
	return SlurmStep{}, false, nil
}

// readJob reads job_<id>|<SLUID>[/step_<step>[/user/task_<n>|/slurm]] (v2)
// or job_<id>[/step_<step>[/task_<n>]] (v1) into s.
func (s *SlurmStep) readJob(rest []string, v2 bool) error {
	job := rest[0]
	switch id, ok := strings.CutPrefix(job, "job_"); {
	case ok && isDigits(id) && id[0] != '0':
		s.JobID = id
	case v2 && validSLUID(job):
		s.SLUID = job
	default:
		return fmt.Errorf("slurm job component %q: not job_<id> or a SLUID", job)
	}
	if len(rest) == 1 {
		return nil
	}
	step, ok := strings.CutPrefix(rest[1], "step_")
	if !ok || !validStep(step) {
		return fmt.Errorf("slurm step component %q: not step_<id>, step_batch, step_extern or step_interactive", rest[1])
	}
	s.Step = step
	below := rest[2:]
	if v2 {
		switch {
		case len(below) == 0:
			return nil
		case below[0] == "slurm" && len(below) == 1:
			return nil // slurmstepd itself
		case below[0] != "user":
			return fmt.Errorf("slurm step %s: component %q: want user or slurm", step, below[0])
		}
		below = below[1:]
	}
	switch {
	case len(below) == 0:
		return nil
	case len(below) > 1:
		return fmt.Errorf("slurm step %s: %q: want one task_<n> below the step", step, strings.Join(below, "/"))
	}
	task, ok := strings.CutPrefix(below[0], "task_")
	if !ok || !(isDigits(task) || (v2 && task == "special")) {
		return fmt.Errorf("slurm step %s: component %q: not task_<n>", step, below[0])
	}
	s.Task = task
	return nil
}

// validStep accepts a step as log_build_step_id_str prints it without its
// job: a number, one of the named steps, a number+component.
func validStep(s string) bool {
	switch s {
	case "batch", "extern", "interactive":
		return true
	}
	n, comp, het := strings.Cut(s, "+")
	return isDigits(n) && (!het || isDigits(comp))
}

// validSLUID accepts print_sluid's form (src/common/sluid.c): "s" and 13
// digits of Crockford's base32.
func validSLUID(s string) bool {
	if len(s) != 14 || s[0] != 's' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !strings.ContainsRune("0123456789ABCDEFGHJKMNPQRSTVWXYZ", rune(s[i])) {
			return false
		}
	}
	return true
}

func isDigits(s string) bool {
	if s == "" || len(s) > 10 { // Slurm's IDs are 32-bit
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func nonEmpty(parts []string) []string {
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
