package gpuremediationconnector

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/metadata"
)

// Replayer runs the connector's decisions on recorded telemetry, with time
// from the data. There is no cluster: every decision is a dry run.
type Replayer struct {
	r *remediator
}

// NewReplayer returns a replayer for the connector's configuration; its
// auth and leader election are ignored, and dry_run is forced on.
func NewReplayer(cfg component.Config) (*Replayer, error) {
	c := *cfg.(*Config)
	c.Auth = AuthConfig{Type: "none"}
	c.LeaderElection.Enabled = false
	c.DryRun = true
	if err := confmap.Validate(&c); err != nil {
		return nil, err
	}
	r, err := newRemediator(&c, connector.Settings{ID: component.NewID(metadata.Type), TelemetrySettings: component.TelemetrySettings{
		Logger: zap.NewNop(), MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
	}})
	if err != nil {
		return nil, err
	}
	r.now = func() time.Time { return time.Time{} }
	return &Replayer{r: r}, nil
}

// Batch takes one batch of metrics at time now and returns the decisions
// it led to, in a deterministic order.
func (p *Replayer) Batch(md pmetric.Metrics, now time.Time) []Decision {
	p.r.now = func() time.Time { return now }
	_ = p.r.consume(context.Background(), md)
	p.r.tick(context.Background(), now)
	return append([]Decision(nil), p.r.out...)
}

// LoadConfig reads the connector's settings from a YAML map (the keys under
// `connectors: gpu_remediation:`).
func LoadConfig(m map[string]any) (component.Config, error) {
	cfg := NewFactory().CreateDefaultConfig()
	if err := confmap.NewFromStringMap(m).Unmarshal(cfg); err != nil {
		return nil, fmt.Errorf("gpu_remediation settings: %w", err)
	}
	return cfg, nil
}
