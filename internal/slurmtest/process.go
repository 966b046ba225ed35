package slurmtest

// This file runs and stops the daemons and what their jobs leave behind.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// exited holds, for each daemon started, a channel closed once its Wait
// returned: stop waits on it rather than reading cmd.ProcessState, which
// Wait writes from another goroutine (a data race under -race).
var exited sync.Map // *exec.Cmd -> chan struct{}

// daemon starts a daemon in the foreground, its output in log/<name>.out.
func (c *Cluster) daemon(name, bin string, args ...string) *exec.Cmd {
	c.t.Helper()
	out, err := os.OpenFile(c.path("log", name+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		c.t.Fatal(err)
	}
	cmd := exec.Command(bin, args...) //nolint:gosec // G204: the test's own daemons
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.path("slurm.conf"))
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		c.t.Fatalf("starting %s: %v", name, err)
	}
	done := make(chan struct{})
	exited.Store(cmd, done)
	go func() { _ = cmd.Wait(); _ = out.Close(); close(done) }()
	return cmd
}

// stop ends a daemon and the processes it started (its process group).
func stop(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	v, ok := exited.Load(cmd)
	if !ok {
		return
	}
	done := v.(chan struct{})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
	exited.Delete(cmd)
}

func (c *Cluster) stopAll() {
	// Jobs first (slurmd's steps are in their own sessions), then the
	// daemons.
	if c.ctld != nil {
		_, _, _ = c.run(5*time.Second, c.bin["scontrol"], "shutdown")
	}
	stop(c.slurmd)
	stop(c.ctld)
	stop(c.munged)
	c.killSteps()
	if c.cgroup {
		c.removeCgroups()
	}
}

// removeCgroups removes the empty cgroup folders Slurm leaves behind
// (slurm_<node>/uid_<uid>, in each controller's hierarchy). rmdir of a
// cgroup that still holds a process fails, so another cluster's jobs on
// this machine keep theirs.
func (c *Cluster) removeCgroups() {
	roots, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "*", "slurm_"+c.Node))
	if v2, _ := filepath.Glob(filepath.Join("/sys/fs/cgroup", "slurm_"+c.Node)); len(v2) > 0 {
		roots = append(roots, v2...)
	}
	// The steps just killed take a moment to leave their cgroups.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		left := 0
		for _, root := range roots {
			var dirs []string
			_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					dirs = append(dirs, p)
				}
				return nil
			})
			for i := len(dirs) - 1; i >= 0; i-- {
				if syscall.Rmdir(dirs[i]) != nil {
					left++
				}
			}
		}
		if left == 0 || time.Now().After(deadline) {
			return
		}
	}
}

// killSteps ends what slurmd's job steps left behind: slurmstepd runs
// in its own session, so the daemons' process groups do not hold it. It
// finds them by this cluster's SLURM_CONF in their environment, which the
// daemons have too: those it spares.
func (c *Cluster) killSteps() {
	spare := map[int]bool{}
	for _, d := range []*exec.Cmd{c.munged, c.ctld, c.slurmd} {
		if d != nil && d.Process != nil {
			spare[d.Process.Pid] = true
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || spare[pid] {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(env, []byte("SLURM_CONF="+c.path("slurm.conf")+"\x00")) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
