package ncclinspector

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// The JSON form. The plugin appends one compact object per line to
// <hostname>-pid<pid>.log (inspector.cc, inspectorStateDumpJSON). Two
// layouts exist, and a reader must take both:
//
//   - up to format v4.2, every record is self-contained: "header" (the
//     communicator: id, comm_name, rank, n_ranks, nnodes), "metadata"
//     (inspector_output_format_version, dump_timestamp_us, hostname, pid)
//     and one "coll_perf" or "p2p_perf" body;
//   - from v4.3, each communicator's dump starts with a "dump_stats"
//     marker carrying header and metadata once, and the bodies that follow
//     carry neither; they belong to the last marker of the same file
//     (the plugin's inspector_json_reader.py restores the context so).
//
// Bodies: coll_perf has coll, coll_algo, coll_proto (newer),
// coll_msg_size_bytes, coll_exec_time_us and coll_busbw_gbs; p2p_perf the
// same with the p2p_ prefix and p2p for the operation. A double the plugin
// could not compute is written as the string "nan" (json.cc, jsonDouble).
// "proxy_trace" records (NCCL_INSPECTOR_ENABLE_PROXY=1) carry no
// bandwidth and are skipped.

// maxRecord bounds one record. Records are a few hundred bytes, a verbose
// one a few KB; an object still open past this is taken as garbage rather
// than waited for, so one broken write cannot stall a file forever.
const maxRecord = 1 << 20

// JSONParser parses Inspector JSON records. It keeps the v4.3 dump
// context between calls, so that a file read in pieces (as the Reader
// does) attributes each body to its marker; use one parser per file.
type JSONParser struct {
	header *jsonHeader
	meta   *jsonMeta
}

type jsonHeader struct {
	ID       string `json:"id"`
	CommName string `json:"comm_name"`
	Rank     *int   `json:"rank"`
	NRanks   int    `json:"n_ranks"`
	NNodes   int    `json:"nnodes"`
}

type jsonMeta struct {
	Version  string    `json:"inspector_output_format_version"`
	DumpTime flexFloat `json:"dump_timestamp_us"`
	Hostname string    `json:"hostname"`
}

type jsonRecord struct {
	Header    *jsonHeader     `json:"header"`
	Metadata  *jsonMeta       `json:"metadata"`
	DumpStats json.RawMessage `json:"dump_stats"`
	Coll      *struct {
		Op       string    `json:"coll"`
		Algo     string    `json:"coll_algo"`
		Proto    string    `json:"coll_proto"`
		Size     flexFloat `json:"coll_msg_size_bytes"`
		ExecUS   flexFloat `json:"coll_exec_time_us"`
		BusBWGBs flexFloat `json:"coll_busbw_gbs"`
	} `json:"coll_perf"`
	P2P *struct {
		Op       string    `json:"p2p"`
		Size     flexFloat `json:"p2p_msg_size_bytes"`
		ExecUS   flexFloat `json:"p2p_exec_time_us"`
		BusBWGBs flexFloat `json:"p2p_busbw_gbs"`
	} `json:"p2p_perf"`
}

// flexFloat is a JSON number, or a string holding one ("nan"); ok is false
// when the field is absent, null, or neither.
type flexFloat struct {
	v  float64
	ok bool
}

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = uq
	}
	v, err := parseFloat(s)
	if err != nil {
		return nil // a field of an odd type costs the field, not the record
	}
	f.v, f.ok = v, true
	return nil
}

// ParseJSON parses a complete stream of Inspector JSON records with a fresh
// context; see JSONParser.Parse.
func ParseJSON(data []byte) ([]Sample, int) {
	var p JSONParser
	return p.Parse(data)
}

// Parse reads the records in data: JSON lines, or objects concatenated
// with or without white space between them, pretty-printed or not. It
// returns the samples of the complete records and how many bytes of data
// it consumed: an object still open at the end (the plugin may be mid-
// write) is not consumed, and the caller hands it back with more bytes
// next time. Text that is not an object, and objects that do not decode,
// are skipped up to the next line.
func (p *JSONParser) Parse(data []byte) ([]Sample, int) {
	var out []Sample
	i := 0
	for {
		for i < len(data) && isSpace(data[i]) {
			i++
		}
		if i >= len(data) {
			return out, i
		}
		if data[i] != '{' {
			i = nextLine(data, i)
			continue
		}
		end, state := scanObject(data[i:])
		switch state {
		case objComplete:
			out = p.record(data[i:i+end], out)
			i += end
		case objBroken:
			i += end // restart at the next line that opens an object
		default: // objOpen
			if len(data)-i > maxRecord {
				i = nextLine(data, i)
				continue
			}
			return out, i
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// nextLine returns the index after the newline at or after i, or len(data).
func nextLine(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(data)
}

type objState int

const (
	objOpen objState = iota
	objComplete
	objBroken
)

// scanObject finds the end of the object that data starts with, by
// counting braces outside strings. A newline followed at once by '{' while
// the object is still open means it was cut short and another record
// began (a top-level object starts a line; nested ones in pretty-printed
// output are indented): the cut one is broken and ends at that newline.
func scanObject(data []byte) (int, objState) {
	depth, inString, escaped := 0, false, false
	for i, c := range data {
		if c == '\n' && i+1 < len(data) && data[i+1] == '{' && depth > 0 {
			return i + 1, objBroken
		}
		switch {
		case escaped:
			escaped = false
		case inString:
			switch c {
			case '\\':
				escaped = true
			case '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1, objComplete
			}
		}
	}
	return len(data), objOpen
}

// record decodes one object and appends its sample, if it has one.
func (p *JSONParser) record(obj []byte, out []Sample) []Sample {
	var r jsonRecord
	if err := json.Unmarshal(obj, &r); err != nil {
		return out
	}
	if r.DumpStats != nil {
		// A v4.3 marker starts a new context; one without header and
		// metadata leaves none rather than the previous communicator's.
		p.header, p.meta = r.Header, r.Metadata
		return out
	}
	h, m := r.Header, r.Metadata
	if h == nil || m == nil {
		if r.Header != nil || r.Metadata != nil {
			return out // half a context is no context
		}
		h, m = p.header, p.meta
	}
	if h == nil || m == nil {
		return out // an orphan body: whose it is cannot be known
	}
	s := Sample{
		Node:         m.Hostname,
		GPU:          -1,
		Communicator: h.CommName,
		CommID:       h.ID,
		NRanks:       max(h.NRanks, 0),
		NNodes:       max(h.NNodes, 0),
		Rank:         -1,
	}
	if s.Communicator == "" || s.Communicator == "unknown" {
		s.Communicator = h.ID
	}
	if h.Rank != nil && *h.Rank >= 0 {
		s.Rank = *h.Rank
	}
	if m.DumpTime.ok && finite(m.DumpTime.v) && m.DumpTime.v > 0 && m.DumpTime.v < 1<<62 {
		s.Time = time.UnixMicro(int64(m.DumpTime.v))
	}
	var size, execUS, busbw flexFloat
	switch {
	case r.Coll != nil:
		s.Collective, size, execUS, busbw = r.Coll.Op, r.Coll.Size, r.Coll.ExecUS, r.Coll.BusBWGBs
		if r.Coll.Algo != "" || r.Coll.Proto != "" {
			s.AlgoProto = r.Coll.Algo + "_" + r.Coll.Proto // as the Prometheus label joins them
		}
	case r.P2P != nil:
		s.Collective, s.P2P, size, execUS, busbw = r.P2P.Op, true, r.P2P.Size, r.P2P.ExecUS, r.P2P.BusBWGBs
	default:
		return out
	}
	if size.ok && finite(size.v) && size.v >= 0 && size.v < 1<<63 {
		s.MessageBytes = uint64(size.v)
		s.MessageSize = sizeBucket(s.MessageBytes)
	}
	if execUS.ok && finite(execUS.v) && execUS.v >= 0 {
		s.ExecTime, s.HasExecTime = execUS.v/1e6, true
	}
	if busbw.ok && finite(busbw.v) && busbw.v > 0 {
		s.BusBandwidth, s.HasBusBandwidth = busbw.v*gbsToBytes, true
	}
	return append(out, s)
}
