package gpuautoscaleconnector

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// Pods come and go (four new pods, each with a new GPU, every minute for
// three hours): the series kept are those of the last ten metric_max_age,
// not every pod ever seen.
func TestChurnSeriesBounded(t *testing.T) {
	a := newTestAutoscaler(t, deploymentTarget("serving", "llm-inference"), &fakeAPI{replicas: 4})
	ctx := context.Background()
	t0 := time.Now().Add(-3 * time.Hour)
	for minute := range 180 {
		now := t0.Add(time.Duration(minute) * time.Minute)
		a.now = func() time.Time { return now }
		md := pmetric.NewMetrics()
		for p := range 4 {
			rm := md.ResourceMetrics().AppendEmpty()
			attrs := rm.Resource().Attributes()
			attrs.PutStr("k8s.namespace.name", "serving")
			attrs.PutStr("k8s.deployment.name", "llm-inference")
			attrs.PutStr("k8s.pod.name", fmt.Sprintf("llm-inference-%d-%d", minute, p))
			attrs.PutStr("hw.id", fmt.Sprintf("GPU-%d-%d", minute, p))
			m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("nvidia.gpu.sm.active")
			dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
			dp.SetTimestamp(pcommon.NewTimestampFromTime(now))
			dp.SetDoubleValue(0.5)
		}
		require.NoError(t, a.consume(ctx, md))
		a.evaluate(ctx, now)
		// Default metric_max_age 1m: ten minutes of pods, four a minute.
		require.LessOrEqual(t, len(a.targets[0].series[0]), 4*11, "minute %d", minute)
	}
}
