package gpualertmanagerexporter

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/storagetest"
)

// fakeAM is an Alertmanager's v2 alerts endpoint for unit tests: it keeps
// each request's alerts and answers with status (200 unless set).
type fakeAM struct {
	*httptest.Server
	mu       sync.Mutex
	requests [][]wireAlert
	status   atomic.Int32
}

func newFakeAM(t *testing.T) *fakeAM {
	am := &fakeAM{}
	am.status.Store(http.StatusOK)
	am.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != apiPath || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "wrong request "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if s := int(am.status.Load()); s != http.StatusOK {
			http.Error(w, "refused", s)
			return
		}
		var alerts []wireAlert
		if err := json.NewDecoder(r.Body).Decode(&alerts); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		am.mu.Lock()
		am.requests = append(am.requests, alerts)
		am.mu.Unlock()
	}))
	t.Cleanup(am.Close)
	return am
}

func (am *fakeAM) alerts() []wireAlert {
	am.mu.Lock()
	defer am.mu.Unlock()
	var out []wireAlert
	for _, r := range am.requests {
		out = append(out, r...)
	}
	return out
}

// waitAlerts waits until the fake has received n alerts.
func (am *fakeAM) waitAlerts(t *testing.T, n int) []wireAlert {
	t.Helper()
	require.Eventually(t, func() bool { return len(am.alerts()) >= n }, 10*time.Second, 10*time.Millisecond,
		"Alertmanager %s received %d alerts, want %d", am.URL, len(am.alerts()), n)
	return am.alerts()
}

func testConfig(endpoints ...string) *Config {
	cfg := defaultConfig()
	cfg.Endpoints = endpoints
	return cfg
}

func startExporter(t *testing.T, cfg *Config, host component.Host, set exporter.Settings) exporter.Metrics {
	t.Helper()
	require.NoError(t, cfg.Validate())
	e, err := NewFactory().CreateMetrics(context.Background(), set, cfg)
	require.NoError(t, err)
	require.NoError(t, e.Start(context.Background(), host))
	return e
}

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// alertPoint is one otelgpu.alerts point of GPU gpu3 on gpu-node-1.
func alertPoint(name, state string, value int64, at time.Time) pmetric.Metrics {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	res := rm.Resource().Attributes()
	res.PutStr("hw.id", "GPU-3")
	res.PutStr("hw.name", "gpu3")
	res.PutStr("host.name", "gpu-node-1")
	res.PutStr("k8s.pod.name", "infer-0")
	res.PutStr("nvidia.gpu.driver.version", "580.1") // not a label
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("otelgpu.alerts")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	dp.SetIntValue(value)
	dp.Attributes().PutStr("alertname", name)
	dp.Attributes().PutStr("alertstate", state)
	dp.Attributes().PutStr("severity", "critical")
	// Other metrics of the batch are ignored.
	other := rm.ScopeMetrics().At(0).Metrics().AppendEmpty()
	other.SetName("hw.gpu.utilization")
	other.SetEmptyGauge().DataPoints().AppendEmpty().SetDoubleValue(0.5)
	return md
}

func TestFireAndResolve(t *testing.T) {
	am := newFakeAM(t)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	e := startExporter(t, testConfig(am.URL), componenttest.NewNopHost(), metadatatest.NewSettings(tel))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	ctx := context.Background()

	// Pending is not sent.
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUFaulted", "pending", 1, t0)))
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUFaulted", "firing", 1, t0.Add(5*time.Second))))
	before := time.Now()
	got := am.waitAlerts(t, 1)
	require.Len(t, got, 1)
	a := got[0]
	assert.Equal(t, map[string]string{
		"alertname": "GPUFaulted", "severity": "critical", "hw_id": "GPU-3", "hw_name": "gpu3",
		"host_name": "gpu-node-1", "k8s_pod_name": "infer-0",
	}, a.Labels)
	assert.Equal(t, "GPU gpu3 on gpu-node-1 is faulted: reset, drain or replace it", a.Annotations["summary"])
	assert.Equal(t, defaultRunbookURL+"GPUFaulted.md", a.Annotations["runbook_url"])
	assert.Regexp(t, `^gpufaulted-[0-9a-f]{8}$`, a.Annotations["incident_id"])
	assert.True(t, a.StartsAt.Equal(t0.Add(5*time.Second)), "startsAt %v: the firing point's time", a.StartsAt)
	// endsAt: 4 × max(evaluation interval 30 s, resend delay 1 m) after it
	// was seen, as Prometheus' ValidUntil.
	assert.WithinDuration(t, before.Add(4*time.Minute), a.EndsAt, 5*time.Second)

	// Still firing: not sent again before the resend delay.
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUFaulted", "firing", 1, t0.Add(10*time.Second))))
	// The analyzer's end of the series: firing, 0.
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUFaulted", "firing", 0, t0.Add(15*time.Second))))
	got = am.waitAlerts(t, 2)
	require.Len(t, got, 2, "the second firing point is not sent at once")
	r := got[1]
	assert.Equal(t, a.Labels, r.Labels)
	assert.True(t, r.EndsAt.Equal(t0.Add(15*time.Second)), "endsAt %v: the resolve's time", r.EndsAt)
	assert.True(t, r.StartsAt.Equal(a.StartsAt))
	assert.Equal(t, a.Annotations["incident_id"], r.Annotations["incident_id"])

	// A second resolve of the same alert is nothing new.
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUFaulted", "resolved", 1, t0.Add(20*time.Second))))
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, am.alerts(), 2)

	metadatatest.AssertEqualExporterGpuAlertmanagerAlertsSent(t, tel, []metricdata.DataPoint[int64]{
		{Value: 2, Attributes: attribute.NewSet(attribute.String("endpoint", am.URL))},
	}, metricdatatest.IgnoreTimestamp())
}

func TestEveryPeerAndRetry(t *testing.T) {
	up, down := newFakeAM(t), newFakeAM(t)
	down.status.Store(http.StatusServiceUnavailable)
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	e := startExporter(t, testConfig(up.URL, down.URL), componenttest.NewNopHost(), metadatatest.NewSettings(tel))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })

	require.NoError(t, e.ConsumeMetrics(context.Background(), alertPoint("GPUOverheating", "firing", 1, t0)))
	up.waitAlerts(t, 1)
	// The peer that is down is retried, not given up on, and gets the
	// alert once it is back: no resend delay to wait for.
	require.Eventually(t, func() bool {
		var rm metricdata.ResourceMetrics
		return tel.Reader.Collect(context.Background(), &rm) == nil && failedFor(rm, down.URL) >= 2
	}, 10*time.Second, 20*time.Millisecond, "the failing peer is retried")
	assert.Empty(t, down.alerts())
	down.status.Store(http.StatusOK)
	got := down.waitAlerts(t, 1)
	assert.Equal(t, "GPUOverheating", got[0].Labels["alertname"])
	assert.Len(t, up.alerts(), 1, "the healthy peer is not sent it twice")
	// Once back, the peer is sent every alert held again (it may have
	// restarted and forgotten them): here the one it was just sent.
	assert.Len(t, down.waitAlerts(t, 2), 2)
}

// failedFor reads exporter_gpu_alertmanager_alerts_failed for an endpoint.
func failedFor(rm metricdata.ResourceMetrics, endpoint string) int64 {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "otelcol_exporter_gpu_alertmanager_alerts_failed" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				if v, _ := dp.Attributes.Value("endpoint"); v.AsString() == endpoint {
					return dp.Value
				}
			}
		}
	}
	return 0
}

func TestRefusedIsDropped(t *testing.T) {
	am := newFakeAM(t)
	am.status.Store(http.StatusBadRequest)
	e := startExporter(t, testConfig(am.URL), componenttest.NewNopHost(), exportertest.NewNopSettings(metadata.Type))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	ctx := context.Background()
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUIdle", "firing", 1, t0)))
	time.Sleep(300 * time.Millisecond)
	am.status.Store(http.StatusOK)
	// The refused alert is not retried, so it does not hold up the next.
	require.NoError(t, e.ConsumeMetrics(ctx, alertPoint("GPUThrottled", "firing", 1, t0)))
	got := am.waitAlerts(t, 1)
	time.Sleep(100 * time.Millisecond)
	require.Len(t, am.alerts(), 1)
	assert.Equal(t, "GPUThrottled", got[0].Labels["alertname"])
}

func TestBatchesOfAtMost256(t *testing.T) {
	am := newFakeAM(t)
	am.status.Store(http.StatusServiceUnavailable)
	e := startExporter(t, testConfig(am.URL), componenttest.NewNopHost(), exportertest.NewNopSettings(metadata.Type))
	t.Cleanup(func() { require.NoError(t, e.Shutdown(context.Background())) })
	md := pmetric.NewMetrics()
	for i := range 600 {
		one := alertPoint("GPUFaulted", "firing", 1, t0)
		one.ResourceMetrics().At(0).Resource().Attributes().PutStr("hw.id", "GPU-"+string(rune('a'+i%26))+time.Duration(i).String())
		one.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	}
	require.NoError(t, e.ConsumeMetrics(context.Background(), md))
	time.Sleep(50 * time.Millisecond)
	am.status.Store(http.StatusOK)
	am.waitAlerts(t, 600)
	am.mu.Lock()
	defer am.mu.Unlock()
	for i, r := range am.requests {
		assert.LessOrEqual(t, len(r), maxBatch, "request %d", i)
	}
	assert.GreaterOrEqual(t, len(am.requests), 3)
}

func TestRestartResendsFromStorage(t *testing.T) {
	am := newFakeAM(t)
	id := component.MustNewID("file_storage")
	host, stop := storagetest.FileStorage(t, id, t.TempDir())
	defer stop()
	cfg := testConfig(am.URL)
	cfg.Storage = &id
	set := exportertest.NewNopSettings(metadata.Type)

	e := startExporter(t, cfg, host, set)
	require.NoError(t, e.ConsumeMetrics(context.Background(), alertPoint("GPUFaulted", "firing", 1, t0)))
	first := am.waitAlerts(t, 1)[0]
	require.NoError(t, e.Shutdown(context.Background()))

	// A new exporter on the same storage sends the alert again at start,
	// with the same startsAt and incident, before any point arrives.
	e = startExporter(t, cfg, host, set)
	defer func() { require.NoError(t, e.Shutdown(context.Background())) }()
	again := am.waitAlerts(t, 2)[1]
	assert.Equal(t, first.Labels, again.Labels)
	assert.True(t, first.StartsAt.Equal(again.StartsAt))
	assert.Equal(t, first.Annotations, again.Annotations)
	assert.True(t, again.EndsAt.After(time.Now()), "still firing: endsAt %v is ahead", again.EndsAt)
}

func TestRestoreSkipsDamaged(t *testing.T) {
	id := component.MustNewID("file_storage")
	host, stop := storagetest.FileStorage(t, id, t.TempDir())
	defer stop()
	client, err := openStorage(context.Background(), host, id, component.MustNewID("gpu_alertmanager"))
	require.NoError(t, err)
	defer client.Close(context.Background())
	ctx := context.Background()
	require.NoError(t, client.Set(ctx, indexKey, []byte{0, 0, 0, 0, 0, 0, 0, 1}))
	require.NoError(t, client.Set(ctx, alertKey(1), []byte("{not json")))
	s := newAlertSet(testConfig("http://x"))
	require.NoError(t, s.restore(ctx, client, zapNop()))
	assert.Empty(t, s.all(), "a damaged alert is skipped, and the start goes on")
}

func exportertestSettings() exporter.Settings { return exportertest.NewNopSettings(metadata.Type) }
