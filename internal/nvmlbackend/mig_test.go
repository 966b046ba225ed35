package nvmlbackend

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

// TestMIGInstancesFollowed: GPU 5 turns to MIG mode while the backend
// runs; instances are created and destroyed between collections, as
// nvidia-smi mig or a MIG manager does. Each is a device of its own under
// its MIG UUID, with its parent, GPU and compute instance IDs and profile,
// and its own memory; the parent stays a device with the board's readings.
func TestMIGInstancesFollowed(t *testing.T) {
	srv := nvmlmock.New()
	core, logs := observer.New(zap.InfoLevel)
	b := New(Options{Lib: srv, Hostname: "node-a", Logger: zap.New(core), PerProcess: true, ProcRoot: t.TempDir()})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	parent := srv.Devices[5].(*dgxa100.Device)
	at := time.Unix(100, 0)
	collect := func() map[string]gpu.Sample {
		at = at.Add(time.Second)
		samples, err := b.Collect(ctx, at, time.Second)
		require.NoError(t, err)
		out := map[string]gpu.Sample{}
		for _, s := range samples {
			out[s.Device.UUID] = s
		}
		require.Len(t, out, len(samples), "one sample per device")
		return out
	}
	require.Len(t, collect(), 8)

	mig := nvmlmock.EnableMIG(srv, 5)
	require.Len(t, collect(), 8, "MIG mode without instances")
	small := mig.Create(nvml.GPU_INSTANCE_PROFILE_1_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	big := mig.Create(nvml.GPU_INSTANCE_PROFILE_3_SLICE, nvml.COMPUTE_INSTANCE_PROFILE_1_SLICE)
	got := collect()
	require.Len(t, got, 10)
	s := got[small]
	require.Equal(t, gpu.Device{
		UUID: small, Index: 5, Model: "Mock NVIDIA A100-SXM4-40GB", DriverVersion: "550.54.15",
		PCIBusID: got[parent.UUID].Device.PCIBusID, Host: "node-a",
		MIG: &gpu.MIG{ParentUUID: parent.UUID, GPUInstance: 0, ComputeInstance: 0, Profile: "1g.5gb"},
		// The board's serial and VBIOS, not its thresholds: those are
		// reported on the GPU.
		SerialNumber: "1564720004105", FirmwareVersion: "92.00.45.00.03",
	}, *s.Device)
	total, _ := s.Values.Get(f.FBTotal)
	require.Equal(t, 4864.0, total, "the instance's own memory")
	require.False(t, s.Values.Has(f.GPUUtil), "the board's readings are the parent's")
	pv := got[parent.UUID].Values
	require.True(t, pv.Has(f.PowerUsage))
	require.Equal(t, &gpu.MIG{ParentUUID: parent.UUID, GPUInstance: 1, ComputeInstance: 0, Profile: "1c.3g.20gb"}, got[big].Device.MIG,
		"a compute instance smaller than its GPU instance")
	require.Equal(t, 2, logs.FilterMessage("MIG instance appeared").Len())

	// The same instances: the same devices, not announced again.
	again := collect()
	require.Same(t, got[small].Device, again[small].Device)
	require.Equal(t, 2, logs.FilterMessage("MIG instance appeared").Len())

	mig.Destroy(small)
	got = collect()
	require.Len(t, got, 9)
	require.NotContains(t, got, small)
	require.Contains(t, got, big)
	require.Equal(t, 1, logs.FilterMessage("MIG instance gone").Len())

	mig.Destroy(big)
	mig.Disable()
	require.Len(t, collect(), 8)
	require.Equal(t, 2, logs.FilterMessage("MIG instance gone").Len())
}
