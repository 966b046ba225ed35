package dcgmreceiver

import (
	"context"
	"testing"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// healthPoints returns a device's nvidia.gpu.health by subsystem.
func healthPoints(t *testing.T, rm pmetric.ResourceMetrics) map[string]int64 {
	t.Helper()
	m, ok := metric(rm, metricnames.NvidiaGPUHealth)
	if !ok {
		return nil
	}
	require.Equal(t, pmetric.MetricTypeGauge, m.Type())
	out := map[string]int64{}
	dps := m.Gauge().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		sys, ok := dps.At(i).Attributes().Get(metricnames.AttrNvidiaGPUHealthSystem)
		require.True(t, ok)
		out[sys.Str()] = dps.At(i).IntValue()
	}
	return out
}

// TestHealthMetric: DCGM's health incidents, through the real go-dcgm
// code and the receiver, become one point per subsystem watched on each
// whole GPU: 0 pass, 1 warn, 2 fail. The MIG instance reports none (its
// GPU does), and without NVSwitches their subsystems are not watched.
func TestHealthMetric(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 3, MIG: true, Connected: true, Epoch: 1, Health: []dcgmstandin.Incident{
		{Entity: 1, System: uint(dcgm.DCGM_HEALTH_WATCH_MEM), Result: 20},
		{Entity: 1, System: uint(dcgm.DCGM_HEALTH_WATCH_PCIE), Result: 10},
		{Entity: 2, System: uint(dcgm.DCGM_HEALTH_WATCH_INFOROM), Result: 10},
	}})
	s, _, _ := newDCGMScraper(t)
	md, err := s.scrape(context.Background())
	require.NoError(t, err)
	devs := byDevice(t, md)
	pass := map[string]int64{}
	for _, sys := range gpu.HealthSystems() {
		if sys != gpu.HealthNVSwitchFatal && sys != gpu.HealthNVSwitchNonFatal {
			pass[sys.String()] = 0
		}
	}
	with := func(kv map[string]int64) map[string]int64 {
		out := map[string]int64{}
		for k, v := range pass {
			out[k] = v
		}
		for k, v := range kv {
			out[k] = v
		}
		return out
	}
	require.Equal(t, pass, healthPoints(t, devs[gpu0]))
	require.Equal(t, with(map[string]int64{"memory": 2, "pcie": 1}), healthPoints(t, devs[gpu1]))
	require.Equal(t, with(map[string]int64{"inforom": 1}), healthPoints(t, devs[gpu2]))
	require.Nil(t, healthPoints(t, devs[mig0]), "a MIG instance's health is its GPU's")
}

// Every subsystem has its attribute value, by name.
func TestHealthSystemsMapped(t *testing.T) {
	for _, sys := range gpu.HealthSystems() {
		require.Equal(t, sys.String(), healthSystems[sys].String())
	}
	require.Len(t, metadata.MapAttributeNvidiaGpuHealthSystem, int(gpu.NumHealthSystems))
}

// With the metric off, or an exporter's naming (which has no such
// metric), the backends check no health.
func TestHealthWanted(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.True(t, healthWanted(cfg), "on by default")
	cfg.Metrics.NvidiaGpuHealth.Enabled = false
	require.False(t, healthWanted(cfg))
	cfg = createDefaultConfig().(*Config)
	cfg.Naming = NamingDCGMExporter
	require.False(t, healthWanted(cfg))
}
