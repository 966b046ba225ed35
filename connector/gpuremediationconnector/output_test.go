package gpuremediationconnector

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/golden"
	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestMetricsOutput checks the connector's own metrics against a golden
// file, after XID 79 on two nodes and XID 92 (not critical) on a third, in
// shadow mode. The file was written by the hand-built metrics before
// mdatagen's builder replaced them.
func TestMetricsOutput(t *testing.T) {
	r := shadow(t)
	sink := new(consumertest.MetricsSink)
	r.metricsOut = sink
	t0 := time.Unix(1767225600, 0)
	ts := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t0.Add(d)) }
	codes := map[string]int64{"a": 79, "b": 79, "c": 92}
	for i, d := range []time.Duration{0, 10 * time.Second, 20 * time.Second} {
		md := pmetric.NewMetrics()
		for _, host := range []string{"a", "b", "c", "d"} {
			rm := resource(host, "gpu-"+host, func(ms pmetric.MetricSlice) {
				temp(ms, ts(d))
				if code, ok := codes[host]; ok && i > 0 {
					xid(ms, code, 1, ts(0), ts(d))
				}
			})
			rm.CopyTo(md.ResourceMetrics().AppendEmpty())
		}
		require.NoError(t, r.consume(t.Context(), md))
		r.tick(t.Context(), t0.Add(d))
	}
	all := sink.AllMetrics()
	require.NotEmpty(t, all)
	out := all[len(all)-1]

	path := filepath.Join("testdata", "output.yaml")
	if *update {
		require.NoError(t, golden.WriteMetrics(t, path, out))
	}
	want, err := golden.ReadMetrics(path)
	require.NoError(t, err)
	// golden.WriteMetrics normalizes timestamps and sorts data points.
	require.NoError(t, pmetrictest.CompareMetrics(want, out, pmetrictest.IgnoreMetricsOrder(),
		pmetrictest.IgnoreMetricDataPointsOrder(), pmetrictest.IgnoreTimestamp(), pmetrictest.IgnoreStartTimestamp(),
		pmetrictest.IgnoreScopeVersion()))
}

// TestMetricsCanBeDisabled: a metric turned off under metrics: is not
// emitted; the others are.
func TestMetricsCanBeDisabled(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.Auth.Type = "none"
	cfg.LeaderElection.Enabled = false
	cfg.Metrics.GpuRemediationNodes.Enabled = false
	r, err := newRemediator(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	sink := new(consumertest.MetricsSink)
	r.metricsOut = sink
	r.tick(t.Context(), time.Unix(1767225600, 0))
	require.Len(t, sink.AllMetrics(), 1)
	ms := sink.AllMetrics()[0].ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	var names []string
	for i := 0; i < ms.Len(); i++ {
		names = append(names, ms.At(i).Name())
	}
	require.Equal(t, []string{"gpu.remediation.breaker.state"}, names, "no action yet, and nodes turned off")
}
