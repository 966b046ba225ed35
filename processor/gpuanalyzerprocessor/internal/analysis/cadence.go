package analysis

import (
	"slices"
	"time"
)

// cadence learns a GPU's sampling interval from its own samples: 1 s from
// our receiver, 15 to 60 s from a Prometheus scrape of dcgm-exporter, with
// a scrape's jitter and an occasional missed scrape. It is the median of
// the GPU's last few intervals, so one missed scrape (an interval twice as
// long) or a late one moves it little, and a GPU whose collector changed
// its interval follows within three samples.
type cadence struct {
	recent [5]int64
	// median of recent, kept so that each sample sorts five numbers once.
	median int64
	n      uint8
	next   uint8
}

// gapIntervals is how many of a GPU's own intervals without a sample make a
// gap: time the analyzer did not see. Two allow one missed scrape and its
// jitter; three, a scrape that failed twice.
const gapIntervals = 3

// slowestCadence is the longest sampling interval the analyzer expects
// (dcgm-exporter scraped every 60 s): the cadence of a GPU with no interval
// learnt yet is taken as at most this.
const slowestCadence = int64(60 * time.Second)

func (c *cadence) add(interval int64) {
	if c.n == uint8(len(c.recent)) && c.recent[c.next] == interval {
		// The same interval again, the steady state: the median stands.
		c.next = (c.next + 1) % uint8(len(c.recent))
		return
	}
	c.recent[c.next] = interval
	c.next = (c.next + 1) % uint8(len(c.recent))
	c.n = min(c.n+1, uint8(len(c.recent)))
	var buf [len(cadence{}.recent)]int64
	xs := buf[:c.n]
	copy(xs, c.recent[:c.n])
	slices.Sort(xs)
	c.median = xs[len(xs)/2]
}

// typical is the median of the recent intervals; 0 before the first.
func (c *cadence) typical() int64 { return c.median }

// gapLimit is the longest time between two samples that is not a gap: a
// few of the GPU's own intervals, and never less than the window (so that
// at fine sampling nothing changes: a gap is what leaves the window empty).
// Before any interval is learnt, the next one is taken as the cadence, up
// to slowestCadence.
func (c *cadence) gapLimit(window int64) int64 {
	typical := c.typical()
	if typical == 0 {
		typical = slowestCadence
	}
	return max(window, gapIntervals*typical)
}
