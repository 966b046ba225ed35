package gpuanalyzerprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/storagetest"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

var storageID = component.MustNewIDWithName("file_storage", "analyzer")

// startFileStorage starts the real file_storage extension on dir, as a
// collector does at every start.
func startFileStorage(t *testing.T, dir string) (storagetest.Host, func()) {
	return storagetest.FileStorage(t, storageID, dir)
}

// notebook is a fleet of one GPU held by a pod and left idle.
func notebook(t *testing.T) *fleetBatches {
	return newFleet(t, simulated.Config{
		Seed: 3, Hosts: 1, GPUsPerHost: 1, HostPrefix: "gpu-node-", Models: []string{"h100"},
		Workloads: []simulated.Workload{{Name: "notebook", Kind: "serving", Namespace: "research", GPUs: "0/0",
			Phases: []simulated.Phase{{Kind: simulated.Idle}}}},
	})
}

// idleState is the GPUIdle state in a batch's verdicts, "" when inactive.
func idleState(md pmetric.Metrics) string {
	for _, ms := range verdicts(md) {
		m, ok := ms[metricnames.OTelGPUAlerts]
		if !ok {
			return ""
		}
		for i := 0; i < m.Gauge().DataPoints().Len(); i++ {
			a := m.Gauge().DataPoints().At(i).Attributes()
			if n, _ := a.Get(metricnames.AttrAlertname); n.Str() == "GPUIdle" {
				st, _ := a.Get(metricnames.AttrAlertstate)
				return st.Str()
			}
		}
	}
	return ""
}

// feed sends batches up to second `until` of the fleet's time and returns
// the second at which GPUIdle first fired, or -1.
func feed(t *testing.T, p interface {
	ConsumeMetrics(context.Context, pmetric.Metrics) error
}, sink *consumertest.MetricsSink, f *fleetBatches, until int) int {
	fired := -1
	for f.n <= until {
		at := f.n
		sink.Reset()
		require.NoError(t, p.ConsumeMetrics(context.Background(), f.next(t)))
		if fired < 0 && idleState(sink.AllMetrics()[0]) == "firing" {
			fired = at
		}
	}
	return fired
}

func startProcessor(t *testing.T, cfg *Config, host component.Host) (interface {
	ConsumeMetrics(context.Context, pmetric.Metrics) error
	Shutdown(context.Context) error
}, *consumertest.MetricsSink) {
	t.Helper()
	sink := new(consumertest.MetricsSink)
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), host))
	return p, sink
}

// TestRestartKeepsPendingAlert restarts the collector's parts (processor
// and file_storage) while GPUIdle (for 10 min) has been pending 8 min: it
// fires 2 min later, when its 10 min are up, not 10 min after the restart.
func TestRestartKeepsPendingAlert(t *testing.T) {
	dir := t.TempDir()
	cfg := everySample()
	cfg.Storage = &storageID

	host, stop := startFileStorage(t, dir)
	p, sink := startProcessor(t, cfg, host)
	f := notebook(t)
	require.Equal(t, -1, feed(t, p, sink, f, 480))
	require.Equal(t, "pending", idleState(sink.AllMetrics()[0]))
	require.NoError(t, p.Shutdown(context.Background()))
	stop()

	// Down for 20 s, then a new process on the same directory.
	f.n += 20
	host, stop = startFileStorage(t, dir)
	defer stop()
	p, sink = startProcessor(t, cfg, host)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	require.Equal(t, 600, feed(t, p, sink, f, 700), "fires when pending for 600 s, counted from before the restart")
}

// TestRestartWithoutStorage: without a storage extension nothing is kept,
// as before: the timer starts again.
func TestRestartWithoutStorage(t *testing.T) {
	cfg := everySample()
	p, sink := startProcessor(t, cfg, componenttest.NewNopHost())
	f := notebook(t)
	feed(t, p, sink, f, 480)
	require.NoError(t, p.Shutdown(context.Background()))

	p, sink = startProcessor(t, cfg, componenttest.NewNopHost())
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	require.Equal(t, 1081, feed(t, p, sink, f, 1100), "600 s after the first sample after the restart")
}

// direct feeds the processor's own function, bypassing its shutdown.
type direct struct {
	p    *analyzerProcessor
	sink *consumertest.MetricsSink
}

func (d direct) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	out, err := d.p.processMetrics(ctx, md)
	if err == nil {
		err = d.sink.ConsumeMetrics(ctx, out)
	}
	return err
}

// TestCheckpoint: without a clean shutdown (a crash), the state of the last
// checkpoint is what the next run starts from.
func TestCheckpoint(t *testing.T) {
	dir := t.TempDir()
	cfg := everySample()
	cfg.Storage = &storageID
	cfg.CheckpointInterval = 30 * time.Second

	host, stop := startFileStorage(t, dir)
	ap, err := newAnalyzerProcessor(cfg, processortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	require.NoError(t, ap.start(context.Background(), host))
	f := notebook(t)
	sink0 := new(consumertest.MetricsSink)
	feed(t, direct{ap, sink0}, sink0, f, 485) // checkpoints at 30 s, 60 s, ..., 480 s
	// The process dies: no last save, only the file lock goes.
	require.NoError(t, ap.client.Close(context.Background()))
	stop()

	host, stop = startFileStorage(t, dir)
	defer stop()
	p, sink := startProcessor(t, cfg, host)
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	require.Equal(t, 600, feed(t, p, sink, f, 700))
}

func TestStorageErrors(t *testing.T) {
	cfg := everySample()
	missing := component.MustNewIDWithName("file_storage", "missing")
	cfg.Storage = &missing
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, new(consumertest.MetricsSink))
	require.NoError(t, err)
	require.EqualError(t, p.Start(context.Background(), componenttest.NewNopHost()),
		`storage: extension "file_storage/missing" not found; add it under extensions and to service::extensions`)

	notStorage := storagetest.Host{missing: plainExtension{}}
	require.EqualError(t, p.Start(context.Background(), notStorage),
		`storage: extension "file_storage/missing" is not a storage extension`)
}

// plainExtension is an extension that stores nothing.
type plainExtension struct {
	component.StartFunc
	component.ShutdownFunc
}
