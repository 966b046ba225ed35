package gpunodereceiver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

const exampleConfig = "../../examples/local/config.yaml"

// makeRunCauses loads make run's second fleet: the dcgm receiver's and the
// gpu_node receiver's sections, and the analyzer's.
func makeRunCauses(t *testing.T) (*dcgmreceiver.Config, *Config, component.Config) {
	t.Helper()
	cm, err := confmaptest.LoadConf(exampleConfig)
	require.NoError(t, err)
	dc := dcgmreceiver.NewFactory().CreateDefaultConfig().(*dcgmreceiver.Config)
	sub, err := cm.Sub("receivers::dcgm/causes")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(dc))
	require.NoError(t, confmap.Validate(dc))
	nc := createDefaultConfig().(*Config)
	sub, err = cm.Sub("receivers::gpu_node/causes")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(nc))
	require.NoError(t, confmap.Validate(nc))
	pf := gpuanalyzerprocessor.NewFactory()
	pc := pf.CreateDefaultConfig()
	sub, err = cm.Sub("processors::gpu_analyzer")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(pc))
	require.NoError(t, confmap.Validate(pc))
	return dc, nc, pc
}

// TestSimulatedAlias: the collector's configuration takes a YAML anchor in
// the dcgm receiver's simulated section and an alias in gpu_node's: both
// receivers get the same fleet.
func TestSimulatedAlias(t *testing.T) {
	dc, nc, _ := makeRunCauses(t)
	require.NotNil(t, nc.Simulated)
	require.Equal(t, dc.Simulated, *nc.Simulated)
	require.Equal(t, "rack-b-", nc.Simulated.HostPrefix)
	require.Len(t, nc.Simulated.Workloads, 4)

	bad := createDefaultConfig().(*Config)
	bad.Simulated = &simulated.Config{Hosts: 1, GPUsPerHost: 1, Models: []string{"h200"}}
	require.ErrorContains(t, confmap.Validate(bad), `simulated: models[0]: unknown model "h200"`)
	bad.Simulated.Models = []string{"h100"}
	bad.Cgroup.Enabled, bad.Pressure.Enabled, bad.Network.Enabled = false, false, false
	require.ErrorContains(t, confmap.Validate(bad), "simulated: cgroup, pressure and network are all disabled")
}

// TestSimulatedSource: the source emits each host's pods under the UIDs
// the dcgm receiver gives the GPUs' processes, its node, and its NICs with
// the GPUs' PCI bus IDs on their rails, at the scrape's time.
func TestSimulatedSource(t *testing.T) {
	dc, nc, _ := makeRunCauses(t)
	s, err := newNodeScraper(nc, "ignored", receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	require.Len(t, s.sources, 1, "no real source is made")
	at := time.Unix(1767225600, 0)
	s.now = func() time.Time { return at }
	md, err := s.scrape(context.Background())
	require.NoError(t, err)

	fl, err := simulated.New(dc.Simulated)
	require.NoError(t, err)
	fl.EnableProcesses()
	samples, err := fl.Collect(context.Background(), at, time.Second)
	require.NoError(t, err)
	uids, buses := map[string]bool{}, map[string]bool{}
	for _, smp := range samples {
		for _, p := range smp.Processes {
			uids[smp.Device.Host+"/"+p.PodUID] = true
		}
		buses[smp.Device.Host+"/"+strings.ToLower(strings.TrimPrefix(smp.Device.PCIBusID, "0000"))] = true
	}
	pods, nodes, nics := map[string]bool{}, 0, 0
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		host, _ := attrs.Get("host.name")
		require.True(t, strings.HasPrefix(host.Str(), "rack-b-"))
		dp := firstPoint(rms.At(i))
		require.Equal(t, at.UnixNano(), int64(dp.Timestamp()), "the scrape's time")
		switch {
		case hasAttr(attrs, "k8s.pod.uid"):
			uid, _ := attrs.Get("k8s.pod.uid")
			pods[host.Str()+"/"+uid.Str()] = true
		case hasAttr(attrs, "hw.id"):
			nics++
			rail, ok := attrs.Get("otelgpu.network.rail.gpus")
			require.True(t, ok)
			for j := 0; j < rail.Slice().Len(); j++ {
				assert.True(t, buses[host.Str()+"/"+rail.Slice().At(j).Str()], "rail GPU %s on %s", rail.Slice().At(j).Str(), host.Str())
			}
		default:
			nodes++
		}
	}
	require.Equal(t, uids, pods, "the same pods, by UID, on the same hosts")
	require.Len(t, pods, 6, "2 training pods, the all-reduce's 2, the loader and the embedder")
	require.Equal(t, 4, nodes)
	require.Equal(t, 8, nics, "4 InfiniBand ports, 4 Ethernet NICs")
}

func hasAttr(attrs pcommon.Map, k string) bool {
	_, ok := attrs.Get(k)
	return ok
}

func firstPoint(rm pmetric.ResourceMetrics) pmetric.NumberDataPoint {
	m := rm.ScopeMetrics().At(0).Metrics().At(0)
	if m.Type() == pmetric.MetricTypeGauge {
		return m.Gauge().DataPoints().At(0)
	}
	return m.Sum().DataPoints().At(0)
}

// TestSimulatedCauses runs make run's second fleet through both
// receivers' mappings and the analyzer, as the collector does, for two
// minutes of data time: the rank on the degraded rail is the straggler
// and the fabric its cause, the data loader waits on its CPU limit, and
// the L40S all-reduce is communication bound over the network, never
// launch bound.
func TestSimulatedCauses(t *testing.T) {
	dc, nc, pc := makeRunCauses(t)
	fl, err := simulated.New(dc.Simulated)
	require.NoError(t, err)
	fl.EnableProcesses()
	df := dcgmreceiver.NewFactory()
	r, err := df.CreateMetrics(context.Background(), receivertest.NewNopSettings(df.Type()), df.CreateDefaultConfig(), consumertest.NewNop())
	require.NoError(t, err)
	rcv, ok := r.(offline.Receiver)
	require.True(t, ok)
	s, err := newNodeScraper(nc, "ignored", receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, err)

	core, logs := observer.New(zapcore.InfoLevel)
	pf := gpuanalyzerprocessor.NewFactory()
	set := processortest.NewNopSettings(pf.Type())
	set.Logger = zap.New(core)
	sink := new(consumertest.MetricsSink)
	p, err := pf.CreateMetrics(context.Background(), set, pc, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()

	t0 := time.Unix(1767225600, 0)
	for at := time.Duration(0); at <= 2*time.Minute; at += 5 * time.Second {
		now := t0.Add(at)
		samples, err := fl.Collect(context.Background(), now, 5*time.Second)
		require.NoError(t, err)
		require.NoError(t, p.ConsumeMetrics(context.Background(), rcv.Map(samples)))
		s.now = func() time.Time { return now }
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	}

	// explained is the line that gave the GPU the cause; the first cause
	// logged can be an earlier one, found on the first readings of the
	// node (the NICs' state alone: none_found).
	explained := func(msg, host, gpu, kind string) map[string]any {
		for _, e := range logs.FilterMessage(msg).All() {
			f := e.ContextMap()
			if f[metricnames.AttrHostName] == host && f[metricnames.AttrHWName] == gpu && f["cause"] == kind {
				return f
			}
		}
		for _, e := range logs.All() {
			t.Logf("%s %v", e.Message, e.ContextMap())
		}
		t.Fatalf("no %q for %s/%s", msg, host, gpu)
		return nil
	}
	// Found within 15 s of the first errors, over a window that began
	// before them: the rate grows to ~1,200/min as the window fills.
	f := explained("GPU straggler explained", "rack-b-1", "gpu1", "fabric_errors")
	assert.Regexp(t, `^symbol errors \+[0-9,]+/min on mlx5_1:1$`, f["evidence"])
	assert.Equal(t, "check_fabric", f["hint"])
	f = explained("GPU wait explained", "rack-b-2", "gpu1", "cpu_throttled")
	assert.Equal(t, "input_bound", f["bottleneck"])
	assert.Regexp(t, `^throttled in 3[0-9] % of periods at a 4-CPU limit$`, f["evidence"])

	// The all-reduce's GPUs, by the analyzer's verdicts: communication
	// bound over the network from their second sample on. The first,
	// without a PCIe rate yet (a counter needs two readings), is launch
	// bound by SM activity (0.38) at 99 % utilization: the analyzer's
	// reading of any such GPU before its PCIe traffic is known.
	classes := map[string]map[string]int{}
	for _, md := range sink.AllMetrics() {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			attrs := rms.At(i).Resource().Attributes()
			host, _ := attrs.Get(metricnames.AttrHostName)
			name, _ := attrs.Get(metricnames.AttrHWName)
			if c := classIn(rms.At(i)); c != "" && (host.Str() == "rack-b-2" || host.Str() == "rack-b-3") && name.Str() == "gpu0" {
				key := host.Str() + "/" + name.Str()
				if classes[key] == nil {
					classes[key] = map[string]int{}
				}
				if c == "launch_bound" && verdictTime(rms.At(i)) == t0.UnixNano() {
					c = "launch_bound at the first sample"
				}
				classes[key][c]++
			}
		}
	}
	require.Len(t, classes, 2)
	for gpu, cs := range classes {
		assert.Zero(t, cs["launch_bound"], "%s: %v", gpu, cs)
		assert.Positive(t, cs["communication_bound"], "%s: %v", gpu, cs)
	}
	for _, e := range logs.All() {
		f := e.ContextMap()
		assert.NotEqual(t, "launch_bound", f["bottleneck"], "%s %v", e.Message, f)
		assert.NotEqual(t, "launch_bound", f["to"], "%s %v", e.Message, f)
	}
}

// verdictTime is the time of the resource's bottleneck state.
func verdictTime(rm pmetric.ResourceMetrics) int64 {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if ms.At(k).Name() == metricnames.OTelGPUBottleneckState && ms.At(k).Gauge().DataPoints().Len() > 0 {
				return int64(ms.At(k).Gauge().DataPoints().At(0).Timestamp())
			}
		}
	}
	return 0
}

// classIn is the bottleneck class a resource's verdict sets to 1.
func classIn(rm pmetric.ResourceMetrics) string {
	sms := rm.ScopeMetrics()
	for j := 0; j < sms.Len(); j++ {
		ms := sms.At(j).Metrics()
		for k := 0; k < ms.Len(); k++ {
			if ms.At(k).Name() != metricnames.OTelGPUBottleneckState {
				continue
			}
			dps := ms.At(k).Gauge().DataPoints()
			for d := 0; d < dps.Len(); d++ {
				if dps.At(d).IntValue() == 1 {
					c, _ := dps.At(d).Attributes().Get(metricnames.AttrOTelGPUBottleneckClass)
					return c.Str()
				}
			}
		}
	}
	return ""
}
