package gpuanalyzerprocessor

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// slurmFleet: a two-node Slurm job (4242, account physics) of three GPUs
// per node whose second node's gpu1 is a slow rank, and on a third node a
// job (4243, account chem, partition preempt) that holds its GPUs idle
// beside two GPUs no job holds.
func slurmFleet() simulated.Config {
	return simulated.Config{
		Seed: 9, Hosts: 3, GPUsPerHost: 3, HostPrefix: "node", Models: []string{"h100"},
		Workloads: []simulated.Workload{
			{Name: "climate", Kind: simulated.Training, GPUs: "0-1/*", Phases: []simulated.Phase{{Kind: simulated.ComputeBound}},
				Slurm: &simulated.SlurmJob{JobID: 4242, User: "alice", Account: "physics", Partition: "gpu", Cluster: "hpc1"}},
			{Name: "notebook", Kind: simulated.Training, GPUs: "2/0", Phases: []simulated.Phase{{Kind: simulated.Idle}},
				Slurm: &simulated.SlurmJob{JobID: 4243, User: "bob", Account: "chem", Partition: "preempt", Cluster: "hpc1"}},
		},
		Faults: []simulated.Fault{{Kind: simulated.SlowRank, GPUs: "1/1", Start: 10 * time.Second}},
	}
}

// TestSlurmStragglerAcrossNodes: the two-node job is one group of six
// GPUs, so its slow rank is found; grouped per node (three GPUs) it would
// have too few peers. The transition names the job.
func TestSlurmStragglerAcrossNodes(t *testing.T) {
	f := newFleet(t, slurmFleet())
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, everySample(), set)
	for range 90 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	var stragglers []map[string]any
	for _, e := range logs.FilterMessage("GPU is a straggler").All() {
		stragglers = append(stragglers, e.ContextMap())
	}
	require.Len(t, stragglers, 1, "%v", stragglers)
	s := stragglers[0]
	require.Equal(t, "node1", s[metricnames.AttrHostName])
	require.Equal(t, "gpu1", s[metricnames.AttrHWName])
	require.Equal(t, "4242", s[metricnames.AttrSlurmJobID])
	require.Equal(t, "climate", s[metricnames.AttrSlurmJobName])
	require.Equal(t, "alice", s[metricnames.AttrSlurmJobUser])
}

// TestSlurmGroupKey: a Slurm job's key is its cluster and ID, whatever
// group_by says and whatever pod it runs in; the same ID on two clusters
// is two jobs; a Kubernetes job keeps its group_by key.
func TestSlurmGroupKey(t *testing.T) {
	p := &analyzerProcessor{cfg: createDefaultConfig().(*Config), keys: map[string]string{}}
	key := func(raw map[string]any) string {
		m := pcommon.NewMap()
		require.NoError(t, m.FromRaw(raw))
		return p.groupKey(m)
	}
	a := key(map[string]any{"slurm.job.id": "4242", "slurm.cluster.name": "hpc1", "host.name": "node0"})
	b := key(map[string]any{"slurm.job.id": "4242", "slurm.cluster.name": "hpc1", "host.name": "node1",
		"k8s.namespace.name": "soperator", "k8s.pod.name": "worker-1"})
	require.NotEmpty(t, a)
	require.Equal(t, a, b, "one job across nodes, pods or not")
	require.NotEqual(t, a, key(map[string]any{"slurm.job.id": "4242", "slurm.cluster.name": "hpc2"}))
	require.NotEqual(t, a, key(map[string]any{"slurm.job.id": "4242"}))
	k8s := key(map[string]any{"k8s.namespace.name": "ml", "k8s.job.name": "4242"})
	require.NotEmpty(t, k8s)
	require.NotEqual(t, key(map[string]any{"slurm.job.id": "4242"}), k8s)
	require.Empty(t, key(map[string]any{"k8s.namespace.name": "ml"}))
}

// TestSlurmCost: GPU time and cost carry the job's account, user and
// partition, so that they sum per account as per namespace; an idle GPU
// a job holds is the job's idle time (workload_idle), one no job holds
// the cluster's; a price override by partition applies.
func TestSlurmCost(t *testing.T) {
	f := newFleet(t, slurmFleet())
	cfg := everySample()
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 4}
	half := 0.5
	cfg.Cost.Overrides = []PriceOverride{{Attribute: metricnames.AttrSlurmJobPartition, Value: "preempt", Factor: &half}}
	p, sink := newProcessor(t, cfg, processortest.NewNopSettings(metadata.Type))
	const n = 61
	for range n {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}
	// The last cumulative point of each GPU and state.
	type key struct{ gpu, state, metric string }
	last := map[key]float64{}
	account := map[string]string{}
	for _, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			rm := md.ResourceMetrics().At(i)
			attrs := rm.Resource().Attributes()
			id, _ := attrs.Get(metricnames.AttrHWID)
			if acct, ok := attrs.Get(metricnames.AttrSlurmJobAccount); ok {
				account[id.Str()] = acct.Str()
			}
			for j := 0; j < rm.ScopeMetrics().Len(); j++ {
				ms := rm.ScopeMetrics().At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					m := ms.At(k)
					if m.Name() != metricnames.OTelGPUCost && m.Name() != metricnames.OTelGPUTime {
						continue
					}
					dps := m.Sum().DataPoints()
					for d := 0; d < dps.Len(); d++ {
						st, _ := dps.At(d).Attributes().Get(metricnames.AttrOTelGPUUsageState)
						last[key{id.Str(), st.Str(), m.Name()}] = dps.At(d).DoubleValue()
					}
				}
			}
		}
	}
	perAccount := map[string]map[string]float64{}
	for k, v := range last {
		a := account[k.gpu]
		if perAccount[a] == nil {
			perAccount[a] = map[string]float64{}
		}
		perAccount[a][k.metric+" "+k.state] += v
	}
	const hours = float64(n-1) / 3600
	require.InDelta(t, 6*hours*3600, perAccount["physics"][metricnames.OTelGPUTime+" used"], 1e-6, "six GPUs used for the whole run")
	require.InDelta(t, 6*hours*4, perAccount["physics"][metricnames.OTelGPUCost+" used"], 1e-9)
	require.InDelta(t, hours*3600, perAccount["chem"][metricnames.OTelGPUTime+" workload_idle"], 1e-6, "a job's idle GPU is the job's")
	require.InDelta(t, hours*2, perAccount["chem"][metricnames.OTelGPUCost+" workload_idle"], 1e-9, "at the preempt partition's half price")
	require.InDelta(t, 2*hours*3600, perAccount[""][metricnames.OTelGPUTime+" cluster_idle"], 1e-6, "two GPUs no job holds")
}

// TestSlurmExample runs make run's Slurm mode (examples/slurm/config.yaml)
// for two minutes of data: its GPUs carry Slurm owners and no k8s.*
// attribute, the two-node job's slow rank is its one straggler, and the
// summary names the job and the idle GPU a job holds.
func TestSlurmExample(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "slurm", "config.yaml"))
	require.NoError(t, err)
	rf := dcgmreceiver.NewFactory()
	rcfg := rf.CreateDefaultConfig()
	sub, err := cm.Sub("receivers::dcgm")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(rcfg))
	require.NoError(t, confmap.Validate(rcfg))
	fleet := rcfg.(*dcgmreceiver.Config).Simulated
	f := newFleet(t, fleet)
	f.fl.EnableProcesses()

	cfg := createDefaultConfig().(*Config)
	sub, err = cm.Sub("processors::gpu_analyzer")
	require.NoError(t, err)
	require.NoError(t, sub.Unmarshal(cfg))
	require.NoError(t, confmap.Validate(cfg))
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, sink := newProcessor(t, cfg, set)
	for range 120 {
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
	}

	owners := map[string]bool{}
	for _, md := range sink.AllMetrics() {
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			attrs := md.ResourceMetrics().At(i).Resource().Attributes()
			for k := range attrs.All() {
				require.False(t, strings.HasPrefix(k, "k8s."), "no k8s.* on a Slurm job's GPU: %s", k)
			}
			if acct, ok := attrs.Get(metricnames.AttrSlurmJobAccount); ok {
				owners[acct.Str()] = true
			}
		}
	}
	require.Equal(t, map[string]bool{"physics": true, "biochem": true, "astro": true, "chem": true}, owners)

	stragglers := logs.FilterMessage("GPU is a straggler").All()
	require.Len(t, stragglers, 1)
	s := stragglers[0].ContextMap()
	require.Equal(t, []any{"gpu-a-1", "gpu3", "4242"}, []any{s[metricnames.AttrHostName], s[metricnames.AttrHWName], s[metricnames.AttrSlurmJobID]})

	var summary string
	for _, e := range logs.All() {
		if strings.HasPrefix(e.Message, "24 GPUs") || strings.HasPrefix(e.Message, "25 GPUs") || strings.HasPrefix(e.Message, "26 GPUs") {
			summary = e.Message
		}
	}
	require.Contains(t, summary, "gpu-a-1/gpu3 in slurm job 4242 (climate-ensemble)")
	require.Contains(t, summary, "held by a Slurm job")
}

// TestGatewayRoutesSlurmJobs: the gateway example's agents route by every
// attribute the analyzer groups by, Kubernetes' group_by and a Slurm
// job's key, so that a multi-node job's GPUs meet in one replica.
func TestGatewayRoutesSlurmJobs(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("..", "..", "examples", "gateway", "agent.yaml"))
	require.NoError(t, err)
	lb, err := cm.Sub("exporters::load_balancing")
	require.NoError(t, err)
	var cfg struct {
		RoutingAttributes []string `mapstructure:"routing_attributes"`
	}
	require.NoError(t, lb.Unmarshal(&cfg, confmap.WithIgnoreUnused()))
	routing := cfg.RoutingAttributes
	want := append([]string{metricnames.AttrSlurmClusterName, metricnames.AttrSlurmJobID}, createDefaultConfig().(*Config).GroupBy...)
	require.Subset(t, routing, want)
}
