package gpualertmanagerexporter

import (
	"context"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter/internal/metadata"
)

// NewFactory returns the factory of the gpu_alertmanager exporter.
func NewFactory() exporter.Factory {
	return exporter.NewFactory(
		metadata.Type,
		createDefaultConfig,
		exporter.WithMetrics(createMetricsExporter, metadata.MetricsStability),
	)
}

func createDefaultConfig() component.Config { return defaultConfig() }

// createMetricsExporter builds the exporter without exporterhelper: its
// queue and retries work by the batch, and these alerts are queued per
// Alertmanager (sender.go), by the alert, and resent by their own schedule.
func createMetricsExporter(_ context.Context, set exporter.Settings, cfg component.Config) (exporter.Metrics, error) {
	return newAlertExporter(cfg.(*Config), set)
}

// The exporter.Metrics interface.
func (e *alertExporter) Start(ctx context.Context, host component.Host) error {
	return e.start(ctx, host)
}
func (e *alertExporter) Shutdown(ctx context.Context) error  { return e.shutdown(ctx) }
func (e *alertExporter) Capabilities() consumer.Capabilities { return consumer.Capabilities{} }
func (e *alertExporter) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return e.consumeMetrics(ctx, md)
}
