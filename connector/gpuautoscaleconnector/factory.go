package gpuautoscaleconnector

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
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
var (
	sharedMu sync.Mutex
	shared   = map[component.ID]*sharedAutoscaler{}
)

type sharedAutoscaler struct {
	*autoscaler
	refs int
}

func acquire(set connector.Settings, cfg *Config) (*autoscaler, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s, ok := shared[set.ID]
	if !ok {
		a, err := newAutoscaler(cfg, set)
		if err != nil {
			return nil, err
		}
		s = &sharedAutoscaler{autoscaler: a}
		shared[set.ID] = s
	}
	s.refs++
	return s.autoscaler, nil
}

func release(id component.ID) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if s, ok := shared[id]; ok {
		s.refs--
		if s.refs <= 0 {
			delete(shared, id)
		}
	}
}

// instance is one pipeline's view of the shared autoscaler.
type instance struct {
	id component.ID
	a  *autoscaler
}

func (i *instance) Start(ctx context.Context, host component.Host) error { return i.a.start(ctx, host) }

func (i *instance) Shutdown(ctx context.Context) error {
	err := i.a.shutdown(ctx)
	release(i.id)
	return err
}

func (*instance) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (i *instance) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return i.a.consume(ctx, md)
}

func createMetricsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	a, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.metricsOut = next
	a.mu.Unlock()
	return &instance{id: set.ID, a: a}, nil
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	a, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	a.logsOut = next
	a.mu.Unlock()
	return &instance{id: set.ID, a: a}, nil
}
