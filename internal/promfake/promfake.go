// Package promfake is an in-memory Prometheus that answers the part of the
// HTTP API gpurecord reads: metric names (/api/v1/label/__name__/values),
// range-vector selectors as instant queries (/api/v1/query with
// `name{matchers}[Nms]`), and plain selectors over a range
// (/api/v1/query_range, with Prometheus' 5-minute lookback). It answers the
// JSON Prometheus answers and nothing more: no functions, no operators.
// convert.go turns traces into series as dcgm-exporter and the collector
// would have left them in Prometheus. It is for tests only.
package promfake

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Lookback is Prometheus' default lookback delta, which query_range uses.
const Lookback = 5 * time.Minute

// Sample is one sample: T in Unix milliseconds.
type Sample struct {
	T int64
	V float64
}

// Series is one series: its labels, __name__ included, and its samples in
// time order.
type Series struct {
	Labels  map[string]string
	Samples []Sample
}

// Server is the fake Prometheus; it is an http.Handler.
type Server struct {
	mu     sync.Mutex
	series map[string]*Series // by label set
	reqs   []url.Values
	// Fail, when set, is asked about every request first; a non-zero
	// status is the answer, with body.
	Fail func(path string, form url.Values) (status int, body string)
}

// New returns an empty Server.
func New() *Server { return &Server{series: map[string]*Series{}} }

// Add appends samples to the series with labels (in time order).
func (s *Server) Add(labels map[string]string, samples ...Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := labelKey(labels)
	sr := s.series[key]
	if sr == nil {
		sr = &Series{Labels: maps.Clone(labels)}
		s.series[key] = sr
	}
	sr.Samples = append(sr.Samples, samples...)
}

// AddSeries adds whole series.
func (s *Server) AddSeries(ss ...Series) {
	for _, sr := range ss {
		s.Add(sr.Labels, sr.Samples...)
	}
}

// Requests returns the form of every API request so far, with its path
// under the key "path".
func (s *Server) Requests() []url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		badData(w, err.Error())
		return
	}
	form := url.Values{}
	for k, v := range r.Form {
		form[k] = v
	}
	form.Set("path", r.URL.Path)
	if a := r.Header.Get("Authorization"); a != "" {
		form.Set("authorization", a)
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, form)
	fail := s.Fail
	s.mu.Unlock()
	if fail != nil {
		if code, body := fail(r.URL.Path, r.Form); code != 0 {
			w.WriteHeader(code)
			_, _ = w.Write([]byte(body))
			return
		}
	}
	switch r.URL.Path {
	case "/api/v1/label/__name__/values":
		s.names(w, r.Form)
	case "/api/v1/query":
		s.query(w, r.Form)
	case "/api/v1/query_range":
		s.queryRange(w, r.Form)
	default:
		http.NotFound(w, r)
	}
}

func (s *Server) names(w http.ResponseWriter, form url.Values) {
	start, err1 := parseTime(form.Get("start"))
	end, err2 := parseTime(form.Get("end"))
	if err1 != nil || err2 != nil {
		badData(w, "invalid start or end")
		return
	}
	var sels []*selector
	for _, m := range form["match[]"] {
		sel, err := parseSelector(m)
		if err != nil {
			badData(w, err.Error())
			return
		}
		sels = append(sels, sel)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[string]bool{}
	for _, sr := range s.series {
		ok := len(sels) == 0
		for _, sel := range sels {
			ok = ok || sel.matches(sr.Labels)
		}
		if ok && slices.ContainsFunc(sr.Samples, func(x Sample) bool { return x.T >= start && x.T <= end }) {
			set[sr.Labels["__name__"]] = true
		}
	}
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	ok(w, names)
}

var rangeRE = regexp.MustCompile(`^(.*)\[(\d+)ms\]$`)

// query answers a range-vector selector at time: the samples in
// [time-range, time], both ends included, as Prometheus 2 does.
func (s *Server) query(w http.ResponseWriter, form url.Values) {
	m := rangeRE.FindStringSubmatch(form.Get("query"))
	if m == nil {
		badData(w, fmt.Sprintf("promfake answers only name{...}[Nms], not %q", form.Get("query")))
		return
	}
	sel, err := parseSelector(m[1])
	if err != nil {
		badData(w, err.Error())
		return
	}
	at, err := parseTime(form.Get("time"))
	if err != nil {
		badData(w, err.Error())
		return
	}
	width, _ := strconv.ParseInt(m[2], 10, 64)
	var out []result
	for _, sr := range s.matching(sel) {
		var vs [][2]any
		for _, x := range sr.Samples {
			if x.T >= at-width && x.T <= at {
				vs = append(vs, point(x.T, x.V))
			}
		}
		if len(vs) > 0 {
			out = append(out, result{Metric: sr.Labels, Values: vs})
		}
	}
	ok(w, map[string]any{"resultType": "matrix", "result": nonNil(out)})
}

// queryRange answers a plain selector at start, start+step, ... <= end:
// at each step the latest sample at most Lookback old.
func (s *Server) queryRange(w http.ResponseWriter, form url.Values) {
	sel, err := parseSelector(form.Get("query"))
	if err != nil {
		badData(w, err.Error())
		return
	}
	start, err1 := parseTime(form.Get("start"))
	end, err2 := parseTime(form.Get("end"))
	step, err3 := strconv.ParseFloat(form.Get("step"), 64)
	if err1 != nil || err2 != nil || err3 != nil || step <= 0 {
		badData(w, "invalid start, end or step")
		return
	}
	stepMS := int64(math.Round(step * 1000))
	var out []result
	for _, sr := range s.matching(sel) {
		var vs [][2]any
		for t := start; t <= end; t += stepMS {
			i := sort.Search(len(sr.Samples), func(i int) bool { return sr.Samples[i].T > t }) - 1
			if i >= 0 && sr.Samples[i].T > t-Lookback.Milliseconds() {
				vs = append(vs, point(t, sr.Samples[i].V))
			}
		}
		if len(vs) > 0 {
			out = append(out, result{Metric: sr.Labels, Values: vs})
		}
	}
	ok(w, map[string]any{"resultType": "matrix", "result": nonNil(out)})
}

func (s *Server) matching(sel *selector) []*Series {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Series
	for _, sr := range s.series {
		if sel.matches(sr.Labels) {
			out = append(out, sr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return labelKey(out[i].Labels) < labelKey(out[j].Labels) })
	return out
}

type result struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
}

func nonNil(r []result) []result {
	if r == nil {
		return []result{}
	}
	return r
}

// point is a sample as Prometheus writes it: seconds, and the value as a
// string.
func point(t int64, v float64) [2]any {
	return [2]any{json.Number(strconv.FormatFloat(float64(t)/1000, 'f', -1, 64)), formatValue(v)}
}

func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

func ok(w http.ResponseWriter, data any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "success", "data": data})
}

// badData answers as Prometheus does to a request it cannot parse.
func badData(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "error", "errorType": "bad_data", "error": msg})
}

// parseTime reads an API time parameter (Unix seconds, decimals allowed,
// or RFC 3339) as milliseconds.
func parseTime(s string) (int64, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(math.Round(f * 1000)), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, err
	}
	return t.UnixMilli(), nil
}

type matcher struct {
	name, op, value string
	re              *regexp.Regexp
}

type selector struct{ ms []matcher }

func (sel *selector) matches(labels map[string]string) bool {
	for _, m := range sel.ms {
		v := labels[m.name]
		var ok bool
		switch m.op {
		case "=":
			ok = v == m.value
		case "!=":
			ok = v != m.value
		case "=~":
			ok = m.re.MatchString(v)
		case "!~":
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}

var (
	nameRE    = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*`)
	matcherRE = regexp.MustCompile(`^\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*")\s*(,|$)`)
)

// parseSelector reads `name`, `name{matchers}` or `{matchers}`.
func parseSelector(q string) (*selector, error) {
	q = strings.TrimSpace(q)
	sel := &selector{}
	if n := nameRE.FindString(q); n != "" {
		sel.ms = append(sel.ms, matcher{name: "__name__", op: "=", value: n})
		q = q[len(n):]
	}
	if q == "" {
		if len(sel.ms) == 0 {
			return nil, errors.New("empty selector")
		}
		return sel, nil
	}
	if !strings.HasPrefix(q, "{") || !strings.HasSuffix(q, "}") {
		return nil, fmt.Errorf("parse error: unexpected %q", q)
	}
	body := strings.TrimSpace(q[1 : len(q)-1])
	for body != "" {
		m := matcherRE.FindStringSubmatch(body)
		if m == nil {
			return nil, fmt.Errorf("parse error in matchers %q", body)
		}
		v, err := strconv.Unquote(m[3])
		if err != nil {
			return nil, fmt.Errorf("parse error: %w", err)
		}
		mt := matcher{name: m[1], op: m[2], value: v}
		if mt.op == "=~" || mt.op == "!~" {
			if mt.re, err = regexp.Compile("^(?:" + v + ")$"); err != nil {
				return nil, fmt.Errorf("parse error: %w", err)
			}
		}
		sel.ms = append(sel.ms, mt)
		body = strings.TrimSpace(body[len(m[0]):])
	}
	if len(sel.ms) == 0 {
		return nil, errors.New("vector selector must contain at least one non-empty matcher")
	}
	return sel, nil
}

func labelKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%q,", k, labels[k])
	}
	return b.String()
}
