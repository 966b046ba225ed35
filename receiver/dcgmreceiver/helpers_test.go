package dcgmreceiver

import (
	"sync"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricpoints"
)

// statusHost records the status events a component reports.
type statusHost struct {
	component.Host
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *statusHost) last() *componentstatus.Event {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.events) == 0 {
		return nil
	}
	return h.events[len(h.events)-1]
}

// byDevice indexes a scrape's resources by hw.id.
func byDevice(t *testing.T, md pmetric.Metrics) map[string]pmetric.ResourceMetrics {
	t.Helper()
	out := map[string]pmetric.ResourceMetrics{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		rm := md.ResourceMetrics().At(i)
		id, ok := rm.Resource().Attributes().Get("hw.id")
		if !ok {
			t.Fatalf("resource without hw.id: %v", rm.Resource().Attributes().AsRaw())
		}
		out[id.Str()] = rm
	}
	return out
}

// metric finds a metric of a resource by name.
func metric(rm pmetric.ResourceMetrics, name string) (pmetric.Metric, bool) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			if ms.At(j).Name() == name {
				return ms.At(j), true
			}
		}
	}
	return pmetric.Metric{}, false
}

// point returns the data point of a metric whose attributes include attrs.
func point(t *testing.T, rm pmetric.ResourceMetrics, name string, attrs map[string]any) pmetric.NumberDataPoint {
	t.Helper()
	m, ok := metric(rm, name)
	if !ok {
		t.Fatalf("metric %s missing", name)
	}
	dps, ok := metricpoints.Of(m)
	if !ok {
		t.Fatalf("metric %s has type %v", name, m.Type())
	}
	for i := 0; i < dps.Len(); i++ {
		if matches(dps.At(i).Attributes(), attrs) {
			return dps.At(i)
		}
	}
	t.Fatalf("metric %s has no point with %v", name, attrs)
	return pmetric.NumberDataPoint{}
}

func matches(m pcommon.Map, want map[string]any) bool {
	for k, v := range want {
		got, ok := m.Get(k)
		if !ok || got.AsRaw() != v {
			return false
		}
	}
	return true
}

func num(dp pmetric.NumberDataPoint) float64 { return metricpoints.Value(dp) }
