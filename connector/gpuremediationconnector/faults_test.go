package gpuremediationconnector

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

func shadow(tb testing.TB) *remediator {
	tb.Helper()
	cfg := createDefaultConfig()
	cfg.Auth.Type = "none"
	cfg.LeaderElection.Enabled = false
	r, err := newRemediator(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(tb, err)
	return r
}

// resource builds one GPU's batch; fill adds its metrics.
func resource(host, gpu string, fill func(ms pmetric.MetricSlice)) pmetric.ResourceMetrics {
	rm := pmetric.NewResourceMetrics()
	rm.Resource().Attributes().PutStr("host.name", host)
	rm.Resource().Attributes().PutStr("hw.id", gpu)
	fill(rm.ScopeMetrics().AppendEmpty().Metrics())
	return rm
}

func xid(ms pmetric.MetricSlice, code, n int64, start, ts pcommon.Timestamp) {
	m := ms.AppendEmpty()
	m.SetName(metricXID)
	dp := m.SetEmptySum().DataPoints().AppendEmpty()
	dp.SetStartTimestamp(start)
	dp.SetTimestamp(ts)
	dp.SetIntValue(n)
	dp.Attributes().PutInt(attrXID, code)
}

func temp(ms pmetric.MetricSlice, ts pcommon.Timestamp) {
	m := ms.AppendEmpty()
	m.SetName("hw.temperature")
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetDoubleValue(60)
}

func verdict(ms pmetric.MetricSlice, class string, ts pcommon.Timestamp) {
	m := ms.AppendEmpty()
	m.SetName(metricVerdict)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(ts)
	dp.SetIntValue(1)
	dp.Attributes().PutStr(attrVerdict, class)
}

func TestDetectCounters(t *testing.T) {
	r := shadow(t)
	t0 := pcommon.NewTimestampFromTime(time.Unix(1000, 0))
	at := func(s int64) pcommon.Timestamp { return t0 + pcommon.Timestamp(s*int64(time.Second)) }
	// History from before the collector watched is no new fault: a counter
	// already at 4 in the first batch, started before it.
	got := r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 79, 4, t0-1, t0) }))
	require.Empty(t, got)
	require.Len(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 79, 5, t0-1, at(5)) })), 1, "an increase is")
	require.Empty(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 79, 5, t0-1, at(10)) })), "the same count is not")
	// A counter that first appears on a GPU already seen: the XID's first event.
	got = r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 13, 1, t0-1, at(15)) }))
	require.Len(t, got, 1)
	require.Equal(t, "xid_13", got[0].fault.String())
	require.True(t, got[0].fresh)
	// A reset (new start) counts only if it started while watched.
	require.Len(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 79, 1, at(18), at(20)) })), 1)
	// Codes outside 1 to 255 are not XIDs.
	require.Empty(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { xid(ms, 300, 1, t0, at(25)) })))
	// Without a node or a GPU there is nothing to act on.
	rm := resource("", "g2", func(ms pmetric.MetricSlice) { xid(ms, 79, 1, t0, at(30)) })
	require.Empty(t, r.detect(rm))
}

func TestDetectVerdictOnset(t *testing.T) {
	r := shadow(t)
	t0 := pcommon.NewTimestampFromTime(time.Unix(1000, 0))
	require.Empty(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { temp(ms, t0); verdict(ms, "compute_bound", t0) })))
	got := r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { verdict(ms, "faulted", t0+1) }))
	require.Len(t, got, 1)
	require.Equal(t, "gpu_faulted", got[0].fault.String())
	require.True(t, got[0].fresh)
	require.Empty(t, r.detect(resource("n", "g", func(ms pmetric.MetricSlice) { verdict(ms, "faulted", t0+2) })), "only its onset")
	// A verdict already faulted when first seen is not fresh.
	got = r.detect(resource("n", "g3", func(ms pmetric.MetricSlice) { verdict(ms, "faulted", t0+3) }))
	require.Len(t, got, 1)
	require.False(t, got[0].fresh)
}

// Non-critical XIDs never touch a node; in shadow mode (no API) every
// decision is a dry run; the breaker applies there too.
func TestShadowDecisions(t *testing.T) {
	r := shadow(t)
	t0 := time.Unix(1000, 0)
	ts := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(t0.Add(d)) }
	batch := func(d time.Duration, fill map[string]func(ms pmetric.MetricSlice)) []offline.Decision {
		md := pmetric.NewMetrics()
		for _, host := range []string{"a", "b", "c", "d"} {
			rm := resource(host, "gpu-"+host, func(ms pmetric.MetricSlice) {
				temp(ms, ts(d))
				if f := fill[host]; f != nil {
					f(ms)
				}
			})
			rm.CopyTo(md.ResourceMetrics().AppendEmpty())
		}
		require.NoError(t, r.consume(t.Context(), md))
		r.tick(t.Context(), t0.Add(d))
		return append([]offline.Decision(nil), r.out...)
	}
	require.Empty(t, batch(0, nil))
	ds := batch(time.Second, map[string]func(pmetric.MetricSlice){
		"a": func(ms pmetric.MetricSlice) { xid(ms, 92, 1, ts(0), ts(time.Second)) },
		"b": func(ms pmetric.MetricSlice) { xid(ms, 79, 1, ts(0), ts(time.Second)) },
		"c": func(ms pmetric.MetricSlice) { xid(ms, 79, 1, ts(0), ts(time.Second)) },
	})
	require.Equal(t, []string{"xid_92:none:non_critical", "xid_79:drain:policy", "xid_79:drain:breaker_open"}, reasons(ds))
	for _, d := range ds {
		require.True(t, d.DryRun)
	}
}

// A GPU's per-process split (the receiver's per_process) names one of its
// pods under the GPU's hw.id: it is not fault evidence, and it does not
// move the GPU's pod.
func TestPerProcessSplitIgnored(t *testing.T) {
	r := shadow(t)
	ts := pcommon.NewTimestampFromTime(time.Unix(1000, 0))
	md := pmetric.NewMetrics()
	own := resource("n", "GPU-1", func(ms pmetric.MetricSlice) { temp(ms, ts) })
	own.Resource().Attributes().PutStr("k8s.namespace.name", "ml")
	own.Resource().Attributes().PutStr("k8s.pod.name", "trainer")
	own.CopyTo(md.ResourceMetrics().AppendEmpty())
	split := resource("n", "GPU-1", func(ms pmetric.MetricSlice) { xid(ms, 79, 1, ts, ts) })
	split.Resource().Attributes().PutStr("k8s.namespace.name", "ml")
	split.Resource().Attributes().PutStr("k8s.pod.name", "notebook")
	split.Resource().Attributes().PutStr(metricnames.AttrOTelGPUProcessOwner, "pod")
	split.CopyTo(md.ResourceMetrics().AppendEmpty())
	require.NoError(t, r.consume(t.Context(), md))
	require.Empty(t, r.pending)
	require.Equal(t, "ml/trainer", r.gpus["GPU-1"].pod)
}
