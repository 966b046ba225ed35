package gpuautoscaleconnector

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/storagetest"
)

var storageID = component.MustNewIDWithName("file_storage", "autoscale")

// startFileStorage starts the real file_storage extension on dir, as a
// collector does at every start.
func startFileStorage(t *testing.T, dir string) (storagetest.Host, func()) {
	return storagetest.FileStorage(t, storageID, dir)
}

// vllmBatch is what k8s_attributes-enriched vLLM pods of the serving/llm
// Deployment report at now: each pod's generation token counter, and a
// queue behind every pod (so that their rates teach a pod's capacity).
func vllmBatch(now time.Time, tokens map[string]float64) pmetric.Metrics {
	md := pmetric.NewMetrics()
	for pod, n := range tokens {
		rm := md.ResourceMetrics().AppendEmpty()
		attrs := rm.Resource().Attributes()
		attrs.PutStr(metricnames.AttrK8sNamespaceName, "serving")
		attrs.PutStr(metricnames.AttrK8sDeploymentName, "llm")
		attrs.PutStr(metricnames.AttrK8sPodName, pod)
		ms := rm.ScopeMetrics().AppendEmpty().Metrics()
		c := ms.AppendEmpty()
		c.SetName("vllm:generation_tokens_total")
		sum := c.SetEmptySum()
		sum.SetIsMonotonic(true)
		sum.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
		dp := sum.DataPoints().AppendEmpty()
		dp.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Unix(1767225600, 0)))
		dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
		dp.SetDoubleValue(n)
		w := ms.AppendEmpty()
		w.SetName("vllm:num_requests_waiting")
		g := w.SetEmptyGauge().DataPoints().AppendEmpty()
		g.SetTimestamp(pcommon.NewTimestampFromTime(now))
		g.SetDoubleValue(2)
	}
	return md
}

// TestServingStateSurvivesARestart: a serving target's estimator, saved
// through the real file_storage extension at shutdown, is what the next
// collector starts from; without storage, a restart starts afresh. With
// attainment, the calibrated forecasters' errors are part of it.
func TestServingStateSurvivesARestart(t *testing.T) {
	for name, serving := range map[string]map[string]any{"peak": {}, "calibrated": {"attainment": 0.9}} {
		t.Run(name, func(t *testing.T) { servingStateSurvivesARestart(t, serving) })
	}
}

func servingStateSurvivesARestart(t *testing.T, serving map[string]any) {
	dir := t.TempDir()
	cfg, err := servingConfig(t, serving, nil)
	require.NoError(t, err)
	cfg.Storage = &storageID
	set := connectortest.NewNopSettings(metadata.Type)
	ctx := context.Background()

	host, stop := startFileStorage(t, dir)
	a, err := newAutoscaler(cfg, set)
	require.NoError(t, err)
	var clock atomic.Int64 // the evaluation loop reads it too
	a.now = func() time.Time { return time.Unix(0, clock.Load()) }
	now := time.Unix(1767225600, 0)
	clock.Store(now.UnixNano())
	require.NoError(t, a.Start(ctx, host))
	tokens := map[string]float64{"llm-0": 0, "llm-1": 0}
	for range 60 { // 15 minutes, every 15 s
		now = now.Add(15 * time.Second)
		clock.Store(now.UnixNano())
		tokens["llm-0"] += 15 * 900
		tokens["llm-1"] += 15 * 1100
		require.NoError(t, a.consume(ctx, vllmBatch(now, tokens)))
		a.evaluate(ctx, now)
	}
	learned, err := a.targets[0].serving.est.MarshalState()
	require.NoError(t, err)
	require.Equal(t, "busy", a.targets[0].serving.last.CapacityFrom, "the pods' queues taught their capacity")
	if serving["attainment"] != nil {
		require.Contains(t, string(learned), `"calibration":[{"f":"now","t":[1767225`, "the calibrated forecasters' matured errors are saved")
	}
	require.NoError(t, a.Shutdown(ctx))
	stop()

	host, stop = startFileStorage(t, dir)
	defer stop()
	b, err := newAutoscaler(cfg, set)
	require.NoError(t, err)
	require.NoError(t, b.Start(ctx, host))
	restored, err := b.targets[0].serving.est.MarshalState()
	require.NoError(t, err)
	require.JSONEq(t, string(learned), string(restored), "the next collector starts from what this one learned")
	require.NoError(t, b.Shutdown(ctx))

	cfg.Storage = nil
	c, err := newAutoscaler(cfg, set)
	require.NoError(t, err)
	require.NoError(t, c.Start(ctx, host))
	afresh, err := c.targets[0].serving.est.MarshalState()
	require.NoError(t, err)
	require.NotEqual(t, string(learned), string(afresh), "without storage nothing is kept")
	require.NoError(t, c.Shutdown(ctx))
}

// TestServingStorageMisconfigured: a storage key naming no storage
// extension fails the start with the key's name; a saved state that is
// not one is logged and the target starts afresh.
func TestServingStorageMisconfigured(t *testing.T) {
	cfg, err := servingConfig(t, map[string]any{}, nil)
	require.NoError(t, err)
	missing := component.MustNewIDWithName("file_storage", "missing")
	cfg.Storage = &missing
	a, err := newAutoscaler(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	require.EqualError(t, a.Start(context.Background(), storagetest.Host{}),
		`storage: extension "file_storage/missing" not found; add it under extensions and to service::extensions`)

	dir := t.TempDir()
	host, stop := startFileStorage(t, dir)
	defer stop()
	ctx := context.Background()
	cfg.Storage = &storageID
	set := connectortest.NewNopSettings(metadata.Type)
	client, err := host[storageID].(storage.Extension).GetClient(ctx, component.KindConnector, set.ID, "")
	require.NoError(t, err)
	require.NoError(t, client.Set(ctx, "serving/serving/Deployment/llm", []byte(`{"v":1,"capacity":-5}`)))
	require.NoError(t, client.Close(ctx))

	core, logs := observer.New(zap.InfoLevel)
	set.Logger = zap.New(core)
	a, err = newAutoscaler(cfg, set)
	require.NoError(t, err)
	require.NoError(t, a.Start(ctx, host), "a bad saved state does not stop the collector")
	refused := logs.FilterMessage("Saved serving state not restored; starting afresh").All()
	require.Len(t, refused, 1)
	require.Contains(t, refused[0].ContextMap()["error"], "capacity is -5")
	require.NoError(t, a.Shutdown(ctx))
}
