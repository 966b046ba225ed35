package amdsmibackend_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmistandin"
	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

// lib is the stand-in built against the backend's own AMD SMI 25.x header;
// libs holds it and the one built against AMD's 26.x header, by major.
var (
	lib  string
	libs = map[int]string{}
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "amdsmi-standin-")
	if err != nil {
		panic(err)
	}
	for _, abi := range amdsmistandin.ABIs {
		sub := filepath.Join(dir, strconv.Itoa(abi))
		if err := os.Mkdir(sub, 0o750); err != nil {
			panic(err)
		}
		if libs[abi], err = amdsmistandin.BuildABI("../../receiver/dcgmreceiver/testdata/standin-amdsmi/libamd_smi.c", sub, abi); err != nil {
			panic(err)
		}
	}
	lib = libs[25]
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// withState writes the stand-in's state and points it there.
func withState(t *testing.T, s amdsmistandin.State) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state")
	require.NoError(t, s.Write(path))
	t.Setenv(amdsmistandin.StateEnv, path)
	return path
}

func connect(t *testing.T, opts amdsmibackend.Options) *amdsmibackend.Backend {
	t.Helper()
	if opts.Library == "" {
		opts.Library = lib
	}
	b := amdsmibackend.New(opts)
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	return b
}

func collect(t *testing.T, b *amdsmibackend.Backend) map[string]gpu.Sample {
	t.Helper()
	samples, err := b.Collect(context.Background(), time.Unix(1767225600, 0), 10*time.Second)
	require.NoError(t, err)
	out := map[string]gpu.Sample{}
	for _, s := range samples {
		out[s.Device.UUID] = s
	}
	return out
}

func value(t *testing.T, s gpu.Sample, field f.Field) float64 {
	t.Helper()
	v, ok := s.Values.Get(field)
	require.True(t, ok, "%s has %v", s.Device.UUID, field)
	return v
}

func amdValue(t *testing.T, s gpu.Sample, field gpu.AMDField) float64 {
	t.Helper()
	v, ok := s.AMD.Get(field)
	require.True(t, ok, "%s has AMD field %d", s.Device.UUID, field)
	return v
}

func TestReadsEveryShape(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.ECC = []amdsmistandin.ECC{{GPU: 0, Block: "umc", Corrected: 5, Uncorr: 1, D: 2}, {GPU: 0, Block: "gfx", Corrected: 3}}
	withState(t, st)
	b := connect(t, amdsmibackend.Options{Hostname: "amd-node-0"})
	got := collect(t, b)
	require.Len(t, got, 10, "an SPX MI300X, an MI300X in CPX mode as eight partitions, an MI250")

	spx := got["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
	d := spx.Device
	require.Equal(t, gpu.VendorAMD, d.VendorName())
	require.Equal(t, "AMD Instinct MI300X OAM", d.Model)
	require.Equal(t, "0000:0c:00.0", d.PCIBusID)
	require.Equal(t, "6.12.12", d.DriverVersion)
	require.Equal(t, "amd-node-0", d.Host)
	require.Equal(t, &gpu.AMDDevice{ComputePartition: "SPX", MemoryPartition: "NPS1", PartitionID: 0}, d.AMD)
	require.Equal(t, 87.0, value(t, spx, f.GPUUtil), "gfx activity")
	require.Equal(t, 43.0, amdValue(t, spx, gpu.AMDUMCActivity))
	require.Equal(t, 196592.0, value(t, spx, f.FBTotal), "VRAM in MiB")
	require.Equal(t, 140.0+87*56/10, value(t, spx, f.PowerUsage), "MI300X: current socket power")
	require.Equal(t, 750.0, amdValue(t, spx, gpu.AMDPowerCap), "µW to W")
	require.Equal(t, 40.0+87*4/10, value(t, spx, f.GPUTemp), "hotspot")
	require.False(t, spx.AMD.Has(gpu.AMDTempEdge), "MI300X has no edge sensor")
	require.Equal(t, 2100.0, amdValue(t, spx, gpu.AMDClockGFX))
	require.Equal(t, 20.0, amdValue(t, spx, gpu.AMDViolationPower))
	require.Equal(t, 8.0, value(t, spx, f.ECCSBEVolTotal), "corrected, summed over blocks")
	require.Equal(t, 1.0, value(t, spx, f.ECCDBEVolTotal))
	require.Contains(t, spx.AMD.ECC, gpu.ECCBlock{Block: "umc", Corrected: 5, Uncorrected: 1, Deferred: 2})
	require.Len(t, spx.AMD.Links, 7)
	require.Equal(t, 512.0, spx.AMD.Links[0].MaxBandwidthGbps)
	require.Equal(t, 128.0, amdValue(t, spx, gpu.AMDBadPageThreshold))
	require.Equal(t, 1.0, amdValue(t, spx, gpu.AMDProcesses))
	require.Positive(t, value(t, spx, f.TotalEnergy))

	// The CPX GPU: eight devices, each its own BDF function, all naming
	// the first partition as parent; board figures on the first only;
	// graphics activity each partition's own, from the GPU's metrics
	// table (an idle one reads 0: idle is a reading).
	var parts []gpu.Sample
	for _, s := range got {
		if s.Device.AMD.ComputePartition == "CPX" {
			parts = append(parts, s)
		}
	}
	require.Len(t, parts, 8)
	first := got["9fff74b9-0000-1000-8044-4a2fb30adeb0"]
	for _, s := range parts {
		require.Equal(t, first.Device.UUID, s.Device.AMD.ParentUUID)
		require.Equal(t, "NPS4", s.Device.AMD.MemoryPartition)
		require.Equal(t, 196592.0/8, value(t, s, f.FBTotal), "each partition its share of VRAM")
		xcp := s.Device.AMD.PartitionID
		require.Equal(t, float64(st.GPUs[1].XCPLoads[xcp]), value(t, s, f.GPUUtil), "partition %d's own activity", xcp)
		if xcp > 0 {
			require.False(t, s.Values.Has(f.PowerUsage), "power is the board's, on the first partition")
			require.False(t, s.AMD.Has(gpu.AMDUMCActivity), "memory activity is the GPU's, on the first partition")
		}
	}
	require.Equal(t, 17.0, amdValue(t, first, gpu.AMDUMCActivity), "the whole GPU's memory activity")
	require.Equal(t, "0000:22:00.3", got["9cff74b9-0000-1000-8044-4a2fb30adeb0"].Device.PCIBusID)
	require.Equal(t, 3, got["9cff74b9-0000-1000-8044-4a2fb30adeb0"].Device.AMD.PartitionID)

	mi250 := got["c3ff740c-0000-1000-8021-7a1b2c3d4e5f"]
	require.Equal(t, "AMD Instinct MI250X / MI250", mi250.Device.Model)
	require.Empty(t, mi250.Device.AMD.ComputePartition)
	require.Equal(t, 90.0+12*4, value(t, mi250, f.PowerUsage), "MI250: average socket power")
	require.Equal(t, 34.0+12/5, amdValue(t, mi250, gpu.AMDTempEdge))
	require.False(t, mi250.AMD.Has(gpu.AMDViolationPower), "no violation status before MI300")
	require.False(t, mi250.AMD.Has(gpu.AMDMMActivity), "a sentinel is no reading")
	require.Empty(t, mi250.AMD.CPER)
}

func TestPartitionActivityIsTheMeanOfItsValidXCCs(t *testing.T) {
	st := amdsmistandin.Fleet()
	// A second MI300X in DPX mode: two partitions of four XCCs each.
	st.GPUs = append(st.GPUs[:2], amdsmistandin.GPU{Kind: "mi300x", UUID: "5aff74b9-0000-1000-8044-4a2fb30adeb0", BDF: "0000:42:00.0",
		Compute: "DPX", Memory: "NPS2", Partitions: 2, Load: 50})
	st.XCCBusy = []amdsmistandin.XCCBusy{
		// XCP 0: 10, 20, 30 and one the firmware did not fill.
		{GPU: 2, XCP: 0, XCC: 0, Value: 10}, {GPU: 2, XCP: 0, XCC: 1, Value: 20}, {GPU: 2, XCP: 0, XCC: 2, Value: 30},
		{GPU: 2, XCP: 0, XCC: 3, Value: math.MaxUint32},
		// XCP 1: nothing valid.
		{GPU: 2, XCP: 1, XCC: 0, Value: math.MaxUint32}, {GPU: 2, XCP: 1, XCC: 1, Value: math.MaxUint32},
		{GPU: 2, XCP: 1, XCC: 2, Value: 101}, {GPU: 2, XCP: 1, XCC: 3, Value: math.MaxUint32},
	}
	withState(t, st)
	got := collect(t, connect(t, amdsmibackend.Options{}))
	require.Len(t, got, 11)
	require.Equal(t, 20.0, value(t, got["5aff74b9-0000-1000-8044-4a2fb30adeb0"], f.GPUUtil), "the mean of 10, 20 and 30; the sentinel left out")
	second := got["59ff74b9-0000-1000-8044-4a2fb30adeb0"]
	require.False(t, second.Values.Has(f.GPUUtil), "no valid entry: no reading, not a zero")
	require.Equal(t, 87.0, value(t, got["ccff74a1-0000-1000-80e0-c6d49f5b0d86"], f.GPUUtil), "SPX: amdsmi_get_gpu_activity as before")
}

func TestFailedMetricsTableLeavesPartitionActivityOut(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.Fails = []amdsmistandin.Fail{
		{Call: "amdsmi_get_gpu_metrics_info", GPU: 1, Status: 7},
		// Not read at all on an SPX GPU or an MI250.
		{Call: "amdsmi_get_gpu_metrics_info", GPU: 0, Status: 7},
		{Call: "amdsmi_get_gpu_metrics_info", GPU: 2, Status: 7},
	}
	withState(t, st)
	core, logs := observer.New(zap.WarnLevel)
	b := connect(t, amdsmibackend.Options{Logger: zap.New(core)})
	for range 3 {
		got := collect(t, b)
		for _, s := range got {
			if s.Device.AMD.ComputePartition != "CPX" {
				require.True(t, s.Values.Has(f.GPUUtil), "%s: activity from amdsmi_get_gpu_activity", s.Device.UUID)
				continue
			}
			require.False(t, s.Values.Has(f.GPUUtil), "partition %d: no zero that looks like a reading, nor the whole GPU's figure", s.Device.AMD.PartitionID)
			require.True(t, s.Values.Has(f.FBUsed), "the other figures stay")
		}
		require.True(t, got["9fff74b9-0000-1000-8044-4a2fb30adeb0"].AMD.Has(gpu.AMDUMCActivity), "the first partition's memory activity stays")
	}
	warned := logs.FilterField(zap.String("call", "amdsmi_get_gpu_metrics_info")).All()
	require.Len(t, warned, 1)
	require.Equal(t, "9fff74b9-0000-1000-8044-4a2fb30adeb0", warned[0].ContextMap()["hw.id"])
	require.Contains(t, warned[0].ContextMap()["status"], "AMDSMI_STATUS_API_FAILED")
}

func TestEnergyAndECCAreCounters(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.ECC = []amdsmistandin.ECC{{GPU: 0, Block: "umc", Uncorr: 1}}
	path := withState(t, st)
	b := connect(t, amdsmibackend.Options{})
	id := "ccff74a1-0000-1000-80e0-c6d49f5b0d86"
	s1 := collect(t, b)[id]
	st.ECC[0].Uncorr = 4
	require.NoError(t, st.Write(path))
	s2 := collect(t, b)[id]
	require.Greater(t, value(t, s2, f.TotalEnergy), value(t, s1, f.TotalEnergy))
	require.Equal(t, 1.0, value(t, s1, f.ECCDBEVolTotal))
	require.Equal(t, 4.0, value(t, s2, f.ECCDBEVolTotal), "uncorrectable ECC rises")
	require.Greater(t, s2.AMD.Links[0].ReadKB, s1.AMD.Links[0].ReadKB)
}

func TestCPERPagesAndCursor(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.CPERPage = 2
	for i := range 5 {
		st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 2, AFIDs: []uint64{uint64(30 + i%2)}})
	}
	st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 1, AFIDs: []uint64{6, 7}})
	path := withState(t, st)
	cursors := amdsmibackend.NewMemoryCursors()
	id := "ccff74a1-0000-1000-80e0-c6d49f5b0d86"

	b := amdsmibackend.New(amdsmibackend.Options{Library: lib, Cursors: cursors})
	require.NoError(t, b.Connect(context.Background()))
	got := collect(t, b)[id].AMD.CPER
	require.Len(t, got, 6, "six records over three pages of two")
	require.Equal(t, gpu.CPERRecord{Severity: gpu.CPERFatal, AFIDs: []uint64{6, 7}}, got[5])
	require.Equal(t, gpu.CPERRecord{Severity: gpu.CPERNonFatalCorrected, AFIDs: []uint64{31}}, got[1])
	require.Empty(t, collect(t, b)[id].AMD.CPER, "read once")
	require.NoError(t, b.Close())

	// A new process with the saved cursor reads only what came since.
	st.CPER = append(st.CPER, amdsmistandin.CPER{GPU: 0, Severity: 0, AFIDs: []uint64{12}})
	require.NoError(t, st.Write(path))
	b2 := connect(t, amdsmibackend.Options{Cursors: cursors})
	require.Equal(t, []gpu.CPERRecord{{Severity: gpu.CPERNonFatalUncorrected, AFIDs: []uint64{12}}}, collect(t, b2)[id].AMD.CPER)
}

func TestFailedCallLeavesItsFigureOutAndSaysSoOnce(t *testing.T) {
	st := amdsmistandin.Fleet()
	st.Fails = []amdsmistandin.Fail{{Call: "amdsmi_get_power_info", GPU: 0, Status: 7}}
	withState(t, st)
	core, logs := observer.New(zap.WarnLevel)
	b := connect(t, amdsmibackend.Options{Logger: zap.New(core)})
	for range 3 {
		s := collect(t, b)["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
		require.False(t, s.Values.Has(f.PowerUsage), "no zero that looks like a reading")
		require.True(t, s.Values.Has(f.GPUUtil), "the other figures stay")
	}
	warned := logs.FilterField(zap.String("call", "amdsmi_get_power_info")).All()
	require.Len(t, warned, 1)
	require.Contains(t, warned[0].ContextMap()["status"], "AMDSMI_STATUS_API_FAILED")
}

func TestDeviceThatDisappears(t *testing.T) {
	st := amdsmistandin.Fleet()
	path := withState(t, st)
	b := amdsmibackend.New(amdsmibackend.Options{Library: lib})
	require.NoError(t, b.Connect(context.Background()))
	require.Len(t, collect(t, b), 10)

	st.GPUs[2].Gone = true
	require.NoError(t, st.Write(path))
	_, err := b.Collect(context.Background(), time.Now(), time.Second)
	require.ErrorContains(t, err, "GPU c3ff740c-0000-1000-8021-7a1b2c3d4e5f (gpu9, 0000:c1:00.0) is gone")
	require.NoError(t, b.Close())

	// The receiver reconnects: the GPU is no longer enumerated.
	st.GPUs = st.GPUs[:2]
	require.NoError(t, st.Write(path))
	require.NoError(t, b.Connect(context.Background()))
	require.Len(t, collect(t, b), 9)
	require.NoError(t, b.Close())
}

func TestLibraryMissingOrTooOld(t *testing.T) {
	b := amdsmibackend.New(amdsmibackend.Options{Library: filepath.Join(t.TempDir(), "libamd_smi.so")})
	err := b.Connect(context.Background())
	require.ErrorContains(t, err, "libamd_smi.so")
	require.ErrorContains(t, err, "is ROCm's amd-smi library installed")

	st := amdsmistandin.Fleet()
	st.Version = [3]int{24, 7, 1}
	withState(t, st)
	err = amdsmibackend.New(amdsmibackend.Options{Library: lib}).Connect(context.Background())
	require.EqualError(t, err, "libamd_smi 24.7.1 is too old: this build reads AMD SMI 25.x to 26.x (ROCm 6.4 to 7.x)")

	// A 27.x library lays its version out as 26.x does, without a year.
	st.Version = [3]int{27, 0, 0}
	withState(t, st)
	err = amdsmibackend.New(amdsmibackend.Options{Library: libs[26]}).Connect(context.Background())
	require.EqualError(t, err, "libamd_smi 27.0.0 has a newer ABI than this build reads (AMD SMI 25.x to 26.x): its structures may differ")

	st.Version = [3]int{}
	st.InitFail = 34
	withState(t, st)
	err = amdsmibackend.New(amdsmibackend.Options{Library: lib}).Connect(context.Background())
	require.ErrorContains(t, err, "amdsmi_init: AMDSMI_STATUS_DRIVER_NOT_LOADED")
}

func TestSkipPCIeThroughput(t *testing.T) {
	withState(t, amdsmistandin.Fleet())
	s := collect(t, connect(t, amdsmibackend.Options{SkipPCIeThroughput: true}))["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
	require.False(t, s.Values.Has(f.PCIeTxBytes), "not read when hw.gpu.io is off")
	require.True(t, s.Values.Has(f.GPUUtil))
	s = collect(t, connect(t, amdsmibackend.Options{}))["ccff74a1-0000-1000-80e0-c6d49f5b0d86"]
	require.Equal(t, 2000000.0+87*100000, value(t, s, f.PCIeTxBytes), "bytes per second sent")
}
