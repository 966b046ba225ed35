package gpuanalyzerprocessor

import (
	"context"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// readings are the metrics the analyzer reads, each a gauge or a sum; one
// of them as a histogram or a summary is no reading.
var readings = map[string]bool{
	metricnames.NvidiaGPUSMActive:           true,
	metricnames.NvidiaGPUDRAMActive:         true,
	metricnames.HWGPUMemoryUtilization:      true,
	metricnames.HWGPUMemoryUsage:            true,
	metricnames.HWGPUMemoryLimit:            true,
	metricnames.NvidiaGPUSMOccupancy:        true,
	metricnames.NvidiaGPUPipeActive:         true,
	metricnames.NvidiaGPUNVLinkIO:           true,
	metricnames.HWGPUIO:                     true,
	metricnames.HWGPUUtilization:            true,
	metricnames.NvidiaGPUClockFrequency:     true,
	metricnames.HWTemperature:               true,
	metricnames.NvidiaGPUClockEventReasons:  true,
	metricnames.NvidiaGPURowRemapFailure:    true,
	metricnames.NvidiaGPURecoveryAction:     true,
	metricnames.NvidiaGPUHealth:             true,
	metricnames.HWErrors:                    true,
	metricnames.NvidiaGPUXIDErrors:          true,
	metricnames.TrainingStepComputeDuration: true,
}

// rejectCounts counts, for one batch, the data points of GPU resources
// that pass through unanalysed because of what they are (the other
// counters say why GPUs or readings were not taken).
type rejectCounts struct {
	// horizon: a data point stamped later than this (the clock plus
	// gpu_ttl) would move the analyzer's data clock so far ahead that every
	// other GPU expires, and keep its own GPU's later samples out of order.
	horizon int64
	// wrongTyped: a reading's metric that is neither a gauge nor a sum.
	futureStamped, wrongTyped int64
}

func (r *rejectCounts) wrongType(m pmetric.Metric) {
	if readings[m.Name()] {
		r.wrongTyped += int64(metricpoints.Count(m))
	}
}

// future reports whether dp is stamped beyond the horizon (or beyond what
// an int64 of nanoseconds holds), counting it.
func (r *rejectCounts) future(dp pmetric.NumberDataPoint) bool {
	if ts := int64(dp.Timestamp()); ts < 0 || ts > r.horizon {
		r.futureStamped++
		return true
	}
	return false
}

func (r *rejectCounts) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	if r.futureStamped > 0 {
		tb.ProcessorGpuAnalyzerRejectedDataPoints.Add(ctx, r.futureStamped, metric.WithAttributes(attribute.String("reason", "future_timestamp")))
	}
	if r.wrongTyped > 0 {
		tb.ProcessorGpuAnalyzerRejectedDataPoints.Add(ctx, r.wrongTyped, metric.WithAttributes(attribute.String("reason", "wrong_type")))
	}
}
