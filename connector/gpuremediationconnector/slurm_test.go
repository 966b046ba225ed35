package gpuremediationconnector

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmtest"
)

// slurmFixture drives a remediator acting on a real Slurm (internal/
// slurmtest) with a test clock: the tests feed GPU metrics and tick.
type slurmFixture struct {
	t   *testing.T
	c   *slurmtest.Cluster
	r   *remediator
	now time.Time
	xid map[string]int64 // GPU → its XID 79 counter
}

func slurmConfig() *Config {
	cfg := createDefaultConfig()
	cfg.DryRun = false
	cfg.Interval = time.Second
	cfg.Auth = AuthConfig{Type: "none"}
	cfg.LeaderElection.Enabled = false
	cfg.Slurm = SlurmConfig{Enabled: true, Timeout: 10 * time.Second}
	cfg.Recovery.HealthyFor = time.Minute
	cfg.Breaker = BreakerConfig{MaxNodes: 10, Window: time.Hour}
	return cfg
}

func newSlurmFixture(t *testing.T, c *slurmtest.Cluster, cfg *Config) *slurmFixture {
	t.Helper()
	require.NoError(t, cfg.Validate())
	r, err := newRemediator(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	api, err := r.newAPI(context.Background())
	require.NoError(t, err)
	s := api.(*slurmNodes)
	s.c = c.Client // this cluster's SLURM_CONF
	r.api = s
	r.logsOut = &consumertest.LogsSink{}
	return &slurmFixture{t: t, c: c, r: r, now: time.Unix(1_800_000_000, 0), xid: map[string]int64{}}
}

// report feeds one batch: each GPU (node/index) with its XID 79 counter,
// raised by one for those in faults; then a tick. It returns the tick's
// decisions.
func (f *slurmFixture) report(gpus []string, faults ...string) []offline.Decision {
	f.t.Helper()
	md := pmetric.NewMetrics()
	ts := pcommon.NewTimestampFromTime(f.now)
	start := pcommon.NewTimestampFromTime(time.Unix(1_800_000_000, 0)) // one counter, never reset
	for _, g := range gpus {
		node, idx, _ := strings.Cut(g, "/")
		for _, x := range faults {
			if x == g {
				f.xid[g]++
			}
		}
		n := f.xid[g]
		rm := resource(node, slurmGPU(node, idx), func(ms pmetric.MetricSlice) { temp(ms, ts); xid(ms, 79, n, start, ts) })
		rm.Resource().Attributes().PutStr("nvidia.gpu.index", idx)
		rm.CopyTo(md.ResourceMetrics().AppendEmpty())
	}
	require.NoError(f.t, f.r.consume(context.Background(), md))
	f.r.tick(context.Background(), f.now)
	return append([]offline.Decision(nil), f.r.out...)
}

func (f *slurmFixture) step(d time.Duration) { f.now = f.now.Add(d) }

func slurmGPU(node, idx string) string { return "GPU-" + node + "-" + idx }

func (f *slurmFixture) node(name string) slurm.Node {
	f.t.Helper()
	n, err := f.c.Client.Node(context.Background(), name)
	require.NoError(f.t, err)
	return n
}

// XID 79 on a GPU of the Slurm node: the node is drained with the
// incident as its reason (read back with sinfo -R and scontrol), rebooted
// through Slurm once idle, checked, and resumed.
func TestSlurmDrainRebootResume(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	f := newSlurmFixture(t, c, slurmConfig())
	gpus := []string{c.Node + "/0", c.Node + "/1"}
	f.report(gpus)
	f.step(time.Second)
	ds := f.report(gpus, c.Node+"/1")
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(ds))
	inc := ds[0].Incident
	require.NotEmpty(t, inc)

	n := f.node(c.Node)
	require.True(t, n.HasFlag("DRAIN") || n.Base() == "DOWN", n.State)
	want := "otelcol-gpu incident " + inc + ": xid_79 on " + slurmGPU(c.Node, "1")
	require.True(t, strings.HasPrefix(n.Reason, want), "reason %q names the incident", n.Reason)
	require.Contains(t, c.Run("sinfo", "-R", "-h", "-o", "%E"), "otelcol-gpu incident "+inc)

	// No job ran: drained at once, and the reboot asked of Slurm.
	c.WaitRebootProgram(30 * time.Second)
	require.Equal(t, "awaiting_reboot", f.r.plans[0].state())
	f.step(time.Second)
	f.report(gpus)
	require.Equal(t, "awaiting_reboot", f.r.plans[0].state(), "no reboot yet")

	c.Reboot()
	f.step(time.Second)
	ds = f.report(gpus)
	require.Equal(t, []string{"xid_79:drain:rebooted"}, reasons(ds))
	require.Equal(t, "verifying", f.r.plans[0].state())
	require.Equal(t, "DOWN", f.node(c.Node).State, "still out during the health check")

	f.step(61 * time.Second)
	ds = f.report(gpus)
	require.Equal(t, []string{"xid_79:uncordon:healthy"}, reasons(ds))
	n = c.WaitNode(c.Node, "IDLE", 30*time.Second)
	require.Empty(t, n.Reason)
	require.Empty(t, f.r.plans)
}

// Dry run: the decision and each would-be action are recorded; Slurm is
// read, never written.
func TestSlurmDryRun(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	cfg := slurmConfig()
	cfg.DryRun = true
	f := newSlurmFixture(t, c, cfg)
	gpus := []string{c.Node + "/0"}
	f.report(gpus)
	f.step(time.Second)
	ds := f.report(gpus, c.Node+"/0")
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(ds))
	require.True(t, ds[0].DryRun)
	require.Equal(t, int64(1), f.r.counts[[2]string{stepCordon, reasonDryRun}])
	require.Equal(t, int64(1), f.r.counts[[2]string{stepDrain, reasonDryRun}])
	require.Equal(t, int64(1), f.r.counts[[2]string{stepRequest, reasonDryRun}])
	var bodies []string
	for _, ld := range f.r.logsOut.(*consumertest.LogsSink).AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			bodies = append(bodies, ld.ResourceLogs().At(i).ScopeLogs().At(0).LogRecords().At(0).Body().Str())
		}
	}
	require.Contains(t, strings.Join(bodies, "\n"), "would do (dry run) cordon on node "+c.Node)
	time.Sleep(500 * time.Millisecond)
	n := f.node(c.Node)
	require.Equal(t, "IDLE", n.State, "nothing written to Slurm")
	require.Empty(t, n.Reason)
	require.Empty(t, strings.TrimSpace(c.Run("sinfo", "-R", "-h")))
}

// A storm (a fault on every node at once) drains only as many nodes as
// the breaker allows, and then stops.
func TestSlurmBreakerHoldsOnStorm(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{ExtraNodes: 5})
	cfg := slurmConfig()
	cfg.Breaker = BreakerConfig{MaxNodes: 2, Window: time.Hour}
	cfg.Drain.MaxConcurrent = 10
	cfg.Actions.Request = false // the extra nodes have no slurmd to reboot
	f := newSlurmFixture(t, c, cfg)
	nodes := append([]string{c.Node}, c.ExtraNodes...)
	var gpus []string
	for _, n := range nodes {
		gpus = append(gpus, n+"/0")
	}
	f.report(gpus)
	f.step(time.Second)
	ds := f.report(gpus, gpus...)
	var acted, held int
	for _, d := range ds {
		switch d.Reason {
		case reasonPolicy:
			acted++
		case reasonBreakerOpen:
			held++
		}
	}
	require.Equal(t, 2, acted, reasons(ds))
	require.Equal(t, len(nodes)-2, held, reasons(ds))
	drained := 0
	for _, n := range nodes {
		if ours(f.node(n).Reason) {
			drained++
		}
	}
	require.Equal(t, 2, drained, "Slurm shows exactly the breaker's allowance drained by us")
	require.Equal(t, 2, strings.Count(c.Run("sinfo", "-R", "-h", "-o", "%E|%N"), "otelcol-gpu incident"))
	open, _, _ := f.r.breaker.Open()
	require.True(t, open)
}

// requeue_jobs_on_faulted_gpu: the job holding the faulted GPU is
// requeued; the job on other GPUs runs on, and the drain waits for it.
func TestSlurmRequeueJobOnFaultedGPU(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	cfg := slurmConfig()
	cfg.Slurm.RequeueJobsOnFaultedGPU = true
	f := newSlurmFixture(t, c, cfg)
	onFaulty := c.Sbatch("--gres=gpu:2", "--wrap", "sleep 300")
	j1 := c.WaitJob(onFaulty, "RUNNING", 30*time.Second)
	require.Equal(t, []int{0, 1}, j1.GPUs[c.Node])
	other := c.Sbatch("--gres=gpu:2", "--wrap", "sleep 300")
	j2 := c.WaitJob(other, "RUNNING", 30*time.Second)
	require.Equal(t, []int{2, 3}, j2.GPUs[c.Node])

	gpus := []string{c.Node + "/1", c.Node + "/2"}
	f.report(gpus)
	f.step(time.Second)
	f.report(gpus, c.Node+"/1")
	require.Eventually(t, func() bool {
		j, err := c.Client.Job(context.Background(), onFaulty)
		return err == nil && !j.Running()
	}, 30*time.Second, 200*time.Millisecond, "the job on GPU 1 is requeued")
	j, err := c.Client.Job(context.Background(), onFaulty)
	require.NoError(t, err)
	require.Equal(t, "PENDING", j.State, "back in the queue; the node is drained")
	j, err = c.Client.Job(context.Background(), other)
	require.NoError(t, err)
	require.Equal(t, "RUNNING", j.State, "the job on GPU 2 runs on")
	f.step(time.Second)
	f.report(gpus)
	require.Equal(t, "draining", f.r.plans[0].state(), "waiting for the other job")
	require.Equal(t, "MIXED+DRAIN", f.node(c.Node).State)
}

// Slurm unreachable (slurmctld stopped): the step fails and is retried
// with back-off, nothing is assumed; once Slurm is back the drain happens.
func TestSlurmDownIsRetried(t *testing.T) {
	c := slurmtest.Start(t, slurmtest.Options{})
	cfg := slurmConfig()
	cfg.Actions.Request = false
	f := newSlurmFixture(t, c, cfg)
	gpus := []string{c.Node + "/0"}
	f.report(gpus)
	c.StopController()
	f.step(time.Second)
	ds := f.report(gpus, c.Node+"/0")
	require.Empty(t, reasons(ds), "nothing decided while Slurm cannot be read")
	require.Len(t, f.r.plans, 1)
	require.False(t, f.r.plans[0].started)
	require.False(t, f.r.healthy)
	require.Equal(t, 2*time.Second, f.r.plans[0].backoffUntil.Sub(f.now)+time.Second, "backing off one interval")

	f.step(time.Second)
	f.report(gpus)
	require.False(t, f.r.plans[0].started, "still down: retried and failed again")
	c.StartController()
	f.step(5 * time.Second)
	ds = f.report(gpus)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(ds))
	n := f.node(c.Node)
	require.True(t, n.HasFlag("DRAIN"), n.State)
	require.True(t, ours(n.Reason), n.Reason)
}
