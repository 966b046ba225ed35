package ncclinspector

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

const (
	// maxPromFile bounds what is read of one Prometheus file: the plugin's
	// are a few KB per communicator and GPU.
	maxPromFile = 16 << 20
	// maxJSONRead bounds what one Read takes of one JSON file; the rest
	// is read by the next. A JSON log grows for the life of its process
	// (hundreds of MB for a long job), so first sight of a file reads only
	// its last jsonTail bytes: the gauges want the latest figures, not the
	// history.
	maxJSONRead = 64 << 20
	jsonTail    = 8 << 20
	// headLen is how much of a file's start is kept to tell a file
	// rewritten in place (copytruncate rotation that has grown past the
	// old offset again) from one that only grew.
	headLen = 256
)

// Aggregate is the latest bus bandwidth and execution time Inspector
// reported for one Key, as the receiver emits them as gauges. The two
// figures are chosen apart: each is the one with the newest Time, and
// among the samples of one dump (same Time, several message-size and
// algorithm buckets) the one of the largest message, whose bandwidth is
// the least bound by latency. So they may come from different buckets.
type Aggregate struct {
	Sample
	// BusBandwidthTime and ExecTimeTime are the Times of the samples that
	// gave each figure.
	BusBandwidthTime, ExecTimeTime time.Time
}

// Reader reads Inspector's files from glob patterns and keeps, per Key,
// the latest figures. It reads only files whose size, modification time
// or identity changed since the last Read, and of a JSON log only the
// bytes appended since. It is safe for concurrent use.
type Reader struct {
	patterns []string
	maxAge   time.Duration
	now      func() time.Time

	mu     sync.Mutex
	files  map[string]*fileState
	latest map[Key]*entry
}

type fileState struct {
	info   os.FileInfo
	head   []byte
	prom   bool
	offset int64 // JSON: bytes consumed
	parser *JSONParser
}

// entry is an Aggregate with where each figure came from, so that the
// figures of a file that is gone can be dropped.
type entry struct {
	agg              Aggregate
	bwFile, execFile string
	bwSize, execSize uint64
	hasBW, hasExec   bool
}

// NewReader returns a Reader of the files the patterns (filepath.Match
// syntax) name, such as "/var/lib/node_exporter/nccl_inspector/*.prom".
// A figure older than maxAge (0: no limit) is dropped at the next Read:
// the plugin leaves its files behind when a job ends, and a gauge of a
// finished job is not a current figure.
func NewReader(patterns []string, maxAge time.Duration) *Reader {
	return &Reader{
		patterns: append([]string(nil), patterns...),
		maxAge:   maxAge,
		now:      time.Now,
		files:    map[string]*fileState{},
		latest:   map[Key]*entry{},
	}
}

// Read reads what changed. Its error joins the problems met (a bad
// pattern, a file that could not be read); the files that could be read
// are read all the same, so the error is for logging, not for stopping.
func (r *Reader) Read() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	seen := map[string]bool{}
	var paths []string
	for _, pat := range r.patterns {
		matches, err := filepath.Glob(pat)
		if err != nil {
			errs = append(errs, fmt.Errorf("pattern %q: %w", pat, err))
			continue
		}
		for _, m := range matches {
			if !seen[m] {
				seen[m] = true
				paths = append(paths, m)
			}
		}
	}
	sort.Strings(paths)
	for _, path := range paths {
		if err := r.readFile(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for path := range r.files {
		if !seen[path] {
			delete(r.files, path)
			r.forget(path)
		}
	}
	if r.maxAge > 0 {
		r.expire(r.now().Add(-r.maxAge))
	}
	return errors.Join(errs...)
}

// Latest returns the aggregates, ordered by node, GPU, rank,
// communicator and operation.
func (r *Reader) Latest() []Aggregate {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Aggregate, 0, len(r.latest))
	for _, e := range r.latest {
		out = append(out, e.agg)
	}
	sort.Slice(out, func(i, j int) bool { return keyLess(out[i].Key(), out[j].Key()) })
	return out
}

func keyLess(a, b Key) bool {
	switch {
	case a.Node != b.Node:
		return a.Node < b.Node
	case a.GPU != b.GPU:
		return a.GPU < b.GPU
	case a.Rank != b.Rank:
		return a.Rank < b.Rank
	case a.Communicator != b.Communicator:
		return a.Communicator < b.Communicator
	case a.Collective != b.Collective:
		return a.Collective < b.Collective
	}
	return !a.P2P && b.P2P
}

func (r *Reader) readFile(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return nil
	}
	st := r.files[path]
	if st != nil && os.SameFile(st.info, info) && st.info.Size() == info.Size() && st.info.ModTime().Equal(info.ModTime()) {
		return nil // unchanged since the last read
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, min(int64(headLen), info.Size()))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: %w", path, err)
	}
	head = head[:n]
	if st == nil {
		st = &fileState{prom: isPromFile(path, head)}
		r.files[path] = st
	}
	replaced := st.info != nil && (!os.SameFile(st.info, info) || info.Size() < st.offset ||
		!bytes.HasPrefix(head, st.head[:min(len(st.head), len(head))]))
	first := st.info == nil
	st.info, st.head = info, head
	if st.prom {
		return r.readProm(path, f, info)
	}
	if replaced || st.parser == nil {
		// A new file at the old path, or the first sight of this one:
		// start over, and take only its tail.
		st.offset, st.parser, first = 0, &JSONParser{}, true
	}
	return r.readJSON(path, f, st, info, first)
}

// isPromFile tells the two forms apart: by the plugin's file names, else
// by whether the file starts with a JSON object.
func isPromFile(path string, head []byte) bool {
	switch {
	case strings.HasSuffix(path, ".prom"):
		return true
	case strings.HasSuffix(path, ".log"), strings.HasSuffix(path, ".json"), strings.HasSuffix(path, ".jsonl"):
		return false
	}
	t := bytes.TrimLeft(head, " \t\r\n")
	return len(t) > 0 && t[0] != '{'
}

// readProm reads a whole Prometheus file: each is a snapshot, rewritten in
// place every interval. The plugin writes whole lines, so a last line
// without its newline is a write in progress and is left for the next
// read rather than taken with a cut-off value.
func (r *Reader) readProm(path string, f *os.File, info os.FileInfo) error {
	data, err := io.ReadAll(io.LimitReader(io.NewSectionReader(f, 0, maxPromFile), maxPromFile))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	r.merge(path, ParseProm(data), info.ModTime())
	return nil
}

// readJSON reads what was appended to a JSON log since the last read.
func (r *Reader) readJSON(path string, f *os.File, st *fileState, info os.FileInfo, first bool) error {
	start, skipPartial := st.offset, false
	if first && info.Size() > jsonTail {
		start, skipPartial = info.Size()-jsonTail, true
	}
	data, err := io.ReadAll(io.NewSectionReader(f, start, maxJSONRead))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	skip := 0
	if skipPartial {
		// Mid-file: begin at the first line that opens an object. Bodies
		// before the next v4.3 marker have no context and are dropped by
		// the parser, as they should be.
		i := bytes.Index(data, []byte("\n{"))
		if i < 0 {
			st.offset = start + int64(len(data))
			return nil
		}
		skip = i + 1
	}
	samples, used := st.parser.Parse(data[skip:])
	st.offset = start + int64(skip+used)
	r.merge(path, samples, info.ModTime())
	return nil
}

// merge folds samples into the aggregates; a sample without a Time takes
// the file's modification time, when the plugin last wrote it.
func (r *Reader) merge(path string, samples []Sample, mtime time.Time) {
	for i := range samples {
		s := samples[i]
		if s.Time.IsZero() {
			s.Time = mtime
		}
		k := s.Key()
		e := r.latest[k]
		if e == nil {
			e = &entry{agg: Aggregate{Sample: s}}
			e.agg.BusBandwidth, e.agg.HasBusBandwidth = 0, false
			e.agg.ExecTime, e.agg.HasExecTime = 0, false
			r.latest[k] = e
		}
		if s.HasBusBandwidth && (!e.hasBW || newer(s.Time, s.MessageBytes, e.agg.BusBandwidthTime, e.bwSize)) {
			e.agg.BusBandwidth, e.agg.HasBusBandwidth = s.BusBandwidth, true
			e.agg.BusBandwidthTime, e.bwFile, e.bwSize, e.hasBW = s.Time, path, s.MessageBytes, true
			e.describe(&s)
		}
		if s.HasExecTime && (!e.hasExec || newer(s.Time, s.MessageBytes, e.agg.ExecTimeTime, e.execSize)) {
			e.agg.ExecTime, e.agg.HasExecTime = s.ExecTime, true
			e.agg.ExecTimeTime, e.execFile, e.execSize, e.hasExec = s.Time, path, s.MessageBytes, true
			e.describe(&s)
		}
		if !e.hasBW && !e.hasExec {
			delete(r.latest, k) // a sample with neither figure is nothing to emit
		}
	}
}

// newer ranks a sample against the one held: a later dump wins, and in
// the same dump the larger message; a tie goes to the sample read later.
func newer(t time.Time, size uint64, heldT time.Time, heldSize uint64) bool {
	if !t.Equal(heldT) {
		return t.After(heldT)
	}
	return size >= heldSize
}

// describe takes the descriptive fields of the sample that last gave a
// figure, and the latest time of either figure.
func (e *entry) describe(s *Sample) {
	a := &e.agg
	a.NRanks, a.NNodes, a.CommID = s.NRanks, s.NNodes, s.CommID
	a.MessageSize, a.MessageBytes, a.AlgoProto = s.MessageSize, s.MessageBytes, s.AlgoProto
	if s.Time.After(a.Time) {
		a.Time = s.Time
	}
}

// forget drops the figures a file gave, once the file is gone.
func (r *Reader) forget(path string) {
	for k, e := range r.latest {
		if e.hasBW && e.bwFile == path {
			e.hasBW, e.agg.HasBusBandwidth, e.agg.BusBandwidth = false, false, 0
		}
		if e.hasExec && e.execFile == path {
			e.hasExec, e.agg.HasExecTime, e.agg.ExecTime = false, false, 0
		}
		if !e.hasBW && !e.hasExec {
			delete(r.latest, k)
		}
	}
}

// expire drops the figures older than cutoff.
func (r *Reader) expire(cutoff time.Time) {
	for k, e := range r.latest {
		if e.hasBW && e.agg.BusBandwidthTime.Before(cutoff) {
			e.hasBW, e.agg.HasBusBandwidth, e.agg.BusBandwidth = false, false, 0
		}
		if e.hasExec && e.agg.ExecTimeTime.Before(cutoff) {
			e.hasExec, e.agg.HasExecTime, e.agg.ExecTime = false, false, 0
		}
		if !e.hasBW && !e.hasExec {
			delete(r.latest, k)
		}
	}
}
