// Package slurmtest runs a real one-node Slurm for tests: Debian's
// slurm-wlm (slurmctld and slurmd, 22.05 in Debian 12) with munge, all in
// a test's temporary folder, with eight GPUs (Gres=gpu:8) whose device
// files the harness creates, so that jobs get real SLURM_JOB_GPUS and
// CUDA_VISIBLE_DEVICES.
//
// The daemons run in the foreground as root, on ports chosen free at run
// time, with their own munge key and socket, state and spool folders;
// nothing outside the folder is touched, and t.Cleanup stops them. A
// machine without the daemons (or not root) skips the test, saying what it
// lacks; under CI=true, where .ci/run installs them, it fails instead.
//
// Process tracking is proctrack/linuxproc with task/none by default: it
// works on any machine, and jobs still get their GPUs through GRES.
// Options.Cgroup turns on Slurm's cgroup plugins instead, for tests that
// need Slurm's cgroup layout (v1 is what this project's test machine has;
// v2 is chosen where /sys/fs/cgroup is cgroup2).
package slurmtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
)

// GPUs is the number of GPUs the node has.
const GPUs = 8

// Options shapes the cluster.
type Options struct {
	// Prolog and Epilog are scripts slurmd runs as root at each job's
	// start (at allocation: PrologFlags=Alloc) and end; "" for none.
	Prolog, Epilog string
	// ExtraNodes adds nodes with no slurmd behind them (DOWN, in
	// partition "extra"): Slurm drains and resumes them as any other,
	// which lets a test act on many nodes of one controller.
	ExtraNodes int
	// CPUs the node declares (jobs take one each by default); 16 when 0.
	CPUs int
	// Cgroup tracks and confines jobs with Slurm's cgroup plugins
	// (proctrack/cgroup, task/cgroup with ConstrainDevices) instead of
	// proctrack/linuxproc, so that job processes live in Slurm's cgroup
	// layout (.../uid_<uid>/job_<id>/step_<step>): cgroup v2 where
	// /sys/fs/cgroup is cgroup2 (IgnoreSystemd=yes: no systemd here),
	// else v1 where its freezer and devices controllers are mounted. A
	// machine with neither skips (or fails under CI=true).
	Cgroup bool
	// Shards adds Slurm's gres/shard (Slurm 22.05 and later): each GPU
	// also counts as Shards shards (gres.conf Name=shard Count=Shards
	// File=<its device>), which jobs ask for with --gres=shard:K, so that
	// two jobs share one GPU; 0 for none. gres/gpu alone never shares.
	Shards int
}

// Cluster is a running Slurm.
type Cluster struct {
	// Dir holds everything: slurm.conf, gres.conf, the munge key and
	// socket, state, spool, logs and the devices.
	Dir string
	// Node is the node's name: this host's short name.
	Node string
	// ExtraNodes are the names of Options.ExtraNodes.
	ExtraNodes []string
	// Devices are the GPUs' device files, in gres.conf order (index i is
	// Devices[i], minor number i).
	Devices []string
	// Env points Slurm's commands at this cluster (SLURM_CONF).
	Env []string
	// Client is an internal/slurm client of this cluster.
	Client *slurm.Client
	// StartupTime is how long the cluster took to start, from munged to
	// the node IDLE.
	StartupTime time.Duration

	t      testing.TB
	cgroup bool
	bin    map[string]string
	munged *exec.Cmd
	ctld   *exec.Cmd
	slurmd *exec.Cmd
}

// Start starts a cluster for the test and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Cluster {
	tb.Helper()
	bin := map[string]string{}
	for _, name := range []string{"munged", "slurmctld", "slurmd", "scontrol", "sbatch", "sinfo", "squeue", "unshare"} {
		p, err := exec.LookPath(name)
		if err != nil {
			if _, serr := os.Stat(filepath.Join("/usr/sbin", name)); serr == nil {
				p = filepath.Join("/usr/sbin", name)
			} else {
				sharedtest.Need(tb, "%s (Debian packages slurm-wlm and munge): %v", name, err)
			}
		}
		bin[name] = p
	}
	if os.Geteuid() != 0 {
		sharedtest.Need(tb, "root, to run slurmd and create the GPU device nodes")
	}
	if opts.CPUs == 0 {
		opts.CPUs = 16
	}
	// A short folder: munge's socket path must fit a sockaddr_un, which
	// t.TempDir's path, named after the test, may not.
	dir, err := os.MkdirTemp("", "slurmtest") //nolint:usetesting // see above
	if err != nil {
		tb.Fatal(err)
	}
	c := &Cluster{Dir: dir, t: tb, bin: bin, cgroup: opts.Cgroup}
	tb.Cleanup(func() {
		c.stopAll()
		if tb.Failed() {
			tb.Logf("slurm logs in %s:\n%s", dir, c.Logs())
		}
		_ = os.RemoveAll(dir)
	})
	host, err := os.Hostname()
	if err != nil {
		tb.Fatal(err)
	}
	c.Node, _, _ = strings.Cut(host, ".")
	for i := 1; i <= opts.ExtraNodes; i++ {
		c.ExtraNodes = append(c.ExtraNodes, fmt.Sprintf("extra%02d", i))
	}
	start := time.Now()
	if err := c.write(opts); err != nil {
		tb.Fatal(err)
	}
	c.Env = []string{"SLURM_CONF=" + c.path("slurm.conf")}
	c.Client = &slurm.Client{Scontrol: bin["scontrol"], Env: c.Env, Timeout: 10 * time.Second}
	c.munged = c.daemon("munged", bin["munged"], "-F", "-f", "--socket="+c.path("munge", "munge.sock"),
		"--key-file="+c.path("munge", "munge.key"), "--log-file="+c.path("log", "munged.log"),
		"--pid-file="+c.path("munge", "munged.pid"), "--seed-file="+c.path("munge", "seed"))
	c.waitFor("munged's socket", 10*time.Second, func() bool {
		_, err := os.Stat(c.path("munge", "munge.sock"))
		return err == nil
	})
	c.StartController()
	c.startSlurmd(nil)
	c.WaitNode(c.Node, "IDLE", 30*time.Second)
	c.StartupTime = time.Since(start)
	return c
}

func (c *Cluster) path(parts ...string) string {
	return filepath.Join(append([]string{c.Dir}, parts...)...)
}

// write lays out the folder: the munge key, the device nodes, slurm.conf
// and gres.conf.
func (c *Cluster) write(opts Options) error {
	for _, d := range []string{"munge", "state", "spool", "log", "dev"} {
		if err := os.MkdirAll(c.path(d), 0o700); err != nil {
			return err
		}
	}
	key := make([]byte, 1024)
	if _, err := rand.Read(key); err != nil {
		return err
	}
	if err := os.WriteFile(c.path("munge", "munge.key"), key, 0o600); err != nil {
		return err
	}
	// The GPUs: character devices 195:N as the NVIDIA driver makes them
	// (/dev/nvidiaN), here in the test's folder. Slurm's gres/gpu reads
	// their major and minor numbers; nothing opens them.
	for i := 0; i < GPUs; i++ {
		p := c.path("dev", fmt.Sprintf("nvidia%d", i))
		if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(mkdev(195, uint32(i)))); err != nil {
			return fmt.Errorf("mknod %s c 195 %d: %w", p, i, err)
		}
		c.Devices = append(c.Devices, p)
	}
	ports, err := freePorts(3)
	if err != nil {
		return err
	}
	// RebootProgram: scontrol reboot runs it on the node; the test
	// performs the "reboot" itself with Reboot.
	reboot := c.path("reboot.sh")
	if err := os.WriteFile(reboot, []byte("#!/bin/sh\necho \"$(date) reboot $*\" >> "+c.path("log", "reboot.log")+"\n"), 0o700); err != nil { //nolint:gosec // G306: a script slurmd runs, the test's own
		return err
	}
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("ClusterName=slurmtest")
	w("SlurmctldHost=%s(127.0.0.1)", c.Node)
	w("SlurmctldPort=%d", ports[0])
	w("SlurmdPort=%d", ports[1])
	w("SlurmUser=root")
	w("SlurmdUser=root")
	w("AuthType=auth/munge")
	w("CredType=cred/munge")
	w("AuthInfo=socket=%s", c.path("munge", "munge.sock"))
	w("StateSaveLocation=%s", c.path("state"))
	w("SlurmdSpoolDir=%s", c.path("spool"))
	w("SlurmctldPidFile=%s", c.path("slurmctld.pid"))
	w("SlurmdPidFile=%s", c.path("slurmd.pid"))
	w("SlurmctldLogFile=%s", c.path("log", "slurmctld.log"))
	w("SlurmdLogFile=%s", c.path("log", "slurmd.log"))
	if opts.Cgroup {
		w("ProctrackType=proctrack/cgroup")
		w("TaskPlugin=task/cgroup")
		cg := "CgroupPlugin=" + c.cgroupPlugin() + "\nIgnoreSystemd=yes\nConstrainDevices=yes\nConstrainCores=no\nConstrainRAMSpace=no\n"
		if err := os.WriteFile(c.path("cgroup.conf"), []byte(cg), 0o600); err != nil {
			return err
		}
	} else {
		w("ProctrackType=proctrack/linuxproc")
		w("TaskPlugin=task/none")
	}
	w("SelectType=select/cons_tres")
	w("SelectTypeParameters=CR_Core")
	gresTypes, nodeGres := "gpu", fmt.Sprintf("gpu:%d", GPUs)
	if opts.Shards > 0 {
		gresTypes, nodeGres = "gpu,shard", fmt.Sprintf("gpu:%d,shard:%d", GPUs, GPUs*opts.Shards)
	}
	w("GresTypes=%s", gresTypes)
	w("MpiDefault=none")
	w("MailProg=/bin/true")
	w("JobCompType=jobcomp/none")
	w("AccountingStorageType=accounting_storage/none")
	w("JobAcctGatherType=jobacct_gather/none")
	// The node declares opts.CPUs whatever the machine has, so that many
	// jobs run at once on a small CI machine.
	w("SlurmdParameters=config_overrides")
	// 1, not 2: with 2, a node that registers with a restarted controller
	// loses a drain set before it registered.
	w("ReturnToService=1")
	// The controller pings slurmd every SlurmdTimeout/3: a short timeout
	// has a restarted controller hear from the node within seconds (it
	// refuses to change the node's state until then).
	w("SlurmdTimeout=15")
	w("RebootProgram=%s", reboot)
	w("ResumeTimeout=300")
	w("MinJobAge=600")
	w("SchedulerParameters=sched_interval=1")
	w("KillWait=2")
	if opts.Prolog != "" {
		w("Prolog=%s", opts.Prolog)
		w("PrologFlags=Alloc")
	}
	if opts.Epilog != "" {
		w("Epilog=%s", opts.Epilog)
	}
	w("NodeName=%s NodeAddr=127.0.0.1 CPUs=%d Gres=%s RealMemory=1 State=UNKNOWN", c.Node, opts.CPUs, nodeGres)
	w("PartitionName=debug Nodes=%s Default=YES MaxTime=INFINITE State=UP", c.Node)
	var shards strings.Builder
	// One line per GPU: its shards are its own, so a shard job's GPU is
	// the device its shards' File names (Slurm's gres_shard, as
	// gres.conf's "Name=shard Count=N File=..." form describes).
	for i := 0; opts.Shards > 0 && i < GPUs; i++ {
		fmt.Fprintf(&shards, "NodeName=%s Name=shard Count=%d File=%s\n", c.Node, opts.Shards, c.Devices[i])
	}
	gres := fmt.Sprintf("NodeName=%s Name=gpu File=%s\n", c.Node, c.path("dev", fmt.Sprintf("nvidia[0-%d]", GPUs-1))) + shards.String()
	if len(c.ExtraNodes) > 0 {
		list := fmt.Sprintf("extra[01-%02d]", len(c.ExtraNodes))
		// Port: one nothing listens on, so that the controller's pings
		// never reach this machine's slurmd and the nodes stay DOWN.
		w("NodeName=%s NodeAddr=127.0.0.1 Port=%d CPUs=%d Gres=gpu:%d RealMemory=1 State=DOWN Reason=no_slurmd", list, ports[2], opts.CPUs, GPUs)
		w("PartitionName=extra Nodes=%s MaxTime=INFINITE State=UP", list)
		gres += fmt.Sprintf("NodeName=%s Name=gpu File=%s\n", list, c.path("dev", fmt.Sprintf("nvidia[0-%d]", GPUs-1)))
	}
	if err := os.WriteFile(c.path("slurm.conf"), []byte(b.String()), 0o600); err != nil {
		return err
	}
	return os.WriteFile(c.path("gres.conf"), []byte(gres), 0o600)
}

// cgroupPlugin picks Slurm's cgroup plugin for this machine's hierarchy.
func (c *Cluster) cgroupPlugin() string {
	c.t.Helper()
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		return "cgroup/v2"
	}
	for _, ctrl := range []string{"freezer", "devices"} {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", ctrl, "cgroup.procs")); err != nil {
			sharedtest.Need(c.t, "a cgroup hierarchy Slurm can use (cgroup2 at /sys/fs/cgroup, or v1's %s controller): %v", ctrl, err)
		}
	}
	return "cgroup/v1"
}

func mkdev(major, minor uint32) uint64 {
	return uint64(major&0xfff)<<8 | uint64(minor&0xff) | uint64(minor&^0xff)<<12 | uint64(major&^0xfff)<<32
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	var ports []int
	for i := 0; i < n; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// StopController stops slurmctld: Slurm unreachable, its jobs left
// running on the node.
func (c *Cluster) StopController() {
	c.t.Helper()
	stop(c.ctld)
	c.ctld = nil
}

// StartController starts slurmctld (again), from its saved state, and
// waits until it answers. After a restart it restarts slurmd too and
// waits for its registration: a restarted controller holds the node in
// an unknown state until it next hears from slurmd (minutes, at its ping
// round), refuses a resume meanwhile, and drops a drain written
// meanwhile once the node answers. slurmd's restart leaves the jobs
// running (their slurmstepd live on) and registers them at once.
func (c *Cluster) StartController() {
	c.t.Helper()
	restart := c.slurmd != nil
	if restart {
		stop(c.slurmd)
	}
	c.ctld = c.daemon("slurmctld", c.bin["slurmctld"], "-D", "-i")
	c.waitFor("slurmctld to answer", 30*time.Second, func() bool {
		_, _, err := c.run(5*time.Second, c.bin["scontrol"], "ping")
		return err == nil
	})
	if restart {
		c.restartSlurmd(nil)
	}
}

// restartSlurmd starts slurmd and waits until the controller has its
// registration: the node's SlurmdStartTime (whole seconds) moves on, or
// after a reboot its BootTime.
func (c *Cluster) restartSlurmd(boottime *int) {
	c.t.Helper()
	before, _ := c.Client.Node(context.Background(), c.Node)
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(1100 * time.Millisecond)))
	c.startSlurmd(boottime)
	c.waitFor("slurmd of "+c.Node+" to register", 30*time.Second, func() bool {
		n, err := c.Client.Node(context.Background(), c.Node)
		return err == nil && (n.SlurmdStartTime.After(before.SlurmdStartTime) || n.BootTime.After(before.BootTime.Add(2*time.Second)))
	})
}

// startSlurmd starts slurmd, in a time namespace whose boot time is
// "now" when boottime is given: the node looks rebooted to Slurm.
func (c *Cluster) startSlurmd(boottime *int) {
	c.t.Helper()
	if boottime == nil {
		c.slurmd = c.daemon("slurmd", c.bin["slurmd"], "-D", "-N", c.Node)
		return
	}
	c.slurmd = c.daemon("slurmd", c.bin["unshare"], "--time", "--boottime", strconv.Itoa(*boottime), c.bin["slurmd"], "-D", "-N", c.Node)
}

// WaitRebootProgram waits until slurmd has run RebootProgram: a reboot
// Slurm issued has reached the node, which may then "reboot".
func (c *Cluster) WaitRebootProgram(timeout time.Duration) {
	c.t.Helper()
	c.waitFor("slurmd to run RebootProgram", timeout, func() bool {
		_, err := os.Stat(c.path("log", "reboot.log"))
		return err == nil
	})
}

// Reboot makes the node look rebooted to Slurm: slurmd restarts in a
// Linux time namespace whose CLOCK_BOOTTIME says the machine booted a
// moment ago, so that it registers with a new BootTime, as after a real
// reboot; the jobs it ran are gone. A pending `scontrol reboot` completes.
func (c *Cluster) Reboot() {
	c.t.Helper()
	stop(c.slurmd)
	c.killSteps()
	// Slurm counts the reboot done only for a boot time (whole seconds)
	// after the second it issued the reboot in: a real reboot takes
	// longer than this anyway.
	time.Sleep(2 * time.Second)
	raw, err := os.ReadFile("/proc/uptime")
	if err != nil {
		c.t.Fatal(err)
	}
	up, err := strconv.ParseFloat(strings.Fields(string(raw))[0], 64)
	if err != nil {
		c.t.Fatal(err)
	}
	// The offset brings the namespace's uptime under a second: the node booted after the reboot was asked for, as Slurm checks.
	offset := -int(up)
	c.restartSlurmd(&offset)
}

// Run runs a Slurm command (sbatch, sinfo, scontrol, ...) against the
// cluster and returns its stdout; a failure fails the test.
func (c *Cluster) Run(name string, args ...string) string {
	c.t.Helper()
	out, stderr, err := c.run(30*time.Second, name, args...)
	if err != nil {
		c.t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

func (c *Cluster) run(timeout time.Duration, name string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...) //nolint:gosec // G204: Slurm's commands, the test's arguments
	cmd.Env = append(os.Environ(), c.Env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// Sbatch submits a batch job (sbatch --parsable with args, its output in
// the cluster's folder) and returns its id.
func (c *Cluster) Sbatch(args ...string) string {
	c.t.Helper()
	all := append([]string{"--parsable", "-o", c.path("log", "job-%j.out")}, args...)
	out := strings.TrimSpace(c.Run(c.bin["sbatch"], all...))
	id, _, _ := strings.Cut(out, ";")
	if _, err := strconv.Atoi(id); err != nil {
		c.t.Fatalf("sbatch printed %q, not a job id", out)
	}
	return id
}

// JobOutput returns what job id has written so far.
func (c *Cluster) JobOutput(id string) string {
	b, _ := os.ReadFile(c.path("log", "job-"+id+".out"))
	return string(b)
}

// WaitJob waits until job id is in state (RUNNING, COMPLETED, PENDING,
// ...) and returns it.
func (c *Cluster) WaitJob(id, state string, timeout time.Duration) slurm.Job {
	c.t.Helper()
	var j slurm.Job
	c.waitFor("job "+id+" "+state, timeout, func() bool {
		var err error
		j, err = c.Client.Job(context.Background(), id)
		return err == nil && j.State == state
	})
	return j
}

// WaitNode waits until node's state is exactly state ("IDLE",
// "IDLE+DRAIN", "DOWN") and returns the node.
func (c *Cluster) WaitNode(node, state string, timeout time.Duration) slurm.Node {
	c.t.Helper()
	var n slurm.Node
	last := "no answer"
	c.waitFor("node "+node+" "+state, timeout, func() bool {
		var err error
		n, err = c.Client.Node(context.Background(), node)
		if err != nil {
			last = err.Error()
			return false
		}
		last = n.State + " (" + n.Reason + ")"
		return n.State == state
	}, &last)
	return n
}

// waitFor polls ok until it holds; past timeout it fails the test, with
// *last (if given) as what was seen last.
func (c *Cluster) waitFor(what string, timeout time.Duration, ok func() bool, last ...*string) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			seen := ""
			if len(last) > 0 {
				seen = "; last seen: " + *last[0]
			}
			c.t.Fatalf("waited %v for %s%s", timeout, what, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Logs returns the daemons' logs, for a failed test's report.
func (c *Cluster) Logs() string {
	var b strings.Builder
	for _, name := range []string{"slurmctld.log", "slurmd.log", "slurmctld.out", "slurmd.out", "munged.out"} {
		raw, err := os.ReadFile(c.path("log", name))
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
		if len(lines) > 400 {
			lines = lines[len(lines)-400:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", name, strings.Join(lines, "\n"))
	}
	return b.String()
}
