package trace

import (
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// Batches is a source of batches: a Reader, or a Resampler over one.
type Batches interface {
	// NextBatch returns the rows of the next timestamp, or io.EOF after the
	// last.
	NextBatch() ([]Row, error)
}

// Resampler turns a finely sampled trace into what a collector sampling
// DCGM every interval would have recorded: one batch every interval, the
// first at or after each of t0, t0+interval, t0+2·interval, … (t0 the
// first batch's time); the batches in between are folded into it.
//
// Folding follows what DCGM reports at a coarser watch interval:
//   - The profiling fields (DCGM_FI_PROF_*: SM, DRAM and pipe activity,
//     PCIe and NVLink bytes per second) are the mean of the GPU's rows since
//     its previous kept row: DCGM samples them faster than the watch
//     interval and aggregates the samples to it in its cache (DCGM API
//     reference, dcgmProfWatchFields: "samples will be aggregated to
//     updateFreq intervals"). A plain thinning would report a 2 s sample
//     as if it were a 60 s one.
//   - Every other field is the kept row's own: instantaneous gauges
//     (GPU utilization is NVML's over its own short sample period;
//     temperature, power, clocks, frame buffer) and cumulative counters
//     (ECC totals), whose next value includes what the dropped rows counted.
//   - An XID code in a dropped row goes into the GPU's next kept row, unless
//     that row has one of its own, as dcgm-exporter keeps the last XID.
type Resampler struct {
	src      Batches
	interval float64
	next     float64
	started  bool
	// folded holds, per GPU, what its rows since its last kept row carry
	// forward.
	folded map[string]*fold
}

type fold struct {
	sum [dcgmfield.Count]float64
	n   [dcgmfield.Count]int32
	xid float64
}

// profiling lists the fields averaged over an interval.
var profiling = func() []dcgmfield.Field {
	var fs []dcgmfield.Field
	for _, f := range dcgmfield.All() {
		if f.Info().Profiling {
			fs = append(fs, f)
		}
	}
	return fs
}()

// Resample returns src as sampled every interval seconds. An interval of
// zero or less returns src unchanged.
func Resample(src Batches, interval float64) Batches {
	if interval <= 0 {
		return src
	}
	return &Resampler{src: src, interval: interval, folded: map[string]*fold{}}
}

// NextBatch returns the next batch kept.
func (r *Resampler) NextBatch() ([]Row, error) {
	for {
		batch, err := r.src.NextBatch()
		if err != nil {
			return batch, err
		}
		t := batch[0].Time
		if !r.started {
			r.started, r.next = true, t
		}
		keep := t >= r.next
		for r.next <= t {
			r.next += r.interval
		}
		for i := range batch {
			r.fold(&batch[i], keep)
		}
		if keep {
			return batch, nil
		}
	}
}

// fold adds a row to its GPU's fold and, for a kept row, writes the fold
// into it and starts the next one.
func (r *Resampler) fold(row *Row, keep bool) {
	fd := r.folded[row.UUID]
	if fd == nil {
		fd = &fold{}
		r.folded[row.UUID] = fd
	}
	for _, f := range profiling {
		if v, ok := row.Values.Get(f); ok {
			fd.sum[f] += v
			fd.n[f]++
		}
	}
	code, hasXID := row.Values.Get(dcgmfield.XIDErrors)
	hasXID = hasXID && code > 0
	if !keep {
		if hasXID {
			fd.xid = code
		}
		return
	}
	for _, f := range profiling {
		if fd.n[f] > 0 {
			row.Values.Set(f, fd.sum[f]/float64(fd.n[f]))
		}
	}
	if !hasXID && fd.xid > 0 {
		row.Values.Set(dcgmfield.XIDErrors, fd.xid)
	}
	delete(r.folded, row.UUID)
}
