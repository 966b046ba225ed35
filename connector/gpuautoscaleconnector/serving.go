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

// validate checks a serving target's settings; key is the target's.
func (s ServingConfig) validate(key string, bad func(string, ...any)) {
	s = s.withDefaults()
	k := key + "::serving"
	if s.QueueMetric == "" {
		bad("%s::queue_metric must name the per-pod gauge of waiting requests", k)
	}
	if !(s.PodThroughput > 0) || math.IsInf(s.PodThroughput, 0) {
		bad("%s::pod_throughput must be positive (requests per second one pod serves at full load), got %v", k, s.PodThroughput)
	}
	if s.StableWindow <= 0 || s.StableWindow > time.Hour {
		bad("%s::stable_window must be between 1s and 1h, got %v", k, s.StableWindow)
	}
	if s.PanicWindow <= 0 || s.PanicWindow > s.StableWindow {
		bad("%s::panic_window must be positive and at most stable_window, got %v", k, s.PanicWindow)
	}
	if !(s.PanicThreshold >= 1) || math.IsInf(s.PanicThreshold, 0) {
		bad("%s::panic_threshold must be at least 1 (a multiple of the ready pods), got %v", k, s.PanicThreshold)
	}
	if s.DrainTime <= 0 || s.DrainTime > time.Hour {
		bad("%s::drain_time must be between 1s and 1h, got %v", k, s.DrainTime)
	}
	if s.HeadroomWindow < 0 || s.HeadroomWindow > 24*time.Hour {
		bad("%s::headroom_window must be between 0 and 24h, got %v", k, s.HeadroomWindow)
	}
	if !(s.HeadroomQuantile >= 0 && s.HeadroomQuantile <= 1) {
		bad("%s::headroom_quantile must be in [0, 1], got %v", k, s.HeadroomQuantile)
	}
}

// servingTarget is a target's state in serving mode.
type servingTarget struct {
	cfg   ServingConfig
	est   *serving.Estimator
	queue map[string]gpuValue // the latest queue length, by pod
}

func newServingTarget(t *TargetConfig) *servingTarget {
	if t.Mode != "serving" {
		return nil
	}
	c := t.Serving.withDefaults()
	return &servingTarget{
		cfg:   c,
		queue: map[string]gpuValue{},
		est: serving.New(serving.Params{
			Target:         t.TargetValue,
			PodThroughput:  c.PodThroughput,
			StableWindow:   c.StableWindow,
			PanicWindow:    c.PanicWindow,
			PanicThreshold: c.PanicThreshold,
			DrainTime:      c.DrainTime,
			HeadroomWindow: c.HeadroomWindow, HeadroomQuantile: c.HeadroomQuantile,
		}),
	}
}

// ingest keeps the latest queue length of a pod.
func (s *servingTarget) ingest(rm pmetric.ResourceMetrics, pod string) {
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
				continue
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				at := dp.Timestamp().AsTime()
				if prev, ok := s.queue[pod]; !ok || at.After(prev.at) {
					s.queue[pod] = gpuValue{pod: pod, value: metricpoints.Value(dp), at: at}
				}
			}
		}
	}
}

// waiting sums the fresh queue lengths and forgets pods silent for long.
func (s *servingTarget) waiting(now time.Time, maxAge time.Duration) float64 {
	sum := 0.0
	for pod, q := range s.queue {
		age := now.Sub(q.at)
		if age > 10*maxAge {
			delete(s.queue, pod)
			continue
		}
		if age <= maxAge && age >= -maxAge && q.value > 0 {
			sum += q.value
		}
	}
	return sum
}

// decide is serving mode's evaluation: the estimator's capacity, within
// the HPA's tolerance, through the HPA's stabilization, policies and bounds.
func (s *servingTarget) decide(t *target, now time.Time, maxAge time.Duration, current int32, values []float64) hpa.Decision {
	if len(values) == 0 || current == 0 {
		// No fresh value, or scaled to zero by someone else: as the HPA.
		return t.hpa.Evaluate(hpa.Observation{Now: now, Current: current, Values: values})
	}
	load := 0.0
	for _, v := range values {
		load += v
	}
	e := s.est.Observe(serving.Observation{Now: now, Ready: len(values), Load: load, Waiting: s.waiting(now, maxAge)})
	d := hpa.Decision{Metric: load / float64(len(values)), Forecast: e.Pods}
	rec, reason := int32(math.Ceil(e.Pods-1e-9)), hpa.ReasonScaled
	if e.Panic {
		reason = hpa.ReasonPanic
	}
	b := t.cfg.spec().Behavior
	ratio := e.Pods / float64(current)
	if (ratio >= 1 && ratio-1 <= b.ScaleUp.Tolerance) || (ratio < 1 && 1-ratio <= b.ScaleDown.Tolerance) {
		rec, reason = current, hpa.ReasonWithinTolerance
	}
	d.Recommendation = rec
	d.Desired, d.Reason = t.hpa.Apply(now, current, rec, reason)
	return d
}
