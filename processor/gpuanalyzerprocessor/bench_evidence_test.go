package gpuanalyzerprocessor

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/cause"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// withNodeEvidence adds to a benchmark batch what the gpu_node receiver
// sends beside the GPUs of an HGX node (benchBatch puts 8 GPUs on a host,
// each naming its pod): each GPU's PCI bus ID; per host the pod's cgroup
// (13 data points, as the receiver emits them, named as the kubelet's log
// directories name it), the node's pressure, and 8 InfiniBand rails of one
// GPU each with 21 data points (bytes and packets each way, 13 error
// counters, rate, link state, the transmit wait). It is the batch a
// gateway's analyzer receives with the chart's defaults (node evidence on,
// per-process collection off).
func withNodeEvidence(md pmetric.Metrics) pmetric.Metrics { return nodeEvidenceBatch(md, false) }

// withNodeEvidencePerProcess is withNodeEvidence with the dcgm receiver's
// per_process on (perProcess.enabled in the chart, off by default): each
// GPU's processes in its pod, with their share of the GPU, on a resource
// of their own that binds the GPU to the pod by UID.
func withNodeEvidencePerProcess(md pmetric.Metrics) pmetric.Metrics {
	return nodeEvidenceBatch(md, true)
}

func nodeEvidenceBatch(md pmetric.Metrics, perProcess bool) pmetric.Metrics {
	rms := md.ResourceMetrics()
	n := rms.Len()
	busID := func(g int) string { return fmt.Sprintf("0000:%02x:00.0", 0x18+16*(g%8)) }
	podUID := func(host int) string { return fmt.Sprintf("0f3b2c1a-6d4e-4f5a-9b8c-%012x", host) }
	// benchBatch's GPUs name their pods (the kubelet's pod resources):
	// one per host, 8 hosts a job.
	podName := func(host int) string { return fmt.Sprintf("job-%d-worker-%d", host/8, host) }
	for g := range n {
		a := rms.At(g).Resource().Attributes()
		a.PutStr(metricnames.AttrNvidiaGPUPCIBusID, "0000"+busID(g))
		if !perProcess {
			continue
		}
		proc := rms.AppendEmpty()
		pa := proc.Resource().Attributes()
		id, _ := a.Get(metricnames.AttrHWID)
		pa.PutStr(metricnames.AttrHWID, id.Str())
		pa.PutStr(metricnames.AttrHostName, fmt.Sprintf("node-%d", g/8))
		pa.PutStr(metricnames.AttrK8sPodUid, podUID(g/8))
		pa.PutStr(metricnames.AttrOTelGPUProcessOwner, "pod")
		ms := proc.ScopeMetrics().AppendEmpty().Metrics()
		benchGauge(ms, metricnames.OTelGPUProcessUtilization, 0.99, metricnames.AttrHWGPUTask, metricnames.AttrHWGPUTaskGeneral)
	}
	for host := range (n + 7) / 8 {
		hostName := fmt.Sprintf("node-%d", host)
		pod := rms.AppendEmpty()
		pod.Resource().Attributes().PutStr(metricnames.AttrHostName, hostName)
		pod.Resource().Attributes().PutStr(metricnames.AttrK8sPodUid, podUID(host))
		// gpu_node's names, from the kubelet's pod log directories.
		pod.Resource().Attributes().PutStr(metricnames.AttrK8sNamespaceName, "ml")
		pod.Resource().Attributes().PutStr(metricnames.AttrK8sPodName, podName(host))
		ms := pod.ScopeMetrics().AppendEmpty().Metrics()
		benchSum(ms, metricnames.OTelGPUPodCPUTime, 9123.4)
		benchGauge(ms, metricnames.OTelGPUPodCPULimit, 4)
		benchSum(ms, metricnames.OTelGPUPodCPUPeriods, 812345)
		benchSum(ms, metricnames.OTelGPUPodCPUThrottledPeriods, 73210)
		benchSum(ms, metricnames.OTelGPUPodCPUThrottledTime, 351.2)
		benchGauge(ms, metricnames.OTelGPUPodMemoryUsage, 31457280000)
		benchGauge(ms, metricnames.OTelGPUPodMemoryLimit, 34359738368)
		node := rms.AppendEmpty()
		node.Resource().Attributes().PutStr(metricnames.AttrHostName, hostName)
		nms := node.ScopeMetrics().AppendEmpty().Metrics()
		for _, res := range []string{"cpu", "memory", "io"} {
			for _, scope := range []string{"some", "full"} {
				benchSum(ms, metricnames.OTelGPUPressureStallTime, 412.3, metricnames.AttrOTelGPUPressureResource, res, metricnames.AttrOTelGPUPressureScope, scope)
				benchSum(nms, metricnames.OTelGPUPressureStallTime, 912.3, metricnames.AttrOTelGPUPressureResource, res, metricnames.AttrOTelGPUPressureScope, scope)
			}
		}
		for r := range 8 {
			nic := rms.AppendEmpty()
			na := nic.Resource().Attributes()
			na.PutStr(metricnames.AttrHostName, hostName)
			na.PutStr(metricnames.AttrHWID, fmt.Sprintf("mlx5_%d:1", r))
			na.PutStr(metricnames.AttrHWType, "network")
			na.PutEmptySlice(metricnames.AttrOTelGPUNetworkRailGpus).AppendEmpty().SetStr(busID(r))
			ms := nic.ScopeMetrics().AppendEmpty().Metrics()
			for _, dir := range []string{"receive", "transmit"} {
				benchSum(ms, metricnames.HWNetworkIO, 9.9e12, metricnames.AttrNetworkIODirection, dir)
				benchSum(ms, metricnames.HWNetworkPackets, 2.4e9, metricnames.AttrNetworkIODirection, dir)
			}
			for _, e := range []string{"symbol_error", "link_downed", "link_error_recovery", "port_rcv_errors",
				"port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors", "port_xmit_discards",
				"port_xmit_constraint_errors", "port_rcv_constraint_errors", "local_link_integrity_errors",
				"excessive_buffer_overrun_errors", "VL15_dropped", "out_of_buffer"} {
				benchSum(ms, metricnames.HWErrors, 0, metricnames.AttrErrorType, e)
			}
			benchGauge(ms, metricnames.HWNetworkBandwidthLimit, 5e10)
			benchGauge(ms, metricnames.HWNetworkUp, 1)
			benchSum(ms, metricnames.OTelGPUNetworkXmitWait, 2489603687)
		}
	}
	return md
}

func benchGauge(ms pmetric.MetricSlice, name string, v float64, attrs ...string) {
	m := ms.AppendEmpty()
	m.SetName(name)
	benchPoint(m.SetEmptyGauge().DataPoints(), v, attrs)
}

func benchSum(ms pmetric.MetricSlice, name string, v float64, attrs ...string) {
	m := ms.AppendEmpty()
	m.SetName(name)
	s := m.SetEmptySum()
	s.SetIsMonotonic(true)
	s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
	benchPoint(s.DataPoints(), v, attrs)
}

func benchPoint(dps pmetric.NumberDataPointSlice, v float64, attrs []string) {
	dp := dps.AppendEmpty()
	dp.SetDoubleValue(v)
	dp.SetStartTimestamp(pcommon.NewTimestampFromTime(benchStart))
	for i := 0; i+1 < len(attrs); i += 2 {
		dp.Attributes().PutStr(attrs[i], attrs[i+1])
	}
}

// TestBenchEvidenceJoins: the benchmark's node evidence reaches its GPUs,
// or BenchmarkAnalyzerRatio/node_evidence would time a store never asked:
// every GPU has its pod's cgroup (by name, or by UID through the
// per-process resources) and its rail.
func TestBenchEvidenceJoins(t *testing.T) {
	for name, with := range map[string]func(pmetric.Metrics) pmetric.Metrics{
		"by name": withNodeEvidence, "per process": withNodeEvidencePerProcess,
	} {
		t.Run(name, func(t *testing.T) {
			p, err := newAnalyzerProcessor(createDefaultConfig().(*Config), processortest.NewNopSettings(metadata.Type))
			require.NoError(t, err)
			t0 := time.Unix(1767225600, 0)
			md := with(benchBatch(benchAllFields))
			for i := range 3 {
				restamp(md, pcommon.NewTimestampFromTime(t0.Add(time.Duration(i)*10*time.Second)))
				_, err := p.processMetrics(context.Background(), md)
				require.NoError(t, err)
			}
			now := t0.Add(20 * time.Second).UnixNano()
			for _, g := range []int{0, 9, 4095} {
				id := fmt.Sprintf("GPU-%08x-0000-4000-8000-%012x", g, g)
				w := p.where[id]
				var e cause.Evidence
				p.evidenceOf(&e, now, id, w)
				assert.True(t, e.HasPod, "GPU %d: its pod's cgroup", g)
				assert.True(t, e.HasNode, "GPU %d: its node's pressure", g)
				assert.Len(t, e.Rail, 1, "GPU %d: its rail", g)
			}
		})
	}
}
