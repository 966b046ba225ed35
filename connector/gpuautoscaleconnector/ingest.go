package gpuautoscaleconnector

import (
	"context"
	"math"
	"sort"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/hpa"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// consume keeps the latest value of each series of each target's metrics.
// It holds mu only to store them.
func (a *autoscaler) consume(ctx context.Context, md pmetric.Metrics) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	var bad rejected
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		for _, t := range a.targets {
			if !matches(attrs, t.match) {
				continue
			}
			gpu := str(attrs, metricnames.AttrHWID)
			pod := str(attrs, metricnames.AttrK8sPodName)
			if pod == "" {
				pod = gpu // without pod attribution each GPU counts as a pod
			}
			if pod == "" {
				continue // neither a pod nor a GPU: not the value of a replica
			}
			t.ingest(rm, gpu, pod, now, a.cfg.MetricMaxAge, &bad)
			t.serving.ingest(rm, pod, now, a.cfg.MetricMaxAge, &bad)
		}
	}
	bad.record(ctx, a.tb)
	return nil
}

// rejected counts the data points of a target's metrics that are no value,
// by reason, for the connector's rejected_data_points telemetry.
type rejected struct{ notFinite, wrongType, future int64 }

func (r *rejected) record(ctx context.Context, tb *metadata.TelemetryBuilder) {
	for _, c := range []struct {
		reason string
		n      int64
	}{{"not_finite", r.notFinite}, {"wrong_type", r.wrongType}, {"future_timestamp", r.future}} {
		if c.n > 0 {
			tb.ConnectorGpuAutoscaleRejectedDataPoints.Add(ctx, c.n, metric.WithAttributes(attribute.String("reason", c.reason)))
		}
	}
}

// value checks one data point: a finite value at a time not far ahead of
// now (a series from a clock far ahead would never age out).
func (r *rejected) value(dp pmetric.NumberDataPoint, now time.Time, maxAge time.Duration) (float64, time.Time, bool) {
	v := metricpoints.Value(dp)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		r.notFinite++ // a stale marker or a broken value: no value
		return 0, time.Time{}, false
	}
	at := dp.Timestamp().AsTime()
	if at.Sub(now) > 10*maxAge {
		r.future++
		return 0, time.Time{}, false
	}
	return v, at, true
}

func str(m pcommon.Map, k string) string {
	if v, ok := m.Get(k); ok {
		return v.AsString()
	}
	return ""
}

func matches(attrs pcommon.Map, want map[string]string) bool {
	for k, v := range want {
		if str(attrs, k) != v {
			return false
		}
	}
	return true
}

func (t *target) ingest(rm pmetric.ResourceMetrics, gpu, pod string, now time.Time, maxAge time.Duration, bad *rejected) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			m := ms.At(j)
			for mi, mc := range t.metrics {
				if m.Name() != mc.Name {
					continue
				}
				dps, ok := metricpoints.Of(m)
				if !ok {
					bad.wrongType += int64(metricpoints.Count(m))
					continue
				}
				for k := 0; k < dps.Len(); k++ {
					dp := dps.At(k)
					if !matches(dp.Attributes(), mc.Attributes) {
						continue
					}
					v, at, ok := bad.value(dp, now, maxAge)
					if !ok {
						continue
					}
					key := pod + "\x00" + gpu + "\x00" + seriesKey(dp.Attributes())
					if prev, ok := t.series[mi][key]; !ok || at.After(prev.at) {
						t.series[mi][key] = seriesValue{pod: pod, value: v, at: at}
					}
				}
			}
		}
	}
}

// seriesKey tells a data point's series apart from the pod's others.
func seriesKey(m pcommon.Map) string {
	if m.Len() == 0 {
		return ""
	}
	keys := make([]string, 0, m.Len())
	m.Range(func(k string, v pcommon.Value) bool {
		keys = append(keys, k+"="+v.AsString())
		return true
	})
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// podValues combines each metric's fresh series into one value per pod, and
// forgets series that have been silent for long. Called with mu held. A
// pod's series are combined in whole milli-units (hpa.PodValue), as the HPA
// would read them from a metrics adapter, so that neither float rounding
// nor the order of the series changes the pod's value.
func (t *target) podValues(now time.Time, maxAge time.Duration) []map[string]float64 {
	out := make([]map[string]float64, len(t.metrics))
	for mi, mc := range t.metrics {
		pods := map[string][]float64{}
		for key, s := range t.series[mi] {
			age := now.Sub(s.at)
			if age > 10*maxAge || age < -10*maxAge {
				delete(t.series[mi], key)
				continue
			}
			if age > maxAge || age < -maxAge {
				continue // stale, or from a clock far ahead: missing
			}
			pods[s.pod] = append(pods[s.pod], s.value)
		}
		values := make(map[string]float64, len(pods))
		for name, samples := range pods {
			values[name] = hpa.PodValue(mc.Aggregation, samples)
		}
		out[mi] = values
	}
	return out
}

// reportingPods are the pods with a fresh value of any metric, in order.
func reportingPods(values []map[string]float64) []string {
	seen := map[string]bool{}
	var names []string
	for _, vs := range values {
		for name := range vs {
			if !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// evaluate decides, and where it may, writes, for every target. The values
// are copied under mu; the API calls and the downstream Consume calls run
