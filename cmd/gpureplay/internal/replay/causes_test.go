package replay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// TestCauseEvidence: the evidence of a GPU's cause comes from the
// analyzer's log line that named it (a wait's or a straggler's), the
// fields as the processor logs them; it goes with the verdict whose cause
// the line named, and into the report's record with the cause and hint.
// Other log lines, and a line about another GPU, lend it nothing.
func TestCauseEvidence(t *testing.T) {
	w := &writer{causes: newCauseLog()}
	log := zap.New(w.causes).With(zap.String("otelcol.component.id", "gpu_analyzer"))
	at := zap.Time("at", time.Unix(100, 0))
	log.Info("GPU bottleneck changed", zap.String(metricnames.AttrHWID, "GPU-1"), zap.String("bottleneck", "input_bound"))
	log.Info(msgWaitExplained, zap.String(metricnames.AttrHWID, "GPU-1"), at, zap.String("bottleneck", "input_bound"),
		zap.String("cause", "cpu_throttled"), zap.String("evidence", "throttled in 36 % of periods at a 4-CPU limit"),
		zap.String("hint", "raise_cpu_limit"))
	log.Info(msgStragglerExplained, zap.String(metricnames.AttrHWID, "GPU-2"), at, zap.String("bottleneck", "compute_bound"),
		zap.String("cause", "fabric_errors"), zap.String("evidence", "symbol errors +762/min on mlx5_1:1"), zap.String("hint", "check_fabric"))

	gpu := func(id, class, cause, hint string) pmetric.ResourceMetrics {
		rm := pmetric.NewResourceMetrics()
		rm.Resource().Attributes().PutStr(metricnames.AttrHWID, id)
		m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName(metricnames.OTelGPUBottleneckState)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetIntValue(1)
		dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckClass, class)
		dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckHint, hint)
		if cause != "" {
			dp.Attributes().PutStr(metricnames.AttrOTelGPUBottleneckCause, cause)
		}
		return rm
	}
	v := w.verdictOf(gpu("GPU-1", "input_bound", "cpu_throttled", "raise_cpu_limit"))
	assert.Equal(t, "throttled in 36 % of periods at a 4-CPU limit", v.why)
	r := v.forReport()
	assert.Equal(t, "cpu_throttled", r.Cause)
	assert.Equal(t, "throttled in 36 % of periods at a 4-CPU limit", r.Why)
	assert.Equal(t, "raise_cpu_limit", r.Hint)

	assert.Equal(t, "symbol errors +762/min on mlx5_1:1", w.verdictOf(gpu("GPU-2", "compute_bound", "fabric_errors", "check_fabric")).why)
	assert.Empty(t, w.verdictOf(gpu("GPU-1", "input_bound", "io_wait", "speed_up_storage")).why, "a line that named another cause")
	assert.Empty(t, w.verdictOf(gpu("GPU-1", "input_bound", "", "fix_data_loading")).why, "no cause")
	assert.Empty(t, w.verdictOf(gpu("GPU-3", "input_bound", "cpu_throttled", "raise_cpu_limit")).why, "another GPU's line")
	assert.Empty(t, (&writer{}).verdictOf(gpu("GPU-1", "input_bound", "cpu_throttled", "raise_cpu_limit")).why, "no log read")
}
