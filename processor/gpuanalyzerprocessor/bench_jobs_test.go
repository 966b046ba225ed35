package gpuanalyzerprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// BenchmarkJobReport is BenchmarkAnalyzer's batch (4,096 GPUs in 64 jobs)
// through the analyzer with job_report on, as shipped, and off: what
// following every job's report costs per data point.
func BenchmarkJobReport(b *testing.B) {
	for _, on := range []bool{true, false} {
		name := "job_report_off"
		if on {
			name = "job_report_on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := createDefaultConfig().(*Config)
			cfg.JobReport.Enabled = on
			p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			benchConsume(b, p)
		})
	}
}
