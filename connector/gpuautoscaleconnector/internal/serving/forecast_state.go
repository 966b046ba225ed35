package serving

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
)

// What a restart keeps of the calibrated forecast: each forecaster's
// matured errors (with the base each was made from, which its score
// averages) and the provisions of the last start-up, which the hold takes
// the largest of. Without them a restarted estimator is cold for a
// start-up plus minErrors evaluations and sizes by the peak times the
// cold headroom. The errors are saved as columns, each time as the
// milliseconds since the one before (the first since 1970) and the values
// at float32's seven digits, far finer than a quantile of them needs: a
// day of 15 s evaluations is 5,760 errors for each of eight forms.

type savedCalibration struct {
	Name   string    `json:"f"`
	Add    bool      `json:"add,omitempty"`
	At     []int64   `json:"t"` // milliseconds since the previous (the first: since 1970)
	Base   []float32 `json:"b"`
	Errors []float32 `json:"e"`
}

// maxMillis bounds a saved time (about 285,000 years after 1970), so
// that adding up the steps cannot overflow.
const maxMillis = 1 << 53

type savedProvision struct {
	At time.Time `json:"t"`
	V  float64   `json:"v"`
}

// saveCalibration adds the calibrated forecast's state to s; nothing
// without one.
func (e *Estimator) saveCalibration(s *savedState) {
	if e.cal == nil {
		return
	}
	for _, f := range e.cal.fs {
		c := savedCalibration{Name: f.name, Add: f.add, At: []int64{}, Base: []float32{}, Errors: []float32{}}
		last := int64(0)
		for _, m := range f.ratios {
			b, r := float32(m.base), float32(m.ratio)
			if !(b > 0) || math.IsInf(float64(b), 0) || math.IsInf(float64(r), 0) {
				continue // beyond float32's range: one error fewer, not a state refused
			}
			ms := m.at.UnixMilli()
			c.At = append(c.At, ms-last)
			last = ms
			c.Base = append(c.Base, b)
			c.Errors = append(c.Errors, r)
		}
		s.Calibration = append(s.Calibration, c)
	}
	for _, p := range e.provisions {
		s.Provisions = append(s.Provisions, savedProvision{p.at, p.v})
	}
}

// checkCalibration refuses saved calibrations no estimator makes: an
// unknown or repeated forecaster, columns of different lengths, a base
// that is not positive, an error that is not finite or a ratio below 0.
func (s *savedState) checkCalibration() error {
	seen := map[string]bool{}
	for i, c := range s.Calibration {
		key := fmt.Sprintf("%s/%v", c.Name, c.Add)
		switch {
		case !slices.Contains(forecasters, c.Name):
			return fmt.Errorf("calibration[%d] names forecaster %q, which this collector does not have", i, c.Name)
		case seen[key]:
			return fmt.Errorf("calibration[%d] repeats forecaster %q", i, c.Name)
		case len(c.At) != len(c.Base) || len(c.At) != len(c.Errors):
			return fmt.Errorf("calibration[%d] has %d times, %d bases and %d errors", i, len(c.At), len(c.Base), len(c.Errors))
		case len(c.At) > maxSaved:
			return fmt.Errorf("calibration[%d] has more errors than an estimator keeps", i)
		}
		seen[key] = true
		ms := int64(0)
		for j := range c.At {
			b, r := float64(c.Base[j]), float64(c.Errors[j])
			if c.At[j] >= 0 && ms <= maxMillis-c.At[j] {
				ms += c.At[j]
			} else {
				ms = -1
			}
			if ms < 0 || !(b > 0) || math.IsInf(b, 0) || math.IsNaN(r) || math.IsInf(r, 0) || (!c.Add && r < 0) {
				return fmt.Errorf("calibration[%d] (%s) entry %d: time step %d ms, base %v, error %v", i, c.Name, j, c.At[j], b, r)
			}
		}
	}
	if len(s.Provisions) > maxSaved {
		return errors.New("more provisions than an estimator keeps")
	}
	for i, p := range s.Provisions {
		if !(p.V >= 0) || math.IsInf(p.V, 0) {
			return fmt.Errorf("provisions[%d] is %v", i, p.V)
		}
	}
	return nil
}

// restoreCalibration replaces the calibrated forecast's errors and
// provisions with the checked saved ones. Forecasts pending at the save
// are not kept (they would mature against a need measured across the
// restart's gap).
func (e *Estimator) restoreCalibration(s *savedState) {
	if e.cal == nil {
		return
	}
	e.cal = newCalibrated()
	for _, c := range s.Calibration {
		for _, f := range e.cal.fs {
			if f.name != c.Name || f.add != c.Add {
				continue
			}
			ms := int64(0)
			for j := range c.At {
				ms += c.At[j]
				f.ratios = append(f.ratios, matured{time.UnixMilli(ms), float64(c.Base[j]), float64(c.Errors[j])})
			}
		}
	}
	e.provisions = e.provisions[:0]
	for _, p := range s.Provisions {
		e.provisions = append(e.provisions, provisionAt{p.At, p.V})
	}
}
