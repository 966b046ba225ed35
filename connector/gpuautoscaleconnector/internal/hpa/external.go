package hpa

import "time"

// ReasonPanic says a burst decided: the serving mode's panic window asked
// for at least its threshold times the ready pods.
const ReasonPanic Reason = "Panic"

// Apply takes a recommendation made outside the HPA's replica ratio (the
// serving mode's) through the same stabilization windows, scaling policies
// and bounds as Evaluate, so that those stay the HPA's. The caller handles
// the cases where the HPA does not consult metrics (a current count of 0 or
// outside the bounds) with Evaluate.
func (a *Autoscaler) Apply(now time.Time, current, recommended int32, reason Reason) (int32, Reason) {
	if a.recommendations == nil {
		a.recommendations = []recommendation{{current, now}}
	}
	return a.normalize(now, current, recommended, reason)
}
