package hpa

import "time"

// ReasonPanic says a burst decided: the serving mode's panic window asked
// for at least its threshold times the ready pods.
const ReasonPanic Reason = "Panic"

// Apply takes a recommendation made outside the HPA's replica ratio (the
// serving mode's) through the same stabilization windows, scaling policies
// and min/max bounds as a reactive one, so that those stay the HPA's.
func (a *Autoscaler) Apply(now time.Time, current, rec int32, reason Reason) (int32, Reason) {
	return a.normalize(now, current, rec, reason)
}
