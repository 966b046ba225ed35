package whatif

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// Demand is a demand series: the work arriving per second, in pods (one
// ready pod serves 1.0 per second at most), from each row's time until the
// next row's.
type Demand struct {
	Times []time.Duration // from 0, increasing
	Pods  []float64
	// End is when the series ends: the last row lasts as long as the step
	// before it.
	End time.Duration
}

// At is the demand in effect at t: the latest row at or before t.
func (d *Demand) At(t time.Duration, i *int) float64 {
	for *i+1 < len(d.Times) && d.Times[*i+1] <= t {
		*i++
	}
	return d.Pods[*i]
}

// Peak is the largest demand of the series.
func (d *Demand) Peak() float64 {
	peak := 0.0
	for _, p := range d.Pods {
		peak = max(peak, p)
	}
	return peak
}

// Scaled returns the series with every demand multiplied by k.
func (d *Demand) Scaled(k float64) *Demand {
	out := &Demand{Times: d.Times, Pods: make([]float64, len(d.Pods)), End: d.End}
	for i, p := range d.Pods {
		out.Pods[i] = p * k
	}
	return out
}

// ReadDemand reads a `t_seconds,demand_pods` CSV; errors say name:line:column.
func ReadDemand(r io.Reader, name string) (*Demand, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 2
	cr.ReuseRecord = true
	fail := func(line, col int, format string, args ...any) error {
		return fmt.Errorf("%s:%d:%d: %s", name, line, col, fmt.Sprintf(format, args...))
	}
	d := &Demand{}
	header := true
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, fail(pe.Line, pe.Column, "%v", pe.Err)
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if header {
			header = false
			for i, want := range []string{"t_seconds", "demand_pods"} {
				if rec[i] != want {
					line, col := cr.FieldPos(i)
					return nil, fail(line, col, "header: want t_seconds,demand_pods, got %q in column %d", rec[i], i+1)
				}
			}
			continue
		}
		line, col := cr.FieldPos(0)
		t, err := strconv.ParseFloat(rec[0], 64)
		if err != nil || math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return nil, fail(line, col, "t_seconds: want a time in seconds, got %q", rec[0])
		}
		at := time.Duration(math.Round(t * float64(time.Second)))
		switch n := len(d.Times); {
		case n == 0 && at != 0:
			return nil, fail(line, col, "t_seconds: the series must start at 0, got %v", rec[0])
		case n > 0 && at <= d.Times[n-1]:
			return nil, fail(line, col, "t_seconds: %v does not increase (previous row %v)", rec[0], d.Times[n-1].Seconds())
		}
		line, col = cr.FieldPos(1)
		p, err := strconv.ParseFloat(rec[1], 64)
		if err != nil || math.IsNaN(p) || math.IsInf(p, 0) || p < 0 {
			return nil, fail(line, col, "demand_pods: want a non-negative number, got %q", rec[1])
		}
		d.Times = append(d.Times, at)
		d.Pods = append(d.Pods, p)
	}
	switch n := len(d.Times); n {
	case 0:
		return nil, fmt.Errorf("%s: no demand rows after the header", name)
	case 1:
		d.End = time.Second
	default:
		d.End = d.Times[n-1] + (d.Times[n-1] - d.Times[n-2])
	}
	return d, nil
}

// Cycled returns a longer series made from d: its rows walked forwards,
// then backwards (so that there is no seam), for length, each multiplied by
// a daily-like cycle 1 − 0.6·cos(2πt/period): a trough of 0.4 at the
// start, a peak of 1.6 half a period later. It keeps d's bursts and adds
// the slow swing of longer production series.
func (d *Demand) Cycled(length, period time.Duration) *Demand {
	step := d.End / time.Duration(len(d.Times))
	if len(d.Times) > 1 {
		step = d.Times[1] - d.Times[0]
	}
	n := len(d.Pods)
	out := &Demand{End: length}
	for i := 0; time.Duration(i)*step < length; i++ {
		at := time.Duration(i) * step
		k := i % (2 * n)
		if k >= n {
			k = 2*n - 1 - k
		}
		swing := 1 - 0.6*math.Cos(2*math.Pi*at.Seconds()/period.Seconds())
		out.Times = append(out.Times, at)
		out.Pods = append(out.Pods, math.Round(d.Pods[k]*swing*1e4)/1e4)
	}
	return out
}
