// Package breaker stops remediation when too many nodes are acted on at
// once: a driver rollout that makes every node report XID 79 must not
// drain the cluster. Once open it stays open until a person resets it.
package breaker

import (
	"fmt"
	"math"
	"time"
)

// Breaker counts the distinct nodes acted on within a sliding window.
type Breaker struct {
	MaxShare float64       // of the fleet; 0 disables the share limit
	MaxNodes int           // 0 disables the count limit
	Window   time.Duration // how far back acted-on nodes count

	acted  map[string]time.Time // node → last time it was acted on
	open   bool
	reason string
	since  time.Time
}

// Limit is the number of nodes that may be acted on within the window,
// for a fleet of the given size: the smaller of MaxNodes and
// MaxShare×fleet, and at least 1 so that one broken node is always handled.
func (b *Breaker) Limit(fleet int) int {
	limit := math.MaxInt
	if b.MaxNodes > 0 {
		limit = b.MaxNodes
	}
	if b.MaxShare > 0 {
		limit = min(limit, int(math.Floor(b.MaxShare*float64(fleet)+1e-9)))
	}
	return max(limit, 1)
}

// Allow says whether node may be acted on at now, in a fleet of fleet
// nodes. A node already acted on within the window is always allowed (it
// adds nothing); a new one that would exceed the limit opens the breaker.
func (b *Breaker) Allow(node string, now time.Time, fleet int) bool {
	if b.open {
		return false
	}
	b.expire(now)
	if _, ok := b.acted[node]; ok {
		return true
	}
	if limit := b.Limit(fleet); len(b.acted)+1 > limit {
		b.open, b.since = true, now
		b.reason = fmt.Sprintf("%d nodes acted on within %v would exceed the limit of %d (of %d GPU nodes)", len(b.acted)+1, b.Window, limit, fleet)
		return false
	}
	return true
}

// Record notes that node was acted on at now.
func (b *Breaker) Record(node string, now time.Time) {
	if b.acted == nil {
		b.acted = map[string]time.Time{}
	}
	b.acted[node] = now
}

func (b *Breaker) expire(now time.Time) {
	for n, t := range b.acted {
		if now.Sub(t) >= b.Window {
			delete(b.acted, n)
		}
	}
}

// Open reports whether the breaker is open, why, and since when.
func (b *Breaker) Open() (bool, string, time.Time) { return b.open, b.reason, b.since }

// Trip opens the breaker from a persisted state (a restart does not close it).
func (b *Breaker) Trip(reason string, since time.Time) {
	b.open, b.reason, b.since = true, reason, since
}

// Reset closes the breaker and forgets the nodes acted on: a person has
// looked at what happened.
func (b *Breaker) Reset() {
	b.open, b.reason, b.since = false, "", time.Time{}
	b.acted = nil
}

// Acted returns the nodes acted on within the window at now, with when:
// what a replica taking over needs to go on counting.
func (b *Breaker) Acted(now time.Time) map[string]time.Time {
	b.expire(now)
	out := make(map[string]time.Time, len(b.acted))
	for n, t := range b.acted {
		out[n] = t
	}
	return out
}

// Merge adds nodes acted on by another replica (a previous leader), keeping
// the later time of each.
func (b *Breaker) Merge(acted map[string]time.Time) {
	for n, t := range acted {
		if b.acted == nil {
			b.acted = map[string]time.Time{}
		}
		if t.After(b.acted[n]) {
			b.acted[n] = t
		}
	}
}
