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

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// Evaluation is one target's decision at one evaluation, as gpureplay
// prints it.
type Evaluation struct {
	Time    time.Time
	Target  string // NAMESPACE/KIND/NAME
	Current int32
	Desired int32
	Reason  string
	// Metric is the metric whose proposal won and Value its average per pod
	// (empty and 0 when no metric was consulted).
	Metric string  `json:",omitempty"`
	Value  float64 `json:",omitempty"`
}

type evaluation = Evaluation

// Replayer runs the connector's autoscaling on recorded telemetry: time
// comes from the data, and each target's current replica count is the
// number of its distinct pods in the batch. Nothing is written anywhere.
type Replayer struct {
	a        *autoscaler
	lastEval time.Time
	explicit bool // SetTarget was called
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

// ReplayPod is one pod of a replayed target.
type ReplayPod struct {
	Name string
	// Phase is the pod's phase: Pending (not started: unready, for the HPA),
	// Running (with or without values: a running pod without a value is
	// missing), Failed or Succeeded.
	Phase string
	// Deleting is true once the pod is being deleted (the HPA ignores it).
	Deleting bool
}

// SetTarget tells the replayer a target's replica count (spec.replicas)
// and pods for the evaluations that follow, in place of counting the pods
// of each batch. target is NAMESPACE/KIND/NAME.
func (r *Replayer) SetTarget(target string, replicas int32, pods []ReplayPod) error {
	for _, t := range r.a.targets {
		if t.ref.String() != target {
			continue
		}
		st := &simState{replicas: replicas}
		for _, p := range pods {
			st.pods = append(st.pods, hpa.Pod{Name: p.Name, Phase: hpa.Phase(p.Phase), Deleting: p.Deleting})
		}
		t.sim = st
		r.explicit = true
		return nil
	}
	return fmt.Errorf("no target %s in the settings", target)
}

// Batch takes one batch of metrics at time now and returns the evaluations
// due: one per target every interval of data time. Unless SetTarget was
// called, a target's replica count is the number of its distinct pods in
// the batch, all running.
func (r *Replayer) Batch(md pmetric.Metrics, now time.Time) []Evaluation {
	if !r.explicit {
		for _, t := range r.a.targets {
			t.sim = &simState{}
		}
		seen := map[*target]map[string]bool{}
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			attrs := rms.At(i).Resource().Attributes()
			for _, t := range r.a.targets {
				if !matches(attrs, t.match) {
					continue
				}
				pod := str(attrs, metricnames.AttrK8sPodName)
				if pod == "" {
					pod = str(attrs, metricnames.AttrHWID)
				}
				if seen[t] == nil {
					seen[t] = map[string]bool{}
				}
				if pod != "" && !seen[t][pod] {
					seen[t][pod] = true
					t.sim.pods = append(t.sim.pods, hpa.Pod{Name: pod, Phase: hpa.Running})
				}
			}
		}
		for _, t := range r.a.targets {
			t.sim.replicas = int32(len(t.sim.pods))
		}
	}
	_ = r.a.consume(context.Background(), md)
	if !r.lastEval.IsZero() && now.Sub(r.lastEval) < r.a.cfg.Interval {
		return nil
	}
	return r.Evaluate(now)
}

// Evaluate runs one evaluation of every target at now, on the values
// consumed so far, and returns them.
func (r *Replayer) Evaluate(now time.Time) []Evaluation {
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

// Consume takes one batch of metrics without evaluating.
func (r *Replayer) Consume(md pmetric.Metrics) { _ = r.a.consume(context.Background(), md) }

// LoadConfig reads the connector's settings from a YAML map (the keys under
// `connectors: gpu_autoscale:`).
func LoadConfig(m map[string]any) (component.Config, error) {
	cfg := NewFactory().CreateDefaultConfig()
	if err := confmap.NewFromStringMap(m).Unmarshal(cfg); err != nil {
		return nil, fmt.Errorf("gpu_autoscale settings: %w", err)
	}
	return cfg, nil
}
