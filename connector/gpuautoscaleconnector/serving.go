package gpuautoscaleconnector

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/serving"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// ServingConfig tunes mode serving: sizing an inference service on the work
// its pods serve plus the growth and size of their request queues.
type ServingConfig struct {
	// QueueMetric is the per-pod gauge of requests waiting.
	QueueMetric string `mapstructure:"queue_metric"`
	// PodThroughput is the requests per second one pod serves at full
	// load (a benchmark of the model server tells): it turns queued
	// requests into work.
	PodThroughput float64 `mapstructure:"pod_throughput"`
	// StableWindow averages the arrival rate (Knative's stable window).
	StableWindow time.Duration `mapstructure:"stable_window"`
	// PanicWindow sees bursts (Knative's panic window); a window shorter
	// than the interval is the last interval.
	PanicWindow time.Duration `mapstructure:"panic_window"`
	// PanicThreshold: the panic window decides when it asks for this
	// multiple of the ready pods or more (Knative's 200 % is 2.0).
	PanicThreshold float64 `mapstructure:"panic_threshold"`
	// DrainTime is the time in which the backlog is to be served.
	DrainTime time.Duration `mapstructure:"drain_time"`
	// HeadroomWindow and HeadroomQuantile: the capacity covers this
	// quantile of the arrival rates of each interval within the window
	// (0 disables). Set the window to at least the pods' start-up time.
	HeadroomWindow   time.Duration `mapstructure:"headroom_window"`
	HeadroomQuantile float64       `mapstructure:"headroom_quantile"`
	// HeadroomMaxRatio caps the headroom and the panic window's estimate
	// at this multiple of the mean arrival rate over headroom_window (0:
	// no cap): bursts far above the mean wait in the queue instead of
	// being paid for at their peak.
	HeadroomMaxRatio float64 `mapstructure:"headroom_max_ratio"`
}

// withDefaults fills the unset keys (targets are list elements, which
// the configuration decodes from zero values): Knative's windows and
// threshold, vLLM's queue gauge.
func (s ServingConfig) withDefaults() ServingConfig {
	if s.QueueMetric == "" {
		s.QueueMetric = "vllm:num_requests_waiting"
	}
	if s.StableWindow == 0 {
		s.StableWindow = 60 * time.Second
	}
	if s.PanicWindow == 0 {
		s.PanicWindow = 6 * time.Second
	}
	if s.PanicThreshold == 0 {
		s.PanicThreshold = 2
	}
	if s.DrainTime == 0 {
		s.DrainTime = time.Minute
	}
	return s
}

// validateServing checks the serving block of a target in mode serving,
// reporting each problem to bad.
func (t *TargetConfig) validateServing(bad func(string, ...any)) {
	s := t.Serving.withDefaults()
	if s.QueueMetric == "" {
		bad("serving::queue_metric must name the per-pod gauge of waiting requests")
	}
	if !(s.PodThroughput > 0) || math.IsInf(s.PodThroughput, 0) {
		bad("serving::pod_throughput must be positive (requests per second one pod serves at full load), got %v", s.PodThroughput)
	}
	if s.StableWindow <= 0 || s.StableWindow > time.Hour {
		bad("serving::stable_window must be between 1s and 1h, got %v", s.StableWindow)
	}
	if s.PanicWindow <= 0 || s.PanicWindow > s.StableWindow {
		bad("serving::panic_window must be positive and at most stable_window, got %v", s.PanicWindow)
	}
	if !(s.PanicThreshold >= 1) || math.IsInf(s.PanicThreshold, 0) {
		bad("serving::panic_threshold must be at least 1 (a multiple of the ready pods), got %v", s.PanicThreshold)
	}
	if len(t.metrics()) != 1 {
		bad("mode serving sizes on one load metric (metric and target_value, or one entry of metrics)")
	}
	if s.DrainTime <= 0 || s.DrainTime > time.Hour {
		bad("serving::drain_time must be between 1s and 1h, got %v", s.DrainTime)
	}
	if s.HeadroomWindow < 0 || s.HeadroomWindow > 24*time.Hour {
		bad("serving::headroom_window must be between 0 and 24h, got %v", s.HeadroomWindow)
	}
	if !(s.HeadroomQuantile >= 0 && s.HeadroomQuantile <= 1) {
		bad("serving::headroom_quantile must be in [0, 1], got %v", s.HeadroomQuantile)
	}
	if !(s.HeadroomMaxRatio == 0 || (s.HeadroomMaxRatio >= 1 && !math.IsInf(s.HeadroomMaxRatio, 0))) {
		bad("serving::headroom_max_ratio must be 0 (no cap) or at least 1 (a multiple of the mean arrival rate), got %v", s.HeadroomMaxRatio)
	}
	if s.HeadroomMaxRatio > 0 && s.HeadroomWindow == 0 {
		bad("serving::headroom_max_ratio needs headroom_window, over which the mean arrival rate is taken")
	}
}

// servingTarget is a target's state in serving mode.
type servingTarget struct {
	cfg   ServingConfig
	est   *serving.Estimator
	queue map[string]seriesValue // the latest queue length, by pod; guarded by autoscaler.mu
	// waiting is the fresh queue lengths by pod, copied under autoscaler.mu
	// for the evaluation that follows.
	waiting map[string]float64
}

func newServingTarget(t *TargetConfig) *servingTarget {
	if t.Mode != "serving" {
		return nil
	}
	c := t.Serving.withDefaults()
	return &servingTarget{
		cfg:   c,
		queue: map[string]seriesValue{},
		est: serving.New(serving.Params{
			Target:         t.metrics()[0].TargetValue,
			PodThroughput:  c.PodThroughput,
			StableWindow:   c.StableWindow,
			PanicWindow:    c.PanicWindow,
			PanicThreshold: c.PanicThreshold,
			DrainTime:      c.DrainTime,
			HeadroomWindow: c.HeadroomWindow, HeadroomQuantile: c.HeadroomQuantile,
			HeadroomMaxRatio: c.HeadroomMaxRatio,
		}),
	}
}

// ingest keeps the latest queue length of a pod (its data points summed).
func (s *servingTarget) ingest(rm pmetric.ResourceMetrics, pod string, now time.Time, maxAge time.Duration, bad *rejected) {
	if s == nil || pod == "" {
		return
	}
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			if m.Name() != s.cfg.QueueMetric {
				continue
			}
			dps, ok := metricpoints.Of(m)
			if !ok {
				bad.wrongType += int64(metricpoints.Count(m))
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				v, at, ok := bad.value(dps.At(k), now, maxAge)
				if !ok {
					continue
				}
				if prev, ok := s.queue[pod]; !ok || at.After(prev.at) {
					s.queue[pod] = seriesValue{pod: pod, value: v, at: at}
				}
			}
		}
	}
}

// snapshot copies the fresh queue lengths and forgets pods silent for
// long. Called with autoscaler.mu held.
func (s *servingTarget) snapshot(now time.Time, maxAge time.Duration) {
	if s == nil {
		return
	}
	s.waiting = make(map[string]float64, len(s.queue))
	for pod, q := range s.queue {
		age := now.Sub(q.at)
		if age > 10*maxAge || age < -10*maxAge {
			delete(s.queue, pod)
			continue
		}
		if age <= maxAge && age >= -maxAge {
			s.waiting[pod] = q.value
		}
	}
}

// decide evaluates a target: the HPA's algorithm, or in serving mode the
// estimator's capacity within the HPA's tolerance, through the HPA's
// stabilization, policies and bounds.
func (t *target) decide(o hpa.Observation) hpa.Decision {
	s := t.serving
	if s == nil {
		return t.hpa.Evaluate(o)
	}
	// The load (the first metric) and the queue of the pods the target
	// lists now, as the HPA counts only those: a pod removed by a
	// scale-down is gone, whatever its last value.
	var load, waiting float64
	ready := 0
	var values map[string]float64
	if len(o.Values) > 0 {
		values = o.Values[0]
	}
	for _, p := range o.Pods {
		if p.Deleting || p.Phase == hpa.Failed {
			continue
		}
		if v, ok := values[p.Name]; ok {
			load += v
			ready++
			waiting += max(0, s.waiting[p.Name])
		}
	}
	spec := t.cfg.spec()
	if ready == 0 || o.Current == 0 || o.Current < spec.MinReplicas || o.Current > spec.MaxReplicas {
		// No value, scaled to zero by someone else, or outside the bounds:
		// exactly as the HPA.
		return t.hpa.Evaluate(o)
	}
	e := s.est.Observe(serving.Observation{Now: o.Now, Ready: ready, Load: load, Waiting: waiting})
	d := hpa.Decision{Metric: t.metrics[0].Name, Value: load / float64(ready)}
	rec, reason := int32(math.Ceil(e.Pods-1e-9)), hpa.ReasonScaled
	if e.Panic {
		reason = hpa.ReasonPanic
	}
	b := spec.Behavior
	if ratio := e.Pods / float64(o.Current); 1-b.ScaleDown.Tolerance <= ratio && ratio <= 1+b.ScaleUp.Tolerance {
		rec, reason = o.Current, hpa.ReasonWithinTolerance
	}
	d.Recommendation = rec
	d.Desired, d.Reason = t.hpa.Apply(o.Now, o.Current, rec, reason)
	return d
}
