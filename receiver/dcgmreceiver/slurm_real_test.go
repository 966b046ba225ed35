package dcgmreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/hpcjobmap"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmtest"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// TestSlurmRealCluster runs examples/slurm's prolog and epilog under a
// real Slurm (internal/slurmtest: slurmctld and slurmd of Debian's
// slurm-wlm, eight GPUs as GRES) and attributes the simulated backend's
// GPUs to the jobs sbatch started: two jobs with their own GPUs, a job of
// two srun steps, a job on two MIG instances (the MIG map names GRES
// indices 3 and 4 instances 1 and 4 of GPU 3, as a site's gres.conf
// would list them), with their details from scontrol; once a job is
// cancelled, the epilog leaves its GPUs no one's.
//
// Shared GPUs (gres/shard) are TestSlurmRealClusterSharedGPU's. Not here:
// the step from cgroups (the harness tracks processes with
// proctrack/linuxproc, without cgroups): TestSlurmFromCgroups and
// internal/cgroup's Slurm forms cover that.
func TestSlurmRealCluster(t *testing.T) {
	mapDir := filepath.Join(t.TempDir(), "map")
	migMap := filepath.Join(t.TempDir(), "mig.map")
	// 8 GRES indices for 7 GPUs, GPU 3 split in two: index i is GPU i
	// below 3, instances 3.1 and 3.4, then GPUs 4 to 6.
	require.NoError(t, os.WriteFile(migMap, []byte("0 0\n1 1\n2 2\n3 3.1\n4 3.4\n5 4\n6 5\n7 6\n"), 0o644))
	scripts := t.TempDir()
	wrap := func(name string) string {
		abs, err := filepath.Abs(filepath.Join("..", "..", "examples", "slurm", name))
		require.NoError(t, err)
		w := filepath.Join(scripts, name)
		body := fmt.Sprintf("#!/bin/sh\nSLURM_GPU_JOB_MAP_DIR=%s SLURM_GPU_MIG_MAP=%s exec /bin/sh %s\n", mapDir, migMap, abs)
		require.NoError(t, os.WriteFile(w, []byte(body), 0o755))
		return w
	}
	c := slurmtest.Start(t, slurmtest.Options{Prolog: wrap("prolog.sh"), Epilog: wrap("epilog.sh")})

	a := c.Sbatch("--gres=gpu:2", "-J", "train", "--wrap", "sleep 120")
	ja := c.WaitJob(a, "RUNNING", 30*time.Second)
	b := c.Sbatch("--gres=gpu:1", "-J", "two steps", "--wrap", "srun -n1 true; srun -n1 sleep 120")
	jb := c.WaitJob(b, "RUNNING", 30*time.Second)
	m := c.Sbatch("--gres=gpu:2", "-J", "mig", "--wrap", "sleep 120")
	jm := c.WaitJob(m, "RUNNING", 30*time.Second)
	t.Logf("GPUs: %s %v, %s %v, %s %v", a, ja.GPUs[c.Node], b, jb.GPUs[c.Node], m, jm.GPUs[c.Node])
	require.Equal(t, []int{0, 1}, ja.GPUs[c.Node])
	require.Equal(t, []int{2}, jb.GPUs[c.Node])
	require.Equal(t, []int{3, 4}, jm.GPUs[c.Node])
	// slurmctld may call a job RUNNING while its node's prolog still runs.
	want := hpcjobmap.Map{"0": {a}, "1": {a}, "2": {b}, "3.1": {m}, "3.4": {m}}
	var files hpcjobmap.Map
	require.Eventually(t, func() bool {
		var err error
		files, err = hpcjobmap.Read(mapDir)
		return err == nil && fmt.Sprint(files) == fmt.Sprint(want)
	}, 30*time.Second, 100*time.Millisecond, "what the prolog wrote: %v, want %v", files, want)

	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendSimulated
	cfg.Simulated = simulated.Config{Seed: 1, Hosts: 1, GPUsPerHost: 7, HostPrefix: "node", Models: []string{"h100"},
		Workloads: []simulated.Workload{{Name: "m", Kind: simulated.MIG, Instances: 2, GPUs: "0/3", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}}}}
	cfg.Slurm.Enabled = true
	cfg.Slurm.JobMappingDir = mapDir
	cfg.Slurm.ClusterName = "test"
	cfg.Slurm.Details.Scontrol = c.Client.Scontrol
	cfg.Slurm.Details.SlurmConf = strings.TrimPrefix(c.Env[0], "SLURM_CONF=")
	require.NoError(t, cfg.Validate())
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.start(context.Background(), &statusHost{}))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })

	wantAttrs := map[string]map[string]string{
		"gpu0":        {"slurm.job.id": a, "slurm.job.name": "train"},
		"gpu1":        {"slurm.job.id": a, "slurm.job.name": "train"},
		"gpu2":        {"slurm.job.id": b, "slurm.job.name": "two steps"},
		"gpu3/mig1.0": {"slurm.job.id": m, "slurm.job.name": "mig"},
		"gpu3/mig4.0": {"slurm.job.id": m, "slurm.job.name": "mig"},
	}
	// The first scrape asks scontrol and does not wait: the details come
	// within a few.
	var last map[string]pmetric.ResourceMetrics
	require.Eventually(t, func() bool {
		md, err := s.scrape(context.Background())
		if err != nil {
			return false
		}
		last, _ = resources(md)
		for name, w := range wantAttrs {
			if attr(last[name], "slurm.job.id") != w["slurm.job.id"] || attr(last[name], "slurm.job.name") != w["slurm.job.name"] {
				return false
			}
		}
		return true
	}, 30*time.Second, 200*time.Millisecond, "the jobs' GPUs with their names from scontrol")
	for name, rm := range last {
		w, attributed := wantAttrs[name]
		if !attributed {
			require.Empty(t, attr(rm, "slurm.job.id"), "%s: no job holds it", name)
			continue
		}
		require.Equal(t, w["slurm.job.id"], attr(rm, "slurm.job.id"), name)
		require.Equal(t, "root", attr(rm, "slurm.job.user"), name)
		require.Equal(t, "debug", attr(rm, "slurm.job.partition"), name)
		require.Equal(t, "test", attr(rm, "slurm.cluster.name"), name)
	}

	// The epilog of a cancelled job: its GPUs are no one's.
	c.Run("scancel", a)
	c.WaitJob(a, "CANCELLED", 30*time.Second)
	require.Eventually(t, func() bool {
		files, err := hpcjobmap.Read(mapDir)
		return err == nil && len(files["0"]) == 0 && len(files["1"]) == 0
	}, 30*time.Second, 200*time.Millisecond, "the epilog removed job %s", a)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	got, _ := resources(md)
	require.Empty(t, attr(got["gpu0"], "slurm.job.id"))
	require.Equal(t, b, attr(got["gpu2"], "slurm.job.id"))
}
