package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// podEvidence appends a pod's cgroup figures, as the gpu_node receiver
// sends them, at t: n seconds into the run, throttled in share of its
// periods at a limit of limit CPUs.
func podEvidence(md pmetric.Metrics, host, uid string, t time.Time, n int, limit, share float64) {
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(metricnames.AttrHostName, host)
	rm.Resource().Attributes().PutStr(metricnames.AttrK8sPodUid, uid)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	ts := pcommon.NewTimestampFromTime(t)
	sum := func(name string, v float64) {
		m := ms.AppendEmpty()
		m.SetName(name)
		m.SetEmptySum().SetIsMonotonic(true)
		dp := m.Sum().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(v)
	}
	periods := float64(n) * 10 // a 100 ms period
	sum(nodePodCPUTime, float64(n)*limit)
	sum(nodePodPeriods, periods)
	sum(nodePodThrottled, periods*share)
	sum(nodePodThrottledTime, periods*share*0.05)
	if limit > 0 {
		m := ms.AppendEmpty()
		m.SetName(nodePodCPULimit)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(limit)
	}
}

// podOf is the pod UID and host of the GPU's per-process resource.
func podOf(md pmetric.Metrics, gpuID string) (uid, host string) {
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		a := md.ResourceMetrics().At(i).Resource().Attributes()
		if id, _ := a.Get(metricnames.AttrHWID); id.Str() != gpuID {
			continue
		}
		if u, ok := a.Get(metricnames.AttrK8sPodUid); ok {
			h, _ := a.Get(metricnames.AttrHostName)
			return u.Str(), h.Str()
		}
	}
	return "", ""
}

func causeOf(m map[string]pmetric.Metric) string {
	dps := m[metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
	for i := 0; i < dps.Len(); i++ {
		if dps.At(i).IntValue() == 1 {
			c, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUBottleneckCause)
			return c.Str()
		}
	}
	return ""
}

// TestInputBoundCause: an input-bound GPU whose pod is throttled at its
// CPU limit is put down to cpu_throttled, with the share and the limit in
// the log and the hint raise_cpu_limit; the same GPU with a pod that is
// not throttled gets none_found and keeps its class's hint; with no
// evidence at all there is no cause.
func TestInputBoundCause(t *testing.T) {
	for _, tc := range []struct {
		name      string
		evidence  bool
		share     float64
		wantCause string
		wantHint  string
	}{
		{"throttled", true, 0.38, "cpu_throttled", "raise_cpu_limit"},
		{"not throttled", true, 0.01, "none_found", "fix_data_loading"},
		{"no evidence", false, 0, "", "fix_data_loading"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			set := processortest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			p, sink := newProcessor(t, everySample(), set)
			f := newFleet(t, simulated.Config{
				Seed: 5, Hosts: 1, GPUsPerHost: 1, HostPrefix: "gpu-node-", Models: []string{"h100"},
				Workloads: []simulated.Workload{{Name: "loader", Kind: "training", Namespace: "ml", GPUs: "0/0",
					Phases: []simulated.Phase{{Kind: simulated.InputBound, Duration: 10 * time.Minute}}}},
			})
			f.fl.EnableProcesses()
			var last map[string]pmetric.Metric
			var gpu string
			for i := range 100 {
				md := f.next(t)
				if gpu == "" {
					id, _ := md.ResourceMetrics().At(0).Resource().Attributes().Get(metricnames.AttrHWID)
					gpu = id.Str()
				}
				if uid, host := podOf(md, gpu); tc.evidence && uid != "" && i%15 == 0 {
					podEvidence(md, host, uid, f.t0.Add(time.Duration(i)*time.Second), i, 4, tc.share)
				}
				sink.Reset()
				require.NoError(t, p.ConsumeMetrics(context.Background(), md))
				last = verdicts(sink.AllMetrics()[0])[gpu]
			}
			require.Equal(t, "input_bound", classOf(last))
			assert.Equal(t, tc.wantCause, causeOf(last))
			assert.Equal(t, tc.wantHint, hintOf(last))
			explained := logs.FilterMessage("GPU wait explained").All()
			if tc.wantCause == "" {
				assert.Empty(t, explained)
				return
			}
			require.Len(t, explained, 1, "logged once, when the cause was found")
			fields := explained[0].ContextMap()
			assert.Equal(t, tc.wantCause, fields["cause"])
			assert.Equal(t, "input_bound", fields["bottleneck"])
			if tc.wantCause == "cpu_throttled" {
				assert.Equal(t, "throttled in 38 % of periods at a 4-CPU limit", fields["evidence"])
			}
		})
	}
}

// TestPodByName: without per-process collection a GPU is tied to its
// pod's cgroup by the pod's namespace and name, which the GPU's resource
// carries (the kubelet's pod resources) and the pod's cgroup resource too
// (the kubelet's log directories, read by gpu_node). A cgroup named for
// another pod is no evidence of this GPU's: with nothing else of its node
// known, it gets no cause at all.
func TestPodByName(t *testing.T) {
	for _, tc := range []struct {
		name, evidencePod string
		wantCause         string
	}{
		{"its pod", "loader-worker-0", "cpu_throttled"},
		{"another pod", "loader-worker-1", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
			f := newFleet(t, simulated.Config{
				Seed: 5, Hosts: 1, GPUsPerHost: 1, HostPrefix: "gpu-node-", Models: []string{"h100"},
				Workloads: []simulated.Workload{{Name: "loader", Kind: "training", Namespace: "ml", GPUs: "0/0",
					Phases: []simulated.Phase{{Kind: simulated.InputBound, Duration: 10 * time.Minute}}}},
			})
			var last map[string]pmetric.Metric
			var gpu, host string
			for i := range 100 {
				md := f.next(t)
				a := md.ResourceMetrics().At(0).Resource().Attributes()
				if gpu == "" {
					id, _ := a.Get(metricnames.AttrHWID)
					h, _ := a.Get(metricnames.AttrHostName)
					gpu, host = id.Str(), h.Str()
					pod, _ := a.Get(metricnames.AttrK8sPodName)
					require.Equal(t, "loader-worker-0", pod.Str(), "the GPU's resource names its pod")
					require.Empty(t, func() string { u, _ := podOf(md, gpu); return u }(), "no per-process resources")
				}
				if i%15 == 0 {
					podEvidence(md, host, "3c9d0f5e-1b2a-4c3d-8e9f-0a1b2c3d4e5f", f.t0.Add(time.Duration(i)*time.Second), i, 4, 0.38)
					pa := md.ResourceMetrics().At(md.ResourceMetrics().Len() - 1).Resource().Attributes()
					pa.PutStr(metricnames.AttrK8sNamespaceName, "ml")
					pa.PutStr(metricnames.AttrK8sPodName, tc.evidencePod)
				}
				sink.Reset()
				require.NoError(t, p.ConsumeMetrics(context.Background(), md))
				last = verdicts(sink.AllMetrics()[0])[gpu]
			}
			require.Equal(t, "input_bound", classOf(last))
			assert.Equal(t, tc.wantCause, causeOf(last))
		})
	}
}

// TestNodeEvidenceIsNotAGPU: a NIC's resource carries hw.id but is not a
// GPU; the pod's and the node's carry none and are not counted as data the
// analyzer could not read.
func TestNodeEvidenceIsNotAGPU(t *testing.T) {
	p, sink := newProcessor(t, everySample(), processortest.NewNopSettings(metadata.Type))
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr(metricnames.AttrHWID, "mlx5_0:1")
	rm.Resource().Attributes().PutStr(metricnames.AttrHWType, "network")
	rm.Resource().Attributes().PutStr(metricnames.AttrHostName, "n1")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(nodeNetUp)
	m.SetEmptySum().DataPoints().AppendEmpty().SetIntValue(1)
	podEvidence(md, "n1", "3f1c0a52-6a8e-4a43-9a8c-7d1f1b2f5d10", time.Unix(1767225600, 0), 1, 2, 0.5)
	require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	out := sink.AllMetrics()[0]
	require.Equal(t, 2, out.ResourceMetrics().Len(), "passed through")
	assert.Empty(t, verdicts(out))
}

// nicEvidence appends a NIC port's counters, as the gpu_node receiver
// sends them, on the rail of the GPU with PCI bus ID bus: n seconds into
// the run at rx and tx shares of a 400 Gb/s link.
func nicEvidence(md pmetric.Metrics, host, bus string, t time.Time, n int, rx, tx float64) {
	rm := md.ResourceMetrics().AppendEmpty()
	a := rm.Resource().Attributes()
	a.PutStr(metricnames.AttrHostName, host)
	a.PutStr(metricnames.AttrHWID, "mlx5_3:1")
	a.PutStr(metricnames.AttrHWType, "network")
	a.PutEmptySlice(metricnames.AttrOTelGPUNetworkRailGpus).AppendEmpty().SetStr(bus)
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	ts := pcommon.NewTimestampFromTime(t)
	const rate = 50e9
	m := ms.AppendEmpty()
	m.SetName(nodeNetIO)
	m.SetEmptySum().SetIsMonotonic(true)
	for dir, share := range map[string]float64{"receive": rx, "transmit": tx} {
		dp := m.Sum().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(int64(share * rate * float64(n)))
		dp.Attributes().PutStr(attrNetworkDirection, dir)
	}
	m = ms.AppendEmpty()
	m.SetName(nodeNetLimit)
	dp := m.SetEmptySum().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetIntValue(rate)
}

// TestRailCarriesTheCollective: a GPU whose counters say launch bound
// (busy engine, little power) while its rail's NIC moves half its rate
// each way waits in a collective over the network: communication_bound,
// scope network, evidence nic, and the rail's load in the cause. The same
// GPU beside a NIC reading a dataset (one way) stays launch bound; with
// no NIC at all, too.
func TestRailCarriesTheCollective(t *testing.T) {
	for _, tc := range []struct {
		name          string
		nic           bool
		rx, tx        float64
		wantClass     string
		wantEvidence  string
		wantCauseLike string
	}{
		{"collective on the rail", true, 0.5, 0.48, "communication_bound", "nic", "none_found"},
		{"a dataset read on the rail", true, 0.6, 0.01, "launch_bound", "", ""},
		{"no NIC", false, 0, 0, "launch_bound", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			core, logs := observer.New(zapcore.InfoLevel)
			set := processortest.NewNopSettings(metadata.Type)
			set.Logger = zap.New(core)
			p, sink := newProcessor(t, everySample(), set)
			f := newFleet(t, simulated.Config{
				Seed: 5, Hosts: 1, GPUsPerHost: 1, HostPrefix: "gpu-node-", Models: []string{"h100"},
				Workloads: []simulated.Workload{{Name: "pretrain", Kind: "training", Namespace: "ml", GPUs: "0/0",
					Phases: []simulated.Phase{{Kind: simulated.LaunchBound, Duration: 10 * time.Minute}}}},
			})
			var last map[string]pmetric.Metric
			var gpu string
			for i := range 100 {
				md := f.next(t)
				attrs := md.ResourceMetrics().At(0).Resource().Attributes()
				id, _ := attrs.Get(metricnames.AttrHWID)
				bus, _ := attrs.Get(metricnames.AttrNvidiaGPUPCIBusID)
				host, _ := attrs.Get(metricnames.AttrHostName)
				gpu = id.Str()
				if tc.nic && i%15 == 0 {
					nicEvidence(md, host.Str(), bus.Str(), f.t0.Add(time.Duration(i)*time.Second), i, tc.rx, tc.tx)
				}
				sink.Reset()
				require.NoError(t, p.ConsumeMetrics(context.Background(), md))
				last = verdicts(sink.AllMetrics()[0])[gpu]
			}
			require.Equal(t, tc.wantClass, classOf(last))
			dps := last[metricnames.OTelGPUBottleneckState].Gauge().DataPoints()
			var evidence, scope string
			for i := 0; i < dps.Len(); i++ {
				if dps.At(i).IntValue() == 1 {
					e, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUBottleneckEvidence)
					sc, _ := dps.At(i).Attributes().Get(metricnames.AttrOTelGPUBottleneckScope)
					evidence, scope = e.Str(), sc.Str()
				}
			}
			assert.Equal(t, tc.wantCauseLike, causeOf(last))
			if tc.wantEvidence != "" {
				assert.Equal(t, tc.wantEvidence, evidence)
				assert.Equal(t, "network", scope)
				explained := logs.FilterMessage("GPU wait explained").All()
				require.NotEmpty(t, explained)
				assert.Equal(t, "mlx5_3:1 at 50 % of 400 Gb/s: the collective waits on a slower peer", explained[0].ContextMap()["evidence"])
			}
		})
	}
}
