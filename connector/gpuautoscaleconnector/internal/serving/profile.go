package serving

import (
	"math"
	"time"
)

// profile is the work arriving by time of day: the mean arrival of each
// quarter hour, each day's weighing half as much as the next. It shapes
// the forecast once a whole day has been seen, so that a morning ramp is
// provisioned a start-up before it comes.
type profile struct {
	bins  [binsPerDay]bin
	first time.Time
}

const (
	binLength  = 15 * time.Minute
	binsPerDay = int(24 * time.Hour / binLength)
)

type bin struct {
	mean float64 // over the days before today
	day  int64   // the day the current sums are of
	sum  float64 // tokens arriving today in this bin
	secs float64
	seen bool
}

func binOf(t time.Time) (int, int64) {
	s := t.Unix()
	day := s / 86400
	return int((s % 86400) / int64(binLength/time.Second)), day
}

// add records seconds of arrival at t.
func (p *profile) add(t time.Time, arrival, seconds float64) {
	if p.first.IsZero() {
		p.first = t
	}
	i, day := binOf(t)
	b := &p.bins[i]
	if b.day != day {
		b.close()
		b.day = day
	}
	b.sum += arrival * seconds
	b.secs += seconds
}

// close folds a finished day's mean into the bin.
func (b *bin) close() {
	if b.secs == 0 {
		return
	}
	m := b.sum / b.secs
	if b.seen {
		b.mean = 0.5*b.mean + 0.5*m
	} else {
		b.mean, b.seen = m, true
	}
	b.sum, b.secs = 0, 0
}

// level is the bin's mean over the past days, and whether there is one.
func (p *profile) level(t time.Time) (float64, bool) {
	i, day := binOf(t)
	b := &p.bins[i]
	if b.seen {
		return b.mean, true
	}
	if b.day != day && b.secs > 0 {
		return b.sum / b.secs, true
	}
	return 0, false
}

// factor is how much higher the profile's peak within the horizon ahead
// is than its peak over the lookback behind: the forecast, a peak over the
// lookback, is raised by that much, never lowered. 1 until a day is seen.
func (p *profile) factor(now time.Time, lookback, horizon time.Duration) float64 {
	if p.first.IsZero() || now.Sub(p.first) < 24*time.Hour {
		return 1
	}
	peak := func(from, to time.Time) (float64, bool) {
		m, found := 0.0, false
		for t := from; !t.After(to); t = t.Add(binLength) {
			if v, ok := p.level(t); ok {
				m, found = math.Max(m, v), true
			}
		}
		return m, found
	}
	behind, ok1 := peak(now.Add(-lookback), now)
	ahead, ok2 := peak(now, now.Add(horizon))
	if !ok1 || !ok2 || behind <= 0 {
		return 1
	}
	return math.Min(4, math.Max(1, ahead/behind))
}

// ratio is the profile's peak level within the horizon ahead over its
// mean level within the horizon behind: how much the day says the coming
// start-up's peak exceeds the last start-up's mean. False until a day is
// seen or where the profile has no level.
func (p *profile) ratio(now time.Time, horizon time.Duration) (float64, bool) {
	if p.first.IsZero() || now.Sub(p.first) < 24*time.Hour {
		return 0, false
	}
	behind, n := 0.0, 0
	for t := now.Add(-horizon); !t.After(now); t = t.Add(binLength) {
		if v, ok := p.level(t); ok {
			behind += v
			n++
		}
	}
	ahead, found := 0.0, false
	for t := now; !t.After(now.Add(horizon)); t = t.Add(binLength) {
		if v, ok := p.level(t); ok {
			ahead, found = math.Max(ahead, v), true
		}
	}
	if n == 0 || !found || behind <= 0 {
		return 0, false
	}
	return ahead / (behind / float64(n)), true
}
