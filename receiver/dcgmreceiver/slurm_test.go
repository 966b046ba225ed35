package dcgmreceiver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurm"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmjobs"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// slurmScraper is a scraper with Slurm attribution on, job details from
// jobs (an error for any other job), and mapping files in dir if set.
func slurmScraper(t *testing.T, dir string, jobs map[string]slurmjobs.Details) *gpuScraper {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendSimulated
	cfg.PerProcess.Enabled = true
	cfg.Slurm.Enabled = true
	cfg.Slurm.ClusterName = "hpc1"
	cfg.Slurm.JobMappingDir = dir
	require.NoError(t, cfg.Validate())
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	s.jobSource = slurmjobs.SourceFunc(func(_ context.Context, id string) (slurmjobs.Details, error) {
		if d, ok := jobs[id]; ok {
			return d, nil
		}
		return slurmjobs.Details{}, errors.New("slurm_load_jobs error: Invalid job id specified")
	})
	require.NoError(t, s.startWith(context.Background(), componenttest.NewNopHost(), nil))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	return s
}

// asSlurmNode collects the per-process fleet (gpu0 one process, gpu1
// three, gpu2 none) and makes it a Slurm node's: no pods; the processes
// in the jobs and steps given, as their cgroups would say, and those given
// none the host's.
func asSlurmNode(t *testing.T, fleet simulated.Config, at time.Time, steps map[string][]gpu.SlurmJob) []gpu.Sample {
	t.Helper()
	fl, err := simulated.New(fleet)
	require.NoError(t, err)
	fl.EnableProcesses()
	samples, err := fl.Collect(context.Background(), at, time.Second)
	require.NoError(t, err)
	for i := range samples {
		d := *samples[i].Device
		d.Pod = gpu.Pod{}
		samples[i].Device = &d
		js := steps[d.Name()]
		for k := range samples[i].Processes {
			p := &samples[i].Processes[k]
			p.Owner, p.PodUID, p.ContainerID, p.Pod = gpu.OwnerHost, "", "", gpu.Pod{}
			if k < len(js) && js[k].Known() {
				p.Owner, p.Slurm = gpu.OwnerSlurmJob, js[k]
			}
		}
	}
	return samples
}

// resources returns a scrape's device resources by hw.name, and its
// per-process resources.
func resources(md pmetric.Metrics) (map[string]pmetric.ResourceMetrics, []pmetric.ResourceMetrics) {
	procs, byID := splits(md)
	devices := map[string]pmetric.ResourceMetrics{}
	for _, rm := range byID {
		devices[attr(rm, metricnames.AttrHWName)] = rm
	}
	return devices, procs
}

func slurmAttrs(rm pmetric.ResourceMetrics) map[string]string {
	out := map[string]string{}
	for k, v := range rm.Resource().Attributes().All() {
		if len(k) > 6 && (k[:6] == "slurm." || k[:4] == "k8s.") {
			out[k] = v.AsString()
		}
	}
	return out
}

// TestSlurmFromCgroups: an exclusive GPU is its processes' job, with
// their step and, once Slurm answered, the job's owner; a GPU two jobs
// share is neither's, and its per-process resources carry each job step;
// a job Slurm does not know keeps its ID; no k8s.* attribute anywhere.
func TestSlurmFromCgroups(t *testing.T) {
	s := slurmScraper(t, "", map[string]slurmjobs.Details{
		"4242": {Name: "climate", User: "alice", Account: "physics", Partition: "gpu"},
		"5001": {Name: "nb", User: "bob", Account: "chem", Partition: "debug"},
	})
	t0 := time.Unix(1767225600, 0)
	steps := map[string][]gpu.SlurmJob{
		"gpu0": {{ID: "4242", Step: "0"}},
		"gpu1": {{ID: "5000", Step: "batch"}, {ID: "5001", Step: "0"}, {ID: "5001", Step: "1"}},
	}
	scrape := func(k int) pmetric.Metrics {
		return s.Map(asSlurmNode(t, perProcessFleet(), t0.Add(time.Duration(k)*10*time.Second), steps))
	}
	// The first scrape asks Slurm and does not wait: the IDs alone.
	devices, _ := resources(scrape(0))
	require.Equal(t, map[string]string{"slurm.job.id": "4242", "slurm.job.step": "0", "slurm.cluster.name": "hpc1"}, slurmAttrs(devices["gpu0"]))
	var devices2 map[string]pmetric.ResourceMetrics
	var procs []pmetric.ResourceMetrics
	require.Eventually(t, func() bool {
		devices2, procs = resources(scrape(1))
		return attr(devices2["gpu0"], "slurm.job.user") != ""
	}, 10*time.Second, 10*time.Millisecond, "Slurm's answer is used once it came")
	require.Equal(t, map[string]string{
		"slurm.job.id": "4242", "slurm.job.step": "0", "slurm.cluster.name": "hpc1",
		"slurm.job.name": "climate", "slurm.job.user": "alice", "slurm.job.account": "physics", "slurm.job.partition": "gpu",
	}, slurmAttrs(devices2["gpu0"]))
	require.Empty(t, slurmAttrs(devices2["gpu1"]), "a GPU two jobs share is neither's")
	require.Empty(t, slurmAttrs(devices2["gpu2"]), "an idle GPU with no mapping file is no job's")

	got := map[string]map[string]string{}
	for _, p := range procs {
		require.Equal(t, "slurm_job", attr(p, metricnames.AttrOTelGPUProcessOwner))
		got[attr(p, "hw.name")+" "+attr(p, "slurm.job.id")+"."+attr(p, "slurm.job.step")] = slurmAttrs(p)
	}
	require.Len(t, got, 4)
	require.Equal(t, map[string]string{"slurm.job.id": "5000", "slurm.job.step": "batch", "slurm.cluster.name": "hpc1"}, got["gpu1 5000.batch"],
		"a job Slurm does not know keeps its ID")
	require.Equal(t, "bob", got["gpu1 5001.1"]["slurm.job.user"])
	require.Equal(t, "bob", got["gpu1 5001.0"]["slurm.job.user"])
}

// TestSlurmFromMapping: a mapping file names the job a GPU is allocated
// to, busy or idle, without a step; one that names two jobs (a shared
// GPU) gives the GPU none; a MIG instance is found by its GPU instance.
func TestSlurmFromMapping(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"0": "4242\n", "1": "5000\n5001\n", "2": "6000\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
	}
	s := slurmScraper(t, dir, nil)
	s.slurm.refresh()
	samples := asSlurmNode(t, perProcessFleet(), time.Unix(1767225600, 0), map[string][]gpu.SlurmJob{
		"gpu0": {{ID: "4242", Step: "0"}},
		"gpu1": {{}, {}, {}},
	})
	devices, _ := resources(s.Map(samples))
	require.Equal(t, "4242", attr(devices["gpu0"], "slurm.job.id"))
	require.Equal(t, "0", attr(devices["gpu0"], "slurm.job.step"), "the step from the job's processes")
	require.Empty(t, attr(devices["gpu1"], "slurm.job.id"))
	require.Equal(t, "6000", attr(devices["gpu2"], "slurm.job.id"), "an idle GPU allocated to a job is the job's")
	require.Empty(t, attr(devices["gpu2"], "slurm.job.step"), "the mapping names the job, not the step")

	// MIG: the fleet numbers a 2-way split's GPU instances 1 and 4.
	mig := simulated.Config{Seed: 2, Hosts: 1, GPUsPerHost: 1, HostPrefix: "n", Models: []string{"h100"},
		Workloads: []simulated.Workload{{Name: "m", Kind: simulated.MIG, Instances: 2, GPUs: "0/0", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}}}}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0.4"), []byte("7001\n"), 0o600))
	s.slurm.refresh()
	devices, _ = resources(s.Map(asSlurmNode(t, mig, time.Unix(1767225600, 0), map[string][]gpu.SlurmJob{
		"gpu0/mig1.0": {{ID: "7000", Step: "0"}},
		"gpu0/mig4.0": {{ID: "7001", Step: "0"}},
	})))
	require.Equal(t, "7001", attr(devices["gpu0/mig4.0"], "slurm.job.id"))
	require.Equal(t, "7000", attr(devices["gpu0/mig1.0"], "slurm.job.id"), "no file for instance 1: its processes' job")
	require.Equal(t, "0", attr(devices["gpu0/mig1.0"], "slurm.job.step"))
	require.Equal(t, "4242", attr(devices["gpu0"], "slurm.job.id"), "the whole GPU's file is the board's")
}

// TestSlurmInPod: on a Slurm node that is a pod (Soperator, SUNK) the job
// owns the GPU and the pod stays as where it runs; no k8s.job.name.
func TestSlurmInPod(t *testing.T) {
	s := slurmScraper(t, "", nil)
	samples := asSlurmNode(t, perProcessFleet(), time.Unix(1767225600, 0), map[string][]gpu.SlurmJob{"gpu0": {{ID: "4242", Step: "0"}}})
	d := *samples[0].Device
	d.Pod = gpu.Pod{Namespace: "soperator", Name: "worker-0", Container: "slurmd", Job: "worker"}
	samples[0].Device = &d
	samples[0].Processes[0].PodUID = "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c"
	devices, procs := resources(s.Map(samples))
	require.Equal(t, map[string]string{
		"slurm.job.id": "4242", "slurm.job.step": "0", "slurm.cluster.name": "hpc1",
		"k8s.namespace.name": "soperator", "k8s.pod.name": "worker-0", "k8s.container.name": "slurmd",
	}, slurmAttrs(devices["gpu0"]))
	for _, p := range procs {
		if attr(p, "hw.name") == "gpu0" {
			require.Equal(t, "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c", attr(p, "k8s.pod.uid"))
			require.Equal(t, "4242", attr(p, "slurm.job.id"))
		}
	}
}

// TestSlurmSimulated: the simulated fleet's Slurm jobs reach the
// resources with their owners, slurm::enabled or not, and the
// dcgm_exporter naming labels them as dcgm-exporter's HPC mode does.
func TestSlurmSimulated(t *testing.T) {
	fleet := simulated.Config{Seed: 4, Hosts: 2, GPUsPerHost: 2, HostPrefix: "node", Models: []string{"h100"},
		Workloads: []simulated.Workload{{Name: "climate", Kind: simulated.Training, GPUs: "*/*", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}},
			Slurm: &simulated.SlurmJob{JobID: 4242, User: "alice", Account: "physics", Partition: "gpu"}}}}
	fl, err := simulated.New(fleet)
	require.NoError(t, err)
	samples, err := fl.Collect(context.Background(), time.Unix(1767225600, 0), time.Second)
	require.NoError(t, err)
	m := newMapper(metadata.NewDefaultMetricsBuilderConfig(), NamingOTel, receivertest.NewNopSettings(metadata.Type))
	for i := range samples {
		m.Append(&samples[i])
	}
	md := m.Emit()
	require.Equal(t, 4, md.ResourceMetrics().Len())
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		require.Equal(t, map[string]string{
			"slurm.job.id": "4242", "slurm.job.step": "0", "slurm.job.name": "climate",
			"slurm.job.user": "alice", "slurm.job.account": "physics", "slurm.job.partition": "gpu",
		}, slurmAttrs(md.ResourceMetrics().At(i)))
	}

	m = newMapper(metadata.NewDefaultMetricsBuilderConfig(), NamingDCGMExporter, receivertest.NewNopSettings(metadata.Type))
	m.Append(&samples[0])
	md = m.Emit()
	dp := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics().At(0).Gauge().DataPoints().At(0)
	v, ok := dp.Attributes().Get("hpc_job")
	require.True(t, ok)
	require.Equal(t, "4242", v.Str())
}

// TestSlurmConfig: each problem is named by its key.
func TestSlurmConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendNVML
	cfg.Slurm.Enabled = true
	require.ErrorContains(t, cfg.Validate(), "slurm: enabled needs per_process::enabled")
	cfg.Slurm.JobMappingDir = "relative/dir"
	require.NoError(t, cfg.Validate())
	cfg.Slurm.ClusterName = "two words"
	cfg.Slurm.Details.Timeout = 0
	err := cfg.Slurm.Validate()
	require.ErrorContains(t, err, `job_mapping_dir must be an absolute path or empty, got "relative/dir"`)
	require.ErrorContains(t, err, `cluster_name must be one word`)
	require.ErrorContains(t, err, "details::timeout must be positive")
}

// TestSlurmDetailsFromScontrol: the receiver's job details come from
// scontrol show job, here a script that prints what Slurm 22.05 printed
// for job 4 of internal/slurm's recording, and nothing for another job.
func TestSlurmDetailsFromScontrol(t *testing.T) {
	rec, err := os.ReadFile(filepath.Join("..", "..", "internal", "slurm", "testdata", "jobs.txt"))
	require.NoError(t, err)
	var line string
	for l := range strings.Lines(string(rec)) {
		if strings.HasPrefix(l, "JobId=4 ") {
			line = l
		}
	}
	require.NotEmpty(t, line, "job 4 in the recording")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "job4"), []byte(line), 0o600))
	script := filepath.Join(dir, "scontrol")
	// Its last argument is the job ID, as Client.Job calls it.
	conf := filepath.Join(dir, "slurm.conf")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\nfor id; do :; done\n"+
		"[ \"$SLURM_CONF\" = "+conf+" ] || { echo 'slurm_load_jobs error: Unable to contact slurm controller (connect failure)' >&2; exit 1; }\n"+
		"if [ \"$id\" = 4 ]; then cat "+filepath.Join(dir, "job4")+"; exit 0; fi\n"+
		"echo 'slurm_load_jobs error: Invalid job id specified' >&2; exit 1\n"), 0o700))

	src := newJobSource(SlurmDetailsConfig{Scontrol: script, SlurmConf: conf, Timeout: 5 * time.Second}, zap.NewNop())
	d, err := src.Job(context.Background(), "4")
	require.NoError(t, err)
	require.Equal(t, slurmjobs.Details{Name: "train llama 70b", User: "root", Partition: "debug"}, d)
	_, err = src.Job(context.Background(), "99")
	require.ErrorIs(t, err, slurm.ErrNotFound)
	// Without slurm_conf this scontrol reaches no controller.
	_, err = newJobSource(SlurmDetailsConfig{Scontrol: script, Timeout: 5 * time.Second}, zap.NewNop()).Job(context.Background(), "4")
	require.ErrorIs(t, err, slurm.ErrUnreachable)
}

// TestSlurmAgentExample: examples/slurm's agent configuration is valid,
// reads the processes and the mapping directory that examples/slurm's
// prolog and epilog write by default.
func TestSlurmAgentExample(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "slurm", "agent.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("receivers::dcgm")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	cfg.Slurm.ClusterName = "hpc1" // ${env:SLURM_CLUSTER_NAME}, which the collector resolves
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.PerProcess.Enabled)
	require.True(t, cfg.Slurm.Enabled && cfg.Slurm.Details.Enabled)
	for _, script := range []string{"prolog.sh", "epilog.sh"} {
		src, err := os.ReadFile(filepath.Join("..", "..", "examples", "slurm", script))
		require.NoError(t, err)
		require.Contains(t, string(src), "dir=${SLURM_GPU_JOB_MAP_DIR:-"+cfg.Slurm.JobMappingDir+"}", script)
	}
}

// TestSlurmDCGMExporterShared: with dcgm_exporter naming, a GPU whose
// mapping file names two jobs has each series twice, once per hpc_job,
// as dcgm-exporter's HPC mode repeats them; a GPU of one job once.
func TestSlurmDCGMExporterShared(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "0"), []byte("4242\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "1"), []byte("5000\n5001\n"), 0o600))
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendSimulated
	cfg.Naming = NamingDCGMExporter
	cfg.Slurm.Enabled, cfg.Slurm.JobMappingDir, cfg.Slurm.Details.Enabled = true, dir, false
	require.NoError(t, cfg.Validate())
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.startWith(context.Background(), componenttest.NewNopHost(), nil))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	s.slurm.refresh()
	fl, err := simulated.New(perProcessFleet())
	require.NoError(t, err)
	samples, err := fl.Collect(context.Background(), time.Unix(1767225600, 0), time.Second)
	require.NoError(t, err)
	md := s.Map(samples)

	jobs := map[string][]string{} // gpu index: hpc_job of each DCGM_FI_DEV_GPU_UTIL
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		ms := md.ResourceMetrics().At(i).ScopeMetrics().At(0).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Name() != "DCGM_FI_DEV_GPU_UTIL" {
				continue
			}
			attrs := ms.At(j).Gauge().DataPoints().At(0).Attributes()
			g, _ := attrs.Get("gpu")
			job, _ := attrs.Get("hpc_job")
			jobs[g.Str()] = append(jobs[g.Str()], job.Str())
		}
	}
	require.Equal(t, map[string][]string{"0": {"4242"}, "1": {"5000", "5001"}, "2": {""}}, jobs)
}
