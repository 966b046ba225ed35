package serving

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// What a restart keeps: what took the estimator hours or days to learn
// (the daily profile, the forecast's matured errors, the calibrated
// forecasters' errors (forecast_state.go), a pod's capacity, the
// longest start-up seen) and the recent past the rules look back on (the
// lookback's intervals, the scale-down delay's wants). Not kept: the pods'
// token counters (the first evaluation after a restart rates them afresh)
// and the forecasts not yet matured (they would be compared with a need
// measured across the restart's gap).

// stateVersion changes when the saved form does: an older form is refused
// and the estimator starts afresh.
const stateVersion = 1

type savedState struct {
	Version  int             `json:"v"`
	Capacity float64         `json:"capacity"`
	Observed float64         `json:"observed"`
	Startup  time.Duration   `json:"startup_ns"`
	First    time.Time       `json:"first"`
	History  []savedInterval `json:"history"`
	Errors   []savedRatio    `json:"errors"`
	Wants    []savedWant     `json:"wants"`
	Profile  *savedProfile   `json:"profile,omitempty"`
	// The calibrated forecast's (forecast_state.go); absent in a state
	// saved before it was kept, which then restores a cold forecast.
	Calibration []savedCalibration `json:"calibration,omitempty"`
	Provisions  []savedProvision   `json:"provisions,omitempty"`
}

type savedInterval struct {
	At      time.Time `json:"t"`
	Seconds float64   `json:"s"`
	Arrival float64   `json:"a"`
	Need    float64   `json:"n"`
}

type savedRatio struct {
	At    time.Time `json:"t"`
	Ratio float64   `json:"r"`
}

type savedWant struct {
	At time.Time `json:"t"`
	N  int       `json:"n"`
}

type savedProfile struct {
	First time.Time  `json:"first"`
	Bins  []savedBin `json:"bins"`
}

type savedBin struct {
	Mean float64 `json:"m"`
	Day  int64   `json:"d"`
	Sum  float64 `json:"s"`
	Secs float64 `json:"c"`
	Seen bool    `json:"seen"`
}

// MarshalState returns what a restart keeps, for a storage extension.
func (e *Estimator) MarshalState() ([]byte, error) {
	s := savedState{Version: stateVersion, Capacity: e.capacity, Observed: e.observed, Startup: e.startup, First: e.first}
	for _, h := range e.history {
		s.History = append(s.History, savedInterval{h.at, h.seconds, h.arrival, h.need})
	}
	for _, r := range e.errors {
		s.Errors = append(s.Errors, savedRatio{r.at, r.ratio})
	}
	for _, w := range e.wants {
		s.Wants = append(s.Wants, savedWant{w.at, w.n})
	}
	if e.day != nil {
		s.Profile = &savedProfile{First: e.day.first, Bins: make([]savedBin, binsPerDay)}
		for i, b := range &e.day.bins {
			s.Profile.Bins[i] = savedBin{b.mean, b.day, b.sum, b.secs, b.seen}
		}
	}
	e.saveCalibration(&s)
	return json.Marshal(s)
}

// RestoreState replaces what a restart keeps with a saved state. A state
// that cannot be read, of another version, or with a value no estimator
// could have produced is refused with an error saying why, and the
// estimator is left as it was.
func (e *Estimator) RestoreState(b []byte) error {
	var s savedState
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("saved serving state unreadable: %w", err)
	}
	if s.Version != stateVersion {
		return fmt.Errorf("saved serving state is of version %d, this collector reads %d", s.Version, stateVersion)
	}
	if err := s.check(); err != nil {
		return fmt.Errorf("saved serving state refused: %w", err)
	}
	e.capacity, e.observed, e.first = s.Capacity, s.Observed, s.First
	e.startup = max(e.p.Startup, s.Startup)
	e.history = e.history[:0]
	for _, h := range s.History {
		e.history = append(e.history, interval{h.At, h.Seconds, h.Arrival, h.Need})
	}
	e.errors = e.errors[:0]
	for _, r := range s.Errors {
		e.errors = append(e.errors, ratioAt{r.At, r.Ratio})
	}
	e.wants = e.wants[:0]
	for _, w := range s.Wants {
		e.wants = append(e.wants, wantAt{w.At, w.N})
	}
	e.pending = e.pending[:0]
	if e.day != nil && s.Profile != nil {
		e.day.first = s.Profile.First
		for i, b := range s.Profile.Bins {
			e.day.bins[i] = bin{b.Mean, b.Day, b.Sum, b.Secs, b.Seen}
		}
	}
	e.restoreCalibration(&s)
	return nil
}

// maxSaved bounds each saved list: a day of 1 s evaluations.
const maxSaved = 86400

func (s *savedState) check() error {
	finite := func(name string, xs ...float64) error {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("%s is %v", name, x)
			}
		}
		return nil
	}
	if err := finite("capacity", s.Capacity, s.Observed); err != nil {
		return err
	}
	if s.Startup < 0 {
		return fmt.Errorf("start-up is %v", s.Startup)
	}
	if len(s.History) > maxSaved || len(s.Errors) > maxSaved || len(s.Wants) > maxSaved {
		return errors.New("more entries than an estimator keeps")
	}
	for i, h := range s.History {
		if err := finite(fmt.Sprintf("history[%d]", i), h.Seconds, h.Arrival, h.Need); err != nil {
			return err
		}
	}
	for i, r := range s.Errors {
		if err := finite(fmt.Sprintf("errors[%d]", i), r.Ratio); err != nil {
			return err
		}
	}
	for i, w := range s.Wants {
		if w.N < 0 {
			return fmt.Errorf("wants[%d] is %d", i, w.N)
		}
	}
	if err := s.checkCalibration(); err != nil {
		return err
	}
	if s.Profile != nil {
		if len(s.Profile.Bins) != binsPerDay {
			return fmt.Errorf("the daily profile has %d bins, want %d", len(s.Profile.Bins), binsPerDay)
		}
		for i, b := range s.Profile.Bins {
			if err := finite(fmt.Sprintf("profile.bins[%d]", i), b.Mean, b.Sum, b.Secs); err != nil {
				return err
			}
		}
	}
	return nil
}
