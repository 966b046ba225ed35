package gpuautoscaleconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedcomponent"
)

// NewFactory returns the factory of the gpu_autoscale connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability),
		connector.WithMetricsToLogs(createMetricsToLogs, metadata.MetricsToLogsStability),
	)
}

// The metrics-to-metrics and metrics-to-logs instances of one component ID
// share one autoscaler, so a target is evaluated and written once.
var shared sharedcomponent.Map[*autoscaler]

// instance is one pipeline's view of the shared autoscaler.
type instance struct {
	*sharedcomponent.Shared[*autoscaler]
}

func (*instance) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (i *instance) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return i.Value.consume(ctx, md)
}

func createMetricsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	s, err := shared.Acquire(set.ID, func() (*autoscaler, error) { return newAutoscaler(cfg.(*Config), set) })
	if err != nil {
		return nil, err
	}
	a := s.Value
	a.mu.Lock()
	a.metricsOut = next
	a.mu.Unlock()
	return &instance{s}, nil
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	s, err := shared.Acquire(set.ID, func() (*autoscaler, error) { return newAutoscaler(cfg.(*Config), set) })
	if err != nil {
		return nil, err
	}
	a := s.Value
	a.mu.Lock()
	a.logsOut = next
	a.mu.Unlock()
	return &instance{s}, nil
}
