package serving

import (
	"math"
	"time"
)

// The calibrated forecast. Pods asked for now serve only a start-up from
// now, and a pod let go now cannot be back before a start-up has passed.
// Each of a few simple forecasters (the need now, the peak of the last
// start-up, the mean of the last start-up, and the daily profile once a
// day was seen) predicts a base, and the error of that base against the
// need a start-up later is kept for each, both as a ratio and as a
// difference. The upper Attainment quantile of a forecaster's errors
// applied to its base is a provision that would have covered the need a
// start-up ahead that share of the time (split conformal prediction, the
// recent past as the calibration set). Every forecaster is calibrated to
// the same share, so the one whose provision was smallest on average over
// the calibration window is used: a forecaster earns its place only by its
// measured errors: where the profile misleads (a step, noise), its
// quantile grows, and the need now, the reactive signal, wins once that
// makes its provision the larger. The
// replicas asked for are the largest provision of the last start-up (a pod
// let go cannot be back sooner). The start-up and the attainment are the
// user's; the rest is measured.

// Forecaster names, as the estimate reports them.
const (
	ForecastNow      = "now"      // the need of the windows ending now
	ForecastPeak     = "peak"     // the largest need of the last start-up
	ForecastMean     = "mean"     // the mean arrival of the last start-up
	ForecastSeasonal = "seasonal" // the daily profile, levelled to now
)

// calibration is one forecaster's pending forecasts and matured errors.
type calibration struct {
	name    string
	add     bool // errors as the need minus the base (else as their ratio)
	pending []pendingBase
	ratios  []matured
	sorted  []float64
}

type pendingBase struct {
	at   time.Time
	base float64
}

type provisionAt struct {
	at time.Time
	v  float64
}

type matured struct {
	at    time.Time
	base  float64
	ratio float64
}

// calibrated holds the forecasters of one estimator.
type calibrated struct {
	fs []*calibration
}

// forecasters are the calibrated forecasters, each kept in two forms
// (errors as ratios and as differences).
var forecasters = []string{ForecastNow, ForecastPeak, ForecastMean, ForecastSeasonal}

func newCalibrated() *calibrated {
	c := &calibrated{}
	for _, n := range forecasters {
		c.fs = append(c.fs, &calibration{name: n}, &calibration{name: n, add: true})
	}
	return c
}

// observe matures the forecasts a start-up old against the need now,
// forgets errors older than history, and records the bases of this
// evaluation (a base ≤ 0 is not a forecast).
func (c *calibrated) observe(now time.Time, need float64, startup, history time.Duration, bases map[string]float64) {
	for _, f := range c.fs {
		i := 0
		for i < len(f.pending) && now.Sub(f.pending[i].at) >= startup {
			p := f.pending[i]
			r := need / p.base
			if f.add {
				r = need - p.base
			}
			f.ratios = append(f.ratios, matured{now, p.base, r})
			i++
		}
		f.pending = f.pending[i:]
		j := 0
		for j < len(f.ratios) && now.Sub(f.ratios[j].at) > history {
			j++
		}
		f.ratios = f.ratios[j:]
		if b := bases[f.name]; b > 0 && !math.IsInf(b, 0) {
			f.pending = append(f.pending, pendingBase{now, b})
		}
	}
}

// choice is the forecaster in use and what it says.
type choice struct {
	name     string
	base     float64 // its base now
	headroom float64 // its ratios' quantile
	score    float64 // its mean provision over the calibration window
	errors   int
	add      bool
}

// choose returns the calibrated forecaster with the smallest mean
// provision among those with a base now and at least minErrors ratios;
// false when none has.
func (c *calibrated) choose(q float64, bases map[string]float64) (choice, bool) {
	var best choice
	found := false
	for _, f := range c.fs {
		b := bases[f.name]
		if !(b > 0) || len(f.ratios) < minErrors {
			continue
		}
		f.sorted = f.sorted[:0]
		mean := 0.0
		for _, r := range f.ratios {
			f.sorted = append(f.sorted, r.ratio)
			mean += r.base
		}
		mean /= float64(len(f.ratios))
		h := quantile(f.sorted, q)
		ch := choice{name: f.name, base: b, headroom: h, score: mean * h, errors: len(f.ratios), add: f.add}
		if f.add {
			ch.score = mean + h
		}
		if !found || ch.score < best.score {
			best, found = ch, true
		}
	}
	return best, found
}

// calibratedForecast is the provision for the coming start-up: the chosen
// forecaster's base times its ratios' Attainment quantile; before any has
// enough ratios, the peak need of the last start-up times ColdHeadroom.
func (e *Estimator) calibratedForecast(now time.Time, need float64, est *Estimate) float64 {
	p := &e.p
	if e.first.IsZero() {
		e.first = now
	}
	s := e.startup
	peak, work, secs := 0.0, 0.0, 0.0
	for _, h := range e.history {
		if now.Sub(h.at) < s {
			peak = math.Max(peak, h.need)
			work += h.arrival * h.seconds
			secs += h.seconds
		}
	}
	bases := map[string]float64{ForecastNow: need, ForecastPeak: peak}
	if secs > 0 {
		bases[ForecastMean] = work / secs
	}
	if e.day != nil {
		if f, ok := e.day.ratio(now, s); ok && secs > 0 {
			bases[ForecastSeasonal] = f * work / secs
			est.Seasonal = f
		}
	}
	e.cal.observe(now, need, s, p.ErrorHistory, bases)
	est.Need = need
	ch, ok := e.cal.choose(p.Attainment, bases)
	if !ok {
		est.Forecast, est.Headroom, est.Forecaster = peak, max(1, p.ColdHeadroom), ForecastPeak
		return peak * est.Headroom
	}
	est.Forecast, est.Headroom, est.Forecaster, est.Errors = ch.base, ch.headroom, ch.name, ch.errors
	sized := ch.base * ch.headroom
	if ch.add {
		sized = ch.base + ch.headroom
		est.Forecaster += "+"
		if ch.base > 0 {
			est.Headroom = sized / ch.base
		}
	}
	// The hold: a pod let go now cannot serve before a start-up from now,
	// so the replicas asked for are the largest provision of the last
	// start-up; each provision covers the need a start-up after it was
	// made, so the pods ready at any time cover that time's need with the
	// attainment's share.
	e.provisions = append(e.provisions, provisionAt{now, sized})
	for len(e.provisions) > 1 && now.Sub(e.provisions[0].at) >= s {
		e.provisions = e.provisions[1:]
	}
	for _, v := range e.provisions {
		sized = max(sized, v.v)
	}
	if p.BurstCap > 0 {
		lb := max(p.Lookback, s)
		work, secs := 0.0, 0.0
		for _, h := range e.history {
			if now.Sub(h.at) < lb {
				work += h.arrival * h.seconds
				secs += h.seconds
			}
		}
		if secs > 0 {
			sized = min(sized, p.BurstCap*work/secs*max(1, est.Seasonal))
		}
	}
	return sized
}
