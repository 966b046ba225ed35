package trace

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// writerIdentity are the identity columns a Writer writes, before the fields.
// A recorder knows no deployment and no step time, so those are left out.
var writerIdentity = []string{"timestamp", "uuid", "host", "gpu", "model", "namespace", "pod", "container", "job"}

// Writer writes a trace that Reader reads back: the identity columns, then
// one column per DCGM field, in DCGM's units, a blank cell where a row has
// no value.
type Writer struct {
	buf    *bufio.Writer
	csv    *csv.Writer
	fields []dcgmfield.Field
	rec    []string
	last   float64
	seen   map[string]bool // uuids at the last timestamp
	rows   int
}

// NewWriter writes the header row to w, with a column for each of fields
// (the DCGM field names dcgm-exporter uses). Nothing reaches w before Flush.
func NewWriter(w io.Writer, fields []dcgmfield.Field) (*Writer, error) {
	buf := bufio.NewWriterSize(w, 1<<16)
	tw := &Writer{buf: buf, csv: csv.NewWriter(buf), fields: fields, seen: map[string]bool{}}
	header := append([]string(nil), writerIdentity...)
	for _, f := range fields {
		header = append(header, f.String())
	}
	tw.rec = make([]string, len(header))
	if err := tw.csv.Write(header); err != nil {
		return nil, err
	}
	return tw, nil
}

// Comment writes text as "# " comment lines, which Reader skips.
func (tw *Writer) Comment(text string) error {
	tw.csv.Flush()
	if err := tw.csv.Error(); err != nil {
		return err
	}
	for line := range strings.SplitSeq(text, "\n") {
		if _, err := fmt.Fprintf(tw.buf, "# %s\n", strings.TrimRight(line, "\r")); err != nil {
			return err
		}
	}
	return nil
}

// Write writes one row. Rows must come in non-decreasing time order, one
// per GPU per timestamp, as Reader requires; the time is written with
// millisecond precision unless TimeText is set.
func (tw *Writer) Write(r *Row) error {
	if r.UUID == "" {
		return fmt.Errorf("trace row at %v has no uuid", r.Time)
	}
	ts := r.TimeText
	if ts == "" {
		ts = strconv.FormatFloat(r.Time, 'f', 3, 64)
	}
	switch {
	case tw.rows > 0 && r.Time < tw.last:
		return fmt.Errorf("trace row for %s at %s is earlier than the previous row's", r.UUID, ts)
	case tw.rows == 0 || r.Time > tw.last:
		clear(tw.seen)
		tw.last = r.Time
	case tw.seen[r.UUID]:
		return fmt.Errorf("second trace row for %s at %s", r.UUID, ts)
	}
	tw.seen[r.UUID] = true
	gpu := ""
	if r.HasGPU {
		gpu = strconv.Itoa(r.GPU)
	}
	n := copy(tw.rec, []string{ts, r.UUID, r.Host, gpu, r.Model, r.Namespace, r.Pod, r.Container, r.Job})
	for i, f := range tw.fields {
		cell := ""
		if v, ok := r.Values.Get(f); ok {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("trace row for %s at %s: %s is %v; leave it out instead", r.UUID, ts, f, v)
			}
			cell = strconv.FormatFloat(v, 'f', -1, 64)
		}
		tw.rec[n+i] = cell
	}
	tw.rows++
	return tw.csv.Write(tw.rec)
}

// Rows is the number of rows written.
func (tw *Writer) Rows() int { return tw.rows }

// Flush writes everything buffered to the underlying writer.
func (tw *Writer) Flush() error {
	tw.csv.Flush()
	if err := tw.csv.Error(); err != nil {
		return err
	}
	return tw.buf.Flush()
}
