package dcgmreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/hpcjobmap"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmtest"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// TestSlurmRealClusterSharedGPU: two jobs share one GPU through Slurm's
// gres/shard (internal/slurmtest with four shards a GPU), each asking
// --gres=shard:2. Slurm puts both on GPU 0; examples/slurm's prolog,
// unchanged, writes both jobs in GPU 0's mapping file (a shard job's
// prolog gets SLURM_JOB_GPUS as a gpu job's does), and the receiver
// gives that GPU no single owner: no slurm.job.id on its resource, one
// log line naming both jobs, and with naming dcgm_exporter its series once
// per job (hpc_job), as dcgm-exporter's HPC mode repeats them. Once one
// job is cancelled, its epilog leaves the GPU the other's alone, with the
// details scontrol gives.
//
// Each job's part on the shared GPU, its per-process resource, comes from
// its processes' cgroups, which this harness does not use
// (proctrack/linuxproc): TestSlurmFromCgroups covers that.
func TestSlurmRealClusterSharedGPU(t *testing.T) {
	mapDir := filepath.Join(t.TempDir(), "map")
	scripts := t.TempDir()
	wrap := func(name string) string {
		abs, err := filepath.Abs(filepath.Join("..", "..", "examples", "slurm", name))
		require.NoError(t, err)
		w := filepath.Join(scripts, name)
		body := fmt.Sprintf("#!/bin/sh\nSLURM_GPU_JOB_MAP_DIR=%s exec /bin/sh %s\n", mapDir, abs)
		require.NoError(t, os.WriteFile(w, []byte(body), 0o755))
		return w
	}
	c := slurmtest.Start(t, slurmtest.Options{Prolog: wrap("prolog.sh"), Epilog: wrap("epilog.sh"), Shards: 4})

	a := c.Sbatch("--gres=shard:2", "-J", "notebook a", "--wrap", "sleep 120")
	b := c.Sbatch("--gres=shard:2", "-J", "notebook b", "--wrap", "sleep 120")
	for _, id := range []string{a, b} {
		j := c.WaitJob(id, "RUNNING", 30*time.Second)
		require.Equal(t, map[string][]int{c.Node: {0}}, j.GPUs, "job %s: both jobs' shards on GPU 0", id)
	}
	want := hpcjobmap.Map{"0": {a, b}}
	var files hpcjobmap.Map
	require.Eventually(t, func() bool {
		var err error
		files, err = hpcjobmap.Read(mapDir)
		// The two prologs may run in either order.
		return err == nil && len(files) == 1 && len(files["0"]) == 2 && slices.Contains(files["0"], a) && slices.Contains(files["0"], b)
	}, 30*time.Second, 100*time.Millisecond, "what the prologs wrote: %v, want %v", files, want)

	newScraper := func(naming string) (*gpuScraper, *observer.ObservedLogs) {
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendSimulated
		cfg.Naming = naming
		cfg.Simulated = simulated.Config{Seed: 1, Hosts: 1, GPUsPerHost: 2, HostPrefix: "node", Models: []string{"h100"}}
		cfg.Slurm.Enabled = true
		cfg.Slurm.JobMappingDir = mapDir
		cfg.Slurm.ClusterName = "test"
		cfg.Slurm.Details.Scontrol = c.Client.Scontrol
		cfg.Slurm.Details.SlurmConf = strings.TrimPrefix(c.Env[0], "SLURM_CONF=")
		require.NoError(t, cfg.Validate())
		core, logs := observer.New(zapcore.InfoLevel)
		set := receivertest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		s := newGPUScraper(cfg, set)
		require.NoError(t, s.start(context.Background(), &statusHost{}))
		t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
		return s, logs
	}

	s, logs := newScraper(NamingOTel)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	got, _ := resources(md)
	require.Contains(t, got, "gpu0")
	require.Empty(t, slurmAttrs(got["gpu0"]), "a GPU two jobs share is neither's")
	require.Empty(t, slurmAttrs(got["gpu1"]), "no job holds GPU 1")
	shared := logs.FilterMessageSnippet("several Slurm jobs").All()
	require.Len(t, shared, 1)
	require.ElementsMatch(t, []any{a, b}, shared[0].ContextMap()["slurm.job.id"], "the log names both jobs")

	// dcgm-exporter's naming: GPU 0's series once per job.
	ds, _ := newScraper(NamingDCGMExporter)
	md, err = ds.scrape(context.Background())
	require.NoError(t, err)
	require.ElementsMatch(t, []string{a, b}, hpcJobs(md, "0"), "GPU 0's DCGM_FI_DEV_GPU_UTIL once per job")
	require.Equal(t, []string{""}, hpcJobs(md, "1"))

	// One job ends: its epilog takes it off GPU 0, which is the other's.
	c.Run("scancel", a)
	c.WaitJob(a, "CANCELLED", 30*time.Second)
	require.Eventually(t, func() bool {
		files, err := hpcjobmap.Read(mapDir)
		return err == nil && fmt.Sprint(files["0"]) == fmt.Sprint([]string{b})
	}, 30*time.Second, 200*time.Millisecond, "the epilog removed job %s", a)
	require.Eventually(t, func() bool {
		md, err := s.scrape(context.Background())
		if err != nil {
			return false
		}
		got, _ = resources(md)
		return attr(got["gpu0"], "slurm.job.id") == b && attr(got["gpu0"], "slurm.job.name") == "notebook b"
	}, 30*time.Second, 200*time.Millisecond, "GPU 0 is job %s's once %s ended: %v", b, a, slurmAttrs(got["gpu0"]))
	require.Equal(t, "root", attr(got["gpu0"], "slurm.job.user"))
}

// hpcJobs is the hpc_job of each DCGM_FI_DEV_GPU_UTIL of GPU gpu.
func hpcJobs(md pmetric.Metrics, gpu string) []string {
	var jobs []string
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Name() != "DCGM_FI_DEV_GPU_UTIL" {
				continue
			}
			attrs := ms.At(j).Gauge().DataPoints().At(0).Attributes()
			if g, _ := attrs.Get("gpu"); g.Str() != gpu {
				continue
			}
			job, _ := attrs.Get("hpc_job")
			jobs = append(jobs, job.Str())
		}
	}
	return jobs
}
