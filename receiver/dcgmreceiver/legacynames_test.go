package dcgmreceiver

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames/legacynamestest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

var processMetrics = []string{
	metricnames.OTelGPUProcessCount, metricnames.OTelGPUProcessMemoryUsage,
	metricnames.OTelGPUProcessMemoryCopyUtilization, metricnames.OTelGPUProcessUtilization,
}

// TestLegacyNamesPerProcess: while otelgpu.emitNvidiaNames is enabled (the
// default), each per-process series is sent under its new name and its old
// one, on a resource with both owner attributes; disabled, the new names only.
func TestLegacyNamesPerProcess(t *testing.T) {
	mbc := metadata.NewDefaultMetricsBuilderConfig()
	mbc.Metrics.OtelgpuProcessMemoryCopyUtilization.Enabled = true
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "gate on", false: "gate off"}[on], func(t *testing.T) {
			legacynamestest.SetGate(t, on)
			procs, devices := splits(mapPerProcess(t, mbc))
			require.NotEmpty(t, procs)
			for _, p := range procs {
				owner := attr(p, metricnames.AttrOTelGPUProcessOwner)
				require.NotEmpty(t, owner)
				if on {
					require.Equal(t, owner, attr(p, legacynames.OldProcessOwner))
				} else {
					require.Empty(t, attr(p, legacynames.OldProcessOwner))
				}
				for _, n := range processMetrics {
					m, ok := metric(p, n)
					require.True(t, ok, "%s is always sent", n)
					old, _ := legacynames.Metric(n)
					c, has := metric(p, old)
					require.Equal(t, on, has, old)
					if has {
						back := pmetric.NewMetric()
						c.CopyTo(back)
						back.SetName(n)
						require.Equal(t, m, back, "%s is %s renamed", old, n)
					}
				}
			}
			for _, d := range devices {
				require.False(t, hasMetric(d, metricnames.OTelGPUProcessCount), "an NVIDIA GPU's count is its owners'")
				require.False(t, hasMetric(d, legacynames.OldAMDProcessCount))
			}
		})
	}
}

// TestLegacyNamesAMDProcessCount: an AMD GPU's own process count is
// otelgpu.process.count, and amd.gpu.process.count, a gauge as it was, while
// the gate is enabled.
func TestLegacyNamesAMDProcessCount(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "gate on", false: "gate off"}[on], func(t *testing.T) {
			legacynamestest.SetGate(t, on)
			lib, _ := amdStandin(t, amdFleet())
			s := newAMDScraper(t, lib, &statusHost{}, nil)
			scrapeAt(t, s, 0)
			md := scrapeAt(t, s, 1)
			n := 0
			for i := 0; i < md.ResourceMetrics().Len(); i++ {
				rm := md.ResourceMetrics().At(i)
				m, ok := metric(rm, metricnames.OTelGPUProcessCount)
				if !ok {
					continue
				}
				n++
				c, has := metric(rm, legacynames.OldAMDProcessCount)
				require.Equal(t, on, has)
				if has {
					require.Equal(t, pmetric.MetricTypeGauge, c.Type())
					require.Equal(t, m.Sum().DataPoints().At(0).IntValue(), c.Gauge().DataPoints().At(0).IntValue())
				}
				old, _ := legacynames.Metric(metricnames.OTelGPUProcessCount)
				require.False(t, hasMetric(rm, old), "a GPU's own count was never %s", old)
			}
			require.Positive(t, n)
		})
	}
}

// TestLegacyConfigKeys: a configuration that turns a per-process series or
// the owner attribute on or off by its old name still loads, with a warning.
func TestLegacyConfigKeys(t *testing.T) {
	old, _ := legacynames.Metric(metricnames.OTelGPUProcessMemoryCopyUtilization)
	cfg := createDefaultConfig().(*Config)
	conf := confmap.NewFromStringMap(map[string]any{
		"metrics":             map[string]any{old: map[string]any{"enabled": true}},
		"resource_attributes": map[string]any{legacynames.OldProcessOwner: map[string]any{"enabled": false}},
	})
	require.NoError(t, conf.Unmarshal(cfg))
	require.True(t, cfg.Metrics.OtelgpuProcessMemoryCopyUtilization.Enabled)
	require.False(t, cfg.ResourceAttributes.OtelgpuProcessOwner.Enabled)
	require.Len(t, cfg.legacyKeys, 2)
}

// TestLegacyVendorDuplicates: the vendor names of what the conventions now
// name (nvidia.gpu.memory.temperature, amd.gpu.temperature,
// nvidia.gpu.mig.parent_id) are sent while the gate is enabled and not when
// it is disabled; hw.temperature's memory point and hw.parent always are.
func TestLegacyVendorDuplicates(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(map[bool]string{true: "gate on", false: "gate off"}[on], func(t *testing.T) {
			legacynamestest.SetGate(t, on)
			md := scrapeSemconvFleet(t)[1]
			seen := map[string]bool{}
			rms := md.ResourceMetrics()
			for i := 0; i < rms.Len(); i++ {
				res := rms.At(i).Resource().Attributes()
				if _, ok := res.Get(metricnames.AttrNvidiaGPUMIGParentID); ok {
					seen[metricnames.AttrNvidiaGPUMIGParentID] = true
				}
				if _, ok := res.Get(metricnames.AttrHWParent); ok {
					seen[metricnames.AttrHWParent] = true
				}
				sms := rms.At(i).ScopeMetrics()
				for j := 0; j < sms.Len(); j++ {
					ms := sms.At(j).Metrics()
					for k := 0; k < ms.Len(); k++ {
						m := ms.At(k)
						seen[m.Name()] = true
						if m.Name() != metricnames.HWTemperature {
							continue
						}
						dps := m.Gauge().DataPoints()
						for d := 0; d < dps.Len(); d++ {
							if loc, _ := dps.At(d).Attributes().Get(metricnames.AttrHWSensorLocation); loc.Str() == "memory" {
								seen["hw.temperature{memory}"] = true
							}
						}
					}
				}
			}
			for _, old := range []string{metricnames.NvidiaGPUMemoryTemperature, metricnames.AmdGPUTemperature, metricnames.AttrNvidiaGPUMIGParentID} {
				require.Equal(t, on, seen[old], old)
			}
			require.True(t, seen[metricnames.AttrHWParent])
			require.True(t, seen["hw.temperature{memory}"])
		})
	}
}
