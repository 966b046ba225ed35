package ncclinspector

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// The metrics the plugin writes in Prometheus mode (inspector_prom.cc).
// Each value is a mean over the dump interval for one bucket of
// (communicator, operation, message size, algorithm/protocol): the
// geometric mean of the positive bus bandwidths (0 when there was none)
// and the arithmetic mean of the execution times. The opt-in counters of
// NCCL_INSPECTOR_PROM_DUMP_STATS (nccl_collectives_total, ...) are not
// per operation and are skipped.
const (
	metricBusBW      = "nccl_bus_bandwidth_gbs"
	metricExecTime   = "nccl_collective_exec_time_microseconds"
	metricP2PBusBW   = "nccl_p2p_bus_bandwidth_gbs"
	metricP2PExec    = "nccl_p2p_exec_time_microseconds"
	maxLabelsPerLine = 64
)

// PromLine is one parsed line of the text exposition format.
type PromLine struct {
	Name   string
	Labels map[string]string
	Value  float64
	// Timestamp is the optional trailing timestamp in milliseconds; 0 when
	// absent (the plugin writes none).
	Timestamp int64
}

var (
	errNoValue    = errors.New("no value")
	errBadLabels  = errors.New("malformed labels")
	errBadName    = errors.New("malformed metric name")
	errBadNumber  = errors.New("malformed number")
	errTrailing   = errors.New("trailing text after timestamp")
	errTooManyLbl = errors.New("too many labels")
)

// ParsePromLine parses one sample line, `name{l="v",...} value [timestamp]`,
// of the Prometheus text format. Comments and blank lines are not samples:
// the caller skips them (ParseProm does). It is a small parser for what
// Inspector writes rather than github.com/prometheus/common/expfmt, which
// this module does not otherwise depend on; it still reads the format's
// escapes in label values (\\, \", \n) and its NaN/+Inf/-Inf spellings.
func ParsePromLine(line string) (PromLine, error) {
	var pl PromLine
	s := strings.TrimSpace(line)
	i := 0
	for i < len(s) && isNameChar(s[i], i == 0) {
		i++
	}
	if i == 0 {
		return PromLine{}, errBadName
	}
	pl.Name, s = s[:i], s[i:]
	if strings.HasPrefix(s, "{") {
		labels, rest, err := parseLabels(s[1:])
		if err != nil {
			return PromLine{}, err
		}
		pl.Labels, s = labels, rest
	}
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return PromLine{}, errNoValue
	}
	if s != "" && s[0] != ' ' && s[0] != '\t' {
		return PromLine{}, errBadName // e.g. "name-x 1": the name ended early
	}
	v, err := parseFloat(fields[0])
	if err != nil {
		return PromLine{}, err
	}
	pl.Value = v
	if len(fields) > 1 {
		ts, err := strconv.ParseInt(fields[1], 10, 64)
		if err != nil {
			return PromLine{}, errBadNumber
		}
		pl.Timestamp = ts
	}
	if len(fields) > 2 {
		return PromLine{}, errTrailing
	}
	return pl, nil
}

func isNameChar(c byte, first bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == ':':
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}

// parseLabels reads `l="v",...}` (the opening brace already consumed) and
// returns the labels and what follows the closing brace.
func parseLabels(s string) (map[string]string, string, error) {
	labels := map[string]string{}
	for {
		s = strings.TrimLeft(s, " \t")
		if strings.HasPrefix(s, "}") {
			return labels, s[1:], nil
		}
		if len(labels) >= maxLabelsPerLine {
			return nil, "", errTooManyLbl
		}
		i := 0
		for i < len(s) && isNameChar(s[i], i == 0) && s[i] != ':' {
			i++
		}
		if i == 0 {
			return nil, "", errBadLabels
		}
		name := s[:i]
		s = strings.TrimLeft(s[i:], " \t")
		if !strings.HasPrefix(s, "=") {
			return nil, "", errBadLabels
		}
		s = strings.TrimLeft(s[1:], " \t")
		if !strings.HasPrefix(s, `"`) {
			return nil, "", errBadLabels
		}
		value, rest, err := unquote(s[1:])
		if err != nil {
			return nil, "", err
		}
		labels[name] = value
		s = strings.TrimLeft(rest, " \t")
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "}") {
			return nil, "", errBadLabels
		}
	}
}

// unquote reads a label value up to its closing quote, undoing the
// format's three escapes; any other backslash pair is kept as written, as
// the format's own parser does.
func unquote(s string) (string, string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), s[i+1:], nil
		case '\\':
			if i+1 >= len(s) {
				return "", "", errBadLabels
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				b.WriteByte('\\')
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", "", errBadLabels
}

// parseFloat reads a sample value. Besides Go's forms it takes C's
// printf spellings (nan, -nan, inf), since the plugin formats with %g.
func parseFloat(s string) (float64, error) {
	switch strings.ToLower(s) {
	case "nan", "-nan", "+nan":
		return math.NaN(), nil
	case "inf", "+inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return v, nil // ±Inf or 0: a value, if not a usable one
		}
		return 0, errBadNumber
	}
	return v, nil
}

// ParseProm parses one Inspector Prometheus file into samples: the bus
// bandwidth and execution time lines of a bucket (same labels, two
// metrics) become one Sample. Lines that are not samples of Inspector's
// four metrics, or do not parse, are skipped: the file is rewritten in
// place every interval, so a reader may see a half-written line, and one
// bad line must not cost the others. The samples come in the order their
// first line appears.
func ParseProm(data []byte) []Sample {
	var out []Sample
	index := map[string]int{}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		s := strings.TrimSpace(string(line))
		if s == "" || s[0] == '#' {
			continue
		}
		pl, err := ParsePromLine(s)
		if err != nil {
			continue
		}
		var p2p, isBW bool
		switch pl.Name {
		case metricBusBW:
			isBW = true
		case metricExecTime:
		case metricP2PBusBW:
			p2p, isBW = true, true
		case metricP2PExec:
			p2p = true
		default:
			continue
		}
		sm := promSample(&pl, p2p)
		id := bucketID(&sm)
		i, seen := index[id]
		if !seen {
			i = len(out)
			index[id] = i
			out = append(out, sm)
		}
		o := &out[i]
		if pl.Timestamp != 0 {
			o.Time = time.UnixMilli(pl.Timestamp)
		}
		if isBW {
			o.BusBandwidth, o.HasBusBandwidth = 0, false
			if finite(pl.Value) && pl.Value > 0 {
				o.BusBandwidth, o.HasBusBandwidth = pl.Value*gbsToBytes, true
			}
		} else {
			o.ExecTime, o.HasExecTime = 0, false
			if finite(pl.Value) && pl.Value >= 0 {
				o.ExecTime, o.HasExecTime = pl.Value/1e6, true
			}
		}
	}
	return out
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// promSample fills a Sample's identity from a line's labels; a missing
// label leaves its field at its zero (GPU: -1).
func promSample(pl *PromLine, p2p bool) Sample {
	l := pl.Labels
	op := l["collective"]
	if p2p {
		op = l["p2p_operation"]
	}
	gpu := -1
	if g, ok := l["gpu"]; ok {
		gpu = gpuIndex(g)
	}
	nranks, _ := strconv.Atoi(l["nranks"])
	nnodes, _ := strconv.Atoi(l["n_nodes"])
	return Sample{
		Node:         l["node"],
		GPU:          gpu,
		Communicator: l["comm_name"],
		NRanks:       max(nranks, 0),
		NNodes:       max(nnodes, 0),
		Collective:   op,
		P2P:          p2p,
		MessageSize:  l["message_size"],
		MessageBytes: bucketLowerBound(l["message_size"]),
		AlgoProto:    l["algo_proto"],
		Rank:         -1,
	}
}

// bucketID joins the fields that tell one bucket from another; \x00 cannot
// occur inside them from a well-formed file, and a malformed one at worst
// merges two buckets.
func bucketID(s *Sample) string {
	return strings.Join([]string{
		s.Node, strconv.Itoa(s.GPU), s.Communicator, strconv.Itoa(s.NRanks), strconv.Itoa(s.NNodes),
		s.Collective, strconv.FormatBool(s.P2P), s.MessageSize, s.AlgoProto,
	}, "\x00")
}
