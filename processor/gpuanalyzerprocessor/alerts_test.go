package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// TestAlertResolveIsSent: the XID 79 of gpu-node-1/gpu3 (at 45 s) fires
// GPUFaulted at once (for 0) and, with a 30 s fault lookback, resolves;
// the resolve is one 0 on the firing series, at the sample it resolves,
// and nothing after it. GPUThrottled of gpu-node-0/gpu2 (for 1 m) ends its
// pending series with a 0 when it fires.
func TestAlertResolveIsSent(t *testing.T) {
	cfg := everySample()
	cfg.Bottleneck.FaultLookback = 30 * time.Second
	f := newFleet(t, simulated.DefaultConfig())
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	for range 150 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	// Per GPU and alert: the sequence of (state, value) points, repeats
	// of the same point collapsed.
	seq := map[string][]string{}
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := range rms.Len() {
			rm := rms.At(i)
			a := rm.Resource().Attributes().AsRaw()
			gpu, _ := a["host.name"].(string)
			name, _ := a["hw.name"].(string)
			gpu += "/" + name
			sms := rm.ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					if ms.At(k).Name() != metricnames.OTelGPUAlerts {
						continue
					}
					dps := ms.At(k).Gauge().DataPoints()
					for d := range dps.Len() {
						attrs := dps.At(d).Attributes().AsRaw()
						key := gpu + " " + attrs["alertname"].(string)
						point := attrs["alertstate"].(string)
						if dps.At(d).IntValue() == 0 {
							point += "=0"
						}
						if s := seq[key]; len(s) == 0 || s[len(s)-1] != point {
							seq[key] = append(s, point)
						}
					}
				}
			}
		}
	}
	require.Equal(t, []string{"firing", "firing=0"}, seq["gpu-node-1/gpu3 GPUFaulted"], "fires, and resolves with one 0")
	// In the batch it fires: firing 1, then pending 0; then firing again.
	throttled := seq["gpu-node-0/gpu2 GPUThrottled"]
	require.GreaterOrEqual(t, len(throttled), 4, "%v", throttled)
	require.Equal(t, []string{"pending", "firing", "pending=0", "firing"}, throttled[:4], "pending ends with a 0 when it fires")
}
