package hpa

import (
	"math"
	"time"
)

// normalize is normalizeDesiredReplicasWithBehaviors: stabilization, then
// the policies' rate limits and the bounds.
func (a *Autoscaler) normalize(now time.Time, current, desired int32, reason Reason) (int32, Reason) {
	stabilized := a.stabilize(now, current, desired)
	if stabilized != desired {
		reason = ReasonStabilized
	}
	limited, why := a.limitRate(now, current, stabilized)
	if limited != stabilized {
		reason = why
	}
	return limited, reason
}

// stabilize is stabilizeRecommendationWithBehaviors: scale up no higher
// than the lowest recommendation within the scale-up window, down no lower
// than the highest within the scale-down window. The new recommendation
// replaces one that is outside both windows, or is appended.
func (a *Autoscaler) stabilize(now time.Time, current, desired int32) int32 {
	b := &a.spec.Behavior
	upCutoff := now.Add(-b.ScaleUp.StabilizationWindow)
	downCutoff := now.Add(-b.ScaleDown.StabilizationWindow)
	up, down := desired, desired
	old := -1
	for i, r := range a.recommendations {
		if r.at.After(upCutoff) {
			up = min(up, r.replicas)
		}
		if r.at.After(downCutoff) {
			down = max(down, r.replicas)
		}
		if r.at.Before(upCutoff) && r.at.Before(downCutoff) {
			old = i
		}
	}
	rec := current
	if rec < up {
		rec = up
	}
	if rec > down {
		rec = down
	}
	if old >= 0 {
		a.recommendations[old] = recommendation{desired, now}
	} else {
		a.recommendations = append(a.recommendations, recommendation{desired, now})
	}
	return rec
}

// limitRate is convertDesiredReplicasWithBehaviorRate: the policies limit
// the change from the count at the start of their period, and the bounds
// apply in the direction of the change.
func (a *Autoscaler) limitRate(now time.Time, current, desired int32) (int32, Reason) {
	s := &a.spec
	switch {
	case desired > current:
		limit := a.scaleUpLimit(now, current)
		if limit < current {
			limit = current // wait until the period's scale-ups age out
		}
		allowed, reason := s.MaxReplicas, ReasonTooManyReplicas
		if allowed > limit {
			allowed, reason = limit, ReasonScaleUpLimit
			if s.Behavior.ScaleUp.Select == SelectDisabled {
				reason = ReasonScalingDisabled
			}
		}
		if desired > allowed {
			return allowed, reason
		}
	case desired < current:
		limit := a.scaleDownLimit(now, current)
		if limit > current {
			limit = current
		}
		allowed, reason := s.MinReplicas, ReasonTooFewReplicas
		if allowed < limit {
			allowed, reason = limit, ReasonScaleDownLimit
			if s.Behavior.ScaleDown.Select == SelectDisabled {
				reason = ReasonScalingDisabled
			}
		}
		if desired < allowed {
			return allowed, reason
		}
	}
	return desired, ""
}

// changed is getReplicasChangePerPeriod: the changes of events strictly
// younger than the period, outdated or not.
func changed(now time.Time, period time.Duration, events []scaleEvent) int32 {
	cutoff := now.Add(-period)
	var n int32
	for _, e := range events {
		if e.at.After(cutoff) {
			n += e.change
		}
	}
	return n
}

// scaleUpLimit is calculateScaleUpLimitWithScalingRules.
func (a *Autoscaler) scaleUpLimit(now time.Time, current int32) int32 {
	r := &a.spec.Behavior.ScaleUp
	if r.Select == SelectDisabled {
		return current
	}
	result, pick := int32(math.MinInt32), func(x, y int32) int32 { return max(x, y) }
	if r.Select == SelectMin {
		result, pick = math.MaxInt32, func(x, y int32) int32 { return min(x, y) }
	}
	for _, p := range r.Policies {
		start := current - changed(now, p.Period, a.ups) + changed(now, p.Period, a.downs)
		var proposed int32
		switch p.Type {
		case Pods:
			proposed = start + p.Value
		case Percent:
			// Rounded up, or a small target could never grow.
			proposed = int32(math.Ceil(float64(start) * (1 + float64(p.Value)/100)))
		}
		result = pick(result, proposed)
	}
	return result
}

// scaleDownLimit is calculateScaleDownLimitWithBehaviors.
func (a *Autoscaler) scaleDownLimit(now time.Time, current int32) int32 {
	r := &a.spec.Behavior.ScaleDown
	if r.Select == SelectDisabled {
		return current
	}
	result, pick := int32(math.MaxInt32), func(x, y int32) int32 { return min(x, y) }
	if r.Select == SelectMin {
		result, pick = math.MinInt32, func(x, y int32) int32 { return max(x, y) }
	}
	for _, p := range r.Policies {
		start := current - changed(now, p.Period, a.ups) + changed(now, p.Period, a.downs)
		var proposed int32
		switch p.Type {
		case Pods:
			proposed = start - p.Value
		case Percent:
			proposed = int32(float64(start) * (1 - float64(p.Value)/100))
		}
		result = pick(result, proposed)
	}
	return result
}

// Record notes that the target was scaled from one count to another at
// now, for the policies' periods. As storeScaleEvent does, events of one
// direction older than that direction's longest policy period are marked
// outdated, and the new event takes the place of the last outdated one.
// Outdated events that were not replaced still count where a policy's
// period covers them, as they do upstream.
func (a *Autoscaler) Record(now time.Time, from, to int32) {
	b := &a.spec.Behavior
	switch {
	case to > from:
		a.ups = storeEvent(a.ups, longestPeriod(b.ScaleUp.Policies), now, to-from)
	case to < from:
		a.downs = storeEvent(a.downs, longestPeriod(b.ScaleDown.Policies), now, from-to)
	}
}

func longestPeriod(ps []Policy) time.Duration {
	var longest time.Duration
	for _, p := range ps {
		longest = max(longest, p.Period)
	}
	return longest
}

func storeEvent(events []scaleEvent, longest time.Duration, now time.Time, change int32) []scaleEvent {
	cutoff := now.Add(-longest)
	old := -1
	for i := range events {
		if events[i].at.Before(cutoff) {
			events[i].outdated = true
		}
		if events[i].outdated {
			old = i
		}
	}
	e := scaleEvent{change: change, at: now}
	if old >= 0 {
		events[old] = e
		return events
	}
	return append(events, e)
}
