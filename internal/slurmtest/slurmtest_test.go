package slurmtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
)

// The harness gives jobs real GPUs, drains and resumes, reboots, and a
// controller that can be stopped: what the tests of remediation and
// attribution build on.
func TestCluster(t *testing.T) {
	prolog := filepath.Join(t.TempDir(), "prolog.sh")
	mark := filepath.Join(t.TempDir(), "prolog.ran")
	require.NoError(t, os.WriteFile(prolog, []byte("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_GPUS\" >> "+mark+"\n"), 0o700))
	c := Start(t, Options{Prolog: prolog, ExtraNodes: 2})
	t.Logf("start-up: %v", c.StartupTime)
	ctx := context.Background()

	id := c.Sbatch("--gres=gpu:2", "--wrap", "env; sleep 60")
	j := c.WaitJob(id, "RUNNING", 30*time.Second)
	require.Equal(t, []string{c.Node}, j.Nodes)
	require.Len(t, j.GPUs[c.Node], 2)
	require.Equal(t, "gpu:2", j.GRES)
	var env string
	require.Eventually(t, func() bool {
		env = c.JobOutput(id)
		return strings.Contains(env, "CUDA_VISIBLE_DEVICES=")
	}, 10*time.Second, 100*time.Millisecond)
	require.Contains(t, env, "SLURM_JOB_GPUS=0,1")
	require.Contains(t, env, "CUDA_VISIBLE_DEVICES=0,1")
	ran, err := os.ReadFile(mark)
	require.NoError(t, err)
	require.Equal(t, id+" 0,1\n", string(ran), "the prolog ran at allocation with the job's GPUs")

	// A second job gets the next GPUs; the node's GresUsed shows both.
	id2 := c.Sbatch("--gres=gpu:3", "-J", "two words", "--wrap", "sleep 60")
	j2 := c.WaitJob(id2, "RUNNING", 30*time.Second)
	require.Equal(t, []int{2, 3, 4}, j2.GPUs[c.Node])
	require.Equal(t, "two words", j2.Name)

	// Drain: jobs run on, the node takes none; sinfo -R shows the reason.
	require.NoError(t, c.Client.Drain(ctx, c.Node, "otelcol-gpu test: xid_79 on GPU 1"))
	n := c.WaitNode(c.Node, "MIXED+DRAIN", 10*time.Second)
	require.Equal(t, "otelcol-gpu test: xid_79 on GPU 1", n.Reason)
	require.Contains(t, c.Run("sinfo", "-R", "-h", "-o", "%E|%N"), "otelcol-gpu test: xid_79 on GPU 1|"+c.Node)
	jobs, err := c.Client.JobsOnNode(ctx, c.Node)
	require.NoError(t, err)
	require.Len(t, jobs, 2)

	// Requeue: the job leaves the node (it cannot start again while the
	// node is drained).
	require.NoError(t, c.Client.Requeue(ctx, id2))
	require.Eventually(t, func() bool {
		j, err := c.Client.Job(ctx, id2)
		return err == nil && !j.Running()
	}, 20*time.Second, 100*time.Millisecond)

	// The extra nodes drain too, with no slurmd behind them.

	require.NoError(t, c.Client.Drain(ctx, c.ExtraNodes[0], "storm"))
	e, err := c.Client.Node(ctx, c.ExtraNodes[0])
	require.NoError(t, err)
	require.True(t, e.HasFlag("DRAIN"), e.State)
	require.Equal(t, "storm", e.Reason)

	// Slurm down: an error the caller retries, never "not found".
	c.StopController()
	_, err = c.Client.Node(ctx, c.Node)
	require.ErrorIs(t, err, slurm.ErrUnreachable)
	c.StartController()
	n, err = c.Client.Node(ctx, c.Node)
	require.NoError(t, err)
	require.Equal(t, "MIXED+DRAIN", n.State, "the drain survives the controller's restart")
	require.NoError(t, c.Client.Drain(ctx, c.Node, "again"))
	c.WaitNode(c.Node, "MIXED+DRAIN", 10*time.Second)
	time.Sleep(2 * time.Second)
	n = c.WaitNode(c.Node, "MIXED+DRAIN", 10*time.Second)
	require.Equal(t, "again", n.Reason, "a drain after the restart holds")
	require.NoError(t, c.Client.Resume(ctx, c.Node))
	c.Run("scancel", id)
}

// A reboot through Slurm (scontrol reboot, then the harness's Reboot):
// the node comes back DOWN with a new boot time and Slurm's note on the
// reason, and resumes.
func TestReboot(t *testing.T) {
	c := Start(t, Options{})
	ctx := context.Background()
	before, err := c.Client.Node(ctx, c.Node)
	require.NoError(t, err)
	require.NoError(t, c.Client.Reboot(ctx, c.Node, "otelcol-gpu reboot test"))
	c.waitFor("the reboot issued", 30*time.Second, func() bool {
		n, err := c.Client.Node(ctx, c.Node)
		return err == nil && n.HasFlag("REBOOT_ISSUED")
	})
	c.WaitRebootProgram(30 * time.Second)
	c.Reboot()
	n := c.WaitNode(c.Node, "DOWN", 20*time.Second)
	require.True(t, n.BootTime.After(before.BootTime), "BootTime %v after %v", n.BootTime, before.BootTime)
	require.Equal(t, "otelcol-gpu reboot test : reboot issued : reboot complete", n.Reason)
	require.NoError(t, c.Client.Resume(ctx, c.Node))
	c.WaitNode(c.Node, "IDLE", 30*time.Second)
}

// With Options.Cgroup, a job's processes are in Slurm's cgroup layout,
// and the devices cgroup confines it to its GPUs.
func TestCgroup(t *testing.T) {
	c := Start(t, Options{Cgroup: true})
	id := c.Sbatch("--gres=gpu:2", "--wrap", "cat /proc/self/cgroup; sleep 30")
	c.WaitJob(id, "RUNNING", 30*time.Second)
	var out string
	require.Eventually(t, func() bool {
		out = c.JobOutput(id)
		return strings.Contains(out, "job_"+id)
	}, 10*time.Second, 100*time.Millisecond)
	require.Contains(t, out, "/uid_0/job_"+id+"/step_batch", "Slurm's cgroup layout:\n%s", out)
}

// Shards: two jobs asking --gres=shard:2 of a GPU's four share GPU 0, and
// each job's prolog and tasks see that GPU, as Slurm's gres/shard sets
// them (SLURM_JOB_GPUS and CUDA_VISIBLE_DEVICES the GPU's index,
// SLURM_SHARDS_ON_NODE the job's shards); scontrol -d names it by IDX.
func TestShards(t *testing.T) {
	prolog := filepath.Join(t.TempDir(), "prolog.sh")
	mark := filepath.Join(t.TempDir(), "prolog.ran")
	require.NoError(t, os.WriteFile(prolog, []byte("#!/bin/sh\necho \"$SLURM_JOB_ID $SLURM_JOB_GPUS\" >> "+mark+"\n"), 0o700))
	c := Start(t, Options{Prolog: prolog, Shards: 4})
	n, err := c.Client.Node(context.Background(), c.Node)
	require.NoError(t, err)
	require.Contains(t, n.Gres, "shard:32", "eight GPUs of four shards")
	a := c.Sbatch("--gres=shard:2", "--wrap", "env; sleep 60")
	b := c.Sbatch("--gres=shard:2", "--wrap", "env; sleep 60")
	for _, id := range []string{a, b} {
		j := c.WaitJob(id, "RUNNING", 30*time.Second)
		require.Equal(t, map[string][]int{c.Node: {0}}, j.GPUs, "job %s: its shards' GPU", id)
		var env string
		require.Eventually(t, func() bool {
			env = c.JobOutput(id)
			return strings.Contains(env, "SLURM_SHARDS_ON_NODE=")
		}, 10*time.Second, 100*time.Millisecond)
		require.Contains(t, env, "CUDA_VISIBLE_DEVICES=0\n")
		require.Contains(t, env, "SLURM_SHARDS_ON_NODE=2\n")
	}
	ran, err := os.ReadFile(mark)
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a + " 0", b + " 0"}, strings.Split(strings.TrimSpace(string(ran)), "\n"), "both prologs saw GPU 0")
}
