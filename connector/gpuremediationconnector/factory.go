package gpuremediationconnector

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedcomponent"
)

// NewFactory returns the factory of the gpu_remediation connector.
func NewFactory() connector.Factory {
	return connector.NewFactory(
		metadata.Type,
		func() component.Config { return createDefaultConfig() },
		connector.WithMetricsToLogs(createMetricsToLogs, metadata.MetricsToLogsStability),
		connector.WithMetricsToMetrics(createMetricsToMetrics, metadata.MetricsToMetricsStability),
	)
}

// The metrics-to-logs and metrics-to-metrics instances of one component ID
// share one remediator, so that a fault is acted on once.
var shared sharedcomponent.Map[*remediator]

// instance is one pipeline's view of the shared remediator.
type instance struct {
	*sharedcomponent.Shared[*remediator]
}

func (*instance) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (i *instance) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return i.Value.consume(ctx, md)
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	s, err := shared.Acquire(set.ID, func() (*remediator, error) { return newRemediator(cfg.(*Config), set) })
	if err != nil {
		return nil, err
	}
	r := s.Value
	r.mu.Lock()
	r.logsOut = next
	r.mu.Unlock()
	return &instance{s}, nil
}

func createMetricsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	s, err := shared.Acquire(set.ID, func() (*remediator, error) { return newRemediator(cfg.(*Config), set) })
	if err != nil {
		return nil, err
	}
	r := s.Value
	r.mu.Lock()
	r.metricsOut = next
	r.mu.Unlock()
	return &instance{s}, nil
}
