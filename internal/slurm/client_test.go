package slurm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fake answers scontrol calls from a table of argument lines and records
// them.
type fake struct {
	calls   []string
	answers map[string]answer
}

type answer struct {
	stdout, stderr string
	fail           bool
	hang           bool
}

func (f *fake) run(ctx context.Context, _ []string, name string, args ...string) ([]byte, []byte, error) {
	line := strings.Join(args, " ")
	f.calls = append(f.calls, name+" "+line)
	a, ok := f.answers[line]
	if !ok {
		return nil, []byte("unexpected call"), errors.New("exit status 2")
	}
	if a.hang {
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}
	if a.fail {
		return []byte(a.stdout), []byte(a.stderr), errors.New("exit status 1")
	}
	return []byte(a.stdout), []byte(a.stderr), nil
}

func testdata(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

func client(f *fake) *Client {
	return &Client{Scontrol: "/usr/bin/scontrol", Run: f.run, Location: time.UTC, Timeout: time.Second}
}

func TestJobsRecorded(t *testing.T) {
	f := &fake{answers: map[string]answer{"show job -d -o": {stdout: testdata(t, "jobs.txt")}}}
	jobs, err := client(f).Jobs(context.Background())
	require.NoError(t, err)
	require.Len(t, jobs, 4)
	j := jobs[3]
	require.Equal(t, "4", j.ID)
	require.Equal(t, "train llama 70b", j.Name)
	require.Equal(t, "root", j.User)
	require.Empty(t, j.Account, "Account= is none")
	require.Equal(t, "debug", j.Partition)
	require.Equal(t, "RUNNING", j.State)
	require.Equal(t, []string{"vm"}, j.Nodes)
	require.Equal(t, 90*time.Minute, j.TimeLimit)
	require.Equal(t, time.Date(2026, 12, 2, 5, 6, 24, 0, time.UTC), j.StartTime)
	require.Equal(t, time.Date(2026, 12, 2, 6, 36, 24, 0, time.UTC), j.EndTime)
	require.Equal(t, "gpu:3", j.GRES)
	require.Equal(t, map[string][]int{"vm": {2, 3, 4}}, j.GPUs)
	require.True(t, j.Requeue)
	require.True(t, j.HoldsGPU("vm", 3))
	require.False(t, j.HoldsGPU("vm", 0))

	require.Equal(t, "CANCELLED", jobs[0].State)
	require.Zero(t, jobs[0].TimeLimit, "UNLIMITED")
	require.Equal(t, 16*time.Second, jobs[0].RunTime)
	require.Empty(t, jobs[0].GPUs, "a finished job holds no GPU (GRES= empty)")
	require.Equal(t, 24*time.Hour, jobs[1].TimeLimit)
	require.True(t, jobs[2].EndTime.IsZero(), "EndTime=Unknown")

	f.answers["show job -d -o"] = answer{stdout: testdata(t, "jobs.txt") + testdata(t, "job_multinode.txt")}
	on, err := client(f).JobsOnNode(context.Background(), "vm")
	require.NoError(t, err)
	require.Len(t, on, 2, "the running jobs on vm only")
	require.Equal(t, []string{"3", "4"}, []string{on[0].ID, on[1].ID})
}

// A job of shards (gres/shard) holds the GPU its shards are on: the IDX
// of "GRES=shard:2(IDX:0)" is GPU 0, which another shard job may hold too.
func TestJobShards(t *testing.T) {
	f := &fake{answers: map[string]answer{"show job -d -o 1": {stdout: testdata(t, "job_shard.txt")}}}
	j, err := client(f).Job(context.Background(), "1")
	require.NoError(t, err)
	require.Equal(t, "shard:2", j.GRES)
	require.Equal(t, map[string][]int{"vm": {0}}, j.GPUs)
	require.Equal(t, "shard a", j.Name)
}

func TestJobMultiNode(t *testing.T) {
	f := &fake{answers: map[string]answer{"show job -d -o 4243": {stdout: testdata(t, "job_multinode.txt")}}}
	j, err := client(f).Job(context.Background(), "4243")
	require.NoError(t, err)
	require.Equal(t, []string{"gpu01", "gpu02", "gpu07"}, j.Nodes)
	require.Equal(t, map[string][]int{"gpu01": {0, 1}, "gpu02": {0, 1}, "gpu07": {4, 6}}, j.GPUs)
	require.Equal(t, "alice", j.User)
	require.Equal(t, "ml-research", j.Account)
	require.Equal(t, "4242", j.ArrayJobID)
	require.Equal(t, "7", j.ArrayTaskID)
	require.Equal(t, 60*time.Hour, j.TimeLimit)
	require.Equal(t, 25*time.Hour+2*time.Minute+3*time.Second, j.RunTime)
	require.Equal(t, "gpu:a100:2", j.GRES)
}

func TestNodeRecorded(t *testing.T) {
	f := &fake{answers: map[string]answer{
		"show node -d -o vm":  {stdout: testdata(t, "node_draining.txt")},
		"show node -d -o vm2": {stdout: testdata(t, "node_down_rebooted.txt")},
	}}
	n, err := client(f).Node(context.Background(), "vm")
	require.NoError(t, err)
	require.Equal(t, "vm", n.Name)
	require.Equal(t, "MIXED+DRAIN", n.State)
	require.Equal(t, "MIXED", n.Base())
	require.True(t, n.HasFlag("DRAIN"))
	require.True(t, n.Drained())
	require.True(t, n.Busy(), "draining: jobs still run")
	require.Equal(t, "otelcol-gpu incident abc: xid_79 on GPU-1234", n.Reason)
	require.Equal(t, "root", n.ReasonUser)
	require.Equal(t, time.Date(2026, 12, 2, 5, 6, 24, 0, time.UTC), n.ReasonTime)
	require.Equal(t, "gpu:8", n.Gres)
	require.Equal(t, "gpu:5", n.GresUsed)
	require.Equal(t, 16, n.CPUs)
	require.Equal(t, []string{"debug"}, n.Partitions)
	require.Equal(t, time.Date(2026, 12, 2, 5, 6, 5, 0, time.UTC), n.BootTime)

	n, err = client(f).Node(context.Background(), "vm2")
	require.NoError(t, err)
	require.Equal(t, "DOWN", n.State)
	require.True(t, n.Drained(), "down takes no jobs")
	require.False(t, n.Busy())
	require.Equal(t, "otelcol-gpu reboot for incident abc : reboot issued : reboot complete", n.Reason)
}

func TestWritesAndTheirArguments(t *testing.T) {
	f := &fake{answers: map[string]answer{
		"update NodeName=vm State=DRAIN Reason=otelcol-gpu incident 1_2: x": {},
		"update NodeName=vm State=RESUME":                                   {},
		"requeue 4242":                                                      {},
		"reboot ASAP nextstate=DOWN reason=why vm":                          {},
		"update NodeName=vm Reason=needs person":                            {},
	}}
	c := client(f)
	ctx := context.Background()
	require.NoError(t, c.Drain(ctx, "vm", "otelcol-gpu incident 1=2: x"))
	require.NoError(t, c.Resume(ctx, "vm"))
	require.NoError(t, c.Requeue(ctx, "4242"))
	require.NoError(t, c.Reboot(ctx, "vm", "why"))
	require.NoError(t, c.SetReason(ctx, "vm", "needs person"))
	require.Len(t, f.calls, 5)
	require.ErrorContains(t, c.Drain(ctx, "vm", " "), "a reason is required")
	require.ErrorContains(t, c.Drain(ctx, "vm[1-2]", "x"), "one node's name")
	require.ErrorContains(t, c.Requeue(ctx, "1 2"), "slurm job id")
	require.ErrorContains(t, c.Resume(ctx, ""), "slurm node name")
	require.Len(t, f.calls, 5, "bad arguments never reach scontrol")
}

func TestErrors(t *testing.T) {
	f := &fake{answers: map[string]answer{
		"show job -d -o 99":                       {stderr: "slurm_load_jobs error: Invalid job id specified\n", fail: true},
		"show node -d -o nope":                    {stdout: "Node nope not found\n", fail: true},
		"show node -d -o down":                    {stderr: "slurm_load_node error: Unable to contact slurm controller (connect failure)\n", fail: true},
		"show node -d -o slow":                    {hang: true},
		"update NodeName=vm State=RESUME":         {stderr: "slurm_update error: Invalid node state specified\n", fail: true},
		"show job -d -o":                          {stdout: "JobId=1 JobName=x NodeList=gpu[1-\n"},
		"update NodeName=vm State=DRAIN Reason=x": {stderr: "slurm_update error: Zero Bytes were transmitted or received\n", fail: true},
	}}
	c := client(f)
	ctx := context.Background()
	_, err := c.Job(ctx, "99")
	require.ErrorIs(t, err, ErrNotFound)
	require.NotErrorIs(t, err, ErrUnreachable)
	require.ErrorContains(t, err, "/usr/bin/scontrol show job -d -o 99")
	require.ErrorContains(t, err, "Invalid job id specified")

	_, err = c.Node(ctx, "nope")
	require.ErrorIs(t, err, ErrNotFound)
	require.ErrorContains(t, err, "Node nope not found")

	_, err = c.Node(ctx, "down")
	require.ErrorIs(t, err, ErrUnreachable, "retried by the caller")
	require.NotErrorIs(t, err, ErrNotFound, "never taken as the node gone")
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	require.Contains(t, ce.Stderr, "Unable to contact slurm controller")

	_, err = c.Node(ctx, "slow")
	require.ErrorIs(t, err, ErrUnreachable)
	require.ErrorContains(t, err, "no answer within 1s")

	err = c.Resume(ctx, "vm")
	require.ErrorContains(t, err, "Invalid node state specified")
	require.NotErrorIs(t, err, ErrUnreachable)

	require.ErrorIs(t, c.Drain(ctx, "vm", "x"), ErrUnreachable)

	_, err = c.Jobs(ctx)
	require.ErrorContains(t, err, "record 1")
	require.ErrorContains(t, err, "NodeList")
}

// The real scontrol binary, when installed: a command that fails names
// itself. (The real cluster is exercised through internal/slurmtest.)
func TestExecMissingBinary(t *testing.T) {
	c := &Client{Scontrol: filepath.Join(t.TempDir(), "no-scontrol")}
	_, err := c.Node(context.Background(), "vm")
	require.ErrorContains(t, err, "no-scontrol show node -d -o vm")
	require.NotErrorIs(t, err, ErrNotFound)
}

// gpu, shard and mps entries of one allocation: the GPUs of gpu and
// shard, each once; mps (counted, no IDX) none.
func TestGPUIndicesShardAndGPU(t *testing.T) {
	idx, err := gpuIndices("gpu:a100:1(IDX:3),shard:2(IDX:3-4),mps:100(0/100)")
	require.NoError(t, err)
	require.Equal(t, []int{3, 4}, idx)
}
