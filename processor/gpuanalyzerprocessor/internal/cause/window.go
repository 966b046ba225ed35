package cause

// history is one source's recent readings, oldest first: the first is the
// latest at or before the window's start, so that the newest against the
// first spans the window once it has filled.
type history[T any] struct {
	t []int64
	v []T
}

// add appends a reading at t (ns); one not newer than the last is dropped.
// reset says the counters went back (a restarted pod, a reloaded driver):
// the readings before it are forgotten.
func (h *history[T]) add(t int64, v T, window int64, reset func(old, cur *T) bool) {
	if n := len(h.t); n > 0 {
		if t <= h.t[n-1] {
			return
		}
		if reset(&h.v[n-1], &v) {
			h.t, h.v = h.t[:0], h.v[:0]
		}
	}
	h.t, h.v = append(h.t, t), append(h.v, v)
	drop := 0
	for drop+1 < len(h.t) && h.t[drop+1] <= t-window {
		drop++
	}
	if drop > 0 {
		h.t = append(h.t[:0], h.t[drop:]...)
		h.v = append(h.v[:0], h.v[drop:]...)
	}
}

// span is the first and newest readings and the seconds between them; ok
// is false with fewer than two readings or a newest older than maxAge at
// now.
func (h *history[T]) span(now, maxAge int64) (first, last *T, secs float64, ok bool) {
	n := len(h.t)
	if n < 2 || now-h.t[n-1] > maxAge {
		return nil, nil, 0, false
	}
	return &h.v[0], &h.v[n-1], float64(h.t[n-1]-h.t[0]) / 1e9, true
}

// latest is the newest reading, if not older than maxAge at now.
func (h *history[T]) latest(now, maxAge int64) (*T, bool) {
	n := len(h.t)
	if n == 0 || now-h.t[n-1] > maxAge {
		return nil, false
	}
	return &h.v[n-1], true
}

func (h *history[T]) lastTime() int64 {
	if len(h.t) == 0 {
		return 0
	}
	return h.t[len(h.t)-1]
}

// stalls is the share of the span each resource's tasks stalled (some).
func stalls(a, b *Pressure, secs float64) Stalls {
	var s Stalls
	for r := range NumResources {
		if a.Has[r] && b.Has[r] && secs > 0 {
			s.Some[r], s.Has[r] = clamp01((b.Some[r]-a.Some[r])/secs), true
		}
	}
	return s
}

func clamp01(x float64) float64 { return max(0, min(1, x)) }

// pressureReset: a total that went back.
func pressureReset(a, b *Pressure) bool {
	for r := range NumResources {
		if a.Has[r] && b.Has[r] && b.Some[r] < a.Some[r] {
			return true
		}
	}
	return false
}
