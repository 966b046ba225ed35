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
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// BenchmarkScrape measures one scrape, backend read and mapping to OTLP
// included, and reports the cost per emitted data point.
//
// The simulated backend runs at 1,024 GPUs (64 hosts x 16). The DCGM backend
// runs the real go-dcgm code against the stand-in library at 32 GPUs, the
// most one host engine serves (DCGM_MAX_NUM_DEVICES); its per-data-point
// figures are what compare.
//
// Each reports ns/gpu, the cost of one scrape per device it reports.
//
// The per_process variant is the same fleet with per-process series on:
// every GPU is exclusive, one pod's, with one process, so that it measures
// what the split costs a fleet that does not share its GPUs.
func BenchmarkScrape(b *testing.B) {
	fleet := func() *Config {
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendSimulated
		cfg.Simulated.Hosts, cfg.Simulated.GPUsPerHost = 64, 16
		cfg.Simulated.Workloads[0].GPUs = "0-31/*"
		cfg.Simulated.Workloads[1].GPUs = "32-63/*"
		return cfg
	}
	b.Run("simulated/gpus=1024", func(b *testing.B) {
		benchScrape(b, fleet())
	})
	b.Run("simulated/per_process/gpus=1024", func(b *testing.B) {
		cfg := fleet()
		cfg.PerProcess.Enabled = true
		benchScrape(b, cfg)
	})
	// The NVML backend on go-nvml's mock, eight GPUs, each with one
	// process in a pod of a fake /proc tree: without and with the split,
	// so that the difference is what reading and placing the processes
	// and mapping their series cost (the mock answers NVML's calls for
	// nothing, so this is the receiver's part only).
	for _, on := range []bool{false, true} {
		name := "nvml-mock/gpus=8"
		if on {
			name = "nvml-mock/per_process/gpus=8"
		}
		b.Run(name, func(b *testing.B) {
			proc, logs := b.TempDir(), b.TempDir()
			srv := nvmlMockWithProcesses(b, proc, logs)
			cfg := createDefaultConfig().(*Config)
			cfg.Backend = BackendNVML
			cfg.PerProcess = PerProcessConfig{Enabled: on, ProcRoot: proc, ContainerLogsDir: logs}
			benchScrape(b, cfg, nvmlbackend.New(nvmlbackend.Options{Lib: srv, PerProcess: on, ProcRoot: proc}))
		})
	}
	b.Run("dcgm-standin/gpus=32", func(b *testing.B) {
		dir := b.TempDir()
		state := filepath.Join(dir, "state")
		if err := (dcgmstandin.State{GPUs: 32, Connected: true}).Write(state); err != nil {
			b.Fatal(err)
		}
		b.Setenv("STANDIN_DCGM_STATE", state)
		if err := dcgmstandin.Load("testdata/standin-dcgm/libdcgm.c", dir); err != nil {
			b.Fatal(err)
		}
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendDCGM
		cfg.CollectionInterval = time.Hour // the stand-in's values are always fresh
		benchScrape(b, cfg)
	})
	// The AMD SMI path, the real cgo layer against the stand-in
	// libamd_smi.so, at 32 MI300Xs, beside the DCGM path: its ns/gpu is
	// what compares (make bench reports both and their ratio).
	b.Run("amdsmi-standin/gpus=32", func(b *testing.B) {
		st := amdsmistandin.State{}
		for i := range 32 {
			st.GPUs = append(st.GPUs, amdsmistandin.GPU{Kind: "mi300x", UUID: fmt.Sprintf("%02xff74a1-0000-1000-80e0-c6d49f5b0d86", i),
				BDF: fmt.Sprintf("0000:%02x:00.0", i), Compute: "SPX", Memory: "NPS1", Partitions: 1, Load: 60 + i})
			st.ECC = append(st.ECC, amdsmistandin.ECC{GPU: i, Block: "umc", Corrected: uint64(i)})
		}
		lib, _ := amdStandin(b, st)
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendAMDSMI
		cfg.AMDSMI.LibraryPath = lib
		benchScrape(b, cfg)
	})
	// The same at 32 devices that are partitions: four MI300Xs in CPX
	// mode, eight partitions each, where some figures are read once per
	// GPU rather than once per device. Named apart from amdsmi-standin so
	// that make bench's AMD/DCGM comparison stays on whole GPUs.
	b.Run("amdsmi-cpx/partitions=32", func(b *testing.B) {
		st := amdsmistandin.State{}
		for i := range 4 {
			st.GPUs = append(st.GPUs, amdsmistandin.GPU{Kind: "mi300x", UUID: fmt.Sprintf("%02xff74b9-0000-1000-8044-4a2fb30adeb0", 0x80+i*8),
				BDF: fmt.Sprintf("0000:%02x:00.0", 0x20+i), Compute: "CPX", Memory: "NPS4", Partitions: 8, Load: 40 + i})
		}
		lib, _ := amdStandin(b, st)
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendAMDSMI
		cfg.AMDSMI.LibraryPath = lib
		benchScrape(b, cfg)
	})
	// The whole-GPU stand-in scrape with per_process: each MI300X
	// time-sliced between two pods of a fake /proc tree, named in a
	// container log directory. Its ns/gpu divides by every resource, the
	// pods' included; ns/op over 32 is the cost per GPU.
	b.Run("amdsmi-standin/per_process/gpus=32", func(b *testing.B) {
		st := amdsmistandin.State{}
		proc, logs := b.TempDir(), b.TempDir()
		for i := range 32 {
			st.GPUs = append(st.GPUs, amdsmistandin.GPU{Kind: "mi300x", UUID: fmt.Sprintf("%02xff74a1-0000-1000-80e0-c6d49f5b0d86", i),
				BDF: fmt.Sprintf("0000:%02x:00.0", i), Compute: "SPX", Memory: "NPS1", Partitions: 1, Load: 60 + i})
			st.ECC = append(st.ECC, amdsmistandin.ECC{GPU: i, Block: "umc", Corrected: uint64(i)})
			for k := range 2 {
				pid := uint32(1000 + 2*i + k)
				uid, ctr := fmt.Sprintf("%08x-0000-4000-8000-%012x", pid, pid), fmt.Sprintf("%064x", pid)
				writeProc(b, proc, pid, uid, ctr)
				if err := os.Symlink("/var/log/pods/x/0.log", filepath.Join(logs, fmt.Sprintf("job-%d_ml_main-%s.log", pid, ctr))); err != nil {
					b.Fatal(err)
				}
				st.Procs = append(st.Procs, amdsmistandin.Proc{GPU: i, PID: pid, VRAMBytes: 8 << 30, StepNs: 1e6})
			}
		}
		lib, _ := amdStandin(b, st)
		cfg := createDefaultConfig().(*Config)
		cfg.Backend = BackendAMDSMI
		cfg.AMDSMI.LibraryPath = lib
		cfg.PerProcess = PerProcessConfig{Enabled: true, ProcRoot: proc, ContainerLogsDir: logs}
		benchScrape(b, cfg)
	})
}

// benchScrape measures cfg's scrape, on the given backends if any, else
// on those cfg names.
func benchScrape(b *testing.B, cfg *Config, backends ...backend.Backend) {
	set := receivertest.NewNopSettings(metadata.Type)
	set.Logger = zap.NewNop()
	s := newGPUScraper(cfg, set)
	ctx := context.Background()
	start := s.start
	if len(backends) > 0 {
		start = func(ctx context.Context, h component.Host) error { return s.startWith(ctx, h, backends) }
	}
	if err := start(ctx, &statusHost{}); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.shutdown(ctx) }()
	md, err := s.scrape(ctx) // warm-up; also sizes the report
	if err != nil || md.DataPointCount() == 0 {
		b.Fatalf("warm-up scrape: %d points, %v", md.DataPointCount(), err)
	}
	points := md.DataPointCount()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.scrape(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perOp/float64(points), "ns/datapoint")
	b.ReportMetric(float64(points), "datapoints/scrape")
	b.ReportMetric(perOp/float64(md.ResourceMetrics().Len()), "ns/gpu")
}

// nvmlMockWithProcesses is the NVML mock with one process on each GPU, in
// a pod of its own in the fake /proc tree proc, named in the container
// log directory logs, busy at every scrape.
func nvmlMockWithProcesses(b *testing.B, proc, logs string) *dgxa100.Server {
	b.Helper()
	if err := os.WriteFile(filepath.Join(proc, "stat"), []byte("btime 1767225000\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	srv := nvmlmock.New()
	var ts uint64
	for i, dev := range srv.Devices {
		pid := uint32(1000 + i)
		uid := fmt.Sprintf("%08x-0000-4000-8000-000000000000", i)
		ctr := strings.Repeat(fmt.Sprintf("%x", i%16), 64)
		dir := filepath.Join(proc, strconv.FormatUint(uint64(pid), 10))
		cgroup := "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice/cri-containerd-" + ctr + ".scope\n"
		stat := fmt.Sprintf("%d (python) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 5000 0 0\n", pid)
		link := filepath.Join(logs, fmt.Sprintf("job-%d_ml_main-%s.log", i, ctr))
		if os.MkdirAll(dir, 0o700) != nil || os.WriteFile(filepath.Join(dir, "cgroup"), []byte(cgroup), 0o600) != nil ||
			os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o600) != nil || os.Symlink("/var/log/pods/x/0.log", link) != nil {
			b.Fatal("fake /proc tree")
		}
		d := dev.(*dgxa100.Device)
		d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
			return []nvml.ProcessInfo{{Pid: pid, UsedGpuMemory: 8 << 30}}, nvml.SUCCESS
		}
		d.GetProcessUtilizationFunc = func(uint64) ([]nvml.ProcessUtilizationSample, nvml.Return) {
			ts++
			return []nvml.ProcessUtilizationSample{{Pid: pid, TimeStamp: ts, SmUtil: 70, MemUtil: 30}}, nvml.SUCCESS
		}
	}
	return srv
}
