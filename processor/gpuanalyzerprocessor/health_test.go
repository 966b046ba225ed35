package gpuanalyzerprocessor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// TestMakeRunFleetHealth runs make run's fleet (examples/local/config.yaml:
// its simulated fleet and its analyzer settings) for two minutes of data
// time and reads hw.status on every device: the GPU that fell off the bus
// (XID 79 at 45 s) and the two with an uncorrectable ECC error (an H100
// at 60 s, an MI300X at 90 s) failed, the thermally throttled one
// degraded, every other device ok, MIG instances and CPX partitions
// included.
func TestMakeRunFleetHealth(t *testing.T) {
	cm, err := confmaptest.LoadConf("../../examples/local/config.yaml")
	require.NoError(t, err)
	rc := dcgmreceiver.NewFactory().CreateDefaultConfig()
	sub, err := cm.Sub("receivers::dcgm")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(rc))
	cfg := everySample()
	sub, err = cm.Sub("processors::gpu_analyzer")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))

	f := newFleet(t, rc.(*dcgmreceiver.Config).Simulated)
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	for range 120 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	// The last state each device reported, by host/name.
	state := map[string]string{}
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			attrs := rms.At(i).Resource().Attributes()
			host, _ := attrs.Get(metricnames.AttrHostName)
			name, _ := attrs.Get(metricnames.AttrHWName)
			if st := healthIn(rms.At(i)); st != "" {
				state[host.Str()+"/"+name.Str()] = st
			}
		}
	}
	require.Len(t, state, 34, "every device of make run's fleet: 24 GPUs, 3 MIG instances, 7 more CPX partitions")
	want := map[string]string{
		"gpu-node-1/gpu3": "failed", // XID 79
		// A double-bit ECC error, counted on the board: its MIG instances
		// run on that memory, and are failed with it.
		"gpu-node-1/gpu5":        "failed",
		"gpu-node-1/gpu5/mig1.0": "failed",
		"gpu-node-1/gpu5/mig3.0": "failed",
		"gpu-node-1/gpu5/mig5.0": "failed",
		"gpu-node-2/gpu3":        "failed",   // MI300X, uncorrectable ECC error
		"gpu-node-0/gpu2":        "degraded", // thermal throttle
	}
	for dev, st := range state {
		w, ok := want[dev]
		if !ok {
			w = gpuhealth.OK.String()
		}
		require.Equal(t, w, st, dev)
	}
}

// healthIn reads the state hw.status sets to 1 on a resource; "" if none.
func healthIn(rm pmetric.ResourceMetrics) string {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if ms.At(k).Name() != metricnames.HWStatus {
				continue
			}
			dps := ms.At(k).Sum().DataPoints()
			for d := 0; d < dps.Len(); d++ {
				if dps.At(d).IntValue() == 1 {
					st, _ := dps.At(d).Attributes().Get(metricnames.AttrHWState)
					return st.Str()
				}
			}
		}
	}
	return ""
}

// TestHealthStates: hw.state's values in metadata.yaml are gpuhealth's
// states, by name.
func TestHealthStates(t *testing.T) {
	for _, s := range gpuhealth.States() {
		require.Equal(t, s.String(), healthAttrs[s].String())
	}
	require.Len(t, metadata.MapAttributeHwState, len(gpuhealth.States()))
}
