package gpuautoscaleconnector

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

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
)

// Evaluation is one target's decision at one evaluation, as gpureplay
// prints it.
type Evaluation struct {
	Time    time.Time
	Target  string // NAMESPACE/KIND/NAME
	Current int32
	Desired int32
	Reason  string
	// Metric is the value the decision was made on (the pods' average).
	Metric float64
}

type evaluation = Evaluation

// Replayer runs the connector's autoscaling on recorded telemetry: time
// comes from the data, and each target's current replica count is the
// number of its distinct pods in the batch. Nothing is written anywhere.
type Replayer struct {
	a        *autoscaler
	lastEval time.Time
}

// NewReplayer returns a replayer for the connector's configuration; its
// auth and leader election are ignored.
func NewReplayer(cfg component.Config) (*Replayer, error) {
	c := *cfg.(*Config)
	c.Auth = AuthConfig{Type: "none"}
	c.LeaderElection.Enabled = false
	c.Targets = append([]TargetConfig(nil), c.Targets...)
	for i := range c.Targets {
		c.Targets[i].DryRun = true
	}
	if err := confmap.Validate(&c); err != nil {
		return nil, err
	}
	a, err := newAutoscaler(&c, connector.Settings{ID: component.NewID(metadata.Type), TelemetrySettings: component.TelemetrySettings{
		Logger: zap.NewNop(), MeterProvider: noop.NewMeterProvider(), TracerProvider: tracenoop.NewTracerProvider(),
	}})
	if err != nil {
		return nil, err
	}
	return &Replayer{a: a}, nil
}

// Batch takes one batch of metrics at time now and returns the evaluations
// due: one per target every interval of data time.
func (r *Replayer) Batch(md pmetric.Metrics, now time.Time) []Evaluation {
	for _, t := range r.a.targets {
		t.batchPods = map[string]struct{}{}
	}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		attrs := rms.At(i).Resource().Attributes()
		for _, t := range r.a.targets {
			if matches(attrs, t.match) {
				pod := str(attrs, "k8s.pod.name")
				if pod == "" {
					pod = str(attrs, "hw.id")
				}
				t.batchPods[pod] = struct{}{}
			}
		}
	}
	_ = r.a.consume(context.Background(), md)
	if !r.lastEval.IsZero() && now.Sub(r.lastEval) < r.a.cfg.Interval {
		return nil
	}
	r.lastEval = now
	r.a.evaluate(context.Background(), now)
	out := make([]Evaluation, 0, len(r.a.targets))
	for _, t := range r.a.targets {
		if t.last.Time.Equal(now) {
			out = append(out, t.last)
		}
	}
	return out
}

// LoadConfig reads the connector's settings from a YAML map (the keys under
// `connectors: gpu_autoscale:`).
func LoadConfig(m map[string]any) (component.Config, error) {
	cfg := NewFactory().CreateDefaultConfig()
	if err := confmap.NewFromStringMap(m).Unmarshal(cfg); err != nil {
		return nil, fmt.Errorf("gpu_autoscale settings: %w", err)
	}
	return cfg, nil
}
