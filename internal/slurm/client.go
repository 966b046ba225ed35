// Package slurm talks to a Slurm cluster through its scontrol command:
// the jobs and nodes it reports, and the few writes remediation makes
// (drain, resume, requeue, reboot).
//
// It runs scontrol rather than calling slurmrestd: scontrol is on every
// Slurm node and login node, authenticates with the munge key the node
// already has, and needs no token or extra daemon; slurmrestd is optional
// in a Slurm install and often absent. Output is read from `-o` (one line
// per record), whose format Slurm keeps stable across releases.
package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// ErrUnreachable marks an error from a Slurm controller that did not
// answer (down, restarting, a network fault, a timeout): nothing is known
// of the job or node, and the caller retries. It is never success, and
// never "not found".
var ErrUnreachable = errors.New("slurm controller unreachable")

// ErrNotFound marks a job or node the controller says it does not know.
var ErrNotFound = errors.New("not known to slurm")

// CommandError is a scontrol run that failed: the command line, its
// stderr, and how it ended.
type CommandError struct {
	Args   []string
	Stderr string
	Err    error
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s: %v: %s", strings.Join(e.Args, " "), e.Err, msg)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Runner runs a command and returns its stdout and stderr; exec by
// default, a recording in unit tests.
type Runner func(ctx context.Context, env []string, name string, args ...string) (stdout, stderr []byte, err error)

// Client runs scontrol. Its zero value uses scontrol from PATH with a
// 10 s timeout per call.
type Client struct {
	// Scontrol is the path of scontrol; "" finds it in PATH.
	Scontrol string
	// Timeout bounds each call; a call past it is ErrUnreachable.
	Timeout time.Duration
	// Env is added to scontrol's environment (SLURM_CONF, say).
	Env []string
	// Location is the zone of the timestamps scontrol prints: the
	// controller's local time; nil is this machine's.
	Location *time.Location
	// Run replaces exec (unit tests).
	Run Runner
}

const defaultTimeout = 10 * time.Second

// scontrol runs scontrol with args and returns its stdout.
func (c *Client) scontrol(ctx context.Context, args ...string) (string, error) {
	bin := c.Scontrol
	if bin == "" {
		bin = "scontrol"
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	run := c.Run
	if run == nil {
		run = execRun
	}
	stdout, stderr, err := run(ctx, c.Env, bin, args...)
	if err == nil {
		return string(stdout), nil
	}
	full := append([]string{bin}, args...)
	// scontrol prints some refusals on stdout ("Node x not found"): the
	// message is both.
	msg := strings.TrimSpace(string(stderr) + "\n" + string(stdout))
	switch {
	case ctx.Err() != nil:
		err = fmt.Errorf("%w: no answer within %v", ErrUnreachable, timeout)
	case unreachable(msg):
		err = fmt.Errorf("%w (%w)", ErrUnreachable, err)
	case notFound(msg):
		err = fmt.Errorf("%w (%w)", ErrNotFound, err)
	}
	return "", &CommandError{Args: full, Stderr: msg, Err: err}
}

func execRun(ctx context.Context, env []string, name string, args ...string) ([]byte, []byte, error) {
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // G204: scontrol as configured, with the arguments this package builds
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// unreachable recognises the messages of a controller that did not
// answer, as Slurm's slurm_strerror words them (src/common/slurm_errno.c:
// SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR and friends, and the socket
// errors underneath).
func unreachable(stderr string) bool {
	for _, s := range []string{
		"Unable to contact slurm controller",
		"Socket timed out",
		"Connection refused",
		"Zero Bytes were transmitted",
		"Communication connection failure",
		"Slurm backup controller in standby mode",
		"Network is unreachable",
		"No route to host",
	} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// notFound recognises ESLURM_INVALID_JOB_ID and ESLURM_INVALID_NODE_NAME,
// and show node's "Node x not found".
func notFound(stderr string) bool {
	return strings.Contains(stderr, "Invalid job id specified") || strings.Contains(stderr, "Invalid node name specified") ||
		(strings.HasPrefix(stderr, "Node ") && strings.HasSuffix(stderr, " not found"))
}

func (c *Client) loc() *time.Location {
	if c.Location != nil {
		return c.Location
	}
	return time.Local
}

// lines returns the non-empty lines of scontrol -o output.
func lines(out string) []string {
	var ls []string
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			ls = append(ls, l)
		}
	}
	return ls
}
