package serving

// The queue rules of the calibrated mode: when a queue asks for pods,
// and when it keeps the ready ones.

// queueOutlasts says pods asked for the queue now could serve it: with
// the calibrated forecast, a queue the ready pods drain before a start-up
// has passed is gone before any pod asked for it is ready, and asking
// for one only pays for its start-up.
func (e *Estimator) queueOutlasts(ready int, capacity, arrival, backlog float64) bool {
	if e.cal == nil {
		return true
	}
	// An arrival above the ready pods' rate in one interval only is a
	// burst the backlog holds already, not the rate the coming start-up
	// sees; a rate that lasts shows in two intervals running (a pod is
	// asked for one interval later, a small share of a start-up).
	if n := len(e.history); n > 1 {
		arrival = min(arrival, e.history[n-2].arrival)
	}
	spare := float64(ready)*capacity - arrival
	return !(spare > 0) || backlog/spare >= e.startup.Seconds()
}

// waitBehind is how long, in seconds, a request arriving now waits for a
// pod behind backlog tokens that ready pods of capacity tokens per second
// serve. Observe calls it only with a pod rated, so ready ≥ 1, and
// capacity is always above 0.
func waitBehind(ready int, capacity, backlog float64) float64 {
	return backlog / (float64(ready) * capacity)
}
