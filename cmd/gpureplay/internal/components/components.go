// Package components makes the collector's components for gpureplay as the
// collector does: settings read from YAML through confmap into the
// factory's defaults and validated, the component made by its factory. It
// is then driven through the internal offline interfaces, never started,
// so that it has no ticker and no Kubernetes client.
package components

import (
	"context"
	"errors"
	"fmt"
	"os"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/connector/connectortest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmmapping"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver"
)

// ReadYAML reads a settings file into a map; errors name the file.
func ReadYAML(path string) (map[string]any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Unmarshal reads settings (the keys under the component's ID in a
// collector configuration) into cfg, which holds the factory's defaults.
func Unmarshal(m map[string]any, cfg component.Config) error {
	return confmap.NewFromStringMap(m).Unmarshal(cfg)
}

// AutoscaleSettings reads the gpu_autoscale connector's settings from a
// map, over its factory's defaults; they are validated when a connector is
// made from them.
func AutoscaleSettings(m map[string]any) (*gpuautoscaleconnector.Config, error) {
	cfg := gpuautoscaleconnector.NewFactory().CreateDefaultConfig().(*gpuautoscaleconnector.Config)
	if err := Unmarshal(m, cfg); err != nil {
		return nil, fmt.Errorf("gpu_autoscale settings: %w", err)
	}
	return cfg, nil
}

// RemediationSettings reads the gpu_remediation connector's settings from
// a map, over its factory's defaults.
func RemediationSettings(m map[string]any) (*gpuremediationconnector.Config, error) {
	cfg := gpuremediationconnector.NewFactory().CreateDefaultConfig().(*gpuremediationconnector.Config)
	if err := Unmarshal(m, cfg); err != nil {
		return nil, fmt.Errorf("gpu_remediation settings: %w", err)
	}
	return cfg, nil
}

// Receiver returns the dcgm receiver with its default settings.
func Receiver() (offline.Receiver, error) {
	return dcgmmapping.New(receivertest.NewNopSettings(dcgmreceiver.NewFactory().Type()))
}

// NodeReceiver returns the gpu_node receiver with its default settings,
// made by its factory and never started: its mapping of a trace's node
// evidence reads no host. The host name is the trace's, per resource;
// ethtool, which would open a socket, is off.
func NodeReceiver() (offline.NodeReceiver, error) {
	f := gpunodereceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*gpunodereceiver.Config)
	cfg.HostName = "gpureplay"
	cfg.Network.Ethtool = false
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	nr, ok := r.(offline.NodeReceiver)
	if !ok {
		return nil, errors.New("gpu_node receiver: its mapping cannot be reached")
	}
	return nr, nil
}

// Autoscaler is a gpu_autoscale connector for a replay or a simulation.
type Autoscaler struct {
	offline.Autoscaler
	conn connector.Metrics
}

// ConsumeMetrics feeds one batch to the connector, as its pipeline would.
func (a *Autoscaler) ConsumeMetrics(md pmetric.Metrics) error {
	return a.conn.ConsumeMetrics(context.Background(), md)
}

// Close releases the connector.
func (a *Autoscaler) Close() error { return a.conn.Shutdown(context.Background()) }

// ReplayAutoscaler makes the connector for a replay of recorded telemetry:
// its auth and leader election are ignored and every target is a dry run.
func ReplayAutoscaler(settings *gpuautoscaleconnector.Config) (*Autoscaler, error) {
	c := *settings
	c.Auth = gpuautoscaleconnector.AuthConfig{Type: "none"}
	c.LeaderElection.Enabled = false
	c.Targets = append([]gpuautoscaleconnector.TargetConfig(nil), c.Targets...)
	for i := range c.Targets {
		c.Targets[i].DryRun = true
	}
	return newAutoscaler(&c)
}

// SimulateAutoscaler makes the connector for a simulation that scales st,
// in memory. The settings must have exactly one target; auth, leader
// election and dry run are ignored.
func SimulateAutoscaler(settings *gpuautoscaleconnector.Config, st offline.ScaleTarget) (*Autoscaler, error) {
	if len(settings.Targets) != 1 {
		return nil, fmt.Errorf("targets: a simulation scales exactly one target, got %d", len(settings.Targets))
	}
	c := *settings
	// The settings are checked as given, except what a simulation ignores.
	c.Auth = gpuautoscaleconnector.AuthConfig{Type: "in_cluster"}
	c.LeaderElection.Enabled = false
	c.Targets = append([]gpuautoscaleconnector.TargetConfig(nil), c.Targets...)
	c.Targets[0].DryRun = false
	a, err := newAutoscaler(&c)
	if err != nil {
		return nil, err
	}
	a.Simulate(st)
	return a, nil
}

func newAutoscaler(cfg *gpuautoscaleconnector.Config) (*Autoscaler, error) {
	if err := confmap.Validate(cfg); err != nil {
		return nil, err
	}
	f := gpuautoscaleconnector.NewFactory()
	conn, err := f.CreateMetricsToLogs(context.Background(), connectortest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	a, ok := conn.(offline.Autoscaler)
	if !ok {
		_ = conn.Shutdown(context.Background())
		return nil, errors.New("gpu_autoscale connector: cannot be driven offline")
	}
	return &Autoscaler{Autoscaler: a, conn: conn}, nil
}

// Remediator is a gpu_remediation connector for a replay.
type Remediator struct {
	offline.Remediator
	shutdown func(context.Context) error
}

// Close releases the connector.
func (r *Remediator) Close() error { return r.shutdown(context.Background()) }

// ReplayRemediator makes the gpu_remediation connector for a replay of
// recorded telemetry: auth and leader election ignored, dry_run forced on.
func ReplayRemediator(settings *gpuremediationconnector.Config) (*Remediator, error) {
	c := *settings
	c.Auth = gpuremediationconnector.AuthConfig{Type: "none"}
	c.LeaderElection.Enabled = false
	c.DryRun = true
	if err := confmap.Validate(&c); err != nil {
		return nil, err
	}
	f := gpuremediationconnector.NewFactory()
	conn, err := f.CreateMetricsToLogs(context.Background(), connectortest.NewNopSettings(f.Type()), &c, consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	r, ok := conn.(offline.Remediator)
	if !ok {
		_ = conn.Shutdown(context.Background())
		return nil, errors.New("gpu_remediation connector: cannot be driven offline")
	}
	return &Remediator{Remediator: r, shutdown: conn.Shutdown}, nil
}
