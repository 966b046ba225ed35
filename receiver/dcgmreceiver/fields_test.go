package dcgmreceiver

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// onlyMetric returns a config with every metric disabled but the one at
// index i of metadata.MetricsConfig, and that metric's name.
func onlyMetric(i int) (*Config, string) {
	cfg := createDefaultConfig().(*Config)
	v := reflect.ValueOf(&cfg.Metrics).Elem()
	for j := 0; j < v.NumField(); j++ {
		v.Field(j).FieldByName("Enabled").SetBool(j == i)
	}
	return cfg, v.Type().Field(i).Tag.Get("mapstructure")
}

// TestNeededFieldsKeepEveryMetric maps the same samples twice for each
// metric alone: once with every field, once with only the fields
// neededFields names for it. The output must not change: a field the table
// forgets (a fallback, say) would drop or change data points. Samples come
// with and without profiling fields, so that the fallbacks are exercised.
func TestNeededFieldsKeepEveryMetric(t *testing.T) {
	fl, err := simulated.New(goldenFleet())
	require.NoError(t, err)
	t0 := time.Unix(1767225600, 0)
	var samples [][]gpu.Sample
	for k := range 3 {
		s, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*10*time.Second), time.Second)
		require.NoError(t, err)
		// A copy of every GPU without profiling fields, as a T4 under DCGM.
		for i, n := 0, len(s); i < n; i++ {
			c := s[i]
			d := *c.Device
			d.UUID += "-noprof"
			c.Device = &d
			var vs f.Values
			for _, field := range f.All() {
				if v, ok := c.Values.Get(field); ok && !field.Info().Profiling {
					vs.Set(field, v)
				}
			}
			c.Values = vs
			s = append(s, c)
		}
		samples = append(samples, s)
	}
	mapAll := func(cfg *Config, keep []f.Field) pmetric.Metrics {
		m := newMapper(cfg.MetricsBuilderConfig, cfg.Naming, receivertest.NewNopSettings(metadata.Type))
		for _, batch := range samples {
			for _, s := range batch {
				if keep != nil {
					var vs f.Values
					for _, field := range keep {
						if v, ok := s.Values.Get(field); ok {
							vs.Set(field, v)
						}
					}
					s.Values = vs
				}
				m.Append(&s)
			}
		}
		return m.Emit()
	}

	// The per-process metrics are made from the samples' processes, which
	// the backends read apart from the DCGM fields (per_process), not from
	// any field.
	perProcess := map[string]bool{
		metricnames.OTelGPUProcessCount: true, metricnames.OTelGPUProcessMemoryUsage: true,
		metricnames.OTelGPUProcessMemoryCopyUtilization: true, metricnames.OTelGPUProcessUtilization: true,
	}
	n := reflect.TypeFor[metadata.MetricsConfig]().NumField()
	for i := range n {
		cfg, name := onlyMetric(i)
		t.Run(name, func(t *testing.T) {
			need := neededFields(cfg)
			if perProcess[name] {
				require.Empty(t, need, "a per-process metric needs no field watched")
				return
			}
			if name == metricnames.HWTemperatureLimit {
				// The thresholds are read once, with the device's
				// identity (gpu.Device.TempLimits), not watched.
				require.Empty(t, need, "the temperature thresholds need no field watched")
				return
			}
			if name == metricnames.NvidiaGPUHealth {
				// DCGM's health watches watch their own fields
				// (healthWanted asks for them); TestHealthMetric checks
				// the metric.
				require.Empty(t, need, "health needs no field watched")
				require.True(t, healthWanted(cfg))
				return
			}
			if strings.HasPrefix(name, "amd.gpu.") {
				// AMD's figures come from AMD SMI, not from DCGM fields:
				// TestAMDSMIEveryMetric checks that the amdsmi path
				// produces each of them.
				require.Empty(t, need, "an AMD metric needs no DCGM field watched")
				return
			}
			require.NotEmpty(t, need, "every metric is made from some DCGM field")
			want := mapAll(cfg, nil)
			require.Positive(t, want.DataPointCount(), "the samples exercise %s", name)
			// Gauges carry the builder's creation time as start time; counters are
			// compared with theirs.
			require.NoError(t, pmetrictest.CompareMetrics(want, mapAll(cfg, need), pmetrictest.IgnoreStartTimestamp()))
			require.Less(t, len(need), int(f.Count), "one metric needs only some fields")
		})
	}

	cfg := createDefaultConfig().(*Config)
	cfg.Naming = NamingDCGMExporter
	require.Equal(t, f.All(), neededFields(cfg), "dcgm_exporter naming emits every field")
	cfg.Naming = NamingDeviceMetricsExporter
	require.Equal(t, f.All(), neededFields(cfg), "device_metrics_exporter naming names NVIDIA GPUs as dcgm-exporter does")
}
