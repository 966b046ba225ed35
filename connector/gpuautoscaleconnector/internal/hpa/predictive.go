package hpa

import (
	"math"
	"time"
)

// predict raises the reactive recommendation to the forecast load when that
// asks for more (predictive mode). The forecast follows the load, the first
// metric summed over the pods that report it in pods of work at its target,
// so that it does not jump when replicas change; Holt's linear trend, damped
// over the lead time so that a ramp is not projected past the plateau that
// follows.
func (a *Autoscaler) predict(o Observation, d *Decision, desired int32, reason Reason) (int32, Reason) {
	s := &a.spec
	if len(s.Metrics) == 0 || len(o.Values) == 0 {
		return desired, reason
	}
	live := make(map[string]bool, len(o.Pods))
	for _, p := range o.Pods {
		live[p.Name] = !p.Deleting && p.Phase != Failed && p.Phase != Pending
	}
	sum, n := 0.0, 0
	for pod, v := range o.Values[0] {
		if live[pod] {
			sum += v
			n++
		}
	}
	if n == 0 {
		return desired, reason
	}
	load := sum / s.Metrics[0].Target
	a.holt.observe(o.Now, load, s.Alpha, s.Beta)
	f, ok := a.holt.forecast(o.Now.Add(s.LeadTime), s.LeadTime)
	if !ok {
		return desired, reason
	}
	if o.Current > 0 {
		d.Forecast = f * s.Metrics[0].Target / float64(o.Current)
	}
	if pred := int32(math.Ceil(f - 1e-9)); pred > desired && pred > o.Current {
		return pred, ReasonPredicted
	}
	return desired, reason
}

// holt is Holt's linear trend method over irregularly spaced observations.
type holt struct {
	level, trend float64 // trend per second
	last         time.Time
	n            int
}

func (h *holt) observe(at time.Time, x, alpha, beta float64) {
	switch h.n {
	case 0:
		h.level = x
	default:
		dt := at.Sub(h.last).Seconds()
		if dt <= 0 {
			return
		}
		prev := h.level
		h.level = alpha*x + (1-alpha)*(h.level+h.trend*dt)
		slope := (h.level - prev) / dt
		if h.n == 1 {
			h.trend = slope
		} else {
			h.trend = beta*slope + (1-beta)*h.trend
		}
	}
	h.last = at
	h.n++
}

// forecast extrapolates the load to a time, once there is a trend. The
// trend is damped (Gardner's damped trend, in continuous time with a time
// constant of tau): a ramp is followed, but a plateau after it is not
// overshot by the full lead time's worth of slope.
func (h *holt) forecast(at time.Time, tau time.Duration) (float64, bool) {
	if h.n < 2 {
		return 0, false
	}
	dt := at.Sub(h.last).Seconds()
	if t := tau.Seconds(); t > 0 {
		dt = t * (1 - math.Exp(-dt/t))
	}
	return max(0, h.level+h.trend*dt), true
}
