package simulated

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// recording is a trace loaded for replay in real time.
type recording struct {
	devices []*gpu.Device
	index   map[string]int // uuid -> devices index
	// rows holds every row, in time order, as offsets from the first.
	rows     []recorded
	duration time.Duration // one loop, including one sampling interval at the end
}

type recorded struct {
	at     time.Duration
	device int
	values dcgmfield.Values
}

// loadRecording reads a trace file (the analyzer replay contract's format).
func loadRecording(path string) (*recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr, err := trace.NewReader(f, path)
	if err != nil {
		return nil, err
	}
	rec := &recording{index: map[string]int{}}
	var first, last, prevBatch float64
	var interval float64
	for n := 0; ; n++ {
		batch, err := tr.NextBatch()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		t := batch[0].Time
		if n == 0 {
			first = t
		} else if d := t - prevBatch; interval == 0 || d < interval {
			interval = d
		}
		prevBatch, last = t, t
		for i := range batch {
			r := &batch[i]
			idx, ok := rec.index[r.UUID]
			if !ok {
				idx = len(rec.devices)
				rec.index[r.UUID] = idx
				d := &gpu.Device{
					UUID: r.UUID, Index: r.GPU, Model: r.Model, Host: r.Host,
					Pod: gpu.Pod{Namespace: r.Namespace, Name: r.Pod, Container: r.Container, Job: r.Job},
				}
				// A trace names no vendor; AMD SMI's model names say it.
				if gpu.IsAMDModel(r.Model) {
					d.Vendor = gpu.VendorAMD
				}
				rec.devices = append(rec.devices, d)
			}
			rec.rows = append(rec.rows, recorded{at: seconds(t - first), device: idx, values: r.Values})
		}
	}
	if len(rec.rows) == 0 {
		return nil, fmt.Errorf("%s: the trace has no rows", path)
	}
	if interval == 0 {
		interval = 1
	}
	rec.duration = seconds(last - first + interval)
	return rec, nil
}

func seconds(s float64) time.Duration { return time.Duration(math.Round(s * 1e9)) }

// sampleAt returns each device's latest row at or before the replay time,
// leaving out rows older than maxAge: a trace sampled every 5 s and
// scraped every second shows each GPU every fifth scrape, never a repeat.
// Each loop through the trace is a new epoch, so counters restart cleanly.
func (rec *recording) sampleAt(elapsed time.Duration, now time.Time, maxAge time.Duration) []gpu.Sample {
	loop := elapsed / rec.duration
	at := elapsed - loop*rec.duration
	// The first row after `at`; everything before it has happened.
	end := sort.Search(len(rec.rows), func(i int) bool { return rec.rows[i].at > at })
	seen := make(map[int]bool, len(rec.devices))
	var out []gpu.Sample
	for i := end - 1; i >= 0; i-- {
		r := &rec.rows[i]
		if at-r.at >= maxAge {
			break
		}
		if seen[r.device] {
			continue
		}
		seen[r.device] = true
		s := gpu.Sample{Device: rec.devices[r.device], Time: now, Values: r.values, Epoch: uint64(loop) + 1}
		if code, ok := r.values.Get(dcgmfield.XIDErrors); ok && code > 0 {
			s.XIDs = []uint32{uint32(code)}
		}
		out = append(out, s)
	}
	// Keep the trace's device order, as a receiver would.
	sort.Slice(out, func(i, j int) bool {
		return rec.index[out[i].Device.UUID] < rec.index[out[j].Device.UUID]
	})
	return out
}
