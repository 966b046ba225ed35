package nvmlbackend

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

func TestNVMLMock(t *testing.T) {
	srv := nvmlmock.New()
	b := New(Options{Lib: srv, Hostname: "node-a"})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })

	samples, err := b.Collect(ctx, time.Unix(100, 0), time.Second)
	require.NoError(t, err)
	require.Len(t, samples, 8)

	s0 := samples[0]
	d0 := srv.Devices[0].(*dgxa100.Device)
	require.Equal(t, gpu.Device{
		UUID: d0.UUID, Index: 0, Model: "Mock NVIDIA A100-SXM4-40GB", DriverVersion: "550.54.15",
		PCIBusID: s0.Device.PCIBusID, Host: "node-a",
	}, *s0.Device)
	want := map[f.Field]float64{
		f.GPUUtil: 80, f.MemCopyUtil: 30, f.EncUtil: 0,
		f.FBTotal: 40 << 10, f.FBUsed: 10 << 10, f.FBFree: 30 << 10,
		f.PowerUsage: 250.5, f.EnforcedPowerLimit: 400, f.TotalEnergy: 123456, f.GPUTemp: 61,
		f.SMClock: 1410, f.MemClock: 1593, f.ClocksEventReasons: 0x40,
		f.ECCSBEVolTotal: 5, f.ECCDBEVolTotal: 1, f.PCIeReplayCounter: 0,
		f.CorrectableRemappedRows: 2, f.UncorrectableRemappedRows: 1, f.RowRemapFailure: 0,
		f.PCIeTxBytes: 1000 * 1024, f.PCIeRxBytes: 1000 * 1024,
	}
	for field, v := range want {
		got, ok := s0.Values.Get(field)
		require.Truef(t, ok, "%s missing", field)
		require.InDeltaf(t, v, got, 1e-9, "%s", field)
	}
	require.False(t, s0.Values.Has(f.DecUtil), "an unsupported reading is left out")
	require.False(t, s0.Values.Has(f.SMActive), "GPM needs two samples")
	rf, _ := samples[3].Values.Get(f.RowRemapFailure)
	require.Equal(t, 1.0, rf)
	require.Equal(t, []uint32{79}, samples[2].XIDs)

	// The second collection has a GPM interval on device 0 only.
	samples, err = b.Collect(ctx, time.Unix(101, 0), time.Second)
	require.NoError(t, err)
	sm, ok := samples[0].Values.Get(f.SMActive)
	require.True(t, ok)
	require.InDelta(t, float64(10*nvml.GPM_METRIC_SM_UTIL)/100, sm, 1e-9, "GPM percent becomes a ratio")
	tensor, _ := samples[0].Values.Get(f.PipeTensorActive)
	require.InDelta(t, float64(10*nvml.GPM_METRIC_ANY_TENSOR_UTIL)/100, tensor, 1e-9)
	require.False(t, samples[1].Values.Has(f.SMActive), "no GPM on device 1")
	require.Empty(t, samples[2].XIDs, "an XID is reported once")
}

// TestNVMLPowerLimit: the enforced power limit is read in W (NVML gives
// mW), a capped GPU reports its cap, and a GPU whose driver does not
// report it leaves the field out rather than reporting 0.
func TestNVMLPowerLimit(t *testing.T) {
	srv := nvmlmock.New()
	srv.Devices[1].(*dgxa100.Device).GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 250000, nvml.SUCCESS }
	srv.Devices[2].(*dgxa100.Device).GetEnforcedPowerLimitFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	b := New(Options{Lib: srv})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	samples, err := b.Collect(ctx, time.Unix(100, 0), time.Second)
	require.NoError(t, err)
	for i, want := range []float64{400, 250} {
		got, ok := samples[i].Values.Get(f.EnforcedPowerLimit)
		require.Truef(t, ok, "device %d", i)
		require.InDeltaf(t, want, got, 1e-9, "device %d", i)
	}
	require.False(t, samples[2].Values.Has(f.EnforcedPowerLimit), "an unsupported limit is left out")
}

func TestNVMLGPULost(t *testing.T) {
	srv := nvmlmock.New()
	b := New(Options{Lib: srv})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	srv.Devices[4].(*dgxa100.Device).GetPowerUsageFunc = func() (uint32, nvml.Return) { return 0, nvml.ERROR_GPU_IS_LOST }
	_, err := b.Collect(ctx, time.Unix(100, 0), time.Second)
	require.ErrorContains(t, err, srv.Devices[4].(*dgxa100.Device).UUID, "the error names the lost GPU")
	require.NoError(t, b.Close())
}

func TestNVMLLibraryMissing(t *testing.T) {
	srv := nvmlmock.New()
	srv.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	err := New(Options{Lib: srv}).Connect(context.Background())
	require.EqualError(t, err, "NVML library libnvidia-ml.so.1 not found: is the NVIDIA driver installed and its libraries mounted?")
}
