package gpuautoscaleconnector

import (
	"math"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/serving"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
)

// ServingConfig tunes mode serving: sizing an inference service for its
// latency objective on the tokens its pods serve (see
// internal/serving for the rules and their sources).
type ServingConfig struct {
	// TokenMetrics are the pods' token counters, each weighed by its cost:
	// vLLM's generation_tokens_total (1) and, where prefill is a real part
	// of the work, prompt_tokens_total at its cost relative to a generated
	// token. Their weighed sum is the work, in tokens.
	TokenMetrics []TokenMetricConfig `mapstructure:"token_metrics"`
	// QueueMetric and RunningMetric are the per-pod gauges of requests
	// waiting and running.
	QueueMetric   string `mapstructure:"queue_metric"`
	RunningMetric string `mapstructure:"running_metric"`
	// KVMetric is the per-pod KV cache use (0 to 1) and KVTarget the use
	// to stay under (0 turns the KV rule off).
	KVMetric string  `mapstructure:"kv_metric"`
	KVTarget float64 `mapstructure:"kv_target"`
	// SLOWait is the longest a newly arriving request may wait.
	SLOWait time.Duration `mapstructure:"slo_wait"`
	// Startup is the pods' start-up time, from being asked for to serving
	// (the connector raises it to the longest it observes).
	Startup time.Duration `mapstructure:"startup"`
	// Lookback is how far back the peak need is taken (at least startup).
	Lookback time.Duration `mapstructure:"lookback"`
	// PeakQuantile is the quantile of the recent needs that forecasts the
	// need (1: the lookback's peak).
	PeakQuantile float64 `mapstructure:"peak_quantile"`
	// BurstCap caps the forecast with its headroom at this multiple of
	// the lookback's mean arrival (0: no cap).
	BurstCap float64 `mapstructure:"burst_cap"`
	// HeadroomQuantile is the quantile of the forecast's relative error the
	// headroom covers; ErrorHistory how long errors are kept; ColdHeadroom
	// the headroom until enough errors matured.
	HeadroomQuantile float64       `mapstructure:"headroom_quantile"`
	ErrorHistory     time.Duration `mapstructure:"error_history"`
	ColdHeadroom     float64       `mapstructure:"cold_headroom"`
	// PodCapacity is a first guess of one pod's tokens per second, used
	// until a pod with a queue shows what it serves (0: none).
	PodCapacity float64 `mapstructure:"pod_capacity"`
	// RequestTime is how long a request runs once scheduled (the mean of
	// vLLM's request_inference_time_seconds): it turns queued requests
	// into tokens. 0: a queue only marks a pod busy.
	RequestTime time.Duration `mapstructure:"request_time"`
	// DrainTime is the time in which a backlog is to be served.
	DrainTime time.Duration `mapstructure:"drain_time"`
	// ScaleDownTolerance: the forecast must fall this fraction below the
	// running pods' capacity before one is let go.
	ScaleDownTolerance float64 `mapstructure:"scale_down_tolerance"`
	// ScaleDownDelay keeps a pod this long after the rules last asked for
	// it (Knative's scale-down-delay).
	ScaleDownDelay time.Duration `mapstructure:"scale_down_delay"`
	// Seasonal shapes the forecast by the time of day once a day of
	// demand has been seen.
	Seasonal *bool `mapstructure:"seasonal"`
	// Attainment, when set, sizes by the calibrated forecast: the share of
	// evaluations whose need a start-up later the pods are to cover.
	Attainment float64 `mapstructure:"attainment"`
}

// TokenMetricConfig is one token counter and its weight.
type TokenMetricConfig struct {
	Name   string  `mapstructure:"name"`
	Weight float64 `mapstructure:"weight"`
}

// withDefaults fills the unset keys (targets are list elements, which the
// configuration decodes from zero values): vLLM's metric names.
func (s ServingConfig) withDefaults() ServingConfig {
	if len(s.TokenMetrics) == 0 {
		s.TokenMetrics = []TokenMetricConfig{{Name: "vllm:generation_tokens_total", Weight: 1}}
	}
	for i := range s.TokenMetrics {
		if s.TokenMetrics[i].Weight == 0 {
			s.TokenMetrics[i].Weight = 1
		}
	}
	if s.QueueMetric == "" {
		s.QueueMetric = "vllm:num_requests_waiting"
	}
	if s.RunningMetric == "" {
		s.RunningMetric = "vllm:num_requests_running"
	}
	if s.KVMetric == "" {
		s.KVMetric = "vllm:kv_cache_usage_perc"
	}
	if s.SLOWait == 0 {
		s.SLOWait = 2 * time.Second
	}
	if s.Startup == 0 {
		s.Startup = 3 * time.Minute
	}
	if s.PeakQuantile == 0 {
		s.PeakQuantile = 1
	}
	if s.HeadroomQuantile == 0 {
		s.HeadroomQuantile = 0.9
	}
	if s.ErrorHistory == 0 {
		s.ErrorHistory = 24 * time.Hour
	}
	if s.ColdHeadroom == 0 {
		s.ColdHeadroom = 1.1
	}
	if s.DrainTime == 0 {
		s.DrainTime = time.Minute
	}
	if s.Seasonal == nil {
		on := true
		s.Seasonal = &on
	}
	return s
}

// validateServing checks the serving block of a target in mode serving,
// reporting each problem to bad.
func (t *TargetConfig) validateServing(bad func(string, ...any)) {
	s := t.Serving.withDefaults()
	for i, m := range s.TokenMetrics {
		if m.Name == "" {
			bad("serving::token_metrics::%d::name must name a token counter", i)
		}
		if !(m.Weight > 0) || math.IsInf(m.Weight, 0) {
			bad("serving::token_metrics::%d::weight must be positive, got %v", i, m.Weight)
		}
	}
	if len(t.metrics()) != 1 {
		bad("mode serving falls back to the HPA on one load metric (metric and target_value, or one entry of metrics)")
	}
	if s.SLOWait <= 0 || s.SLOWait > time.Hour {
		bad("serving::slo_wait must be between 1ms and 1h, got %v", s.SLOWait)
	}
	if s.Startup <= 0 || s.Startup > 2*time.Hour {
		bad("serving::startup must be between 1s and 2h, got %v", s.Startup)
	}
	if s.Lookback < 0 || s.Lookback > 24*time.Hour {
		bad("serving::lookback must be between 0 (the start-up) and 24h, got %v", s.Lookback)
	}
	if !(s.PeakQuantile > 0 && s.PeakQuantile <= 1) {
		bad("serving::peak_quantile must be in (0, 1], got %v", s.PeakQuantile)
	}
	if !(s.BurstCap == 0 || (s.BurstCap >= 1 && !math.IsInf(s.BurstCap, 0))) {
		bad("serving::burst_cap must be 0 (no cap) or at least 1 (a multiple of the mean arrival), got %v", s.BurstCap)
	}
	if !(s.HeadroomQuantile > 0 && s.HeadroomQuantile <= 1) {
		bad("serving::headroom_quantile must be in (0, 1], got %v", s.HeadroomQuantile)
	}
	if s.ErrorHistory < time.Minute || s.ErrorHistory > 30*24*time.Hour {
		bad("serving::error_history must be between 1m and 720h, got %v", s.ErrorHistory)
	}
	if !(s.ColdHeadroom >= 1 && s.ColdHeadroom <= 10) {
		bad("serving::cold_headroom must be between 1 and 10, got %v", s.ColdHeadroom)
	}
	if s.PodCapacity < 0 || math.IsInf(s.PodCapacity, 0) || math.IsNaN(s.PodCapacity) {
		bad("serving::pod_capacity must be 0 (learned) or positive tokens per second, got %v", s.PodCapacity)
	}
	if s.RequestTime < 0 || s.RequestTime > time.Hour {
		bad("serving::request_time must be between 0 and 1h, got %v", s.RequestTime)
	}
	if s.DrainTime <= 0 || s.DrainTime > time.Hour {
		bad("serving::drain_time must be between 1s and 1h, got %v", s.DrainTime)
	}
	if !(s.ScaleDownTolerance >= 0 && s.ScaleDownTolerance <= 1) {
		bad("serving::scale_down_tolerance must be in [0, 1], got %v", s.ScaleDownTolerance)
	}
	if s.ScaleDownDelay < 0 || s.ScaleDownDelay > time.Hour {
		bad("serving::scale_down_delay must be between 0 and 1h, got %v", s.ScaleDownDelay)
	}
	if !(s.Attainment >= 0 && s.Attainment < 1) {
		bad("serving::attainment must be in [0, 1) (0: the peak forecast), got %v", s.Attainment)
	}
	if !(s.KVTarget >= 0 && s.KVTarget <= 1) {
		bad("serving::kv_target must be in [0, 1] (0: off), got %v", s.KVTarget)
	}
}

// podServing is a pod's latest serving values.
type podServing struct {
	tokens  map[string]seriesValue // by counter
	start   time.Time              // the latest start of its counters
	waiting seriesValue
	running seriesValue
	kv      seriesValue
	// busy is the tokens per second served between consecutive samples
	// with requests waiting at both: what a saturated pod serves. Taken
	// by the next evaluation.
	busy []float64
	// prev is the previous sample's weighed tokens, time and queue.
	prevTokens  float64
	prevAt      time.Time
	prevWaiting float64
}

// servingTarget is a target's state in serving mode.
type servingTarget struct {
	cfg  ServingConfig
	est  *serving.Estimator
	pods map[string]*podServing // guarded by autoscaler.mu
	// fresh is the pods' values, copied under autoscaler.mu for the
	// evaluation that follows.
	fresh map[string]serving.Pod
	// asked is when each pod was first listed without values, to observe
	// the start-up.
	asked map[string]time.Time
	last  *serving.Estimate
}

func newServingTarget(t *TargetConfig) *servingTarget {
	if t.Mode != "serving" {
		return nil
	}
	c := t.Serving.withDefaults()
	return &servingTarget{
		cfg:   c,
		pods:  map[string]*podServing{},
		asked: map[string]time.Time{},
		est: serving.New(serving.Params{
			SLOWait: c.SLOWait, Startup: c.Startup, Lookback: c.Lookback,
			Peak: c.PeakQuantile, BurstCap: c.BurstCap, Quantile: c.HeadroomQuantile, ErrorHistory: c.ErrorHistory, ColdHeadroom: c.ColdHeadroom,
			Capacity: c.PodCapacity, RequestTime: c.RequestTime, DrainTime: c.DrainTime,
			KVTarget: c.KVTarget, ScaleDownDelay: c.ScaleDownDelay, DownTolerance: c.ScaleDownTolerance, Seasonal: *c.Seasonal,
			Attainment: c.Attainment,
		}),
	}
}

// ingest keeps a pod's latest token counters and gauges.
func (s *servingTarget) ingest(rm pmetric.ResourceMetrics, pod string, now time.Time, maxAge time.Duration, bad *rejected) {
	if s == nil || pod == "" {
		return
	}
	ps := s.pods[pod]
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			name := m.Name()
			var gauge *seriesValue
			counter := false
			switch name {
			case s.cfg.QueueMetric, s.cfg.RunningMetric, s.cfg.KVMetric:
			default:
				counter = s.weight(name) > 0
				if !counter {
					continue
				}
			}
			dps, ok := metricpoints.Of(m)
			if !ok || (counter && (m.Type() != pmetric.MetricTypeSum || m.Sum().AggregationTemporality() != pmetric.AggregationTemporalityCumulative)) {
				bad.wrongType += int64(metricpoints.Count(m))
				continue
			}
			if ps == nil {
				ps = &podServing{tokens: map[string]seriesValue{}}
				s.pods[pod] = ps
			}
			switch name {
			case s.cfg.QueueMetric:
				gauge = &ps.waiting
			case s.cfg.RunningMetric:
				gauge = &ps.running
			case s.cfg.KVMetric:
				gauge = &ps.kv
			}
			for k := 0; k < dps.Len(); k++ {
				dp := dps.At(k)
				v, at, ok := bad.value(dp, now, maxAge)
				if !ok {
					continue
				}
				if counter {
					if prev, ok := ps.tokens[name]; !ok || !at.Before(prev.at) {
						ps.tokens[name] = seriesValue{pod: pod, value: v, at: at}
						if st := dp.StartTimestamp().AsTime(); dp.StartTimestamp() != 0 && st.After(ps.start) {
							ps.start = st
						}
					}
					continue
				}
				if at.After(gauge.at) {
					*gauge = seriesValue{pod: pod, value: v, at: at}
				}
			}
		}
	}
	if ps != nil {
		ps.sampleBusy(s)
	}
}

// sampleBusy notes the rate of a sample whose queue, and the previous
// one's, held requests: the pod served all it could between the two.
func (ps *podServing) sampleBusy(s *servingTarget) {
	total, at, ok := ps.work(s)
	if !ok {
		return
	}
	if !at.After(ps.prevAt) || !ps.waiting.at.Equal(at) {
		return // no new sample, or its queue not read with it
	}
	if !ps.prevAt.IsZero() && ps.prevWaiting > 0 && ps.waiting.value > 0 && total >= ps.prevTokens {
		ps.busy = append(ps.busy, (total-ps.prevTokens)/at.Sub(ps.prevAt).Seconds())
		if len(ps.busy) > 64 {
			ps.busy = ps.busy[1:]
		}
	}
	ps.prevTokens, ps.prevAt, ps.prevWaiting = total, at, ps.waiting.value
}

// work is the pod's weighed token count and the time of its oldest
// counter's reading; false until every counter has reported.
func (ps *podServing) work(s *servingTarget) (float64, time.Time, bool) {
	if len(ps.tokens) != len(s.cfg.TokenMetrics) {
		return 0, time.Time{}, false
	}
	var total float64
	var at time.Time
	for name, v := range ps.tokens {
		total += s.weight(name) * v.value
		if at.IsZero() || v.at.Before(at) {
			at = v.at
		}
	}
	return total, at, true
}

// latest is when the pod last reported any of the series serving mode reads.
func (ps *podServing) latest() time.Time {
	var t time.Time
	for _, v := range ps.tokens {
		t = later(t, v.at)
	}
	for _, v := range []seriesValue{ps.waiting, ps.running, ps.kv} {
		t = later(t, v.at)
	}
	return t
}

func (s *servingTarget) weight(name string) float64 {
	for _, m := range s.cfg.TokenMetrics {
		if m.Name == name {
			return m.Weight
		}
	}
	return 0
}

// snapshot copies the fresh values and forgets pods silent for long.
// Called with autoscaler.mu held.
func (s *servingTarget) snapshot(now time.Time, maxAge time.Duration) {
	if s == nil {
		return
	}
	fresh := func(v seriesValue) bool {
		age := now.Sub(v.at)
		return !v.at.IsZero() && age <= maxAge && age >= -maxAge
	}
	s.fresh = make(map[string]serving.Pod, len(s.pods))
	for name, ps := range s.pods {
		// A pod silent for long is gone (a scale-down, a reschedule):
		// forgetting it keeps the map as large as the Deployment.
		if age := now.Sub(ps.latest()); age > 10*maxAge || age < -10*maxAge {
			delete(s.pods, name)
			continue
		}
		p := serving.Pod{Name: name, TokensStart: ps.start}
		if total, at, ok := ps.work(s); ok && fresh(seriesValue{at: at}) {
			p.Tokens, p.At, p.HasTokens = total, at, true
		}
		if fresh(ps.waiting) {
			p.Waiting = max(0, ps.waiting.value)
		}
		if fresh(ps.running) {
			p.Running = max(0, ps.running.value)
		}
		if fresh(ps.kv) {
			p.KV, p.HasKV = min(1, max(0, ps.kv.value)), true
		}
		p.Busy, ps.busy = ps.busy, nil
		s.fresh[name] = p
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// decide evaluates a target: the HPA's algorithm, or in serving mode the
// estimator's replicas through the HPA's stabilization, policies and
// bounds.
func (t *target) decide(o hpa.Observation) hpa.Decision {
	s := t.serving
	if s == nil {
		return t.hpa.Evaluate(o)
	}
	var pods []serving.Pod
	listed := make(map[string]bool, len(o.Pods))
	for _, p := range o.Pods {
		if p.Deleting || p.Phase == hpa.Failed {
			continue
		}
		listed[p.Name] = true
		v, ok := s.fresh[p.Name]
		if !ok || !v.HasTokens {
			// Listed, not serving yet: the start-up runs from here.
			if _, seen := s.asked[p.Name]; !seen {
				s.asked[p.Name] = o.Now
			}
			continue
		}
		if at, seen := s.asked[p.Name]; seen && !at.IsZero() {
			s.est.ObserveStartup(o.Now.Sub(at))
		}
		s.asked[p.Name] = time.Time{} // serving: not waited for
		pods = append(pods, v)
	}
	for name := range s.asked {
		if !listed[name] {
			delete(s.asked, name)
		}
	}
	spec := t.cfg.spec()
	if len(pods) == 0 || o.Current == 0 || o.Current < spec.MinReplicas || o.Current > spec.MaxReplicas {
		// No value, scaled to zero by someone else, or outside the bounds:
		// exactly as the HPA.
		s.last = nil
		return t.hpa.Evaluate(o)
	}
	e := s.est.Observe(serving.Observation{Now: o.Now, Pods: pods, Current: int(o.Current)})
	s.last = &e
	d := hpa.Decision{Metric: s.cfg.TokenMetrics[0].Name, Value: e.Served / float64(len(pods))}
	rec := int32(min(e.Pods, math.MaxInt32))
	d.Recommendation = rec
	d.Desired, d.Reason = t.hpa.Apply(o.Now, o.Current, rec, hpa.Reason(e.Reason))
	return d
}

// servingDetail is the estimate as gpureplay prints it.
func servingDetail(e *serving.Estimate) *offline.ServingDetail {
	if e == nil {
		return nil
	}
	d := &offline.ServingDetail{
		Served: e.Served, Arrival: e.Arrival, Backlog: e.Backlog,
		Capacity: e.Capacity, CapacityFrom: e.CapacityFrom,
		Need: e.Need, Forecast: e.Forecast, Headroom: e.Headroom, Seasonal: e.Seasonal,
		SLOPods: e.SLOPods, BacklogPods: e.BacklogPods, KVPods: e.KVPods, Keep: e.Keep,
		Rule: e.Reason, StartupSeconds: e.Startup.Seconds(), Errors: e.Errors,
		Forecaster: e.Forecaster,
	}
	if e.HasWait {
		w := e.Wait
		d.WaitSeconds = &w
	}
	return d
}

// putServingAttributes adds the estimate a decision rests on to its log
// record (none without an estimate).
func putServingAttributes(at pcommon.Map, e *serving.Estimate) {
	if e == nil {
		return
	}
	at.PutDouble("gpu.autoscale.serving.arrival", e.Arrival)
	at.PutDouble("gpu.autoscale.serving.capacity", e.Capacity)
	at.PutStr("gpu.autoscale.serving.capacity_from", e.CapacityFrom)
	at.PutDouble("gpu.autoscale.serving.need", e.Need)
	at.PutDouble("gpu.autoscale.serving.forecast", e.Forecast)
	at.PutDouble("gpu.autoscale.serving.headroom", e.Headroom)
	at.PutInt("gpu.autoscale.serving.slo_pods", int64(e.SLOPods))
	at.PutInt("gpu.autoscale.serving.keep", int64(e.Keep))
	at.PutStr("gpu.autoscale.serving.rule", e.Reason)
	at.PutStr(metricnames.AttrGPUAutoscaleServingForecaster, forecasterOf(e))
	if e.HasWait {
		at.PutDouble(metricnames.GPUAutoscaleServingQueueWait, e.Wait)
	}
}
