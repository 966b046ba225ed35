package gpualertmanagerexporter

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"
)

func zapNop() *zap.Logger { return zap.NewNop() }

// The resend schedule, by the clock passed in: Prometheus' needsSending.
func TestResendSchedule(t *testing.T) {
	cfg := testConfig("http://x")
	cfg.ResendDelay, cfg.EvaluationInterval, cfg.ResolveResend = time.Minute, 30*time.Second, 15*time.Minute
	s := newAlertSet(cfg)
	labels := map[string]string{"alertname": "GPUFaulted", "hw_id": "GPU-1"}
	now := t0
	w, ok := s.fire(labels, nil, t0, now, false)
	require.True(t, ok)
	assert.True(t, w.EndsAt.Equal(now.Add(4*time.Minute)))

	assert.Empty(t, s.due(now.Add(59*time.Second)), "not before the resend delay")
	// Seen again at 50 s: the resend at 1 m carries endsAt from then.
	_, ok = s.fire(labels, nil, t0.Add(50*time.Second), now.Add(50*time.Second), false)
	assert.False(t, ok, "an alert already firing is not sent at once")
	got := s.due(now.Add(time.Minute))
	require.Len(t, got, 1)
	assert.True(t, got[0].EndsAt.Equal(now.Add(50*time.Second+4*time.Minute)))
	assert.True(t, got[0].StartsAt.Equal(t0), "startsAt stays when it fired")

	// Resolved: sent at once, then every resend delay for resolve_resend,
	// then forgotten.
	res := now.Add(2 * time.Minute)
	r, ok := s.resolve(labels, res)
	require.True(t, ok)
	assert.True(t, r.EndsAt.Equal(res))
	assert.Len(t, s.due(res.Add(2*time.Minute)), 1)
	assert.Len(t, s.due(res.Add(14*time.Minute)), 1)
	assert.Empty(t, s.due(res.Add(16*time.Minute)))
	assert.Empty(t, s.all())

	// Fires again after its resolve: a new alert, new startsAt and incident.
	w2, ok := s.fire(labels, nil, t0.Add(time.Hour), now.Add(time.Hour), false)
	require.True(t, ok)
	assert.True(t, w2.StartsAt.Equal(t0.Add(time.Hour)))
}

// A firing alert no longer seen (its GPU gone) is forgotten once its endsAt
// has passed: Alertmanager has resolved it by then.
func TestUnseenAlertExpires(t *testing.T) {
	s := newAlertSet(testConfig("http://x"))
	labels := map[string]string{"alertname": "GPUIdle"}
	s.fire(labels, nil, t0, t0, false)
	assert.Len(t, s.due(t0.Add(3*time.Minute)), 1)
	assert.Empty(t, s.due(t0.Add(4*time.Minute+time.Second)))
	assert.Empty(t, s.all())
}

// A resolve stamped before the alert fired still gives endsAt >= startsAt,
// which Alertmanager requires.
func TestResolveNotBeforeStart(t *testing.T) {
	s := newAlertSet(testConfig("http://x"))
	labels := map[string]string{"alertname": "GPUIdle"}
	s.fire(labels, nil, t0, t0, false)
	r, ok := s.resolve(labels, t0.Add(-time.Second))
	require.True(t, ok)
	assert.True(t, r.EndsAt.Equal(t0))
}

func TestIncidentIDStable(t *testing.T) {
	a := map[string]string{"alertname": "GPUFaulted", "hw_id": "GPU-1"}
	b := map[string]string{"hw_id": "GPU-1", "alertname": "GPUFaulted"}
	assert.Equal(t, incidentID(a, t0), incidentID(b, t0), "replicas name it alike")
	assert.NotEqual(t, incidentID(a, t0), incidentID(a, t0.Add(time.Second)), "each firing is its own")
}

// remediationSnapshot is one tick of the gpu_remediation connector.
func remediationSnapshot(at time.Time, incidents map[string]string) pmetric.Metrics {
	md := pmetric.NewMetrics()
	ms := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics()
	nodes := ms.AppendEmpty()
	nodes.SetName("gpu.remediation.nodes")
	dp := nodes.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
	dp.SetIntValue(int64(len(incidents)))
	st := ms.AppendEmpty()
	st.SetName("gpu.remediation.incident.state")
	dps := st.SetEmptyGauge().DataPoints()
	for id, state := range incidents {
		p := dps.AppendEmpty()
		p.SetTimestamp(pcommon.NewTimestampFromTime(at))
		p.SetIntValue(1)
		p.Attributes().PutStr("gpu.remediation.incident.id", id)
		p.Attributes().PutStr("hw.id", "GPU-9")
		p.Attributes().PutStr("gpu.remediation.state", state)
	}
	return md
}

func TestRemediationIncidents(t *testing.T) {
	e, err := newAlertExporter(testConfig("http://x"), exportertestSettings())
	require.NoError(t, err)
	r := e.consume(remediationSnapshot(t0, map[string]string{"xid_79-a4ef3cd0": "draining"}), t0)
	require.Len(t, r.send, 1)
	a := r.send[0]
	assert.Equal(t, map[string]string{"alertname": "GPURemediationUnderway", "severity": "warning", "incident_id": "xid_79-a4ef3cd0", "hw_id": "GPU-9"}, a.Labels)
	assert.Equal(t, "draining", a.Annotations["remediation_state"])

	// The incident now waits for a person: the warning resolves and a
	// critical alert fires.
	r = e.consume(remediationSnapshot(t0.Add(time.Minute), map[string]string{"xid_79-a4ef3cd0": "needs_person"}), t0)
	require.Len(t, r.send, 2)
	byName := map[string]wireAlert{}
	for _, w := range r.send {
		byName[w.Labels["alertname"]] = w
	}
	assert.Equal(t, "critical", byName["GPUNeedsPerson"].Labels["severity"])
	assert.True(t, byName["GPURemediationUnderway"].EndsAt.Equal(t0.Add(time.Minute)), "resolved at the snapshot's time")

	// The incident ends: it leaves the snapshot, and the alert resolves.
	r = e.consume(remediationSnapshot(t0.Add(2*time.Minute), nil), t0)
	require.Len(t, r.send, 1)
	assert.Equal(t, "GPUNeedsPerson", r.send[0].Labels["alertname"])
	assert.True(t, r.send[0].EndsAt.Equal(t0.Add(2*time.Minute)))
}

func TestRejectedPoints(t *testing.T) {
	e, err := newAlertExporter(testConfig("http://x"), exportertestSettings())
	require.NoError(t, err)
	md := alertPoint("GPUFaulted", "exploded", 1, t0)
	noName := alertPoint("", "firing", 1, t0)
	noName.ResourceMetrics().MoveAndAppendTo(md.ResourceMetrics())
	r := e.consume(md, t0)
	assert.Empty(t, r.send)
	assert.Equal(t, map[string]int64{"unknown_state": 1, "no_alertname": 1}, r.rejected)
}

func TestPromName(t *testing.T) {
	assert.Equal(t, "k8s_pod_name", promName("k8s.pod.name"))
	assert.Equal(t, "key_0a", promName("0a"))
}
