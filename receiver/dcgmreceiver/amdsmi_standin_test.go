package dcgmreceiver

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/storagetest"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

const (
	amdSPX      = "ccff74a1-0000-1000-80e0-c6d49f5b0d86"
	amdCPX0     = "9fff74b9-0000-1000-8044-4a2fb30adeb0"
	amdCPX5     = "9aff74b9-0000-1000-8044-4a2fb30adeb0"
	amdMI250    = "c3ff740c-0000-1000-8021-7a1b2c3d4e5f"
	amdStandinC = "testdata/standin-amdsmi/libamd_smi.c"
)

var (
	amdLibOnce sync.Once
	amdLib     string
	amdLibErr  error
)

// amdStandin builds the stand-in libamd_smi.so once per test binary, writes
// its state and returns the library's path and the state file's.
func amdStandin(tb testing.TB, st amdsmistandin.State) (lib, state string) {
	tb.Helper()
	amdLibOnce.Do(func() {
		// The library outlives the test that builds it: every test of
		// the binary loads the same one (dlopen keeps it).
		dir, err := os.MkdirTemp("", "amdsmi-standin-") //nolint:usetesting // see above
		if err != nil {
			amdLibErr = err
			return
		}
		amdLib, amdLibErr = amdsmistandin.Build(amdStandinC, dir)
	})
	require.NoError(tb, amdLibErr)
	state = filepath.Join(tb.TempDir(), "state")
	require.NoError(tb, st.Write(state))
	tb.Setenv(amdsmistandin.StateEnv, state)
	return amdLib, state
}

// amdFleet is the stand-in's node with something on every metric: ECC
// counts in two blocks, retired pages, CPER records over two pages.
func amdFleet() amdsmistandin.State {
	st := amdsmistandin.Fleet()
	st.CPERPage = 2
	st.ECC = []amdsmistandin.ECC{
		{GPU: 0, Block: "umc", Corrected: 12, Uncorr: 0, D: 1},
		{GPU: 0, Block: "xgmi_wafl", Corrected: 2},
		{GPU: 1, Block: "gfx", Corrected: 1},
	}
	st.BadPages = []amdsmistandin.BadPage{{GPU: 0, Status: 0}, {GPU: 0, Status: 0}, {GPU: 0, Status: 1}}
	st.CPER = []amdsmistandin.CPER{
		{GPU: 0, Severity: 2, AFIDs: []uint64{30}},
		{GPU: 0, Severity: 2, AFIDs: []uint64{30}},
		{GPU: 0, Severity: 0, AFIDs: []uint64{12, 13}},
	}
	return st
}

func newAMDScraper(t *testing.T, lib string, host component.Host, mutate func(*Config)) *gpuScraper {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendAMDSMI
	cfg.AMDSMI.LibraryPath = lib
	cfg.Hostname = "amd-node-0"
	cfg.CollectionInterval = 10 * time.Second
	cfg.Reconnect = ReconnectConfig{InitialInterval: time.Millisecond, MaxInterval: 4 * time.Millisecond}
	if mutate != nil {
		mutate(cfg)
	}
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.start(context.Background(), host))
	t.Cleanup(func() { require.NoError(t, s.shutdown(context.Background())) })
	return s
}

// scrapeAt scrapes as if at t0 + k collection intervals, so that counters
// and golden files do not depend on the wall clock.
func scrapeAt(t *testing.T, s *gpuScraper, k int) pmetric.Metrics {
	t.Helper()
	t0 := time.Unix(1767225600, 0)
	s.now = func() time.Time { return t0.Add(time.Duration(k) * 10 * time.Second) }
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	return md
}

// TestAMDSMIStandin runs the receiver's real AMD SMI path against the
// stand-in: an MI300X in SPX mode, one in CPX mode, an MI250; then a GPU
// whose uncorrectable ECC count rises and one that disappears.
func TestAMDSMIStandin(t *testing.T) {
	st := amdFleet()
	lib, state := amdStandin(t, st)
	host := &statusHost{}
	s := newAMDScraper(t, lib, host, nil)

	devs := byDevice(t, scrapeAt(t, s, 0))
	require.Len(t, devs, 10, "an SPX MI300X, eight CPX partitions, an MI250")

	spx := devs[amdSPX]
	res := spx.Resource().Attributes().AsRaw()
	require.Equal(t, "AMD", res["hw.vendor"])
	require.Equal(t, "AMD Instinct MI300X OAM", res["hw.model"])
	require.Equal(t, "gpu0", res["hw.name"])
	require.Equal(t, int64(0), res["amd.gpu.index"])
	require.Equal(t, "0000:0c:00.0", res["amd.gpu.pci_bus_id"])
	require.Equal(t, "SPX", res["amd.gpu.partition.compute"])
	require.Equal(t, "amd-node-0", res["host.name"])
	require.NotContains(t, res, "hw.parent", "an unpartitioned GPU has no parent")
	require.NotContains(t, res, "nvidia.gpu.index")
	require.InDelta(t, 0.87, num(point(t, spx, "hw.gpu.utilization", map[string]any{"hw.gpu.task": "general"})), 1e-9)
	require.InDelta(t, 0.43, num(point(t, spx, "amd.gpu.umc.activity", nil)), 1e-9)
	require.Equal(t, 140.0+87*56/10, num(point(t, spx, "hw.power", nil)))
	require.Equal(t, 750.0, num(point(t, spx, "amd.gpu.power.cap", nil)))
	require.Equal(t, 74.0, num(point(t, spx, "hw.temperature", nil)), "hotspot")
	require.Equal(t, 74.0, num(point(t, spx, "amd.gpu.temperature", map[string]any{"amd.gpu.temperature.sensor": "hotspot"})))
	require.Equal(t, int64(196592)<<20, point(t, spx, "hw.gpu.memory.limit", nil).IntValue())
	require.Equal(t, 2.1e9, num(point(t, spx, "amd.gpu.clock.frequency", map[string]any{"amd.gpu.clock": "gfx"})))
	require.Equal(t, 0.2, num(point(t, spx, "amd.gpu.violation.residency", map[string]any{"amd.gpu.violation.reason": "power"})))
	require.Equal(t, 7*512e9/8, num(point(t, spx, "amd.gpu.xgmi.bandwidth", nil)), "seven links' sum")
	_, ok := metric(spx, "amd.gpu.xgmi.link.io")
	require.False(t, ok, "per link only when asked")
	require.Equal(t, int64(2), point(t, spx, "amd.gpu.bad_pages", map[string]any{"amd.gpu.bad_page.status": "reserved"}).IntValue())
	require.Equal(t, int64(2), point(t, spx, "amd.gpu.cper.records", map[string]any{"amd.gpu.cper.severity": "nonfatal_corrected", "amd.gpu.afid": int64(30)}).IntValue())
	require.Equal(t, int64(1), point(t, spx, "amd.gpu.cper.records", map[string]any{"amd.gpu.cper.severity": "nonfatal_uncorrected", "amd.gpu.afid": int64(13)}).IntValue())
	_, ok = metric(spx, "nvidia.gpu.graphics_engine.active")
	require.False(t, ok, "no NVIDIA fallback on an AMD GPU")
	_, ok = metric(spx, "nvidia.gpu.xid.errors")
	require.False(t, ok)
	// Counters count from the first sample.
	require.Zero(t, point(t, spx, "hw.errors", map[string]any{"error.type": "corrected"}).IntValue())

	part := devs[amdCPX5].Resource().Attributes().AsRaw()
	require.Equal(t, amdCPX0, part["hw.parent"])
	require.Equal(t, int64(5), part["amd.gpu.partition.id"])
	require.Equal(t, "CPX", part["amd.gpu.partition.compute"])
	require.Equal(t, "NPS4", part["amd.gpu.partition.memory"])
	require.Equal(t, "0000:22:00.5", part["amd.gpu.pci_bus_id"])
	require.Equal(t, amdCPX0, devs[amdCPX0].Resource().Attributes().AsRaw()["hw.parent"], "the first partition stands for the GPU")
	_, ok = metric(devs[amdCPX5], "hw.power")
	require.False(t, ok, "power is the board's, reported on the first partition")
	require.Positive(t, point(t, devs[amdCPX5], "hw.gpu.memory.usage", nil).IntValue())
	require.InDelta(t, 0.20, num(point(t, devs[amdCPX5], "hw.gpu.utilization", map[string]any{"hw.gpu.task": "general"})), 1e-9, "the partition's own activity")

	mi250 := devs[amdMI250]
	require.Equal(t, 90.0+12*4, num(point(t, mi250, "hw.power", nil)), "MI250: average socket power")
	require.Equal(t, 36.0, num(point(t, mi250, "amd.gpu.temperature", map[string]any{"amd.gpu.temperature.sensor": "edge"})))
	_, ok = metric(mi250, "amd.gpu.mm.activity")
	require.False(t, ok, "a sentinel is no reading")

	// Uncorrectable ECC rises on the SPX GPU; a new fatal record arrives.
	st.ECC[0].Uncorr, st.ECC[0].D = 2, 3
	st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 1, AFIDs: []uint64{6}})
	require.NoError(t, st.Write(state))
	spx = byDevice(t, scrapeAt(t, s, 1))[amdSPX]
	require.Equal(t, int64(2), point(t, spx, "hw.errors", map[string]any{"error.type": "uncorrected"}).IntValue())
	require.Equal(t, int64(2), point(t, spx, "hw.errors", map[string]any{"error.type": "deferred"}).IntValue())
	require.Equal(t, int64(2), point(t, spx, "amd.gpu.ecc.errors", map[string]any{"error.type": "uncorrected", "amd.gpu.ras.block": "umc"}).IntValue())
	require.Equal(t, int64(1), point(t, spx, "amd.gpu.cper.records", map[string]any{"amd.gpu.cper.severity": "fatal", "amd.gpu.afid": int64(6)}).IntValue())
	require.Equal(t, int64(2), point(t, spx, "amd.gpu.cper.records", map[string]any{"amd.gpu.cper.severity": "nonfatal_corrected", "amd.gpu.afid": int64(30)}).IntValue(), "counted once")
	require.Positive(t, point(t, spx, "amd.gpu.xgmi.io", map[string]any{"network.io.direction": "receive"}).IntValue())
	require.Positive(t, num(point(t, spx, "hw.energy", nil)))

	// The MI250 disappears: the scrape reports nothing and a recoverable
	// error; the next connection enumerates the others.
	st.GPUs[2].Gone = true
	require.NoError(t, st.Write(state))
	md := scrapeAt(t, s, 2)
	require.Zero(t, md.DataPointCount(), "no value is better than a stale one")
	require.Equal(t, componentstatus.StatusRecoverableError, host.last().Status())
	require.ErrorContains(t, host.last().Err(), "GPU "+amdMI250+" (gpu9, 0000:c1:00.0) is gone")
	st.GPUs = st.GPUs[:2]
	require.NoError(t, st.Write(state))
	time.Sleep(5 * time.Millisecond) // past the back-off
	s.now = time.Now
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	require.Len(t, byDevice(t, md), 9)
	require.Equal(t, componentstatus.StatusOK, host.last().Status())
}

// withXGMIPerLink turns on the per-link XGMI metrics, off by default.
func withXGMIPerLink(cfg *Config) {
	cfg.Metrics.AmdGpuXgmiLinkIo.Enabled = true
	cfg.Metrics.AmdGpuXgmiLinkBandwidth.Enabled = true
}

// TestAMDSMIXGMIPerLink checks that the XGMI sums, on by default, are the
// per-link series' sums, and that each link keeps its own count.
func TestAMDSMIXGMIPerLink(t *testing.T) {
	lib, _ := amdStandin(t, amdFleet())
	s := newAMDScraper(t, lib, &statusHost{}, withXGMIPerLink)
	scrapeAt(t, s, 0)
	spx := byDevice(t, scrapeAt(t, s, 3))[amdSPX]
	for _, dir := range []string{"receive", "transmit"} {
		var links int64
		perLink := map[int64]int64{}
		m, ok := metric(spx, "amd.gpu.xgmi.link.io")
		require.True(t, ok)
		dps := m.Sum().DataPoints()
		for i := 0; i < dps.Len(); i++ {
			attrs := dps.At(i).Attributes().AsRaw()
			if attrs["network.io.direction"] == dir {
				links += dps.At(i).IntValue()
				perLink[attrs["amd.gpu.xgmi.link"].(int64)] = dps.At(i).IntValue()
			}
		}
		require.Len(t, perLink, 7, "an MI300X's seven links, %s", dir)
		require.Positive(t, links)
		require.Equal(t, links, point(t, spx, "amd.gpu.xgmi.io", map[string]any{"network.io.direction": dir}).IntValue(), dir)
	}
	var bw float64
	m, _ := metric(spx, "amd.gpu.xgmi.link.bandwidth")
	for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
		bw += m.Gauge().DataPoints().At(i).DoubleValue()
	}
	require.Equal(t, bw, num(point(t, spx, "amd.gpu.xgmi.bandwidth", nil)))
}

// TestAMDSMIEveryMetric is the sibling of TestNeededFieldsKeepEveryMetric
// for the amd.gpu.* metrics, which come from AMD SMI and not from DCGM
// fields: the stand-in's node, through the real cgo path, produces every
// one of them.
func TestAMDSMIEveryMetric(t *testing.T) {
	lib, _ := amdStandin(t, amdFleet())
	s := newAMDScraper(t, lib, &statusHost{}, withXGMIPerLink)
	scrapeAt(t, s, 0)
	md := scrapeAt(t, s, 1)
	seen := map[string]bool{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			for k := 0; k < sms.At(j).Metrics().Len(); k++ {
				seen[sms.At(j).Metrics().At(k).Name()] = true
			}
		}
	}
	n := reflect.TypeFor[metadata.MetricsConfig]().NumField()
	amd := 0
	for i := range n {
		_, name := onlyMetric(i)
		if strings.HasPrefix(name, "amd.gpu.") {
			amd++
			require.True(t, seen[name], "the amdsmi path produces %s", name)
		}
	}
	require.Positive(t, amd)
	for _, name := range []string{"hw.gpu.utilization", "hw.gpu.memory.usage", "hw.gpu.memory.limit", "hw.gpu.memory.utilization", "hw.power", "hw.energy", "hw.temperature", "hw.errors", "hw.gpu.io"} {
		require.True(t, seen[name], "the amdsmi path produces %s", name)
	}
}

// TestAMDSMIGolden compares the stand-in node's third scrape, in both
// naming modes, with golden files.
func TestAMDSMIGolden(t *testing.T) {
	legacynamestest.SetGate(t, false) // the golden file shows the new names only
	for _, naming := range []string{NamingOTel, NamingDeviceMetricsExporter} {
		t.Run(naming, func(t *testing.T) {
			lib, _ := amdStandin(t, amdFleet())
			s := newAMDScraper(t, lib, &statusHost{}, func(c *Config) { c.Naming = naming })
			scrapeAt(t, s, 0)
			scrapeAt(t, s, 1)
			got := scrapeAt(t, s, 2)
			path := filepath.Join("testdata", "golden", "amdsmi_"+naming+".yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, path, got))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}

// TestAMDSMIPodAttribution attributes amd.com/gpu devices, which AMD's
// device plugin names by PCI address (a partition by its own), through the
// same kubelet client as NVIDIA's.
func TestAMDSMIPodAttribution(t *testing.T) {
	lib, _ := amdStandin(t, amdFleet())
	k := &kubelet{resp: &podresourcesv1.ListPodResourcesResponse{PodResources: []*podresourcesv1.PodResources{
		{Name: "train-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{{
			Name: "main", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "amd.com/gpu", DeviceIds: []string{"0000:0C:00.0"}}},
		}}},
		{Name: "infer-5", Namespace: "serve", Containers: []*podresourcesv1.ContainerResources{{
			Name: "vllm", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "amd.com/gpu", DeviceIds: []string{"0000:22:00.5"}}},
		}}},
	}}}
	sock := serveKubelet(t, k)
	s := newAMDScraper(t, lib, &statusHost{}, func(c *Config) {
		c.PodResources = PodResourcesConfig{Enabled: true, Endpoint: sock, RefreshInterval: time.Minute}
	})
	devs := byDevice(t, scrapeAt(t, s, 0))
	require.Equal(t, "train-0", devs[amdSPX].Resource().Attributes().AsRaw()["k8s.pod.name"])
	require.Equal(t, "infer-5", devs[amdCPX5].Resource().Attributes().AsRaw()["k8s.pod.name"], "a partition is its own amd.com/gpu")
	require.NotContains(t, devs[amdCPX0].Resource().Attributes().AsRaw(), "k8s.pod.name")
}

// TestAMDSMICursorSurvivesRestart restarts the receiver over the real
// file_storage extension: CPER records read before the restart are not
// counted again after it.
func TestAMDSMICursorSurvivesRestart(t *testing.T) {
	st := amdFleet()
	lib, state := amdStandin(t, st)
	dir := t.TempDir()
	id := component.MustNewIDWithName("file_storage", "amd")
	run := func(scrapes func(s *gpuScraper)) {
		host, stop := storagetest.FileStorage(t, id, dir)
		cfgR := createDefaultConfig().(*Config)
		cfgR.Backend, cfgR.AMDSMI = BackendAMDSMI, AMDSMIConfig{LibraryPath: lib, Storage: &id}
		set := receivertest.NewNopSettings(metadata.Type)
		set.ID = component.NewIDWithName(metadata.Type, "amd") // as in a collector's config, the same at every start
		s := newGPUScraper(cfgR, set)
		require.NoError(t, s.start(context.Background(), host))
		scrapes(s)
		require.NoError(t, s.shutdown(context.Background()))
		stop()
	}
	records := func(s *gpuScraper) int64 {
		var n int64
		rm := byDevice(t, scrapeAt(t, s, 0))[amdSPX]
		if m, ok := metric(rm, "amd.gpu.cper.records"); ok {
			for i := 0; i < m.Sum().DataPoints().Len(); i++ {
				n += m.Sum().DataPoints().At(i).IntValue()
			}
		}
		return n
	}
	run(func(s *gpuScraper) { require.Equal(t, int64(4), records(s), "three records, one with two AFIDs") })
	st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 1, AFIDs: []uint64{6}})
	require.NoError(t, st.Write(state))
	run(func(s *gpuScraper) { require.Equal(t, int64(1), records(s), "only the record logged since") })
}

// TestAMDSMIPerProcess runs per_process on the real AMD SMI path: the
// MI300X in SPX mode is time-sliced between pods A and B, whose processes
// are placed through a fake /proc tree and named from a container log
// directory; a third process is on the host. Each pod gets a resource of
// its own, with its VRAM and, from the second scrape on, its share of the
// graphics engine.
func TestAMDSMIPerProcess(t *testing.T) {
	const uidA, uidB = "aaaaaaaa-0000-4000-8000-00000000000a", "bbbbbbbb-0000-4000-8000-00000000000b"
	ctrA, ctrB := strings.Repeat("a", 64), strings.Repeat("b", 64)
	proc, logs := t.TempDir(), t.TempDir()
	writeProc(t, proc, 300, uidA, ctrA)
	writeProc(t, proc, 301, uidB, ctrB)
	writeProc(t, proc, 302, "", "")
	for _, l := range []string{"train-a_ml_main-" + ctrA + ".log", "train-b_ml_main-" + ctrB + ".log"} {
		require.NoError(t, os.Symlink("/var/log/pods/x/0.log", filepath.Join(logs, l)))
	}
	st := amdFleet()
	st.Procs = []amdsmistandin.Proc{
		{GPU: 0, PID: 300, VRAMBytes: 40 << 30, StepNs: 3e9}, // 30% of each 10 s scrape
		{GPU: 0, PID: 301, VRAMBytes: 20 << 30, StepNs: 2e9}, // 20%
		{GPU: 0, PID: 302, VRAMBytes: 1 << 30, GFXNs: 5e9},   // idle since
		{GPU: 1, Partition: 5, PID: 301, VRAMBytes: 1 << 30}, // B on a partition too, ROCm-style
	}
	lib, _ := amdStandin(t, st)
	s := newAMDScraper(t, lib, &statusHost{}, func(c *Config) {
		c.PerProcess = PerProcessConfig{Enabled: true, ProcRoot: proc, ContainerLogsDir: logs}
		c.Metrics.OtelgpuProcessMemoryCopyUtilization.Enabled = true
		require.NoError(t, confmap.Validate(c))
	})

	byOwner := func(md pmetric.Metrics) map[string]pmetric.ResourceMetrics {
		procs, _ := splits(md)
		got := map[string]pmetric.ResourceMetrics{}
		for _, p := range procs {
			key := attr(p, "hw.id") + "/" + attr(p, metricnames.AttrOTelGPUProcessOwner) + "/" + attr(p, "k8s.pod.name")
			require.NotContains(t, got, key)
			got[key] = p
		}
		return got
	}
	// The other processors each show the stand-in's default process,
	// which is not in the fake /proc: unknown, with VRAM and no engine
	// time.
	others := func(got map[string]pmetric.ResourceMetrics) {
		n := 0
		for key, rm := range got {
			if strings.HasSuffix(key, "/unknown/") {
				n++
				require.False(t, hasMetric(rm, "otelgpu.process.utilization"), key)
			}
		}
		require.Equal(t, 8, n, "seven CPX partitions and the MI250")
	}
	first := byOwner(scrapeAt(t, s, 0))
	require.Len(t, first, 4+8)
	others(first)
	a := first[amdSPX+"/pod/train-a"]
	require.Equal(t, uidA, attr(a, "k8s.pod.uid"))
	require.Equal(t, int64(40<<30), point(t, a, "otelgpu.process.memory.usage", nil).IntValue())
	require.False(t, hasMetric(a, "otelgpu.process.utilization"), "first sight: no interval yet")

	got := byOwner(scrapeAt(t, s, 1))
	require.Len(t, got, 4+8)
	others(got)
	a, b := got[amdSPX+"/pod/train-a"], got[amdSPX+"/pod/train-b"]
	require.Equal(t, "main", attr(a, "k8s.container.name"))
	require.Equal(t, "ml", attr(b, "k8s.namespace.name"))
	require.InDelta(t, 0.3, num(point(t, a, "otelgpu.process.utilization", general)), 1e-9)
	require.InDelta(t, 0.2, num(point(t, b, "otelgpu.process.utilization", general)), 1e-9)
	require.Equal(t, int64(20<<30), point(t, b, "otelgpu.process.memory.usage", nil).IntValue())
	require.False(t, hasMetric(a, "otelgpu.process.memory_copy.utilization"), "AMD SMI has no per-process memory activity")
	host := got[amdSPX+"/host/"]
	require.Zero(t, num(point(t, host, "otelgpu.process.utilization", general)), "busy once, idle over this interval")
	part := got[amdCPX5+"/pod/train-b"]
	require.Equal(t, int64(1<<30), point(t, part, "otelgpu.process.memory.usage", nil).IntValue())
	require.False(t, hasMetric(part, "otelgpu.process.utilization"), "no engine time ever: not a reading of idle")
}

func hasMetric(rm pmetric.ResourceMetrics, name string) bool {
	for i := range rm.ScopeMetrics().Len() {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := range ms.Len() {
			if ms.At(j).Name() == name {
				return true
			}
		}
	}
	return false
}
