package dcgmreceiver

import (
	"context"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenFleet is a small fleet with one of each interesting signal.
func goldenFleet() simulated.Config {
	return simulated.Config{
		Seed: 7, Hosts: 1, GPUsPerHost: 4, HostPrefix: "node-", Models: []string{"h100"},
		Workloads: []simulated.Workload{{
			Name: "train", Kind: "training", Namespace: "ml", GPUs: "0/0-2",
			Phases: []simulated.Phase{{Kind: simulated.ComputeBound}},
		}},
		Faults: []simulated.Fault{
			{Kind: simulated.ThermalThrottle, GPUs: "0/1", Start: 10 * time.Second},
			{Kind: simulated.XID, GPUs: "0/2", Start: 10 * time.Second, XID: 79},
			{Kind: simulated.ECC, GPUs: "0/2", Start: 20 * time.Second},
			{Kind: simulated.XID, GPUs: "0/3", Start: 20 * time.Second, XID: 154},
		},
	}
}

// mapFleet maps three collections, 10 s apart, of the golden fleet.
func mapFleet(t *testing.T, naming string) pmetric.Metrics {
	t.Helper()
	fl, err := simulated.New(goldenFleet())
	require.NoError(t, err)
	m := newMapper(metadata.NewDefaultMetricsBuilderConfig(), naming, receivertest.NewNopSettings(metadata.Type))
	t0 := time.Unix(1767225600, 0)
	for k := range 3 {
		samples, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*10*time.Second), time.Second)
		require.NoError(t, err)
		for i := range samples {
			m.Append(&samples[i])
		}
	}
	return m.Emit()
}

func TestGoldenMetrics(t *testing.T) {
	for _, naming := range []string{NamingOTel, NamingDCGMExporter} {
		t.Run(naming, func(t *testing.T) {
			// The last collection carries every fault; earlier ones add size, not cover.
			all := mapFleet(t, naming)
			got := pmetric.NewMetrics()
			rms := all.ResourceMetrics()
			per := rms.Len() / 3
			for i := 2 * per; i < rms.Len(); i++ {
				rms.At(i).CopyTo(got.ResourceMetrics().AppendEmpty())
			}
			path := filepath.Join("testdata", "golden", naming+".yaml")
			if *update {
				require.NoError(t, golden.WriteMetrics(t, path, got))
			}
			want, err := golden.ReadMetrics(path)
			require.NoError(t, err)
			// Timestamps are normalised in golden files; TestMappedSignals
			// checks start times.
			require.NoError(t, pmetrictest.CompareMetrics(want, got,
				pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
				pmetrictest.IgnoreResourceMetricsOrder(), pmetrictest.IgnoreMetricsOrder(),
				pmetrictest.IgnoreMetricDataPointsOrder()))
		})
	}
}

// TestMappedSignals checks, beyond the golden file, what the numbers mean.
func TestMappedSignals(t *testing.T) {
	md := mapFleet(t, NamingOTel)
	require.Equal(t, 12, md.ResourceMetrics().Len(), "4 GPUs x 3 collections")
	last := map[string]pmetric.ResourceMetrics{}
	byName := map[string]string{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		a := rm.Resource().Attributes().AsRaw()
		last[a["hw.id"].(string)] = rm
		byName[a["hw.name"].(string)] = a["hw.id"].(string)
	}
	throttled := last[byName["gpu1"]]
	require.Equal(t, int64(0x60), point(t, throttled, "nvidia.gpu.clock.event_reasons", nil).IntValue())
	require.Equal(t, int64(1), point(t, throttled, "nvidia.gpu.clock.event.active", map[string]any{"nvidia.gpu.clock.event_reason": "hw_thermal"}).IntValue())
	require.GreaterOrEqual(t, num(point(t, throttled, "hw.temperature", nil)), 85.0)
	require.Positive(t, num(point(t, throttled, "nvidia.gpu.throttle.time", map[string]any{"nvidia.gpu.throttle.reason": "thermal"})))

	faulty := last[byName["gpu2"]]
	require.Equal(t, int64(1), point(t, faulty, "nvidia.gpu.xid.errors", map[string]any{"nvidia.gpu.xid": int64(79)}).IntValue())
	require.Equal(t, int64(1), point(t, faulty, "nvidia.gpu.xid.errors", map[string]any{"nvidia.gpu.xid": int64(48)}).IntValue(), "a double-bit ECC error raises XID 48")
	require.Equal(t, int64(1), point(t, faulty, "hw.errors", map[string]any{"error.type": "uncorrected"}).IntValue())

	idle := last[byName["gpu3"]]
	require.Less(t, num(point(t, idle, "nvidia.gpu.sm.active", nil)), 0.05)
	require.Equal(t, int64(1), point(t, idle, "nvidia.gpu.recovery_action", nil).IntValue(), "XID 154: the driver asks for a GPU reset")
	require.Equal(t, int64(1), point(t, idle, "nvidia.gpu.xid.errors", map[string]any{"nvidia.gpu.xid": int64(154)}).IntValue())
	require.Equal(t, int64(0), point(t, faulty, "nvidia.gpu.recovery_action", nil).IntValue(), "XID 79 alone changes no recovery action")
	require.NotContains(t, idle.Resource().Attributes().AsRaw(), "k8s.pod.name", "an unallocated GPU has no pod")
	require.Equal(t, "train", last[byName["gpu0"]].Resource().Attributes().AsRaw()["k8s.job.name"])

	// Energy is a counter from the first sample: 0, then growing, one start time.
	var starts []int64
	var values []float64
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		if id, _ := rm.Resource().Attributes().Get("hw.id"); id.Str() != byName["gpu0"] {
			continue
		}
		dp := point(t, rm, "hw.energy", nil)
		starts = append(starts, int64(dp.StartTimestamp()))
		values = append(values, dp.DoubleValue())
	}
	require.Equal(t, []int64{starts[0], starts[0], starts[0]}, starts)
	require.Zero(t, values[0])
	require.Greater(t, values[1], 5000.0, "10 s of a busy H100 is several kJ")
	require.Greater(t, values[2], values[1])
}
