package gpuautoscaleconnector

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/connector"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
)

// ScaleTarget is the object a Simulator scales: an in-memory stand-in for
// the scale subresource of the one target and for its pods.
type ScaleTarget interface {
	// Replicas is the target's spec.replicas.
	Replicas() int32
	// Scale sets spec.replicas.
	Scale(replicas int32)
	// Pods names the target's pods now, each with its phase (Pending,
	// Running, Failed or Succeeded); a pod starting its server is Running
	// without values yet.
	Pods() []ReplayPod
}

// Simulator drives the connector, made by its factory as in the collector,
// on a simulated clock: the caller feeds metric batches and asks for an
// evaluation at each interval of its own time, and decisions are written to
// a ScaleTarget in memory. Auth, leader election and dry run are ignored.
type Simulator struct {
	conn connector.Metrics
	a    *autoscaler
}

// simulations names each Simulator's component apart, so that simulators
// running at once never share an autoscaler.
var simulations atomic.Int64

// NewSimulator makes the connector for cfg, which must have exactly one
// target, writing to st.
func NewSimulator(cfg component.Config, st ScaleTarget) (*Simulator, error) {
	c := *cfg.(*Config)
	if len(c.Targets) != 1 {
		return nil, fmt.Errorf("targets: a simulation scales exactly one target, got %d", len(c.Targets))
	}
	// The settings are checked as given, except what a simulation ignores.
	c.Auth = AuthConfig{Type: "in_cluster"}
	c.LeaderElection.Enabled = false
	c.Targets = append([]TargetConfig(nil), c.Targets...)
	c.Targets[0].DryRun = false
	if err := confmap.Validate(&c); err != nil {
		return nil, err
	}
	set := connector.Settings{
		ID: component.NewIDWithName(metadata.Type, fmt.Sprintf("whatif%d", simulations.Add(1))),
		TelemetrySettings: component.TelemetrySettings{
			Logger: zap.NewNop(), MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
		},
	}
	conn, err := NewFactory().CreateMetricsToLogs(context.Background(), set, &c, consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	inst, ok := conn.(*instance)
	if !ok {
		return nil, errors.New("gpu_autoscale: unexpected connector type")
	}
	// Not started: no ticker and no Kubernetes client. The caller's clock
	// drives evaluate, and the scale target is in memory.
	inst.Value.api = memoryCluster{st}
	return &Simulator{conn: conn, a: inst.Value}, nil
}

// Interval is the connector's evaluation period.
func (s *Simulator) Interval() time.Duration { return s.a.cfg.Interval }

// ConsumeMetrics feeds one batch to the connector, as its pipeline would.
func (s *Simulator) ConsumeMetrics(md pmetric.Metrics) error {
	return s.conn.ConsumeMetrics(context.Background(), md)
}

// Evaluate runs one evaluation at now and returns its decision.
func (s *Simulator) Evaluate(now time.Time) Evaluation {
	s.a.evaluate(context.Background(), now)
	return s.a.targets[0].last
}

// Close releases the connector.
func (s *Simulator) Close() error { return s.conn.Shutdown(context.Background()) }

// memoryCluster is the connector's view of the Kubernetes API, in memory.
type memoryCluster struct{ st ScaleTarget }

func (m memoryCluster) Scale(context.Context, kube.Ref) (kube.Scale, error) {
	return kube.Scale{Replicas: m.st.Replicas(), Selector: "whatif"}, nil
}

func (m memoryCluster) Pods(context.Context, string, string) ([]hpa.Pod, error) {
	var out []hpa.Pod
	for _, p := range m.st.Pods() {
		out = append(out, hpa.Pod{Name: p.Name, Phase: hpa.Phase(p.Phase), Deleting: p.Deleting})
	}
	return out, nil
}

func (m memoryCluster) Set(_ context.Context, _ kube.Ref, replicas int32) (int32, error) {
	before := m.st.Replicas()
	m.st.Scale(replicas)
	return before, nil
}
