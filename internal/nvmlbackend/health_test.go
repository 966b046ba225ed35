package nvmlbackend

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

// NVML's equivalents of DCGM's memory, InfoROM and PCIe watches, judged by
// DCGM's rules, per GPU.
func TestNVMLHealth(t *testing.T) {
	srv := nvmlmock.New()
	dev := func(i int) *dgxa100.Device { return srv.Devices[i].(*dgxa100.Device) }
	noDBE := func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) { return 0, nvml.SUCCESS }
	for i := range srv.Devices {
		dev(i).GetTotalEccErrorsFunc = noDBE
	}
	// 1: a volatile double-bit error. 2: a row remapping pending. 3: a
	// failed remapping (the mock's). 4: a pre-Ampere GPU with pages
	// pending retirement. 5: a corrupt InfoROM. 6: no InfoROM, and PCIe
	// replays past 8 a minute. 7: no ECC counts at all.
	dev(1).GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
		if t == nvml.MEMORY_ERROR_TYPE_UNCORRECTED {
			return 2, nvml.SUCCESS
		}
		return 0, nvml.SUCCESS
	}
	dev(2).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 1, true, false, nvml.SUCCESS }
	dev(4).GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) { return 0, 0, false, false, nvml.ERROR_NOT_SUPPORTED }
	dev(4).GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return nvml.FEATURE_ENABLED, nvml.SUCCESS }
	inforom := 0
	dev(5).ValidateInforomFunc = func() nvml.Return { inforom++; return nvml.ERROR_CORRUPTED_INFOROM }
	dev(6).ValidateInforomFunc = func() nvml.Return { return nvml.ERROR_NOT_SUPPORTED }
	replays := 0
	dev(6).GetPcieReplayCounterFunc = func() (int, nvml.Return) { return replays, nvml.SUCCESS }
	dev(7).GetTotalEccErrorsFunc = func(nvml.MemoryErrorType, nvml.EccCounterType) (uint64, nvml.Return) {
		return 0, nvml.ERROR_NOT_SUPPORTED
	}
	dev(7).GetRemappedRowsFunc = dev(4).GetRemappedRowsFunc
	dev(7).GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }

	b := New(Options{Lib: srv, Health: true})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	collect := func(at time.Time) []gpu.Sample {
		samples, err := b.Collect(ctx, at, time.Second)
		require.NoError(t, err)
		require.Len(t, samples, 8)
		return samples
	}
	health := func(watched []gpu.HealthSystem, results map[gpu.HealthSystem]gpu.HealthResult) gpu.Health {
		var h gpu.Health
		for _, s := range watched {
			h.Watch(s)
		}
		for s, r := range results {
			h.Report(s, r)
		}
		return h
	}
	all := []gpu.HealthSystem{gpu.HealthPCIe, gpu.HealthMemory, gpu.HealthInfoROM}
	t0 := time.Unix(1000, 0)
	samples := collect(t0)
	want := []gpu.Health{
		health(all, nil),
		health(all, map[gpu.HealthSystem]gpu.HealthResult{gpu.HealthMemory: gpu.HealthFail}),
		health(all, map[gpu.HealthSystem]gpu.HealthResult{gpu.HealthMemory: gpu.HealthWarn}),
		health(all, map[gpu.HealthSystem]gpu.HealthResult{gpu.HealthMemory: gpu.HealthFail}),
		health(all, map[gpu.HealthSystem]gpu.HealthResult{gpu.HealthMemory: gpu.HealthWarn}),
		health(all, map[gpu.HealthSystem]gpu.HealthResult{gpu.HealthInfoROM: gpu.HealthWarn}),
		health([]gpu.HealthSystem{gpu.HealthPCIe, gpu.HealthMemory}, nil),
		health([]gpu.HealthSystem{gpu.HealthPCIe, gpu.HealthInfoROM}, nil),
	}
	for i := range want {
		require.Equal(t, want[i], samples[i].Health, "GPU %d", i)
	}

	// 9 replays in 30 s: judged at the minute's end; 9 in the next minute
	// (at most 8 a minute) is well again.
	replays = 9
	samples = collect(t0.Add(30 * time.Second))
	require.Equal(t, gpu.HealthPass, samples[6].Health.Result[gpu.HealthPCIe], "judged over a whole minute")
	samples = collect(t0.Add(time.Minute))
	require.Equal(t, gpu.HealthWarn, samples[6].Health.Result[gpu.HealthPCIe])
	samples = collect(t0.Add(90 * time.Second))
	require.Equal(t, gpu.HealthWarn, samples[6].Health.Result[gpu.HealthPCIe], "held until the next window closes")
	replays = 17
	samples = collect(t0.Add(2 * time.Minute))
	require.Equal(t, gpu.HealthPass, samples[6].Health.Result[gpu.HealthPCIe], "8 in the last minute")

	require.Equal(t, 1, inforom, "the InfoROM is read from flash once an hour")
	collect(t0.Add(time.Hour))
	require.Equal(t, 2, inforom)
}

// Without Health, no health call is made (the mock panics on a method it
// was given none for) and samples carry no health.
func TestNVMLHealthOff(t *testing.T) {
	srv := nvmlmock.New()
	for _, d := range srv.Devices {
		d.(*dgxa100.Device).ValidateInforomFunc = nil
		d.(*dgxa100.Device).GetRetiredPagesPendingStatusFunc = nil
	}
	b := New(Options{Lib: srv})
	require.NoError(t, b.Connect(context.Background()))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	samples, err := b.Collect(context.Background(), time.Unix(100, 0), time.Second)
	require.NoError(t, err)
	for _, s := range samples {
		require.Zero(t, s.Health)
	}
}
