package fromdcgmexporterprocessor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestNvidiaSMIExporter: nvidia_gpu_exporter's series become the dcgm
// receiver's metrics in their units: ratios, bytes and hertz converted to
// DCGM's percent, MiB and MHz and back; the UUID gains the GPU- prefix the
// exporter drops; the model and index come from nvidia_smi_gpu_info.
func TestNvidiaSMIExporter(t *testing.T) {
	const text = `nvidia_smi_gpu_info{index="3",name="NVIDIA H100 80GB HBM3",driver_version="590.48.01",pci_bus_id="00000000:00:09.0",uuid="5ca1ab1e-0000-4000-8000-000000000003"} 1
nvidia_smi_utilization_gpu_ratio{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 0.87
nvidia_smi_memory_used_bytes{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 2.0780679168e+10
nvidia_smi_memory_free_bytes{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 6.4238911488e+10
nvidia_smi_power_draw_watts{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 631.95
nvidia_smi_enforced_power_limit_watts{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 700
nvidia_smi_temperature_gpu{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 61
nvidia_smi_clocks_current_sm_clock_hz{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 1.98e+09
nvidia_smi_clocks_event_reasons_active{uuid="5ca1ab1e-0000-4000-8000-000000000003"} 4
`
	p, _ := newTestTranslator(t, defaultConfig())
	byID := devices(consume(t, p, page(t, 0, text)))
	const id = "GPU-5ca1ab1e-0000-4000-8000-000000000003"
	require.Contains(t, byID, id)
	rm := byID[id][0]
	attrs := rm.Resource().Attributes().AsRaw()
	require.Equal(t, "NVIDIA H100 80GB HBM3", attrs[metricnames.AttrHWModel])
	require.Equal(t, "gpu3", attrs[metricnames.AttrHWName])
	require.InDelta(t, 0.87, value(t, rm, metricnames.HWGPUUtilization, map[string]any{metricnames.AttrHWGPUTask: metricnames.AttrHWGPUTaskGeneral}), 1e-9)
	require.InDelta(t, 2.0780679168e10, value(t, rm, metricnames.HWGPUMemoryUsage, nil), 1)
	require.InDelta(t, 631.95, value(t, rm, metricnames.HWPower, nil), 1e-9)
	require.InDelta(t, 700, value(t, rm, metricnames.NvidiaGPUPowerLimit, nil), 1e-9)
	require.InDelta(t, 61, value(t, rm, metricnames.HWTemperature, nil), 1e-9)
	require.InDelta(t, 1.98e9, value(t, rm, metricnames.NvidiaGPUClockFrequency, map[string]any{metricnames.AttrNvidiaGPUClock: metricnames.AttrNvidiaGPUClockSM}), 1)
	require.InDelta(t, 4, value(t, rm, metricnames.NvidiaGPUClockEventReasons, nil), 0)
}
