package dcgmreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// perProcessFleet is one host of three GPUs: gpu0 serves one pod,
// gpu1 is time-sliced between three notebook pods, gpu2 is idle.
func perProcessFleet() simulated.Config {
	return simulated.Config{
		Seed: 11, Hosts: 1, GPUsPerHost: 3, HostPrefix: "node-", Models: []string{"h100"},
		Workloads: []simulated.Workload{
			{Name: "chat", Kind: simulated.Serving, Namespace: "serving", GPUs: "0/0", Phases: []simulated.Phase{{Kind: simulated.MemoryBound}}},
			{Name: "notebook", Kind: simulated.TimeSliced, Namespace: "research", GPUs: "0/1", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
		},
	}
}

// mapPerProcess maps three collections, 10 s apart, of the fleet with
// per-process readings, and returns the last.
func mapPerProcess(t *testing.T, mbc metadata.MetricsBuilderConfig) pmetric.Metrics {
	t.Helper()
	fl, err := simulated.New(perProcessFleet())
	require.NoError(t, err)
	fl.EnableProcesses()
	m := newMapper(mbc, NamingOTel, receivertest.NewNopSettings(metadata.Type))
	t0 := time.Unix(1767225600, 0)
	var md pmetric.Metrics
	for k := range 3 {
		samples, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*10*time.Second), time.Second)
		require.NoError(t, err)
		for i := range samples {
			m.Append(&samples[i])
		}
		md = m.Emit()
	}
	return md
}

// TestGoldenPerProcess: the receiver's output with per-process series,
// against testdata/golden/otel_per_process.yaml (-update rewrites it).
func TestGoldenPerProcess(t *testing.T) {
	legacynamestest.SetGate(t, false) // the golden file shows the new names only
	got := mapPerProcess(t, metadata.NewDefaultMetricsBuilderConfig())
	path := filepath.Join("testdata", "golden", "otel_per_process.yaml")
	if *update {
		require.NoError(t, golden.WriteMetrics(t, path, got))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	require.NoError(t, pmetrictest.CompareMetrics(want, got,
		pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
		pmetrictest.IgnoreMetricDataPointsOrder()))
}

// splits returns a scrape's per-process resources, and its devices' by
// hw.id.
func splits(md pmetric.Metrics) (procs []pmetric.ResourceMetrics, devices map[string]pmetric.ResourceMetrics) {
	devices = map[string]pmetric.ResourceMetrics{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if _, ok := rm.Resource().Attributes().Get(metricnames.AttrOTelGPUProcessOwner); ok {
			procs = append(procs, rm)
			continue
		}
		id, _ := rm.Resource().Attributes().Get(metricnames.AttrHWID)
		devices[id.Str()] = rm
	}
	return procs, devices
}

func attr(rm pmetric.ResourceMetrics, k string) string {
	if v, ok := rm.Resource().Attributes().Get(k); ok {
		return v.AsString()
	}
	return ""
}

var general = map[string]any{metricnames.AttrHWGPUTask: metricnames.AttrHWGPUTaskGeneral}

// TestPerProcessSplit checks what the per-process numbers mean: the three
// pods of the time-sliced GPU have distinct parts of its utilization and
// memory that add up to the GPU's own; the exclusive GPU's one pod has the
// whole; the idle GPU has no split; what cannot be split stays on the
// device; the device of the shared GPU names no pod.
func TestPerProcessSplit(t *testing.T) {
	md := mapPerProcess(t, metadata.NewDefaultMetricsBuilderConfig())
	procs, devices := splits(md)
	require.Len(t, devices, 3)
	require.Len(t, procs, 4, "one pod on gpu0, three on gpu1, none on the idle gpu2")

	byName := map[string]pmetric.ResourceMetrics{}
	for _, d := range devices {
		byName[attr(d, "hw.name")] = d
	}
	shared, exclusive := byName["gpu1"], byName["gpu0"]
	require.Empty(t, attr(shared, "k8s.pod.name"), "a GPU several pods share is no one pod's")
	require.Equal(t, "chat-0-0", attr(exclusive, "k8s.pod.name"))

	var sumUtil float64
	var sumMem int64
	seen := map[float64]bool{}
	for _, p := range procs {
		require.Equal(t, "pod", attr(p, metricnames.AttrOTelGPUProcessOwner))
		require.Regexp(t, `^[0-9a-f-]{36}$`, attr(p, "k8s.pod.uid"))
		require.Equal(t, "main", attr(p, "k8s.container.name"))
		require.Equal(t, "node-0", attr(p, "host.name"))
		require.Empty(t, attr(p, "hw.model"), "the device's other attributes are its resource's")
		for _, name := range []string{"hw.power", "hw.temperature", "nvidia.gpu.sm.active", "hw.gpu.utilization", "hw.gpu.memory.usage"} {
			_, has := metric(p, name)
			require.Falsef(t, has, "%s is the device's", name)
		}
		_, has := metric(p, "otelgpu.process.memory_copy.utilization")
		require.False(t, has, "otelgpu.process.memory_copy.utilization is off by default")
		require.Equal(t, int64(1), point(t, p, "otelgpu.process.count", nil).IntValue(), "on by default, as the AMD GPU's own count")
		u := num(point(t, p, "otelgpu.process.utilization", general))
		mem := point(t, p, "otelgpu.process.memory.usage", nil).IntValue()
		m, _ := metric(p, "otelgpu.process.utilization")
		require.Equal(t, 1, m.Gauge().DataPoints().Len(), "no encoder or decoder series for pods that do not use them")
		switch attr(p, "hw.id") {
		case attr(exclusive, "hw.id"):
			require.Equal(t, "chat-0-0", attr(p, "k8s.pod.name"))
			require.InDelta(t, num(point(t, exclusive, "hw.gpu.utilization", general)), u, 1e-9, "the exclusive GPU's pod does all its work")
		case attr(shared, "hw.id"):
			require.Equal(t, "research", attr(p, "k8s.namespace.name"))
			require.True(t, strings.HasPrefix(attr(p, "k8s.pod.name"), "notebook-0-1-"))
			require.False(t, seen[u], "distinct values")
			seen[u] = true
			sumUtil += u
			sumMem += mem
		default:
			t.Fatalf("a split of no GPU: %v", p.Resource().Attributes().AsRaw())
		}
	}
	require.Len(t, seen, 3)
	require.InDelta(t, num(point(t, shared, "hw.gpu.utilization", general)), sumUtil, 1e-9, "the pods' parts add up to the GPU's")
	require.InDelta(t, point(t, shared, "hw.gpu.memory.usage", nil).IntValue(), sumMem, 3, "to the byte's rounding")

	// The memory controller's part, when enabled.
	mbc := metadata.NewDefaultMetricsBuilderConfig()
	mbc.Metrics.OtelgpuProcessMemoryCopyUtilization.Enabled = true
	procs, _ = splits(mapPerProcess(t, mbc))
	for _, p := range procs {
		require.Positive(t, num(point(t, p, "otelgpu.process.memory_copy.utilization", nil)))
	}
}

// writeProc puts pid in a fake /proc tree, in the container ctr of pod, or
// on the host if pod is empty.
func writeProc(tb testing.TB, root string, pid uint32, pod, ctr string) {
	tb.Helper()
	dir := filepath.Join(root, strconv.FormatUint(uint64(pid), 10))
	require.NoError(tb, os.MkdirAll(dir, 0o700))
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "stat"), fmt.Appendf(nil, "%d (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %d 0 0\n", pid, 1000+pid), 0o600))
	line := "0::/system.slice/sshd.service"
	if pod != "" {
		line = "0::/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" + strings.ReplaceAll(pod, "-", "_") + ".slice/cri-containerd-" + ctr + ".scope"
	}
	require.NoError(tb, os.WriteFile(filepath.Join(dir, "cgroup"), []byte(line+"\n"), 0o600))
}

// TestPerProcessNVML runs the scraper on the NVML mock with a fake /proc
// tree, a fake kubelet and a container log directory: GPU 0 is
// time-sliced between pods A and B, and runs a host process and one not
// in /proc; GPU 1 is pod C's alone, whose container has no log link.
// Pods A and B are named from the log directory, C by its UID only; the
// host's and the unplaced processes have their own resources; the shared
// GPU's device names no pod, C's GPU names C from the kubelet.
func TestPerProcessNVML(t *testing.T) {
	const uidA, uidB, uidC = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002", "cccccccc-0000-4000-8000-000000000003"
	ctrA, ctrB, ctrC := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)

	proc := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(proc, "stat"), []byte("btime 1767225000\n"), 0o600))
	writeProc(t, proc, 100, uidA, ctrA)
	writeProc(t, proc, 101, uidB, ctrB)
	writeProc(t, proc, 102, "", "")
	writeProc(t, proc, 200, uidC, ctrC)
	logs := t.TempDir()
	for _, l := range []string{"nb-a_research_jupyter-" + ctrA + ".log", "nb-b_research_jupyter-" + ctrB + ".log"} {
		require.NoError(t, os.Symlink("/var/log/pods/x/0.log", filepath.Join(logs, l)))
	}

	srv := nvmlmock.New()
	d0, d1 := srv.Devices[0].(*dgxa100.Device), srv.Devices[1].(*dgxa100.Device)
	d0.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 100, UsedGpuMemory: 6 << 30}, {Pid: 101, UsedGpuMemory: 3 << 30}, {Pid: 102, UsedGpuMemory: 1 << 30}, {Pid: 103, UsedGpuMemory: 1 << 20}}, nvml.SUCCESS
	}
	d0.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
		return []nvml.ProcessUtilizationSample{{Pid: 100, TimeStamp: 1, SmUtil: 50, EncUtil: 10}, {Pid: 101, TimeStamp: 1, SmUtil: 20}}, nvml.SUCCESS
	}
	d1.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 200, UsedGpuMemory: 20 << 30}}, nvml.SUCCESS
	}

	k := &kubelet{resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Name: "nb-a", Namespace: "research", Containers: []*podresourcesv1.ContainerResources{{Name: "jupyter", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(d0.UUID + "::0")}}}},
		{Name: "nb-b", Namespace: "research", Containers: []*podresourcesv1.ContainerResources{{Name: "jupyter", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(d0.UUID + "::1")}}}},
		{Name: "train-c", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{{Name: "trainer", Devices: []*podresourcesv1.ContainerDevices{gpuDevice(d1.UUID)}}}},
	}}}
	sock := serveKubelet(t, k)

	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendNVML
	cfg.PodResources = PodResourcesConfig{Enabled: true, Endpoint: sock, RefreshInterval: time.Hour}
	cfg.PerProcess = PerProcessConfig{Enabled: true, ProcRoot: proc, ContainerLogsDir: logs}
	require.NoError(t, confmap.Validate(cfg))
	core, observed := observer.New(zap.InfoLevel)
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	s := newGPUScraper(cfg, set)
	b := nvmlbackend.New(nvmlbackend.Options{Lib: srv, PerProcess: true, ProcRoot: proc, Logger: set.Logger})
	require.NoError(t, s.startWith(context.Background(), &statusHost{}, []backend.Backend{b}))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })

	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	procs, devices := splits(md)
	require.Len(t, devices, 8)
	require.Empty(t, attr(devices[d0.UUID], "k8s.pod.name"), "shared by nb-a and nb-b")
	require.Equal(t, "train-c", attr(devices[d1.UUID], "k8s.pod.name"))

	got := map[string]pmetric.ResourceMetrics{}
	for _, p := range procs {
		key := attr(p, "hw.id") + "/" + attr(p, metricnames.AttrOTelGPUProcessOwner) + "/" + attr(p, "k8s.pod.uid")
		require.NotContains(t, got, key)
		got[key] = p
	}
	require.Len(t, got, 5)
	a, bb := got[d0.UUID+"/pod/"+uidA], got[d0.UUID+"/pod/"+uidB]
	require.Equal(t, []string{"research", "nb-a", "jupyter"}, []string{attr(a, "k8s.namespace.name"), attr(a, "k8s.pod.name"), attr(a, "k8s.container.name")})
	require.Equal(t, "nb-b", attr(bb, "k8s.pod.name"))
	require.InDelta(t, 0.5, num(point(t, a, "otelgpu.process.utilization", general)), 1e-9)
	require.InDelta(t, 0.1, num(point(t, a, "otelgpu.process.utilization", map[string]any{metricnames.AttrHWGPUTask: metricnames.AttrHWGPUTaskEncoder})), 1e-9, "the encoder of a pod that used it")
	require.InDelta(t, 0.2, num(point(t, bb, "otelgpu.process.utilization", general)), 1e-9)
	require.Equal(t, int64(6<<30), point(t, a, "otelgpu.process.memory.usage", nil).IntValue())

	host := got[d0.UUID+"/host/"]
	require.Empty(t, attr(host, "k8s.pod.name"))
	require.Zero(t, num(point(t, host, "otelgpu.process.utilization", general)), "busy processes only are sampled: the host's was idle")
	require.Equal(t, int64(1<<30), point(t, host, "otelgpu.process.memory.usage", nil).IntValue())
	unknown := got[d0.UUID+"/unknown/"]
	require.Equal(t, int64(1<<20), point(t, unknown, "otelgpu.process.memory.usage", nil).IntValue())

	c := got[d1.UUID+"/pod/"+uidC]
	require.Empty(t, attr(c, "k8s.pod.name"), "its container has no log link")
	require.Equal(t, int64(20<<30), point(t, c, "otelgpu.process.memory.usage", nil).IntValue())
	require.Equal(t, 1, observed.FilterMessageSnippet("named by k8s.pod.uid only").Len())

	// Another scrape: nothing new from NVML's utilization (the mock's
	// samples are not newer than the last seen), every process idle, the
	// same resources.
	d0.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) { return nil, nvml.ERROR_NOT_FOUND }
	md, err = s.scrape(context.Background())
	require.NoError(t, err)
	procs, _ = splits(md)
	require.Len(t, procs, 5)
	require.Equal(t, 1, observed.FilterMessageSnippet("named by k8s.pod.uid only").Len(), "said once")
}

// fakeBackend is a backend that answers with no GPU, under a name.
type fakeBackend struct{ name string }

func (b fakeBackend) Name() string                { return b.name }
func (fakeBackend) Connect(context.Context) error { return nil }
func (fakeBackend) Close() error                  { return nil }
func (fakeBackend) Collect(context.Context, time.Time, time.Duration) ([]gpu.Sample, error) {
	return nil, nil
}

// TestPerProcessOnDCGM: with backend auto, a host where DCGM answers gets
// no per-process series, and one warning says so; NVML gets none.
func TestPerProcessOnDCGM(t *testing.T) {
	for name, warns := range map[string]int{BackendDCGM: 1, BackendNVML: 0} {
		cfg := createDefaultConfig().(*Config)
		cfg.PerProcess.Enabled = true
		require.NoError(t, confmap.Validate(cfg), "auto may fall back to NVML")
		core, observed := observer.New(zap.InfoLevel)
		set := receivertest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		s := newGPUScraper(cfg, set)
		require.NoError(t, s.startWith(context.Background(), &statusHost{}, []backend.Backend{fakeBackend{name}}))
		for range 2 {
			_, err := s.scrape(context.Background())
			require.NoError(t, err)
		}
		require.NoError(t, s.shutdown(context.Background()))
		require.Equalf(t, warns, observed.FilterMessageSnippet("the dcgm backend does not read per-process data").Len(), "backend %s", name)
	}
}

// TestLocalExample: the configuration `make run` uses (examples/local)
// splits gpu-node-1/gpu7 between three pods with distinct values, beside
// the one pod of every other busy GPU; splits gpu-node-1/gpu5 into three
// MIG instances under their MIG UUIDs; and holds gpu-node-1/gpu6 through
// a DRA claim. On its AMD node each pod's series say the VRAM it holds and
// no utilization, as AMD SMI reports a HIP process.
func TestLocalExample(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "local", "config.yaml"))
	require.NoError(t, err)
	sub, err := cm.Sub("receivers::dcgm")
	require.NoError(t, err)
	cfg := createDefaultConfig().(*Config)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	require.True(t, cfg.PerProcess.Enabled)

	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.start(context.Background(), &statusHost{}))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	procs, devices := splits(md)
	require.Len(t, devices, 16+3+7+8, "16 GPUs and 3 MIG instances; 7 AMD GPUs and 8 CPX partitions")
	var gpu7 string
	migs := 0
	for id, d := range devices {
		if attr(d, "host.name") == "gpu-node-1" && attr(d, "hw.name") == "gpu7" {
			gpu7 = id
		}
		if strings.HasPrefix(id, "MIG-") {
			migs++
			require.Equal(t, "2g.20gb", attr(d, "nvidia.gpu.mig.profile"))
			require.True(t, strings.HasPrefix(attr(d, "hw.name"), "gpu5/mig"), attr(d, "hw.name"))
			require.True(t, strings.HasPrefix(attr(d, "k8s.pod.name"), "mig-inference-1-5-"))
		}
		if attr(d, "host.name") == "gpu-node-1" && attr(d, "hw.name") == "gpu6" {
			require.Equal(t, "notebook-1-6-gpu", attr(d, "k8s.resourceclaim.name"))
		}
	}
	require.Equal(t, 3, migs)
	values := map[float64]bool{}
	pods := 0
	for _, p := range procs {
		if attr(p, "hw.id") != gpu7 {
			continue
		}
		pods++
		require.True(t, strings.HasPrefix(attr(p, "k8s.pod.name"), "shared-notebook-1-7-"))
		values[num(point(t, p, "otelgpu.process.utilization", general))] = true
	}
	require.Equal(t, 3, pods)
	require.Len(t, values, 3, "distinct values")
	require.Len(t, procs, 8+5+3+1+3+7+8, "the training pod on host 0's 8 GPUs, 5 serving pods, 3 on gpu5's MIG instances, the idle notebook, 3 on gpu7; on the AMD node 7 fine-tuning pods and 8 on the CPX partitions")
	amd := 0
	for _, p := range procs {
		if attr(p, "host.name") != "gpu-node-2" {
			continue
		}
		amd++
		require.Positive(t, point(t, p, "otelgpu.process.memory.usage", nil).IntValue())
		_, ok := metric(p, "otelgpu.process.utilization")
		require.False(t, ok, "HIP work counts no engine time in AMD SMI")
	}
	require.Equal(t, 15, amd)
}
