package nvmlbackend

import (
	"context"
	"encoding/binary"
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
		SerialNumber: "1564720004100", FirmwareVersion: "92.00.45.00.03",
		TempLimits: []gpu.TempLimit{
			{Sensor: gpu.SensorDie, Kind: gpu.LimitSlowdown, Celsius: 89},
			{Sensor: gpu.SensorDie, Kind: gpu.LimitShutdown, Celsius: 92},
			{Sensor: gpu.SensorMemory, Kind: gpu.LimitSlowdown, Celsius: 95},
		},
	}, *s0.Device)
	want := map[f.Field]float64{
		f.GPUUtil: 80, f.MemCopyUtil: 30, f.EncUtil: 0,
		f.FBTotal: 40 << 10, f.FBUsed: 10 << 10, f.FBFree: 30 << 10,
		f.PowerUsage: 250.5, f.EnforcedPowerLimit: 400, f.TotalEnergy: 123456, f.GPUTemp: 61,
		f.SMClock: 1410, f.MemClock: 1593, f.ClocksEventReasons: 0x40,
		f.ECCSBEVolTotal: 5, f.ECCDBEVolTotal: 1, f.PCIeReplayCounter: 0,
		f.CorrectableRemappedRows: 2, f.UncorrectableRemappedRows: 1, f.RowRemapFailure: 0,
		f.PCIeTxBytes: 1000 * 1024, f.PCIeRxBytes: 1000 * 1024, f.RecoveryAction: 0,
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

// TestNVMLRecoveryAction: the recovery action is read from the field
// values (NVML_FI_DEV_GET_GPU_RECOVERY_ACTION): a GPU that needs a reset
// reports 1; a driver that fails the field (NOT_SUPPORTED: it predates it)
// or the whole call leaves the field out rather than reporting 0, none; a
// value of another type than the mock's unsigned int decodes the same.
func TestNVMLRecoveryAction(t *testing.T) {
	srv := nvmlmock.New()
	dev := func(i int) *dgxa100.Device { return srv.Devices[i].(*dgxa100.Device) }
	dev(1).GetFieldValuesFunc = nvmlmock.RecoveryAction(f.RecoveryActionGPUReset, nvml.SUCCESS)
	dev(2).GetFieldValuesFunc = nvmlmock.RecoveryAction(0, nvml.ERROR_NOT_SUPPORTED)
	dev(3).GetFieldValuesFunc = func([]nvml.FieldValue) nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	var asked []uint32
	dev(4).GetFieldValuesFunc = func(fvs []nvml.FieldValue) nvml.Return {
		for i := range fvs {
			asked = append(asked, fvs[i].FieldId)
			fvs[i].NvmlReturn = uint32(nvml.SUCCESS)
			fvs[i].ValueType = uint32(nvml.VALUE_TYPE_UNSIGNED_LONG_LONG)
			binary.NativeEndian.PutUint64(fvs[i].Value[:], f.RecoveryActionNodeReboot)
		}
		return nvml.SUCCESS
	}
	b := New(Options{Lib: srv})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	samples, err := b.Collect(ctx, time.Unix(100, 0), time.Second)
	require.NoError(t, err)
	for i, want := range map[int]float64{0: f.RecoveryActionNone, 1: f.RecoveryActionGPUReset, 4: f.RecoveryActionNodeReboot} {
		got, ok := samples[i].Values.Get(f.RecoveryAction)
		require.Truef(t, ok, "device %d", i)
		require.InDeltaf(t, want, got, 0, "device %d", i)
	}
	require.Equal(t, []uint32{nvml.FI_DEV_GET_GPU_RECOVERY_ACTION}, asked, "field 230, once per collection")
	require.False(t, samples[2].Values.Has(f.RecoveryAction), "a field the driver fails is left out")
	require.False(t, samples[3].Values.Has(f.RecoveryAction), "a failed call is left out")
	require.True(t, samples[3].Values.Has(f.GPUTemp), "and the rest is read as usual")
}

// TestNVMLRecoveryActionLost: a GPU lost in the field read is lost, as in
// any other read.
func TestNVMLRecoveryActionLost(t *testing.T) {
	srv := nvmlmock.New()
	srv.Devices[1].(*dgxa100.Device).GetFieldValuesFunc = nvmlmock.RecoveryAction(0, nvml.ERROR_GPU_IS_LOST)
	b := New(Options{Lib: srv})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	_, err := b.Collect(ctx, time.Unix(100, 0), time.Second)
	require.ErrorContains(t, err, nvml.ErrorString(nvml.ERROR_GPU_IS_LOST))
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
