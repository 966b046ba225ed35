package gpuanalyzerprocessor

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// BenchmarkAnalyzerCostEverySample is BenchmarkAnalyzer's batch with prices
// and the usage counters sent with every sample (cost::report_interval 0):
// the cost of otelgpu.time and otelgpu.cost at a sampling interval of
// report_interval or more.
func BenchmarkAnalyzerCostEverySample(b *testing.B) {
	cfg := everySample()
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 6.88}
	cfg.Cost.ReportInterval = 0
	p, err := NewFactory().CreateMetrics(context.Background(), processortest.NewNopSettings(metadata.Type), cfg, consumertest.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	benchConsume(b, p)
}
