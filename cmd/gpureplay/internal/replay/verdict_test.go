package replay

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestVerdictCause: the cause of the current state is read; the state the
// GPU just left (0) does not lend it its cause, and a verdict without one
// has none.
func TestVerdictCause(t *testing.T) {
	rm := pmetric.NewResourceMetrics()
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(metricnames.OTelGPUBottleneckState)
	m.SetEmptyGauge()
	add := func(v int64, class, cause string) {
		dp := m.Gauge().DataPoints().AppendEmpty()
		dp.SetIntValue(v)
		dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckClass, class)
		if cause != "" {
			dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckCause, cause)
		}
	}
	add(1, "communication_bound", "fabric_errors")
	add(0, "communication_bound", "none_found")
	v := verdictOf(rm)
	assert.Equal(t, "communication_bound", v.bottleneck)
	assert.Equal(t, "fabric_errors", v.cause)

	m.Gauge().DataPoints().RemoveIf(func(pmetric.NumberDataPoint) bool { return true })
	add(0, "input_bound", "cpu_throttled")
	add(1, "input_bound", "")
	v = verdictOf(rm)
	assert.Equal(t, "input_bound", v.bottleneck)
	assert.Empty(t, v.cause)
}
