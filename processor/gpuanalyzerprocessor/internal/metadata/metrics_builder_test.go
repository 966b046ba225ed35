package metadata

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
)

// settings is what the generated metrics test builds its builder with; for
// a receiver mdatagen declares it there.
var settings = processortest.NewNopSettings(processortest.NopType)

// TestEmitToEmitsEveryMetric fails when a metric added to metadata.yaml is
// missing from EmitTo.
func TestEmitToEmitsEveryMetric(t *testing.T) {
	mb := NewMetricsBuilder(NewDefaultMetricsBuilderConfig(), settings)
	ts := pcommon.Timestamp(1_000_001_000)
	mb.SetStartTime(0)
	mb.RecordOtelgpuBottleneckStateDataPoint(ts, 1, AttributeOtelgpuBottleneckClassInputBound, WithOtelgpuBottleneckHintMetricAttribute(AttributeOtelgpuBottleneckHintFixDataLoading.String()))
	mb.RecordOtelgpuStragglerStateDataPoint(ts, 0)
	mb.RecordOtelgpuStragglerScoreDataPoint(ts, 0.5)
	mb.RecordOtelgpuAlertsDataPoint(ts, 1, AttributeAlertnameGPUIdle, AttributeAlertstatePending, "info")
	mb.SetStartTime(1_000_000_000)
	mb.RecordOtelgpuBottleneckTimeDataPoint(ts, 1, AttributeOtelgpuBottleneckClassInputBound)
	mb.RecordOtelgpuTimeDataPoint(ts, 1, AttributeOtelgpuUsageStateUsed)
	mb.RecordOtelgpuCostDataPoint(ts, 1, AttributeOtelgpuUsageStateUsed)
	mb.RecordHwStatusDataPoint(ts, 1, AttributeHwStateOk)

	ms := pmetric.NewMetricSlice()
	mb.EmitTo(ms)
	require.Equal(t, reflect.TypeFor[metricsInfo]().NumField(), ms.Len(), "every metric of metadata.yaml")
	var names []string
	for i := 0; i < ms.Len(); i++ {
		m := ms.At(i)
		names = append(names, m.Name())
		if m.Type() == pmetric.MetricTypeSum {
			require.Equal(t, pcommon.Timestamp(1_000_000_000), m.Sum().DataPoints().At(0).StartTimestamp(), m.Name())
		} else {
			require.Zero(t, m.Gauge().DataPoints().At(0).StartTimestamp(), m.Name())
		}
	}
	require.Equal(t, []string{
		MetricsInfo.OtelgpuBottleneckState.Name, MetricsInfo.OtelgpuBottleneckTime.Name, MetricsInfo.OtelgpuTime.Name,
		MetricsInfo.OtelgpuCost.Name, MetricsInfo.OtelgpuStragglerState.Name, MetricsInfo.OtelgpuStragglerScore.Name,
		MetricsInfo.OtelgpuAlerts.Name, MetricsInfo.HwStatus.Name,
	}, names)

	// Emitted once: the next call starts empty.
	ms = pmetric.NewMetricSlice()
	mb.EmitTo(ms)
	require.Zero(t, ms.Len())
}
