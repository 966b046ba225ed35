package gpuremediationconnector

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// GPUs come and go (a new hw.id a minute, each with a restart_app XID that
// the escalation policy remembers); the state held stays that of the GPUs
// reporting within gpu_ttl, and the nodes within the fleet's horizon.
func TestChurnStateBounded(t *testing.T) {
	r := shadow(t)
	r.cfg.GPUTTL = 10 * time.Minute
	t0 := time.Unix(1_700_000_000, 0)
	for minute := range 180 {
		now := t0.Add(time.Duration(minute) * time.Minute)
		ts := pcommon.NewTimestampFromTime(now)
		md := pmetric.NewMetrics()
		// Four nodes at any time, renamed every hour; a new GPU every minute.
		host := fmt.Sprintf("node-%d-%d", minute/60, minute%4)
		gpu := fmt.Sprintf("GPU-%08d", minute)
		resource(host, gpu, func(ms pmetric.MetricSlice) {
			temp(ms, ts)
			xid(ms, 13, 1, ts-1, ts)
		}).CopyTo(md.ResourceMetrics().AppendEmpty())
		require.NoError(t, r.consume(t.Context(), md))
		r.tick(t.Context(), now)
		require.LessOrEqual(t, len(r.gpus), 11, "minute %d", minute)
		require.LessOrEqual(t, r.policy.Remembered(), 11, "minute %d", minute)
		require.LessOrEqual(t, len(r.seen), 4*2+4, "minute %d: nodes silent past the fleet horizon (1 h) are forgotten", minute)
	}
	// And a GPU that keeps reporting is kept, its counters' baseline too.
	require.Contains(t, r.gpus, "GPU-00000179")
}

// A GPU reporting from a clock far ahead is forgotten too, not kept forever.
func TestFutureClockForgotten(t *testing.T) {
	r := shadow(t)
	now := time.Unix(1_700_000_000, 0)
	md := pmetric.NewMetrics()
	resource("n", "g", func(ms pmetric.MetricSlice) {
		temp(ms, pcommon.NewTimestampFromTime(now.Add(100*365*24*time.Hour)))
	}).CopyTo(md.ResourceMetrics().AppendEmpty())
	require.NoError(t, r.consume(t.Context(), md))
	r.tick(t.Context(), now)
	require.Empty(t, r.gpus)
}

func TestGPUTTLValidated(t *testing.T) {
	cfg := createDefaultConfig()
	cfg.GPUTTL = 0
	require.ErrorContains(t, cfg.Validate(), "gpu_ttl must be positive")
}
