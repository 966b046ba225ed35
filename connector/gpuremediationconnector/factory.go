package gpuremediationconnector

import (
	"context"
	"sync"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
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
var (
	sharedMu sync.Mutex
	shared   = map[component.ID]*sharedRemediator{}
)

type sharedRemediator struct {
	*remediator
	refs int
}

func acquire(set connector.Settings, cfg *Config) (*remediator, error) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	s, ok := shared[set.ID]
	if !ok {
		r, err := newRemediator(cfg, set)
		if err != nil {
			return nil, err
		}
		s = &sharedRemediator{remediator: r}
		shared[set.ID] = s
	}
	s.refs++
	return s.remediator, nil
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

// instance is one pipeline's view of the shared remediator.
type instance struct {
	id component.ID
	r  *remediator
}

func (i *instance) Start(ctx context.Context, host component.Host) error { return i.r.start(ctx, host) }

func (i *instance) Shutdown(ctx context.Context) error {
	err := i.r.shutdown(ctx)
	release(i.id)
	return err
}

func (*instance) Capabilities() consumer.Capabilities {
	return consumer.Capabilities{MutatesData: false}
}

func (i *instance) ConsumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	return i.r.consume(ctx, md)
}

func createMetricsToLogs(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Logs) (connector.Metrics, error) {
	r, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.logsOut = next
	r.mu.Unlock()
	return &instance{id: set.ID, r: r}, nil
}

func createMetricsToMetrics(_ context.Context, set connector.Settings, cfg component.Config, next consumer.Metrics) (connector.Metrics, error) {
	r, err := acquire(set, cfg.(*Config))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	r.metricsOut = next
	r.mu.Unlock()
	return &instance{id: set.ID, r: r}, nil
}
