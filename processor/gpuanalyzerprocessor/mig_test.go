package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// TestMIGCostAddsUp: an H100 split into three 2g.20gb instances, through
// the dcgm receiver. Each instance costs 2/7 of the board's price, the GPU's
// own resource the seventh no instance holds: the board and its instances
// together cost the board's price times the wall time, not four boards'.
// An exclusive GPU beside it costs its whole price.
func TestMIGCostAddsUp(t *testing.T) {
	for _, tc := range []struct {
		instances int
		left      float64 // of the board, on the GPU's own resource
	}{{3, 1.0 / 7}, {7, 0}, {2, 1.0 / 7}} {
		fl, err := simulated.New(simulated.Config{
			Seed: 5, Hosts: 1, GPUsPerHost: 2, HostPrefix: "n", Models: []string{"h100"},
			Workloads: []simulated.Workload{
				{Name: "svc", Kind: simulated.Serving, Namespace: "serving", GPUs: "0/0", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
				{Name: "nb", Kind: simulated.MIG, Namespace: "research", GPUs: "0/1", Instances: tc.instances,
					Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			},
		})
		require.NoError(t, err)
		var board, exclusive string
		instances := map[string]bool{}
		for _, d := range fl.Devices() {
			switch {
			case d.MIG != nil:
				instances[d.UUID] = true
				board = d.MIG.ParentUUID
			case d.Index == 0:
				exclusive = d.UUID
			}
		}
		require.Len(t, instances, tc.instances)
		require.NotEmpty(t, board)

		f := dcgmreceiver.NewFactory()
		r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
		require.NoError(t, err)
		rcv := r.(offline.Receiver)
		cfg := everySample()
		const price = 3.5
		cfg.Cost.DefaultPerGPUHour = price
		cfg.Cost.ReportInterval = 0 // every sample: the last counters cover the whole run
		p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
		t0 := time.Unix(1767225600, 0)
		const samples = 41
		step := 2 * time.Second
		for k := range samples {
			smp, err := fl.Collect(context.Background(), t0.Add(time.Duration(k)*step), step)
			require.NoError(t, err)
			require.NoError(t, p.ConsumeMetrics(context.Background(), rcv.Map(smp)))
		}
		wall := float64(time.Duration(samples-1)*step) / float64(time.Hour)

		perDevice := map[string]float64{}
		for key, v := range lastCounters(sink.AllMetrics(), metricnames.OTelGPUCost) {
			perDevice[key.id] += v
		}
		var ofInstances float64
		for id := range instances {
			slices := map[int]float64{2: 3, 3: 2, 7: 1}[tc.instances] // the simulated fleet's equal splits
			require.InEpsilon(t, slices/7*price*wall, perDevice[id], 1e-9, "instance %s: its slices' part of the board's price", id)
			ofInstances += perDevice[id]
		}
		if tc.left == 0 {
			require.InDelta(t, 0, perDevice[board], 1e-12, "%d instances hold the whole board", tc.instances)
		} else {
			require.InEpsilon(t, tc.left*price*wall, perDevice[board], 1e-9, "the board's unallocated slices")
		}
		require.InEpsilon(t, price*wall, ofInstances+perDevice[board], 1e-9, "the board and its instances cost one board")
		require.InEpsilon(t, price*wall, perDevice[exclusive], 1e-9, "an exclusive GPU costs a whole board")
	}
}

// TestMIGShare reads the profile's slices against the board's.
func TestMIGShare(t *testing.T) {
	for _, tc := range []struct {
		model, profile string
		want           float64
		ok             bool
	}{
		{"NVIDIA H100 80GB HBM3", "1g.10gb", 1.0 / 7, true},
		{"NVIDIA H100 80GB HBM3", "3g.40gb", 3.0 / 7, true},
		{"NVIDIA A100-SXM4-80GB", "7g.80gb", 1, true},
		{"NVIDIA A30", "2g.12gb", 0.5, true},
		{"NVIDIA H100 80GB HBM3", "1g.10gb+me", 1.0 / 7, true},
		{"NVIDIA H100 80GB HBM3", "", 0, false},
		{"NVIDIA H100 80GB HBM3", "big", 0, false},
		{"NVIDIA H100 80GB HBM3", "0g.0gb", 0, false},
	} {
		attrs := pcommon.NewMap()
		attrs.PutStr(metricnames.AttrHWModel, tc.model)
		if tc.profile != "" {
			attrs.PutStr(metricnames.AttrNvidiaGPUMIGProfile, tc.profile)
		}
		got, ok := migShare(attrs)
		require.Equal(t, tc.ok, ok, "%s %q", tc.model, tc.profile)
		require.InDelta(t, tc.want, got, 1e-12, "%s %q", tc.model, tc.profile)
	}
}
