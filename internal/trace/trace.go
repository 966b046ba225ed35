// Package trace reads recorded GPU telemetry in the CSV format of the
// analyzer's replay contract: one header row, then one row per GPU per
// timestamp, in non-decreasing timestamp order. Rows that share a timestamp
// form a batch.
//
// Every error names the file, line and column, like a compiler:
// "train.csv:12:57: DCGM_FI_DEV_GPU_UTIL: malformed number "9x"".
package trace

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
)

// Row is one GPU at one timestamp.
type Row struct {
	// Line is the row's line in the file.
	Line int
	// Time is Unix seconds; TimeText is the cell as written.
	Time     float64
	TimeText string
	UUID     string
	Host     string
	// GPU is the GPU's index; HasGPU says whether the row gave one.
	GPU    int
	HasGPU bool
	Model  string
	// Kubernetes identity.
	Namespace, Pod, Container, Job, Deployment string
	// Values holds the DCGM fields the row reports; a blank cell is absent.
	Values dcgmfield.Values
	// StepSeconds is the rank's compute time per training step, if given.
	StepSeconds float64
	HasStep     bool
	// Node is the row's node evidence (node.go); nil without any.
	Node *Node
}

// Error is a problem at a place in a trace.
type Error struct {
	File         string
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
}

type column int

const (
	colField column = iota
	colTimestamp
	colUUID
	colHost
	colGPU
	colModel
	colNamespace
	colPod
	colContainer
	colJob
	colDeployment
	colStep
)

var identity = map[string]column{
	"timestamp": colTimestamp, "uuid": colUUID, "host": colHost, "gpu": colGPU, "model": colModel,
	"namespace": colNamespace, "pod": colPod, "container": colContainer, "job": colJob,
	"deployment": colDeployment, "step_seconds": colStep,
}

// Reader reads a trace batch by batch.
type Reader struct {
	name   string
	csv    *csv.Reader
	kinds  []column
	fields []dcgmfield.Field
	names  []string
	next   *Row  // read ahead: the first row of the next batch
	err    error // a read-ahead error, returned after the rows before it
	last   float64
	seen   map[string]int // uuid -> line, within the current timestamp
	eof    bool
	// cols are the current row's cells' columns; pods and nics where
	// each pod's and NIC's cells were first given at the current
	// timestamp (node.go).
	cols       []int
	pods, nics map[string]nodeSeen
}

// NewReader reads the header of the trace named name from r.
func NewReader(r io.Reader, name string) (*Reader, error) {
	c := csv.NewReader(r)
	c.Comment = '#'
	c.FieldsPerRecord = 0
	c.ReuseRecord = true
	tr := &Reader{name: name, csv: c, last: math.Inf(-1), seen: map[string]int{}}
	header, err := c.Read()
	if err == io.EOF {
		return nil, &Error{File: name, Line: 1, Column: 1, Msg: "empty trace: no header row"}
	}
	if err != nil {
		return nil, tr.csvError(err)
	}
	tr.kinds = make([]column, len(header))
	tr.fields = make([]dcgmfield.Field, len(header))
	tr.names = make([]string, len(header))
	tr.cols = make([]int, len(header))
	has := map[string]int{}
	for i, h := range header {
		line, col := c.FieldPos(i)
		name := strings.TrimSpace(h)
		if prev, dup := has[name]; dup {
			return nil, &Error{File: tr.name, Line: line, Column: col, Msg: fmt.Sprintf("duplicate column %q (first in column %d)", name, prev)}
		}
		has[name] = col
		tr.names[i] = name
		if k, ok := identity[name]; ok {
			tr.kinds[i] = k
			continue
		}
		if k, ok := nodeColumns[name]; ok {
			tr.kinds[i] = k
			continue
		}
		f, ok := dcgmfield.ByName(name)
		if !ok {
			return nil, &Error{File: tr.name, Line: line, Column: col, Msg: fmt.Sprintf("unknown column %q: want an identity column, step_seconds, a node evidence column (pci_bus_id, pod_*, nic_*), or a DCGM field name such as DCGM_FI_DEV_GPU_UTIL", name)}
		}
		tr.kinds[i], tr.fields[i] = colField, f
	}
	for _, req := range []string{"timestamp", "uuid"} {
		if _, ok := has[req]; !ok {
			return nil, &Error{File: tr.name, Line: 1, Column: 1, Msg: fmt.Sprintf("missing required column %q", req)}
		}
	}
	return tr, nil
}

// NextBatch returns the rows of the next timestamp, or io.EOF after the last.
// A bad row is reported after the batches before it.
func (tr *Reader) NextBatch() ([]Row, error) {
	if tr.err != nil {
		return nil, tr.err
	}
	var batch []Row
	if tr.next != nil {
		batch = append(batch, *tr.next)
		tr.next = nil
	}
	for !tr.eof {
		row, err := tr.readRow()
		if errors.Is(err, io.EOF) {
			tr.eof = true
			break
		}
		if err != nil {
			if len(batch) > 0 {
				// The batch so far is complete: nothing after a bad row can
				// join it. Hand it out, and the error next time.
				tr.err = err
				return batch, nil
			}
			return nil, err
		}
		if len(batch) > 0 && row.Time != batch[0].Time {
			tr.next = &row
			break
		}
		batch = append(batch, row)
	}
	if len(batch) == 0 {
		return nil, io.EOF
	}
	return batch, nil
}

func (tr *Reader) readRow() (Row, error) {
	rec, err := tr.csv.Read()
	if err != nil {
		if err == io.EOF {
			return Row{}, err
		}
		return Row{}, tr.csvError(err)
	}
	line, _ := tr.csv.FieldPos(0)
	row := Row{Line: line}
	var tsCol, uuidCol int
	for i, cell := range rec {
		_, col := tr.csv.FieldPos(i)
		tr.cols[i] = col
		cell = strings.TrimSpace(cell)
		fail := func(format string, args ...any) error {
			return &Error{File: tr.name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
		}
		switch tr.kinds[i] {
		case colTimestamp:
			tsCol = col
			if cell == "" {
				return Row{}, fail("timestamp is blank")
			}
			t, err := strconv.ParseFloat(cell, 64)
			if err != nil || math.IsNaN(t) || math.IsInf(t, 0) {
				return Row{}, fail("timestamp: want Unix seconds, got %q", cell)
			}
			row.Time, row.TimeText = t, cell
		case colUUID:
			uuidCol = col
			row.UUID = cell
		case colHost:
			row.Host = cell
		case colGPU:
			if cell == "" {
				continue
			}
			n, err := strconv.Atoi(cell)
			if err != nil || n < 0 {
				return Row{}, fail("gpu: want a GPU index, got %q", cell)
			}
			row.GPU, row.HasGPU = n, true
		case colModel:
			row.Model = cell
		case colNamespace:
			row.Namespace = cell
		case colPod:
			row.Pod = cell
		case colContainer:
			row.Container = cell
		case colJob:
			row.Job = cell
		case colDeployment:
			row.Deployment = cell
		case colStep:
			if cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return Row{}, fail("step_seconds: malformed number %q", cell)
			}
			row.StepSeconds, row.HasStep = v, true
		case colField:
			if cell == "" {
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				return Row{}, fail("%s: malformed number %q", tr.fields[i], cell)
			}
			row.Values.Set(tr.fields[i], v)
		default:
			if err := nodeCell(&row, tr.kinds[i], tr.names[i], cell, fail); err != nil {
				return Row{}, err
			}
		}
	}
	if row.UUID == "" {
		return Row{}, &Error{File: tr.name, Line: line, Column: uuidCol, Msg: "uuid is blank"}
	}
	switch {
	case row.Time < tr.last:
		return Row{}, &Error{File: tr.name, Line: line, Column: tsCol,
			Msg: fmt.Sprintf("timestamp %s is earlier than the previous row's; rows must be in non-decreasing time order", row.TimeText)}
	case row.Time > tr.last:
		clear(tr.seen)
		clear(tr.pods)
		clear(tr.nics)
		tr.last = row.Time
	}
	if prev, dup := tr.seen[row.UUID]; dup {
		return Row{}, &Error{File: tr.name, Line: line, Column: uuidCol,
			Msg: fmt.Sprintf("second row for %s at timestamp %s (first on line %d)", row.UUID, row.TimeText, prev)}
	}
	tr.seen[row.UUID] = line
	if err := tr.checkNode(&row); err != nil {
		return Row{}, err
	}
	return row, nil
}

func (tr *Reader) csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		msg := pe.Err.Error()
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			msg = "wrong number of cells: every row needs one per header column"
		}
		return &Error{File: tr.name, Line: pe.Line, Column: max(pe.Column, 1), Msg: msg}
	}
	return fmt.Errorf("%s: %w", tr.name, err)
}
