package record

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// standinSource is the receiver's stand-in libdcgm.so.4, in C.
const standinSource = "../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c"

// record runs gpurecord and returns its exit status and stderr.
func record(t *testing.T, ctx context.Context, env Env, args ...string) (int, string) {
	t.Helper()
	var stderr bytes.Buffer
	code := Main(ctx, args, io.Discard, &stderr, env)
	return code, stderr.String()
}

// readTrace reads a trace with the reader gpureplay uses.
func readTrace(t *testing.T, path string) [][]trace.Row {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	tr, err := trace.NewReader(f, path)
	require.NoError(t, err)
	var out [][]trace.Row
	for {
		b, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		out = append(out, b)
	}
}

func val(t *testing.T, r trace.Row, f dcgmfield.Field) float64 {
	t.Helper()
	v, ok := r.Values.Get(f)
	require.Truef(t, ok, "%s has no %s", r.UUID, f)
	return v
}

func TestSimulated(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim.csv")
	code, stderr := record(t, context.Background(), Env{}, "-backend", "simulated", "-simulated", "testdata/fleet.yaml",
		"-interval", "20ms", "-duration", "100ms", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	require.Equal(t, "gpurecord: 40 rows, 5 samples of 8 GPUs, written to "+out+"\n", stderr)

	batches := readTrace(t, out)
	require.Len(t, batches, 5, "duration/interval samples")
	for i, b := range batches {
		require.Len(t, b, 8)
		if i > 0 {
			require.Greater(t, b[0].Time, batches[i-1][0].Time)
		}
	}
	first := batches[0]
	r := first[1]
	require.Equal(t, "gpu-node-0", r.Host)
	require.Equal(t, 1, r.GPU)
	require.Equal(t, "NVIDIA H100 80GB HBM3", r.Model)
	require.Equal(t, []string{"ml", "llm-pretrain"}, []string{r.Namespace, r.Job})
	require.NotEmpty(t, r.Pod)
	require.Equal(t, "NVIDIA A100-SXM4-80GB", first[4].Model)
	require.Empty(t, first[4].Pod, "host 1 runs nothing")
	require.Equal(t, 81559.0, val(t, r, dcgmfield.FBTotal), "frame buffer in MiB")
	require.InDelta(t, 50, val(t, r, dcgmfield.GPUUtil), 50, "GPU_UTIL in percent")
	require.Greater(t, val(t, r, dcgmfield.GPUUtil), 1.0)
	require.LessOrEqual(t, val(t, r, dcgmfield.SMActive), 1.0, "SM activity as a ratio")
	require.Greater(t, val(t, r, dcgmfield.NVLinkTxBytes), 1e6, "NVLink in bytes per second")

	// The XID is in the sample where it occurred, and 0 after.
	require.Equal(t, 79.0, val(t, r, dcgmfield.XIDErrors))
	require.Equal(t, 0.0, val(t, first[0], dcgmfield.XIDErrors))
	for _, b := range batches[1:] {
		require.Equal(t, 0.0, val(t, b[1], dcgmfield.XIDErrors))
	}
}

func TestNVMLMock(t *testing.T) {
	out := filepath.Join(t.TempDir(), "nvml.csv")
	code, stderr := record(t, context.Background(), Env{NVML: nvmlmock.New()}, "-backend", "nvml", "-hostname", "node-a",
		"-interval", "10ms", "-duration", "20ms", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	batches := readTrace(t, out)
	require.Len(t, batches, 2)
	require.Len(t, batches[0], 8)

	r := batches[0][0]
	require.Equal(t, "node-a", r.Host)
	require.Equal(t, "Mock NVIDIA A100-SXM4-40GB", r.Model)
	require.True(t, strings.HasPrefix(r.UUID, "GPU-"), r.UUID)
	// DCGM's units, whatever NVML reports in.
	want := map[dcgmfield.Field]float64{
		dcgmfield.GPUUtil: 80, dcgmfield.MemCopyUtil: 30, dcgmfield.FBTotal: 40 << 10, dcgmfield.FBUsed: 10 << 10,
		dcgmfield.PowerUsage: 250.5, dcgmfield.GPUTemp: 61, dcgmfield.SMClock: 1410,
		dcgmfield.ClocksEventReasons: 0x40, dcgmfield.ECCSBEVolTotal: 5, dcgmfield.ECCDBEVolTotal: 1,
		dcgmfield.PCIeRxBytes: 1000 * 1024, dcgmfield.XIDErrors: 0, dcgmfield.RecoveryAction: 0,
	}
	for f, v := range want {
		require.InDeltaf(t, v, val(t, r, f), 1e-9, "%s", f)
	}
	require.Equal(t, 83.0, val(t, batches[0][3], dcgmfield.GPUUtil))
	require.False(t, r.Values.Has(dcgmfield.DecUtil), "an unsupported reading stays blank")
	require.False(t, r.Values.Has(dcgmfield.SMActive), "GPM needs two samples")
	require.True(t, batches[1][0].Values.Has(dcgmfield.SMActive), "GPM from the second sample")
	require.False(t, batches[1][1].Values.Has(dcgmfield.SMActive), "no GPM on device 1")

	require.Equal(t, 79.0, val(t, batches[0][nvmlmock.XIDDevice], dcgmfield.XIDErrors))
	require.Equal(t, 0.0, val(t, batches[1][nvmlmock.XIDDevice], dcgmfield.XIDErrors), "an XID is in one sample only")
}

func standin(t *testing.T, st dcgmstandin.State) {
	t.Helper()
	require.NoError(t, dcgmstandin.Load(standinSource, t.TempDir()))
	state := filepath.Join(t.TempDir(), "state")
	require.NoError(t, st.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
}

// TestDCGMStandin records through the real go-dcgm code path against the
// stand-in DCGM library: three GPUs, one a T4 without profiling, a MIG
// instance, an XID during the recording, one GPU that needs a reset and
// the T4's driver without the recovery action.
func TestDCGMStandin(t *testing.T) {
	// Compile the stand-in first: the XID must come after the connection.
	require.NoError(t, dcgmstandin.Load(standinSource, t.TempDir()))
	xidAt := time.Now().Add(time.Second)
	standin(t, dcgmstandin.State{GPUs: 3, NoProf: []int{2}, MIG: true, Connected: true, Epoch: 1,
		XIDs:     []dcgmstandin.XID{{GPU: 1, Code: 79, TSMicros: xidAt.UnixMicro()}},
		Recovery: []dcgmstandin.Recovery{{GPU: 1, Action: 1}, {GPU: 2, Action: dcgmstandin.RecoveryUnsupported}}})
	out := filepath.Join(t.TempDir(), "dcgm.csv")
	code, stderr := record(t, context.Background(), Env{}, "-backend", "dcgm", "-endpoint", "localhost:5555", "-hostname", "gpu-node-7",
		"-interval", "200ms", "-duration", "3s", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	batches := readTrace(t, out)
	require.Len(t, batches, 15)
	require.Len(t, batches[0], 4, "3 GPUs and a MIG instance")
	byUUID := map[string]trace.Row{}
	for _, r := range batches[0] {
		byUUID[r.UUID] = r
	}
	g1 := byUUID["GPU-5ca1ab1e-0000-4000-8000-000000000001"]
	require.Equal(t, "NVIDIA H100 80GB HBM3", g1.Model)
	require.Equal(t, "gpu-node-7", g1.Host)
	require.Equal(t, 1, g1.GPU)
	require.Equal(t, 91.0, val(t, g1, dcgmfield.GPUUtil))
	require.Equal(t, 301.5, val(t, g1, dcgmfield.PowerUsage))
	require.Equal(t, 41559.0, val(t, g1, dcgmfield.FBUsed))
	require.InDelta(t, 0.52, val(t, g1, dcgmfield.SMActive), 1e-9)
	require.Equal(t, 1e9, val(t, g1, dcgmfield.NVLinkRxBytes))
	require.Equal(t, 2.0, val(t, g1, dcgmfield.ECCSBEVolTotal))
	require.Equal(t, 1.0, val(t, g1, dcgmfield.RecoveryAction), "GPU reset")
	require.Equal(t, 0.0, val(t, byUUID["GPU-5ca1ab1e-0000-4000-8000-000000000000"], dcgmfield.RecoveryAction), "none")

	t4 := byUUID["GPU-5ca1ab1e-0000-4000-8000-000000000002"]
	require.Equal(t, "Tesla T4", t4.Model)
	require.False(t, t4.Values.Has(dcgmfield.SMActive), "no profiling: blank, not invented")
	require.False(t, t4.Values.Has(dcgmfield.MemoryTemp), "a DCGM blank value stays blank")
	require.False(t, t4.Values.Has(dcgmfield.RecoveryAction), "a recovery action the driver lacks stays blank")
	require.Contains(t, byUUID, "MIG-5ca1ab1e-0000-4000-9000-000000000000")

	// The XID is in exactly one row, the sample after it occurred.
	var xids []float64
	for _, b := range batches {
		for _, r := range b {
			if v := val(t, r, dcgmfield.XIDErrors); v != 0 {
				require.Equal(t, g1.UUID, r.UUID)
				// A row's time is taken just before the read that finds the XID.
				require.Greater(t, r.Time, float64(xidAt.Add(-200*time.Millisecond).UnixMilli())/1000)
				xids = append(xids, v)
			}
		}
	}
	require.Equal(t, []float64{79}, xids)
}

func TestDCGMStandinEmbedded(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 2, Connected: true, Epoch: 1})
	out := filepath.Join(t.TempDir(), "embedded.csv")
	code, stderr := record(t, context.Background(), Env{}, "-backend", "dcgm", "-embedded", "-endpoint", "",
		"-interval", "10ms", "-duration", "10ms", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	batches := readTrace(t, out)
	require.Len(t, batches, 1)
	require.Len(t, batches[0], 2)
}

// kubelet serves the PodResources v1 API on a unix socket.
type kubelet struct {
	podresourcesv1.UnimplementedPodResourcesListerServer
	resp *podresourcesv1.ListPodResourcesResponse
}

func (k *kubelet) List(context.Context, *podresourcesv1.ListPodResourcesRequest) (*podresourcesv1.ListPodResourcesResponse, error) {
	return k.resp, nil
}

func TestPodAttribution(t *testing.T) {
	srv := nvmlmock.New()
	uuid, _ := srv.Devices[5].GetUUID()
	sock := filepath.Join(t.TempDir(), "kubelet.sock")
	lis, err := net.Listen("unix", sock)
	require.NoError(t, err)
	gs := grpc.NewServer()
	podresourcesv1.RegisterPodResourcesListerServer(gs, &kubelet{resp: &podresourcesv1.ListPodResourcesResponse{
		PodResources: []*podresourcesv1.PodResources{{Name: "trainer-0", Namespace: "ml", Containers: []*podresourcesv1.ContainerResources{
			{Name: "pytorch", Devices: []*podresourcesv1.ContainerDevices{{ResourceName: "nvidia.com/gpu", DeviceIds: []string{uuid}}}},
		}}},
	}})
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)

	out := filepath.Join(t.TempDir(), "pods.csv")
	code, stderr := record(t, context.Background(), Env{NVML: srv}, "-backend", "nvml", "-pod-resources", sock,
		"-interval", "10ms", "-duration", "10ms", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	rows := readTrace(t, out)[0]
	require.Equal(t, uuid, rows[5].UUID)
	require.Equal(t, []string{"ml", "trainer-0", "pytorch"}, []string{rows[5].Namespace, rows[5].Pod, rows[5].Container})
	require.Empty(t, rows[4].Pod, "a GPU no pod holds")
}

// TestInterrupt stops a recording without -duration the way SIGINT does,
// by cancelling its context: it exits 0 with every sample so far written.
func TestInterrupt(t *testing.T) {
	out := filepath.Join(t.TempDir(), "int.csv")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int)
	var stderr bytes.Buffer
	go func() {
		done <- Main(ctx, []string{"-backend", "simulated", "-interval", "10ms", "-o", out}, io.Discard, &stderr, Env{})
	}()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out)
		return bytes.Count(b, []byte("\n")) > 2+3*16 // header, comment, 3 samples of 16 GPUs
	}, 10*time.Second, 5*time.Millisecond)
	cancel()
	require.Equal(t, ExitOK, <-done, stderr.String())
	batches := readTrace(t, out)
	require.GreaterOrEqual(t, len(batches), 3)
	for _, b := range batches {
		require.Len(t, b, 16, "no sample is cut in half")
	}
}

// TestUnpaced: a simulated recording of four minutes at 1 s takes far less
// than that, its samples exactly -interval apart, and the fleet's phases
// move with the trace's clock: 60 s of compute, then 60 s idle, repeated.
func TestUnpaced(t *testing.T) {
	dir := t.TempDir()
	fleet := filepath.Join(dir, "fleet.yaml")
	require.NoError(t, os.WriteFile(fleet, []byte(`seed: 3
hosts: 1
gpus_per_host: 1
models: [h100]
workloads:
  - {name: check, kind: serving, namespace: ml, gpus: "0/0", phases: [{kind: compute_bound, duration: 60s}, {kind: idle, duration: 60s}]}
`), 0o600))
	out := filepath.Join(dir, "fast.csv")
	began := time.Now()
	code, stderr := record(t, context.Background(), Env{}, "-backend", "simulated", "-simulated", fleet,
		"-interval", "1s", "-duration", "4m", "-unpaced", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	// Paced, the four minutes would take four minutes: anything well short
	// of that is unpaced, however loaded the machine (no speed is claimed).
	require.Less(t, time.Since(began), 2*time.Minute, "not paced by the wall clock")
	batches := readTrace(t, out)
	require.Len(t, batches, 240)
	t0 := batches[0][0].Time
	for i, b := range batches {
		require.Len(t, b, 1)
		require.InDeltaf(t, t0+float64(i), b[0].Time, 1e-6, "sample %d is %d s after the first", i, i)
	}
	for _, tc := range []struct {
		at     int
		active bool
	}{{30, true}, {90, false}, {150, true}, {210, false}} {
		sm := val(t, batches[tc.at][0], dcgmfield.SMActive)
		if tc.active {
			require.Greaterf(t, sm, 0.5, "sample %d: compute", tc.at)
		} else {
			require.Lessf(t, sm, 0.05, "sample %d: idle", tc.at)
		}
	}
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(raw), "unpaced (timestamps are the samples' simulated times", "the trace says it was not taken in real time")
}

func TestBadFlagsAndOutput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-bogus"}, ExitUsage, "gpurecord: flag provided but not defined: -bogus (gpurecord -h lists the flags)"},
		{[]string{"-backend", "rocm"}, ExitUsage, `gpurecord: -backend: unknown backend "rocm"; want auto, dcgm, nvml, amdsmi or simulated`},
		{[]string{"-interval", "0s"}, ExitUsage, "gpurecord: -interval must be positive, got 0s"},
		{[]string{"-interval", "soon"}, ExitUsage, `gpurecord: invalid value "soon" for flag -interval: parse error`},
		{[]string{"-duration", "-1m"}, ExitUsage, "gpurecord: -duration must not be negative, got -1m0s"},
		{[]string{"-endpoint", "nv-hostengine"}, ExitUsage, `gpurecord: -endpoint: "nv-hostengine" is not host:port or unix:///path`},
		{[]string{"-simulated", "testdata/fleet.yaml"}, ExitUsage, "gpurecord: -simulated needs -backend simulated"},
		{[]string{"-backend", "nvml", "-duration", "1m", "-unpaced"}, ExitUsage, "gpurecord: -unpaced needs -backend simulated and a -duration"},
		{[]string{"-backend", "simulated", "-unpaced"}, ExitUsage, "gpurecord: -unpaced needs -backend simulated and a -duration"},
		{[]string{"-backend", "simulated", "trace.csv"}, ExitUsage, `gpurecord: unexpected argument "trace.csv": the trace goes to -o FILE`},
		{[]string{"-backend", "simulated", "-simulated", "missing.yaml"}, ExitError, "gpurecord: -simulated: open missing.yaml: no such file or directory"},
		{[]string{"-backend", "simulated", "-o", filepath.Join(dir, "no", "such", "dir", "t.csv")}, ExitError,
			"gpurecord: -o: open " + filepath.Join(dir, "no", "such", "dir", "t.csv") + ": no such file or directory"},
		{[]string{"-backend", "simulated", "-o", dir}, ExitError, "gpurecord: -o: open " + dir + ": is a directory"},
		{[]string{"-backend", "simulated", "-pod-resources", filepath.Join(dir, "kubelet.sock")}, ExitError,
			"gpurecord: -pod-resources: stat " + filepath.Join(dir, "kubelet.sock") + ": no such file or directory"},
	} {
		code, stderr := record(t, context.Background(), Env{}, tc.args...)
		require.Equalf(t, tc.code, code, "%v", tc.args)
		require.Equalf(t, 1, strings.Count(stderr, "\n"), "%v: one line, got %q", tc.args, stderr)
		require.Truef(t, strings.HasPrefix(stderr, tc.want), "%v: got %q, want %q", tc.args, stderr, tc.want)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no output is created on a flag error")
}

// TestNoSourceLeavesNoFile: without a GPU source it fails with one line
// naming what it tried, and leaves no empty trace behind.
func TestNoSourceLeavesNoFile(t *testing.T) {
	srv := nvmlmock.New()
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	out := filepath.Join(t.TempDir(), "t.csv")
	code, stderr := record(t, context.Background(), Env{NVML: srv}, "-backend", "nvml", "-o", out)
	require.Equal(t, ExitError, code)
	require.Equal(t, "gpurecord: no GPU source: nvml backend: NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and its libraries mounted?\n", stderr)
	require.NoFileExists(t, out)
}

// flaky is a backend that fails one Collect and one reconnection.
type flaky struct {
	calls, connects int
}

func (*flaky) Name() string { return "flaky" }
func (b *flaky) Connect(context.Context) error {
	b.connects++
	if b.connects == 2 {
		return errors.New("still down")
	}
	return nil
}
func (*flaky) Close() error { return nil }
func (b *flaky) Collect(_ context.Context, now time.Time, _ time.Duration) ([]gpu.Sample, error) {
	b.calls++
	if b.calls == 2 {
		return nil, errors.New("connection reset")
	}
	var vs dcgmfield.Values
	vs.Set(dcgmfield.GPUUtil, float64(b.calls))
	vs.Set(dcgmfield.XIDErrors, 13) // DCGM's last XID ever; no XID event now
	return []gpu.Sample{{Device: &gpu.Device{UUID: "GPU-x"}, Time: now, Values: vs}}, nil
}

// TestLostSource: a source lost mid-recording is noted in the trace and on
// stderr, reconnected, and the recording goes on.
func TestLostSource(t *testing.T) {
	var out, stderr bytes.Buffer
	r := &recorder{opts: &options{interval: 10 * time.Millisecond, duration: 50 * time.Millisecond}, stderr: &stderr}
	require.NoError(t, r.run(context.Background(), []backend.Backend{&flaky{}}, &out, "buffer"))
	require.Equal(t, 3, r.rows, "5 samples: one lost, one still down")
	require.Contains(t, out.String(), "# flaky backend lost at ")
	require.Contains(t, out.String(), "connection reset; reconnecting every 10ms\n")
	require.Contains(t, out.String(), "# flaky backend reconnected at ")
	require.Equal(t, 2, strings.Count(stderr.String(), "\n"), stderr.String())

	path := filepath.Join(t.TempDir(), "t.csv")
	require.NoError(t, os.WriteFile(path, out.Bytes(), 0o644))
	batches := readTrace(t, path)
	require.Len(t, batches, 3)
	require.Equal(t, 0.0, val(t, batches[0][0], dcgmfield.XIDErrors), "a stale XID field is not an XID event")
}

func TestPickXID(t *testing.T) {
	require.Equal(t, uint32(0), pickXID(nil))
	require.Equal(t, uint32(13), pickXID([]uint32{31, 13}))
	require.Equal(t, uint32(79), pickXID([]uint32{79, 13}), "a critical XID wins over a later benign one")
}

func TestAMDSMIStandin(t *testing.T) {
	dir := t.TempDir()
	lib, err := amdsmistandin.Build("../../receiver/dcgmreceiver/testdata/standin-amdsmi/libamd_smi.c", dir)
	require.NoError(t, err)
	state := filepath.Join(dir, "state")
	require.NoError(t, amdsmistandin.Fleet().Write(state))
	t.Setenv(amdsmistandin.StateEnv, state)
	out := filepath.Join(t.TempDir(), "amd.csv")
	code, stderr := record(t, context.Background(), Env{}, "-backend", "amdsmi", "-amdsmi-library", lib, "-hostname", "amd-node-0",
		"-interval", "100ms", "-duration", "300ms", "-o", out)
	require.Equal(t, ExitOK, code, stderr)
	batches := readTrace(t, out)
	require.Len(t, batches, 3)
	require.Len(t, batches[0], 10, "an MI300X, eight CPX partitions, an MI250")
	byUUID := map[string]trace.Row{}
	for _, r := range batches[0] {
		byUUID[r.UUID] = r
	}
	spx := byUUID["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
	require.Equal(t, "AMD Instinct MI300X OAM", spx.Model)
	require.Equal(t, "amd-node-0", spx.Host)
	require.Equal(t, 87.0, val(t, spx, dcgmfield.GPUUtil), "graphics activity")
	require.Equal(t, 196592.0, val(t, spx, dcgmfield.FBTotal))
	require.Equal(t, 627.0, val(t, spx, dcgmfield.PowerUsage))
	require.False(t, spx.Values.Has(dcgmfield.XIDErrors), "no XIDs on AMD: blank, not 0")
	require.False(t, spx.Values.Has(dcgmfield.SMActive))
	part := byUUID["9aff74b9-0000-1000-8044-4a2fb30adeb0"]
	require.Equal(t, 6, part.GPU, "AMD SMI's processor order: after the SPX GPU, partitions 0 to 5")
	require.False(t, part.Values.Has(dcgmfield.PowerUsage), "the board's power is on the first partition")
}
