package gpuremediationconnector

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
)

// recordingAPI is a stand-in Kubernetes API that records the calls it
// gets and fails those named in failOnce, once each.
type recordingAPI struct {
	calls    []string
	failOnce map[string]bool
}

func (a *recordingAPI) call(name string) error {
	if a.failOnce[name] {
		delete(a.failOnce, name)
		return errors.New("connection refused")
	}
	a.calls = append(a.calls, name)
	return nil
}

func (a *recordingAPI) Node(context.Context, string) (*kube.Node, error) {
	return &kube.Node{}, a.call("get")
}

func (a *recordingAPI) Quarantine(_ context.Context, _, _, _, _ string, taint, cordon bool) (bool, bool, error) {
	return taint, cordon, a.call("quarantine")
}

func (a *recordingAPI) SetCondition(context.Context, string, bool, string, string) error {
	return a.call("condition")
}

func (a *recordingAPI) SetNetworkCondition(context.Context, string, bool, string, string) error {
	return a.call("network_condition")
}

func (a *recordingAPI) Event(context.Context, string, string, string, string) error {
	return a.call("event")
}

func (a *recordingAPI) Drain(context.Context, string, map[string]bool, kube.DrainPolicy) (kube.DrainResult, error) {
	return kube.DrainResult{}, a.call("drain")
}

func (a *recordingAPI) Request(context.Context, string, string, string) error {
	return a.call("request")
}

func (a *recordingAPI) Restore(context.Context, string, string) (bool, error) {
	return true, a.call("restore")
}
func (a *recordingAPI) Breaker(context.Context, string, string) (string, error) { return "", nil }
func (a *recordingAPI) SetBreaker(context.Context, string, string, string) error {
	return nil
}

func (a *recordingAPI) RequestReset(context.Context, string, string, string) error {
	return a.call("request")
}
func (a *recordingAPI) LeaseAnnotation(context.Context, string, string, string) (string, error) {
	return "", nil
}
func (a *recordingAPI) SetLeaseAnnotation(context.Context, string, string, string, string) error {
	return nil
}

// A step that fails is retried from where it stopped: the steps before it
// are not written twice, the ones after it wait.
func TestFailedStepResumes(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.DryRun = false
	cfg.LeaderElection.Enabled = false
	cfg.Interval = time.Second
	r, err := newRemediator(cfg, connectortest.NewNopSettings(metadata.Type))
	require.NoError(t, err)
	api := &recordingAPI{failOnce: map[string]bool{"quarantine": true}}
	r.api = api
	t0 := time.Unix(1000, 0)
	feed := func(at time.Time, n int64) {
		md := pmetric.NewMetrics()
		ts := pcommon.NewTimestampFromTime(at)
		resource("n", "g", func(ms pmetric.MetricSlice) { temp(ms, ts); xid(ms, 79, n, ts, ts) }).CopyTo(md.ResourceMetrics().AppendEmpty())
		require.NoError(t, r.consume(context.Background(), md))
		r.tick(context.Background(), at)
	}
	feed(t0, 0)
	feed(t0.Add(time.Second), 1)
	require.Equal(t, []string{"get", "event", "condition"}, api.calls)
	r.tick(context.Background(), t0.Add(1500*time.Millisecond))
	require.Len(t, api.calls, 3, "backing off")
	r.tick(context.Background(), t0.Add(2*time.Second))
	// (the drain reads the node first: did a person uncordon it?; the
	// reboot request reads its boot ID; then the reboot is awaited)
	require.Equal(t, []string{"get", "event", "condition", "quarantine", "get", "drain", "get", "request", "get"}, api.calls)
	require.Len(t, r.plans, 1)
	require.Equal(t, "awaiting_reboot", r.plans[0].state())
}
