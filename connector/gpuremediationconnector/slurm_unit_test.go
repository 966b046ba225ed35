package gpuremediationconnector

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
)

// fakeScontrol answers scontrol by its argument line; unit tests of the
// actuator's logic (the real Slurm tests are slurm_test.go).
type fakeScontrol struct {
	calls   []string
	answers map[string]string // line → stdout
	fail    map[string]string // line → stderr of a failure
}

func (f *fakeScontrol) run(_ context.Context, _ []string, _ string, args ...string) ([]byte, []byte, error) {
	line := strings.Join(args, " ")
	f.calls = append(f.calls, line)
	if msg, ok := f.fail[line]; ok {
		return nil, []byte(msg), errors.New("exit status 1")
	}
	if out, ok := f.answers[line]; ok {
		return []byte(out), nil, nil
	}
	if strings.HasPrefix(line, "update ") || strings.HasPrefix(line, "reboot ") || strings.HasPrefix(line, "requeue ") {
		return nil, nil, nil
	}
	return nil, []byte("unexpected: " + line), errors.New("exit status 2")
}

func fakeNodes(f *fakeScontrol, idx map[string]int) *slurmNodes {
	s := newSlurmNodes(SlurmConfig{Enabled: true, Timeout: time.Second, RequeueJobsOnFaultedGPU: true}, func(u string) (int, bool) {
		i, ok := idx[u]
		return i, ok
	})
	s.c = &slurm.Client{Run: f.run, Location: time.UTC}
	return s
}

func nodeLine(name, state, reason string) string {
	l := "NodeName=" + name + " CPUTot=16 Gres=gpu:8 State=" + state + " BootTime=2026-12-02T04:56:22 SlurmdStartTime=2026-12-02T05:00:00 Partitions=debug"
	if reason != "" {
		l += " Reason=" + reason + " [root@2026-12-02T05:06:24]"
	}
	return l + "\n"
}

// A host.name with a domain finds the Slurm node by its short name; the
// drain reason names incident, fault and GPU, safely for scontrol.
func TestSlurmNodeNamesAndReason(t *testing.T) {
	f := &fakeScontrol{
		answers: map[string]string{"show node -d -o gpu01": nodeLine("gpu01", "IDLE", "")},
		fail:    map[string]string{"show node -d -o gpu01.cluster.example": "Node gpu01.cluster.example not found"},
	}
	s := fakeNodes(f, nil)
	_, cordon, err := s.Quarantine(context.Background(), "gpu01.cluster.example", "GPU-1", "xid_79", "inc=1", false, true)
	require.NoError(t, err)
	require.True(t, cordon)
	require.Equal(t, []string{
		"show node -d -o gpu01.cluster.example",
		"show node -d -o gpu01",
		"update NodeName=gpu01 State=DRAIN Reason=otelcol-gpu incident inc_1: xid_79 on GPU-1",
	}, f.calls)
	n, err := s.Node(context.Background(), "gpu01.cluster.example")
	require.NoError(t, err)
	require.NotNil(t, n.Owner)
	require.Equal(t, []string{"GPU-1/xid_79"}, n.Owner.Faults)
	require.Empty(t, n.BootID, "no reboot asked: no boot ID")
}

// Slurm unreachable is an error, never an answer: not "no such node",
// not success.
func TestSlurmUnreachableIsAnError(t *testing.T) {
	f := &fakeScontrol{fail: map[string]string{"show node -d -o gpu01": "slurm_load_node error: Unable to contact slurm controller (connect failure)"}}
	s := fakeNodes(f, nil)
	_, err := s.Node(context.Background(), "gpu01")
	require.ErrorIs(t, err, slurm.ErrUnreachable)
	_, _, err = s.Quarantine(context.Background(), "gpu01", "GPU-1", "xid_79", "i", false, true)
	require.ErrorIs(t, err, slurm.ErrUnreachable)
	_, err = s.Drain(context.Background(), "gpu01", nil, kube.DrainPolicy{})
	require.ErrorIs(t, err, slurm.ErrUnreachable)
	_, err = s.Restore(context.Background(), "gpu01", "")
	require.ErrorIs(t, err, slurm.ErrUnreachable)
	for _, c := range f.calls {
		require.True(t, strings.HasPrefix(c, "show node"), "nothing written: %s", c)
	}
}

// The drain requeues only the jobs holding the faulted GPU, and counts
// every job still on the node.
func TestSlurmDrainRequeuesOnlyTheFaultedGPUsJobs(t *testing.T) {
	jobs := "JobId=7 JobName=a JobState=RUNNING Requeue=1 NodeList=gpu01 Nodes=gpu01 CPU_IDs=0 Mem=0 GRES=gpu:2(IDX:0-1)\n" +
		"JobId=8 JobName=b JobState=RUNNING Requeue=1 NodeList=gpu01 Nodes=gpu01 CPU_IDs=1 Mem=0 GRES=gpu:2(IDX:2-3)\n" +
		"JobId=9 JobName=c JobState=RUNNING Requeue=0 NodeList=gpu01 Nodes=gpu01 CPU_IDs=2 Mem=0 GRES=gpu:1(IDX:1)\n" +
		"JobId=10 JobName=d JobState=RUNNING Requeue=1 NodeList=gpu02 Nodes=gpu02 CPU_IDs=2 Mem=0 GRES=gpu:1(IDX:1)\n"
	f := &fakeScontrol{answers: map[string]string{"show node -d -o gpu01": nodeLine("gpu01", "MIXED", ""), "show job -d -o": jobs}}
	s := fakeNodes(f, map[string]int{"GPU-1": 1})
	_, _, err := s.Quarantine(context.Background(), "gpu01", "GPU-1", "xid_79", "i", false, true)
	require.NoError(t, err)
	res, err := s.Drain(context.Background(), "gpu01", nil, kube.DrainPolicy{})
	require.NoError(t, err)
	require.Equal(t, []string{"job 7 (requeued)"}, res.Evicted)
	require.Equal(t, 3, res.Remaining, "7 ending, 8 running on, 9 may not be requeued")
	require.Empty(t, res.Refused, "a job that may not be requeued is waited for, not a refused drain")
	require.Contains(t, f.calls, "requeue 7")
	require.NotContains(t, f.calls, "requeue 8")
	require.NotContains(t, f.calls, "requeue 9")
	require.NotContains(t, f.calls, "requeue 10")
}

// A node is given back only while the reason is still ours.
func TestSlurmRestoreOnlyOurDrain(t *testing.T) {
	f := &fakeScontrol{answers: map[string]string{
		"show node -d -o a": nodeLine("a", "IDLE+DRAIN", "otelcol-gpu incident 1: xid_79 on GPU-1"),
		"show node -d -o b": nodeLine("b", "IDLE+DRAIN", "bad DIMM, ticket 4711"),
		"show node -d -o c": nodeLine("c", "IDLE", ""),
	}}
	s := fakeNodes(f, nil)
	for node, want := range map[string]bool{"a": true, "b": false, "c": false} {
		done, err := s.Restore(context.Background(), node, "")
		require.NoError(t, err)
		require.Equal(t, want, done, node)
	}
	require.Contains(t, f.calls, "update NodeName=a State=RESUME")
	require.NotContains(t, f.calls, "update NodeName=b State=RESUME")
	require.NotContains(t, f.calls, "update NodeName=c State=RESUME")
}

// On Slurm a plan has no Event, condition or taint step, and a reset is a
// drain and a reboot.
func TestSlurmSteps(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Auth.Type = "none"
	cfg.LeaderElection.Enabled = false
	cfg.DryRun = false
	cfg.Slurm.Enabled = true
	require.NoError(t, cfg.Validate())
	r := withSteps(t, cfg)
	require.Equal(t, []string{stepCordon, stepDrain, stepRequest, stepAwait, stepVerify, stepUncordon}, r.steps(policy.Drain))
	require.Equal(t, []string{stepCordon, stepDrain, stepHold}, r.steps(policy.Replace))
	require.Empty(t, r.steps(policy.RestartApp), "an application's error touches no Slurm node")
	cfg.Slurm.Enabled = false
	cfg.DryRun = true
	require.Equal(t, []string{stepEvent, stepCondition, stepTaint, stepCordon, stepDrain, stepRequest, stepAwait, stepVerify, stepUncordon},
		withSteps(t, cfg).steps(policy.Drain), "Kubernetes keeps its steps")
}

func TestSlurmSettings(t *testing.T) {
	cfg, err := load(t, "slurm")
	require.NoError(t, err)
	require.Equal(t, SlurmConfig{Enabled: true, Scontrol: "/opt/slurm/bin/scontrol", Timeout: 5 * time.Second, RequeueJobsOnFaultedGPU: true}, cfg.Slurm)
	cfg, err = load(t, "")
	require.NoError(t, err)
	require.Equal(t, SlurmConfig{Timeout: 10 * time.Second}, cfg.Slurm, "off by default; no requeue")
}

// examples/slurm/remediation.yaml's connector settings are valid, acting
// on Slurm, in dry run.
func TestSlurmExample(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "slurm", "remediation.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("connectors::gpu_remediation")
	require.NoError(t, err)
	cfg := createDefaultConfig()
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.Slurm.Enabled)
	require.True(t, cfg.DryRun, "the example starts in dry run")
	require.Equal(t, 4, cfg.Breaker.MaxNodes)
}
