package gpuresetextension

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
)

// resetMu: never two resets at once in this process, whatever number of
// gpu_reset extensions it runs.
var resetMu sync.Mutex

// gpuUUID is the form of a full GPU's UUID as NVML and nvidia-smi print it.
var gpuUUID = regexp.MustCompile(`^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// maxOutput caps what of a command's output goes into the answer: node
// annotations share 256 KiB, and the end of the output says why.
const maxOutput = 2048

// reset checks, resets and verifies the GPUs of a request and returns the
// answer. The error is for a request left unanswered, to be retried: the
// collector is stopping.
func (a *actor) reset(ctx context.Context, request, incident string) (nodeagent.Result, error) {
	res := nodeagent.Result{Incident: incident, UUIDs: nodeagent.RequestedUUIDs(request)}
	answer := func(outcome, detail string) (nodeagent.Result, error) {
		res.Outcome, res.Detail, res.Time = outcome, detail, time.Now().UTC()
		return res, nil
	}
	uuids := res.UUIDs
	if len(uuids) == 0 {
		return answer(nodeagent.ResetImpossible, fmt.Sprintf("annotation %s names no GPU: nothing to reset", nodeagent.ResetRequest))
	}
	var problems []string
	for _, u := range uuids {
		switch {
		case strings.HasPrefix(u, "MIG-"):
			problems = append(problems, u+" is a MIG device: it cannot be reset on its own; the request must name its GPU")
		case !gpuUUID.MatchString(u):
			problems = append(problems, fmt.Sprintf("%q is not a GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)", u))
		}
	}
	if len(problems) > 0 {
		return answer(nodeagent.ResetImpossible, strings.Join(problems, "; "))
	}

	resetMu.Lock()
	defer resetMu.Unlock()
	if a.cfg.Backend != "none" {
		var checks []nvmlbackend.GPUCheck
		err := a.retry(ctx, "NVML", func() (err error) {
			checks, err = nvmlbackend.CheckGPUs(a.nvml, uuids)
			return err
		})
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			return answer(nodeagent.ResetImpossible, "the GPUs cannot be checked before a reset: "+err.Error())
		}
		if p := blockers(checks); len(p) > 0 {
			return answer(nodeagent.ResetImpossible, strings.Join(p, "; "))
		}
	}

	for i, u := range uuids {
		if err := a.runCommand(ctx, u); err != nil {
			detail := fmt.Sprintf("reset of %s failed: %v", u, err)
			if i > 0 {
				detail += fmt.Sprintf(" (reset before it: %s)", strings.Join(uuids[:i], ", "))
			}
			return answer(nodeagent.ResetFailed, detail)
		}
	}
	if ctx.Err() != nil {
		// Reset, but stopping before the check: answered after the
		// restart, which resets again (a reset of an idle GPU is harmless).
		return res, ctx.Err()
	}
	if a.cfg.Backend == "none" {
		return answer(nodeagent.ResetOK, strings.Join(uuids, ", ")+" reset; not verified (backend none)")
	}

	// The GPU re-enumerates after the reset: give it the retries' time to
	// be found again before calling it lost.
	err := a.retry(ctx, "NVML after the reset", func() error {
		checks, err := nvmlbackend.CheckGPUs(a.nvml, uuids)
		if err != nil {
			return err
		}
		var lost []string
		for _, c := range checks {
			if c.Problem != "" {
				lost = append(lost, fmt.Sprintf("%s did not come back with its UUID after the reset (%s)", c.UUID, c.Problem))
			}
		}
		if len(lost) > 0 {
			return errors.New(strings.Join(lost, "; "))
		}
		return nil
	})
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if err != nil {
		return answer(nodeagent.ResetFailed, err.Error())
	}
	detail := strings.Join(uuids, ", ") + " reset and visible again"
	if a.cfg.Backend == "dcgm" {
		var dr dcgmbackend.DiagResult
		opts := dcgmbackend.DiagOptions{Level: a.cfg.DCGM.DiagLevel}
		opts.Address, opts.UnixSocket, _ = dcgmbackend.ParseEndpoint(a.cfg.DCGM.Endpoint) // checked by Validate
		err := a.retry(ctx, "DCGM diagnostic", func() (err error) {
			dr, err = a.diag(opts, uuids)
			return err
		})
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			return answer(nodeagent.ResetFailed, "reset, but the DCGM diagnostic could not run, so the GPUs are unverified: "+err.Error())
		}
		if !dr.Pass {
			res.Diag = "fail"
			return answer(nodeagent.ResetFailed, fmt.Sprintf("reset, but the DCGM diagnostic (level %d) failed: %s", a.cfg.DCGM.DiagLevel, strings.Join(dr.Failures, "; ")))
		}
		res.Diag = "pass"
		detail += fmt.Sprintf("; DCGM diagnostic level %d passed", a.cfg.DCGM.DiagLevel)
		if len(dr.Warnings) > 0 {
			detail += " with warnings: " + strings.Join(dr.Warnings, "; ")
		}
	}
	return answer(nodeagent.ResetOK, detail)
}

// blockers says why GPUs cannot be reset now: not on this node, not
// answering, partitioned by MIG, or still running processes.
func blockers(checks []nvmlbackend.GPUCheck) []string {
	var p []string
	for _, c := range checks {
		switch {
		case c.NotFound:
			p = append(p, fmt.Sprintf("%s is not a GPU of this node (%s)", c.UUID, c.Problem))
		case c.Problem != "":
			p = append(p, fmt.Sprintf("%s cannot be checked (%s)", c.UUID, c.Problem))
		case c.MIG && c.GPUInstances > 0:
			p = append(p, fmt.Sprintf("%s is in MIG mode with %d GPU instances: they must be destroyed before a reset, a reconfiguration this actor does not do", c.UUID, c.GPUInstances))
		case len(c.Compute) > 0 || len(c.Graphics) > 0:
			var procs []string
			if len(c.Compute) > 0 {
				procs = append(procs, "compute PIDs "+pids(c.Compute))
			}
			if len(c.Graphics) > 0 {
				procs = append(procs, "graphics PIDs "+pids(c.Graphics))
			}
			p = append(p, fmt.Sprintf("%s is not idle: %s", c.UUID, strings.Join(procs, ", ")))
		}
	}
	return p
}

func pids(ps []uint32) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = strconv.FormatUint(uint64(p), 10)
	}
	return strings.Join(s, " ")
}

// runCommand runs reset::command for one GPU. Its context is not the
// collector's: a shutdown does not kill a reset half way; the timeout
// does.
func (a *actor) runCommand(ctx context.Context, uuid string) error {
	args := make([]string, len(a.cfg.Reset.Command))
	for i, arg := range a.cfg.Reset.Command {
		args[i] = strings.ReplaceAll(arg, placeholder, uuid)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.cfg.Reset.Timeout)
	defer cancel()
	// The program and its arguments are the operator's configuration; the
	// one value from the request, the UUID, matched gpuUUID.
	cmd := exec.CommandContext(cctx, args[0], args[1:]...) //nolint:gosec // G204: see above
	var stdout, stderr tail
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownProcessGroup(cmd)
	// A child that left the group but kept the pipes must not keep Wait
	// from returning.
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start).Round(time.Millisecond)
	out := strings.TrimSpace(stderr.String())
	if out == "" {
		out = strings.TrimSpace(stdout.String())
	}
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%s: killed after reset::timeout %v: %s", strings.Join(args, " "), a.cfg.Reset.Timeout, out)
	case err != nil:
		return fmt.Errorf("%s: %w: %s", strings.Join(args, " "), err, out)
	}
	a.logger.Info("GPU reset command succeeded", zap.String("uuid", uuid), zap.Strings("command", args),
		zap.Duration("took", took), zap.String("output", strings.TrimSpace(stdout.String())))
	return nil
}

// tail keeps the last maxOutput bytes written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > maxOutput {
		t.b = append(t.b[:0], t.b[len(t.b)-maxOutput:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }
