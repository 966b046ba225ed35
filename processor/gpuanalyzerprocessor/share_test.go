package gpuanalyzerprocessor

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// counterKey is one cumulative series of otelgpu.time or .cost: a
// resource (a GPU's, or one of its owners'), a state, a start.
type counterKey struct {
	id, owner, namespace, state string
	start                       int64
}

// lastCounters reads the last value of every otelgpu.time (or .cost)
// series the analyzer sent.
func lastCounters(batches []pmetric.Metrics, name string) map[counterKey]float64 {
	out := map[counterKey]float64{}
	for _, md := range batches {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			attrs := rm.Resource().Attributes()
			id, _ := attrs.Get(metricnames.AttrHWID)
			ns, _ := attrs.Get(metricnames.AttrK8sNamespaceName)
			var owner string // the GPU's own
			if _, split := attrs.Get(metricnames.AttrOTelGPUProcessOwner); split {
				owner = ownerKey(attrs)
			}
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				sm := rm.ScopeMetrics().At(j)
				if sm.Scope().Name() != metadata.ScopeName {
					continue
				}
				for k := 0; k < sm.Metrics().Len(); k++ {
					m := sm.Metrics().At(k)
					if m.Name() != name {
						continue
					}
					for d := 0; d < m.Sum().DataPoints().Len(); d++ {
						dp := m.Sum().DataPoints().At(d)
						st, _ := dp.Attributes().Get(metricnames.AttrOTelGPUUsageState)
						out[counterKey{id.Str(), owner, ns.Str(), st.Str(), int64(dp.StartTimestamp())}] = dp.DoubleValue()
					}
				}
			}
		}
	}
	return out
}

// TestSharedGPUCostAddsUp: a GPU time-sliced between three pods of
// different load, through the dcgm receiver's per_process series. Its wall
// time is split between its pods by their utilization, the rest idle on
// the GPU's own resource: per namespace, the hours add up to the GPU's wall
// time to the nanosecond, and the dollars to its price times that time. An
// exclusive GPU is not split; every GPU keeps its bottleneck class.
func TestSharedGPUCostAddsUp(t *testing.T) {
	fl, err := simulated.New(simulated.Config{
		Seed: 11, Hosts: 1, GPUsPerHost: 2, HostPrefix: "n", Models: []string{"h100"},
		Workloads: []simulated.Workload{
			{Name: "svc", Kind: simulated.Serving, Namespace: "serving", GPUs: "0/0", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			{Name: "nb", Kind: simulated.TimeSliced, Namespace: "research", GPUs: "0/1", Pods: 3,
				Phases: []simulated.Phase{{Kind: simulated.InputBound, Duration: 20 * time.Second}, {Kind: simulated.Idle, Duration: 10 * time.Second}}},
		},
	})
	require.NoError(t, err)
	fl.EnableProcesses()
	devs := fl.Devices()
	shared, exclusive := devs[1].UUID, devs[0].UUID
	f := dcgmreceiver.NewFactory()
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	rcv := r.(offline.Receiver)

	cfg := everySample()
	cfg.Cost.DefaultPerGPUHour = 4.5
	cfg.Cost.ReportInterval = time.Minute // the split GPU's counters are sent at every sample all the same
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	t0 := time.Unix(1767225600, 0)
	const samples = 97
	step := 1500 * time.Millisecond
	for k := range samples {
		// An irregular cadence: 1.5 s, with every seventh sample 0.3 s late.
		at := t0.Add(time.Duration(k) * step)
		if k%7 == 3 {
			at = at.Add(300 * time.Millisecond)
		}
		smp, err := fl.Collect(context.Background(), at, step)
		require.NoError(t, err)
		require.NoError(t, p.ConsumeMetrics(context.Background(), rcv.Map(smp)))
	}
	wall := int64(time.Duration(samples-1) * step)

	hours := map[string]int64{} // nanoseconds per namespace, of the shared GPU
	owners := map[string]int64{}
	var dollars float64
	for key, v := range lastCounters(sink.AllMetrics(), metricnames.OTelGPUTime) {
		if key.id != shared {
			continue
		}
		n := int64(math.Round(v * 1e9))
		hours[key.namespace] += n
		if key.owner != "" {
			owners[key.owner] += n
		}
	}
	for key, v := range lastCounters(sink.AllMetrics(), metricnames.OTelGPUCost) {
		if key.id == shared {
			dollars += v
		}
	}
	require.Len(t, hours, 2, "the pods' namespace and the GPU's own (none): %v", hours)
	require.Positive(t, hours["research"])
	require.Positive(t, hours[""], "what the pods left idle")
	require.Equal(t, wall, hours["research"]+hours[""], "the namespace table adds up to the GPU's wall time exactly")
	require.InEpsilon(t, 4.5*float64(wall)/3.6e12, dollars, 1e-9)
	require.Len(t, owners, 3)
	seen := map[int64]bool{}
	for _, n := range owners {
		require.False(t, seen[n], "each pod its own part: %v", owners)
		seen[n] = true
	}

	// The exclusive GPU: all its time on its own resource, in its pod's
	// namespace, sent when due (report_interval).
	var excl int64
	for key, v := range lastCounters(sink.AllMetrics(), metricnames.OTelGPUTime) {
		if key.id == exclusive {
			require.Empty(t, key.owner, "an exclusive GPU is not split")
			require.Equal(t, "serving", key.namespace)
			excl += int64(math.Round(v * 1e9))
		}
	}
	require.Positive(t, excl)
	require.Less(t, excl, wall, "not sent at every sample")

	// Classes stay per device: the shared GPU's resource has one, its pods'
	// none.
	last := sink.AllMetrics()[len(sink.AllMetrics())-1]
	v := verdicts(last)
	require.Contains(t, v[shared], metricnames.OTelGPUBottleneckState)
	require.Contains(t, v[exclusive], metricnames.OTelGPUBottleneckState)
}
