package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

const (
	// promRawWindow is the time one raw-sample request covers.
	promRawWindow = time.Hour
	// promStepWindow is the number of steps one query_range request covers.
	promStepWindow = 720
	// promLookback is Prometheus' default lookback, which query_range
	// reaches back over from its first step.
	promLookback = 5 * time.Minute
	// DefaultMaxSeries is -max-series' default.
	DefaultMaxSeries = 10000
)

// promOptions are the flags of a recording from Prometheus.
type promOptions struct {
	url, start, end, match, tokenFile string
	step                              time.Duration
	maxSeries                         int
}

// liveFlags are the flags of a recording from a GPU source.
var liveFlags = []string{"backend", "endpoint", "embedded", "interval", "duration", "hostname", "pod-resources", "simulated"}

// promFlags are the flags of a recording from Prometheus.
var promFlags = []string{"start", "end", "match", "step", "max-series", "bearer-token-file"}

// promMain records from Prometheus: gpurecord -prometheus URL.
func promMain(ctx context.Context, o *options, set map[string]bool, stdout, stderr io.Writer) int {
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gpurecord: %s (gpurecord -h lists the flags)\n", fmt.Sprintf(format, a...))
		return ExitUsage
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gpurecord: %v\n", err)
		return ExitError
	}
	for _, name := range liveFlags {
		if set[name] {
			return usage("-%s does not apply to -prometheus, which reads what Prometheus holds", name)
		}
	}
	p := &o.prom
	if p.url == "" {
		return usage("-prometheus: empty URL")
	}
	if p.start == "" || p.end == "" {
		return usage("-prometheus needs -start and -end")
	}
	start, err := parseWhen(p.start)
	if err != nil {
		return usage("-start: %v", err)
	}
	end, err := parseWhen(p.end)
	if err != nil {
		return usage("-end: %v", err)
	}
	if !end.After(start) {
		return usage("-end %s is not after -start %s", end.UTC().Format(time.RFC3339Nano), start.UTC().Format(time.RFC3339Nano))
	}
	if set["step"] && p.step < time.Millisecond {
		return usage("-step must be at least 1ms, got %v", p.step)
	}
	if p.maxSeries <= 0 {
		return usage("-max-series must be positive, got %d", p.maxSeries)
	}
	match, err := parseMatch(p.match)
	if err != nil {
		return usage("-match: %v", err)
	}
	token := os.Getenv("PROMETHEUS_BEARER_TOKEN")
	if p.tokenFile != "" {
		raw, err := os.ReadFile(p.tokenFile)
		if err != nil {
			return fail(fmt.Errorf("-bearer-token-file: %w", err))
		}
		token = strings.TrimSpace(string(raw))
	}
	client, err := newPromClient(p.url, token, p.maxSeries)
	if err != nil {
		return usage("-prometheus: %v", err)
	}

	out, err := openOutput(o.out, stdout)
	if err != nil {
		return fail(err)
	}
	rec := &promRecorder{
		c: client, match: match, start: start.UnixMilli(), end: end.UnixMilli(), step: p.step.Milliseconds(),
		out: out.w, state: map[string]*seriesState{}, xidLast: map[string]seriesState{}, first: map[string]int64{}, gpus: map[string]bool{}, skipped: map[string]bool{},
	}
	runErr := rec.run(ctx)
	// Nothing recorded: no empty trace is left.
	runErr = out.close(rec.w != nil, runErr)
	name := out.name
	if runErr != nil {
		if rec.rows > 0 {
			runErr = fmt.Errorf("%w; the %d rows up to %s are in %s", runErr, rec.rows, fmtMillis(rec.readTo), name)
		}
		return fail(runErr)
	}
	for _, w := range client.warnings {
		fmt.Fprintf(stderr, "gpurecord: Prometheus warned: %s\n", w)
	}
	if len(rec.skipped) > 0 {
		fmt.Fprintf(stderr, "gpurecord: skipped %d series without a GPU UUID (label UUID for DCGM_FI_* names, hw_id for the collector's), such as %s\n",
			len(rec.skipped), rec.skippedExample)
	}
	fmt.Fprintf(stderr, "gpurecord: %d rows, %d samples of %d GPUs, written to %s\n", rec.rows, rec.batches, len(rec.gpus), name)
	return ExitOK
}

// parseWhen reads a time as RFC 3339 or Unix seconds (decimals allowed).
func parseWhen(s string) (time.Time, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(v, 0) && !math.IsNaN(v) {
		sec := math.Floor(v)
		return time.Unix(int64(sec), int64(math.Round((v-sec)*1e3))*1e6), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is neither RFC 3339 (2026-01-01T00:00:00Z) nor Unix seconds", s)
	}
	return t, nil
}

// parseMatch reads -match: label matchers, with or without their braces;
// it returns them without.
func parseMatch(s string) (string, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return "", nil
	}
	if strings.HasPrefix(in, "{") {
		if !strings.HasSuffix(in, "}") {
			return "", fmt.Errorf("%q: want label matchers such as {Hostname=\"node-7\"}", s)
		}
		in = strings.TrimSpace(in[1 : len(in)-1])
	}
	if strings.ContainsAny(in, "{}") || !strings.ContainsAny(in, "=~") {
		return "", fmt.Errorf("%q: want label matchers such as {Hostname=\"node-7\"}, without a metric name", s)
	}
	return in, nil
}

// seriesState is what one series' previous sample tells about its next.
type seriesState struct {
	seen bool
	t    int64
	v    float64
}

// promRecorder reads Prometheus window by window and writes the trace.
type promRecorder struct {
	c          *promClient
	match      string
	start, end int64 // Unix milliseconds, both included
	step       int64 // milliseconds; 0 reads raw samples

	out     io.Writer
	w       *trace.Writer
	metrics []*promMetric
	state   map[string]*seriesState // by series
	xidLast map[string]seriesState  // GPU -> its last XID gauge sample
	first   map[string]int64        // GPU -> the time of its first row
	skipped map[string]bool         // series without a GPU UUID
	// skippedExample is one of them, for the report.
	skippedExample string
	rows, batches  int
	gpus           map[string]bool
	readTo         int64 // the rows up to here are written
}

func (r *promRecorder) selector(name string) string {
	if r.match == "" {
		return name
	}
	return name + "{" + r.match + "}"
}

func (r *promRecorder) run(ctx context.Context) error {
	from := r.start
	if r.step > 0 {
		from -= promLookback.Milliseconds()
	}
	sel := `{__name__=~"` + promNamesRegexp + `"`
	if r.match != "" {
		sel += ", " + r.match
	}
	sel += "}"
	names, err := r.c.names(ctx, sel, from, r.end)
	if err != nil {
		return r.stopped(ctx, fmt.Errorf("%s: metric names: %w", r.c, err))
	}
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	for i := range promMetrics {
		if present[promMetrics[i].name] {
			r.metrics = append(r.metrics, &promMetrics[i])
		}
	}
	if len(r.metrics) == 0 {
		what := ""
		if r.match != "" {
			what = " matching {" + r.match + "}"
		}
		return fmt.Errorf("%s holds no GPU series%s from %s to %s: looked for dcgm-exporter's DCGM_FI_* and the collector's hw_*, nvidia_gpu_* names",
			r.c, what, fmtMillis(r.start), fmtMillis(r.end))
	}
	for wfrom := r.start; wfrom <= r.end; {
		var wto, next int64
		if r.step == 0 {
			wto = min(wfrom+promRawWindow.Milliseconds()-1, r.end)
			next = wto + 1
		} else {
			wto = wfrom + min(promStepWindow-1, (r.end-wfrom)/r.step)*r.step
			next = wto + r.step
		}
		if err := r.window(ctx, wfrom, wto); err != nil {
			return r.stopped(ctx, err)
		}
		wfrom = next
	}
	if r.w == nil {
		return fmt.Errorf("%s returned no samples with a GPU UUID from %s to %s (%d series without one)", r.c, fmtMillis(r.start), fmtMillis(r.end), len(r.skipped))
	}
	return nil
}

// stopped notes in the trace, if one is written, why it ends early.
func (r *promRecorder) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		err = errors.New("interrupted")
	}
	if r.w != nil {
		_ = r.w.Comment(fmt.Sprintf("gpurecord: stopped after the rows up to %s: %v", fmtMillis(r.readTo), err))
		_ = r.w.Flush()
	}
	return err
}

// windowRows collects one window's rows.
type windowRows struct {
	rows  map[rowKey]*pendingRow
	dcgm  map[string]bool  // GPUs with dcgm-exporter series in the window
	first map[string]int64 // GPU -> its first row in the window
	// xidGauge holds each GPU's samples of dcgm-exporter's XID gauge.
	xidGauge map[string][]xidSample
}

type rowKey struct {
	t    int64
	uuid string
}

// window reads every metric for the rows from wfrom to wto (included) and
// writes them.
func (r *promRecorder) window(ctx context.Context, wfrom, wto int64) error {
	wr := &windowRows{rows: map[rowKey]*pendingRow{}, dcgm: map[string]bool{}, first: map[string]int64{}, xidGauge: map[string][]xidSample{}}
	for _, m := range r.metrics {
		var ss []promSeries
		var err error
		if r.step == 0 {
			ss, err = r.c.rawRange(ctx, r.selector(m.name), wfrom-1, wto)
		} else {
			ss, err = r.c.stepRange(ctx, r.selector(m.name), wfrom, wto, r.step)
		}
		if err != nil {
			return err
		}
		for _, s := range ss {
			r.ingest(m, s, wr)
		}
	}
	r.xidGauges(wr)
	return r.write(wr, wto)
}

// xidSample is one sample of dcgm-exporter's XID gauge.
type xidSample struct {
	t   int64
	v   float64
	row *pendingRow
}

// xidGauges reads each GPU's XID gauge samples of the window, from all its
// series, in time order: an XID where the value changes to a new code; the
// GPU's first sample is history (the XID in it may be old) and gives no
// cell.
func (r *promRecorder) xidGauges(wr *windowRows) {
	for uuid, xs := range wr.xidGauge {
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].t < xs[j].t })
		st := r.xidLast[uuid]
		for _, x := range xs {
			switch {
			case !st.seen:
			case x.v != st.v && x.v > 0 && x.v < math.MaxUint32 && x.v == math.Trunc(x.v):
				x.row.xids = append(x.row.xids, uint32(x.v))
			default:
				x.row.xidZero = true
			}
			st = seriesState{seen: true, t: x.t, v: x.v}
		}
		r.xidLast[uuid] = st
	}
}

// ingest turns one series' samples into cells of the window's rows.
func (r *promRecorder) ingest(m *promMetric, s promSeries, wr *windowRows) {
	id, ok := identify(m.shape, s.labels)
	if !ok {
		r.skip(s.labels)
		return
	}
	field := m.field
	var xid uint32
	switch {
	case m.conv == convXIDCounter:
		code, err := strconv.ParseUint(s.labels[m.label], 10, 32)
		if err != nil {
			return
		}
		xid = uint32(code)
	case m.label != "":
		var known bool
		if field, known = m.fields[s.labels[m.label]]; !known {
			return
		}
	}
	if m.shape == shapeDCGM {
		wr.dcgm[id.uuid] = true
	}
	key := seriesKey(s.labels)
	st := r.state[key]
	if st == nil {
		st = &seriesState{}
		r.state[key] = st
	}
	for _, p := range s.points {
		if math.IsNaN(p.v) {
			continue
		}
		var row *pendingRow
		// Where a GPU has dcgm-exporter's series, the collector's of the
		// same window only keep their state.
		if m.shape == shapeDCGM || !wr.dcgm[id.uuid] {
			row = wr.row(p.t, &id, m.shape)
		}
		r.apply(m, field, xid, st, p, row, id.uuid, wr)
		*st = seriesState{seen: true, t: p.t, v: p.v}
	}
}

func (r *promRecorder) apply(m *promMetric, field f.Field, xid uint32, st *seriesState, p promPoint, row *pendingRow, uuid string, wr *windowRows) {
	switch m.conv {
	case convValue:
		if row == nil {
			return
		}
		v := p.v
		if m.scale != 0 && m.scale != 1 {
			v = round15(v * m.scale)
		}
		if !row.row.Values.Has(field) && f.Valid(field, v) {
			row.row.Values.Set(field, v)
		}
		if m.shape == shapeOTel {
			switch field {
			case f.GPUUtil:
				row.utilRatio, row.has = p.v, row.has|hasUtil
			case f.MemCopyUtil:
				row.copyRatio, row.has = p.v, row.has|hasCopy
			}
		}
	case convXIDGauge:
		// dcgm-exporter labels the gauge with the code (err_code, err_msg):
		// each XID starts a new series. The GPU's samples of all of them are
		// read in time order once the window is in (xidGauges).
		if row != nil {
			wr.xidGauge[uuid] = append(wr.xidGauge[uuid], xidSample{t: p.t, v: p.v, row: row})
		}
	case convXIDCounter:
		var event bool
		switch {
		case !st.seen:
			// The counter appears with the GPU's first XID: a new series
			// after the GPU's first row is a new XID; one there from the
			// start is history.
			first, ok := r.first[uuid]
			if wf, wok := wr.first[uuid]; wok && (!ok || wf < first) {
				first, ok = wf, true
			}
			event = p.v > 0 && ok && p.t > first
		case p.v > st.v:
			event = true
		case p.v < st.v:
			event = p.v > 0 // the counter started again
		}
		if event && row != nil {
			row.xids = append(row.xids, xid)
			if n := p.v - st.v; st.seen && n > 1 && n < 1e6 {
				row.notes = append(row.notes, fmt.Sprintf("%s at %.3f: %d XIDs %d since the previous sample", uuid, float64(p.t)/1000, int(n), xid))
			}
		}
	case convRate:
		if row == nil || !st.seen || p.t <= st.t || p.v < st.v {
			return
		}
		rate := (p.v - st.v) / (float64(p.t-st.t) / 1000)
		if !row.row.Values.Has(field) && f.Valid(field, rate) {
			row.row.Values.Set(field, rate)
		}
	case convMemUtil:
		if row != nil {
			row.memUtil, row.has = p.v, row.has|hasMemUtil
		}
	case convGREngine:
		if row != nil {
			row.gr, row.has = p.v, row.has|hasGR
		}
	case convDRAM:
		if row != nil {
			row.dram, row.has = p.v, row.has|hasDRAM
		}
	}
}

func (r *promRecorder) skip(labels map[string]string) {
	key := seriesKey(labels)
	if r.skipped[key] {
		return
	}
	r.skipped[key] = true
	if r.skippedExample == "" {
		r.skippedExample = formatSeries(labels)
	}
}

// write writes the window's rows in timestamp, then uuid, order.
func (r *promRecorder) write(wr *windowRows, wto int64) error {
	keys := make([]rowKey, 0, len(wr.rows))
	for k := range wr.rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].t != keys[j].t {
			return keys[i].t < keys[j].t
		}
		return keys[i].uuid < keys[j].uuid
	})
	if len(keys) > 0 && r.w == nil {
		var err error
		if r.w, err = trace.NewWriter(r.out, f.All()); err != nil {
			return err
		}
		mode := "raw samples at their scrape times"
		if r.step > 0 {
			mode = fmt.Sprintf("query_range at a %v step", time.Duration(r.step)*time.Millisecond)
		}
		header := fmt.Sprintf("gpurecord: read from the Prometheus at %s, %s, from %s to %s", r.c, mode, fmtMillis(r.start), fmtMillis(r.end))
		if r.match != "" {
			header += ", series matching {" + r.match + "}"
		}
		if err := r.w.Comment(header); err != nil {
			return err
		}
	}
	last := int64(math.MinInt64)
	for _, k := range keys {
		p := wr.rows[k]
		p.finish()
		for _, n := range p.notes {
			if err := r.w.Comment(n); err != nil {
				return err
			}
		}
		if err := r.w.Write(&p.row); err != nil {
			return err
		}
		r.rows++
		if k.t != last {
			r.batches++
			last = k.t
		}
		r.gpus[k.uuid] = true
		if _, ok := r.first[k.uuid]; !ok {
			r.first[k.uuid] = k.t
		}
	}
	// Flush every window: an interrupted or failed recording keeps every
	// window before.
	if r.w != nil {
		if err := r.w.Flush(); err != nil {
			return err
		}
	}
	r.readTo = wto
	return nil
}
