package gpuautoscaleconnector

import (
	"context"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/kube"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// The connector made by the factory, not started (no ticker, no Kubernetes
// client), is what gpureplay drives on its own clock.
var _ offline.Autoscaler = (*instance)(nil)

// Interval implements offline.Autoscaler.
func (i *instance) Interval() time.Duration { return i.Value.cfg.Interval }

// ReplayBatch implements offline.Autoscaler: autoscaling on recorded
// telemetry, time from the data, each target's replica count the number
// of its distinct pods in the batch. With auth none nothing is written.
func (i *instance) ReplayBatch(md pmetric.Metrics, now time.Time) []offline.Evaluation {
	a := i.Value
	a.replayPods(md)
	_ = a.consume(context.Background(), md)
	if !a.replayedAt.IsZero() && now.Sub(a.replayedAt) < a.cfg.Interval {
		return nil
	}
	a.replayedAt = now
	var out []offline.Evaluation
	for _, e := range i.Evaluate(now) {
		if e.Time.Equal(now) {
			out = append(out, e)
		}
	}
	return out
}

// replayPods sets each target's replicas and pods to its distinct pods in
// the batch, all running.
func (a *autoscaler) replayPods(md pmetric.Metrics) {
	a.evalMu.Lock() // evaluate reads each target's sim
	defer a.evalMu.Unlock()
	for _, t := range a.targets {
		t.sim = &simState{}
	}
	seen := map[*target]map[string]bool{}
	rms := md.ResourceMetrics()
	for j := 0; j < rms.Len(); j++ {
		attrs := rms.At(j).Resource().Attributes()
		for _, t := range a.targets {
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
	for _, t := range a.targets {
		t.sim.replicas = int32(len(t.sim.pods))
	}
}

// Simulate implements offline.Autoscaler.
func (i *instance) Simulate(st offline.ScaleTarget) {
	a := i.Value
	a.evalMu.Lock()
	a.api = memoryCluster{st}
	a.evalMu.Unlock()
}

// Evaluate implements offline.Autoscaler.
func (i *instance) Evaluate(now time.Time) []offline.Evaluation {
	a := i.Value
	a.evaluate(context.Background(), now)
	a.evalMu.Lock()
	defer a.evalMu.Unlock()
	out := make([]offline.Evaluation, 0, len(a.targets))
	for _, t := range a.targets {
		out = append(out, t.last)
	}
	return out
}

// memoryCluster is the connector's view of the Kubernetes API in a
// simulation, in memory.
type memoryCluster struct{ st offline.ScaleTarget }

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
