package dcgmreceiver

import (
	"context"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// TestNVMLRecoveryActionGauge: the NVML backend's reading of
// NVML_FI_DEV_GET_GPU_RECOVERY_ACTION, through the receiver's mapping. A
// GPU whose field reads 1 has nvidia.gpu.recovery_action 1 (an int), one
// reading 0 has 0, and one whose driver fails the field with NOT_SUPPORTED
// has no point at all.
func TestNVMLRecoveryActionGauge(t *testing.T) {
	srv := nvmlmock.New()
	srv.Devices[1].(*dgxa100.Device).GetFieldValuesFunc = nvmlmock.RecoveryAction(f.RecoveryActionGPUReset, nvml.SUCCESS)
	srv.Devices[2].(*dgxa100.Device).GetFieldValuesFunc = nvmlmock.RecoveryAction(0, nvml.ERROR_NOT_SUPPORTED)
	b := nvmlbackend.New(nvmlbackend.Options{Lib: srv})
	ctx := context.Background()
	require.NoError(t, b.Connect(ctx))
	t.Cleanup(func() { require.NoError(t, b.Close()) })
	samples, err := b.Collect(ctx, time.Unix(1767225600, 0), time.Second)
	require.NoError(t, err)

	m := newMapper(metadata.NewDefaultMetricsBuilderConfig(), NamingOTel, receivertest.NewNopSettings(metadata.Type))
	for i := range samples {
		m.Append(&samples[i])
	}
	devs := byDevice(t, m.Emit())
	uuid := func(i int) string { return srv.Devices[i].(*dgxa100.Device).UUID }
	require.Equal(t, int64(1), point(t, devs[uuid(1)], "nvidia.gpu.recovery_action", nil).IntValue(), "GPU reset")
	require.Equal(t, int64(0), point(t, devs[uuid(0)], "nvidia.gpu.recovery_action", nil).IntValue(), "none")
	_, has := metric(devs[uuid(2)], "nvidia.gpu.recovery_action")
	require.False(t, has, "NOT_SUPPORTED must not read as 0, none")
	_, has = metric(devs[uuid(2)], "hw.temperature")
	require.True(t, has, "the GPU is reported all the same")
}
