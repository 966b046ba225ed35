package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// promRequestTimeout bounds one request to Prometheus.
const promRequestTimeout = 5 * time.Minute

// promClient speaks the part of Prometheus' HTTP API that gpurecord reads.
type promClient struct {
	base   *url.URL // without user info
	client *http.Client
	// auth sets the request's Authorization header, if any.
	auth      func(*http.Request)
	maxSeries int
	warnings  []string
}

// promSeries is one series of a matrix result: its labels (__name__
// included) and its samples in time order, times in Unix milliseconds.
type promSeries struct {
	labels map[string]string
	points []promPoint
}

type promPoint struct {
	t int64
	v float64
}

// newPromClient reads the base URL (http or https, with an optional path
// prefix and basic-auth user info) and the bearer token, if any.
func newPromClient(raw, token string, maxSeries int) (*promClient, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q: want the base URL, without a query", u.Redacted())
	}
	c := &promClient{client: &http.Client{Timeout: promRequestTimeout}, maxSeries: maxSeries}
	switch {
	case token != "":
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	case u.User != nil:
		user := u.User.Username()
		pass, _ := u.User.Password()
		c.auth = func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	u.User = nil
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	c.base = u
	return c, nil
}

// String is the base URL, without credentials.
func (c *promClient) String() string { return c.base.String() }

// names returns the metric names that series matching selector have
// between start and end (Unix milliseconds).
func (c *promClient) names(ctx context.Context, selector string, start, end int64) ([]string, error) {
	form := url.Values{"match[]": {selector}, "start": {promTime(start)}, "end": {promTime(end)}}
	body, err := c.do(ctx, http.MethodGet, "/api/v1/label/__name__/values", form)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	var env struct {
		Status    string          `json:"status"`
		ErrorType string          `json:"errorType"`
		Error     string          `json:"error"`
		Data      json.RawMessage `json:"data"`
		Warnings  []string        `json:"warnings"`
	}
	if err := json.NewDecoder(body).Decode(&env); err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if env.Status != "success" {
		return nil, apiError(env.ErrorType, env.Error, 0)
	}
	c.warn(env.Warnings)
	var names []string
	if err := json.Unmarshal(env.Data, &names); err != nil {
		return nil, fmt.Errorf("reading the answer: data: %w", err)
	}
	return names, nil
}

// rawRange returns the raw samples of the series that selector (with no
// range) matches, with times in (from, to]: a range-vector selector
// evaluated as an instant query at to. Prometheus 2 includes a sample at
// exactly to-range, Prometheus 3 does not; from is left out either way.
func (c *promClient) rawRange(ctx context.Context, selector string, from, to int64) ([]promSeries, error) {
	q := fmt.Sprintf("%s[%dms]", selector, to-from)
	form := url.Values{"query": {q}, "time": {promTime(to)}}
	ss, err := c.matrix(ctx, "/api/v1/query", form)
	if err != nil {
		return nil, fmt.Errorf("query %s at %s: %w", q, fmtMillis(to), err)
	}
	return keep(ss, from+1, to), nil
}

// stepRange evaluates selector at start, start+step, ... up to end (Unix
// milliseconds), as query_range does for a graph.
func (c *promClient) stepRange(ctx context.Context, selector string, start, end, step int64) ([]promSeries, error) {
	form := url.Values{"query": {selector}, "start": {promTime(start)}, "end": {promTime(end)},
		"step": {strconv.FormatFloat(float64(step)/1000, 'f', -1, 64)}}
	ss, err := c.matrix(ctx, "/api/v1/query_range", form)
	if err != nil {
		return nil, fmt.Errorf("query_range %s from %s to %s: %w", selector, fmtMillis(start), fmtMillis(end), err)
	}
	return keep(ss, start, end), nil
}

// keep drops the points outside [from, to].
func keep(ss []promSeries, from, to int64) []promSeries {
	out := ss[:0]
	for _, s := range ss {
		ps := s.points[:0]
		for _, p := range s.points {
			if p.t >= from && p.t <= to {
				ps = append(ps, p)
			}
		}
		if len(ps) > 0 {
			s.points = ps
			out = append(out, s)
		}
	}
	return out
}

// matrix posts a query and reads its matrix result as it arrives, failing
// once it holds more than maxSeries series rather than reading them all.
func (c *promClient) matrix(ctx context.Context, path string, form url.Values) ([]promSeries, error) {
	body, err := c.do(ctx, http.MethodPost, path, form)
	if err != nil {
		return nil, err
	}
	defer body.Close()
	ss, warnings, err := decodeMatrix(body, c.maxSeries)
	if err != nil {
		return nil, err
	}
	c.warn(warnings)
	return ss, nil
}

func (c *promClient) warn(ws []string) {
	for _, w := range ws {
		w = oneLine(w)
		if !slices.Contains(c.warnings, w) {
			c.warnings = append(c.warnings, w)
		}
	}
}

// do sends one request and returns the body of a 2xx answer; any other
// answer is an error that says what Prometheus said.
func (c *promClient) do(ctx context.Context, method, path string, form url.Values) (io.ReadCloser, error) {
	u := *c.base
	u.Path += path
	var req *http.Request
	var err error
	if method == http.MethodGet {
		u.RawQuery = form.Encode()
		req, err = http.NewRequestWithContext(ctx, method, u.String(), http.NoBody)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(form.Encode()))
		if req != nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	}
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "gpurecord")
	if c.auth != nil {
		c.auth(req)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is in every message already
		}
		return nil, err
	}
	if resp.StatusCode/100 == 2 {
		return resp.Body, nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var env struct {
		Status    string `json:"status"`
		ErrorType string `json:"errorType"`
		Error     string `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Status == "error" {
		return nil, apiError(env.ErrorType, env.Error, resp.StatusCode)
	}
	text := oneLine(string(bytes.TrimSpace(raw)))
	if len(text) > 200 {
		text = text[:200] + "..."
	}
	if text != "" {
		text = ": " + text
	}
	return nil, fmt.Errorf("HTTP %s%s", resp.Status, text)
}

func apiError(typ, msg string, status int) error {
	s := "prometheus says"
	if typ != "" {
		s += " " + typ
	}
	if msg == "" {
		msg = "status is not success"
	}
	s += ": " + oneLine(msg)
	if status != 0 {
		s += fmt.Sprintf(" (HTTP %d)", status)
	}
	return errors.New(s)
}

// errTooManySeries is returned for a result with more than -max-series
// series.
var errTooManySeries = errors.New("too many series")

// decodeMatrix reads a query answer with a matrix result, one series at a
// time, and stops at the series after the maxSeries-th.
func decodeMatrix(r io.Reader, maxSeries int) ([]promSeries, []string, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var (
		status, errType, errMsg, resultType string
		warnings                            []string
		series                              []promSeries
		gotResult                           bool
	)
	bad := func(err error) ([]promSeries, []string, error) {
		if errors.Is(err, errTooManySeries) {
			return nil, nil, fmt.Errorf("more than %d series (-max-series): narrow the selection with -match, or raise -max-series", maxSeries)
		}
		return nil, nil, fmt.Errorf("reading the answer: %w", err)
	}
	if err := expectDelim(dec, '{'); err != nil {
		return bad(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		switch key {
		case "status":
			err = dec.Decode(&status)
		case "errorType":
			err = dec.Decode(&errType)
		case "error":
			err = dec.Decode(&errMsg)
		case "warnings":
			err = dec.Decode(&warnings)
		case "data":
			if err = expectDelim(dec, '{'); err != nil {
				break
			}
			for err == nil && dec.More() {
				var k json.Token
				if k, err = dec.Token(); err != nil {
					break
				}
				switch k {
				case "resultType":
					err = dec.Decode(&resultType)
				case "result":
					gotResult = true
					series, err = decodeResult(dec, maxSeries)
				default:
					err = skipValue(dec)
				}
			}
			if err == nil {
				err = expectDelim(dec, '}')
			}
		default:
			err = skipValue(dec)
		}
		if err != nil {
			return bad(err)
		}
	}
	if status != "success" {
		return nil, nil, apiError(errType, errMsg, 0)
	}
	if !gotResult || resultType != "matrix" {
		return nil, nil, fmt.Errorf("reading the answer: result type %q, want matrix", resultType)
	}
	return series, warnings, nil
}

func decodeResult(dec *json.Decoder, maxSeries int) ([]promSeries, error) {
	if err := expectDelim(dec, '['); err != nil {
		return nil, err
	}
	var out []promSeries
	for dec.More() {
		if len(out) == maxSeries {
			return nil, errTooManySeries
		}
		var raw struct {
			Metric map[string]string `json:"metric"`
			Values [][2]any          `json:"values"`
		}
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		s := promSeries{labels: raw.Metric, points: make([]promPoint, 0, len(raw.Values))}
		for _, v := range raw.Values {
			p, err := readPoint(v)
			if err != nil {
				return nil, err
			}
			s.points = append(s.points, p)
		}
		out = append(out, s)
	}
	return out, expectDelim(dec, ']')
}

// readPoint reads [seconds, "value"].
func readPoint(v [2]any) (promPoint, error) {
	n, ok := v[0].(json.Number)
	str, ok2 := v[1].(string)
	if !ok || !ok2 {
		return promPoint{}, fmt.Errorf("malformed sample %v", v)
	}
	sec, err := n.Float64()
	if err != nil {
		return promPoint{}, fmt.Errorf("malformed sample time %v", v[0])
	}
	val, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return promPoint{}, fmt.Errorf("malformed sample value %q", str)
	}
	return promPoint{t: int64(math.Round(sec * 1000)), v: val}, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("unexpected %v, want %v", t, d)
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var v json.RawMessage
	return dec.Decode(&v)
}

// promTime is a Unix millisecond time as the API takes it.
func promTime(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 3, 64)
}

// fmtMillis is a Unix millisecond time for people.
func fmtMillis(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
