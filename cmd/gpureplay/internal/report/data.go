package report

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
)

// Size bounds: a lane's fields get at most maxBuckets points, and all lanes
// together about pointBudget, never fewer than minBuckets per lane. With 16
// GPUs an hour at 5 s (720 samples) keeps every sample; with 512 GPUs each
// lane gets 30 points, which keeps the page under 2 MB.
const (
	maxBuckets  = 720
	minBuckets  = 30
	pointBudget = 12000
)

// Data is what the page shows, embedded in it as JSON.
type Data struct {
	Version int    `json:"version"`
	Source  string `json:"source"`
	// Start and End are the first and last sample times (Unix seconds).
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Rows  int     `json:"rows"`
	Hosts int     `json:"hosts"`
	// SampleInterval is the median time between a GPU's samples.
	SampleInterval float64 `json:"sample_interval"`
	// Buckets is the number of points per lane, each BucketSeconds wide;
	// Downsampled says whether a point averages more than one sample.
	Buckets       int      `json:"buckets"`
	BucketSeconds float64  `json:"bucket_seconds"`
	Downsampled   bool     `json:"downsampled"`
	Summary       []string `json:"summary"`
	Classes       []string `json:"classes"`
	// ClassSeconds is the GPU time per bottleneck class.
	ClassSeconds map[string]float64 `json:"class_seconds"`
	Lanes        []Lane             `json:"lanes"`
	Stragglers   []Straggler        `json:"stragglers"`
	Alerts       []AlertEpisode     `json:"alerts"`
	Cost         *Cost              `json:"cost,omitempty"`
	Autoscale    *Autoscale         `json:"autoscale,omitempty"`
	Remediation  []DecisionJSON     `json:"remediation,omitempty"`
	// Causes and CauseTotals: why GPUs waited, by node evidence (causes.go).
	Causes      []CauseSpan  `json:"causes,omitempty"`
	CauseTotals []CauseTotal `json:"cause_totals,omitempty"`
	// Jobs is the report of each job (internal/jobreport), or of the one
	// -job chose.
	Jobs []jobreport.Report `json:"jobs,omitempty"`
}

// Lane is one GPU's timeline. Segments are runs of one class over
// buckets: [first bucket, last bucket + 1, class index into Classes].
// The series hold one value per bucket, null where the GPU had no sample
// or did not report the field: GPU utilization in percent, SM activity
// as a ratio, power in watts, memory used as a share of the total.
type Lane struct {
	GPU
	Segments [][3]int `json:"segments"`
	Util     Series   `json:"util"`
	SM       Series   `json:"sm"`
	Power    Series   `json:"power"`
	Memory   Series   `json:"memory"`
}

// Straggler is one stretch of time a GPU was its job's straggler.
type Straggler struct {
	Job  string `json:"job"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
	Span
	// Cause and Why: the straggler's cause that held longest, if any.
	Cause string `json:"cause,omitempty"`
	Why   string `json:"why,omitempty"`
}

// Cost is -cost's summary: one row per namespace.
type Cost struct {
	Currency string    `json:"currency"`
	States   []string  `json:"states"`
	Rows     []CostRow `json:"rows"`
}

// Autoscale lists the autoscaler's decisions: the evaluations that
// scaled or changed the desired replicas or the reason.
type Autoscale struct {
	Evaluations int         `json:"evaluations"`
	Events      []ScaleJSON `json:"events"`
}

// ScaleJSON is a ScaleEvent as the page embeds it.
type ScaleJSON struct {
	Time    float64 `json:"time"`
	Target  string  `json:"target"`
	Current int     `json:"current"`
	Desired int     `json:"desired"`
	Reason  string  `json:"reason"`
}

// DecisionJSON is a Decision as the page embeds it.
type DecisionJSON struct {
	Time     float64 `json:"time"`
	Node     string  `json:"node"`
	UUID     string  `json:"uuid"`
	Incident string  `json:"incident"`
	Fault    string  `json:"fault"`
	Action   string  `json:"action"`
	Reason   string  `json:"reason"`
	DryRun   bool    `json:"dry_run"`
	Health   string  `json:"health"`
}

// Series is one value per bucket; NaN is written as null.
type Series []float64

// MarshalJSON writes the values rounded to four significant decimals.
func (s Series) MarshalJSON() ([]byte, error) {
	b := []byte{'['}
	for i, v := range s {
		if i > 0 {
			b = append(b, ',')
		}
		if math.IsNaN(v) {
			b = append(b, "null"...)
			continue
		}
		b = strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return append(b, ']'), nil
}

// ErrEmpty says the replay had no row to report on.
var ErrEmpty = errors.New("the trace holds no samples: nothing to report")

// Options are what the report shows besides the verdicts.
type Options struct {
	// Source names the trace in the page.
	Source string
	// Cost is -cost's summary; nil leaves the cost section out.
	Cost *Cost
	// Autoscaled and Remediated say whether the replay went through the
	// autoscaler or remediation: their sections appear, even if empty.
	Autoscaled, Remediated bool
	// Jobs chooses the jobs of the job section (all by default).
	Jobs JobOptions
}

// Build turns what the collector gathered into the page's data.
func (c *Collector) Build(opts Options) (*Data, error) {
	if c.rows == 0 {
		return nil, ErrEmpty
	}
	d := &Data{
		Version: 1, Source: opts.Source, Start: c.start, End: c.end, Rows: c.rows, Classes: classes, ClassSeconds: map[string]float64{},
		Stragglers: []Straggler{}, Alerts: []AlertEpisode{},
	}
	span := c.end - c.start
	most := 0 // samples of the GPU with the most
	for _, g := range c.gpus {
		most = max(most, len(g.t))
	}
	// No more points than samples: a bucket per sample at most, so that a
	// lane has no empty buckets between its samples.
	d.Buckets = min(maxBuckets, max(minBuckets, pointBudget/len(c.order)), most)
	if span == 0 {
		d.Buckets = 1
	}
	d.BucketSeconds = span / float64(d.Buckets)
	hosts := map[string]bool{}
	var gaps []float64
	for _, id := range c.order {
		g := c.gpus[id]
		hosts[g.id.Host] = true
		for i := 1; i < len(g.t); i++ {
			gaps = append(gaps, g.t[i]-g.t[i-1])
		}
	}
	d.Hosts = len(hosts)
	if len(gaps) > 0 {
		slices.Sort(gaps)
		d.SampleInterval = gaps[len(gaps)/2]
	}
	ids := slices.Clone(c.order)
	slices.SortStableFunc(ids, func(a, b string) int {
		return cmp.Compare(c.gpus[a].id.Name, c.gpus[b].id.Name)
	})
	for _, id := range ids {
		g := c.gpus[id]
		lane, down := g.lane(d, c.start)
		d.Downsampled = d.Downsampled || down
		d.Lanes = append(d.Lanes, lane)
		for i := range g.t {
			dt := d.SampleInterval
			if i+1 < len(g.t) {
				dt = g.t[i+1] - g.t[i]
			}
			d.ClassSeconds[classes[g.class[i]]] += dt
		}
		job := g.id.Namespace
		if g.id.Workload != "" {
			job += "/" + g.id.Workload
		}
		spans := slices.Clone(g.stragglers)
		if g.openStraggler != nil {
			s := *g.openStraggler
			s.To, s.Open = g.t[len(g.t)-1], true
			spans = append(spans, s)
		}
		for _, s := range spans {
			d.Stragglers = append(d.Stragglers, Straggler{Job: job, UUID: id, Name: g.id.Name, Span: s})
		}
		for _, e := range g.alerts {
			d.Alerts = append(d.Alerts, *e)
		}
	}
	slices.SortStableFunc(d.Stragglers, func(a, b Straggler) int {
		return cmp.Or(strings.Compare(a.Job, b.Job), cmp.Compare(a.From, b.From))
	})
	slices.SortStableFunc(d.Alerts, func(a, b AlertEpisode) int {
		return cmp.Compare(a.start(), b.start())
	})
	d.Cost = opts.Cost
	if opts.Autoscaled {
		d.Autoscale = &Autoscale{Evaluations: c.evals, Events: []ScaleJSON{}}
		for _, e := range c.scale {
			d.Autoscale.Events = append(d.Autoscale.Events, ScaleJSON(e))
		}
	}
	if opts.Remediated {
		d.Remediation = []DecisionJSON{}
		for _, x := range c.fixes {
			d.Remediation = append(d.Remediation, DecisionJSON(x))
		}
	}
	d.Summary = d.summarize()
	c.addCauses(d, ids)
	jobs, err := c.JobReports(opts.Jobs)
	if err != nil {
		return nil, err
	}
	if len(jobs) > 0 {
		d.Jobs = jobs
		advised := 0
		for _, j := range jobs {
			advised += min(1, len(j.Advice))
		}
		d.Summary = append(d.Summary, fmt.Sprintf("%s in the trace (%d with advice): each one's report is at the end of the page.", plural(len(jobs), "job"), advised))
	}
	return d, nil
}

func (e AlertEpisode) start() float64 {
	if e.Pending != 0 {
		return e.Pending
	}
	return e.Firing
}

// lane folds a GPU's samples into the report's buckets: the fields'
// mean, and the class most of the bucket's samples had (the earlier
// class of a tie).
func (g *gpuTrack) lane(d *Data, start float64) (Lane, bool) {
	n := d.Buckets
	l := Lane{GPU: g.id, Util: nanSeries(n), SM: nanSeries(n), Power: nanSeries(n), Memory: nanSeries(n)}
	type acc struct {
		sum   [4]float64
		cnt   [4]int
		class [16]int
		n     int
	}
	bs := make([]acc, n)
	down := false
	for i, t := range g.t {
		b := 0
		if d.BucketSeconds > 0 {
			b = min(n-1, int((t-start)/d.BucketSeconds))
		}
		a := &bs[b]
		a.n++
		if a.n > 1 {
			down = true
		}
		a.class[g.class[i]]++
		mem := float32(math.NaN())
		if g.memAll[i] > 0 {
			mem = g.memUsed[i] / g.memAll[i]
		}
		for k, v := range [4]float32{g.util[i], g.sm[i], g.power[i], mem} {
			if !math.IsNaN(float64(v)) {
				a.sum[k] += float64(v)
				a.cnt[k]++
			}
		}
	}
	// A bucket without a sample between two with one (sampling jitter)
	// keeps the class before it; a longer gap, more than three sample
	// intervals, shows as a gap.
	prev, empty, maxGap := -1, 0, d.maxGap()
	for b := range bs {
		a := &bs[b]
		if a.n == 0 {
			empty++
			if empty > maxGap {
				prev = -1
			} else if prev >= 0 {
				l.Segments[len(l.Segments)-1][1] = b + 1
			}
			continue
		}
		empty = 0
		best := 0
		for k := range a.class {
			if a.class[k] > a.class[best] {
				best = k
			}
		}
		if best == prev {
			l.Segments[len(l.Segments)-1][1] = b + 1
		} else {
			l.Segments = append(l.Segments, [3]int{b, b + 1, best})
		}
		prev = best
		for k, s := range []Series{l.Util, l.SM, l.Power, l.Memory} {
			if a.cnt[k] > 0 {
				s[b] = round(a.sum[k]/float64(a.cnt[k]), [4]float64{10, 1000, 10, 1000}[k])
			}
		}
	}
	if l.Segments == nil {
		l.Segments = [][3]int{}
	}
	return l, down
}

// maxGap is the longest run of empty buckets a lane bridges: three
// sample intervals.
func (d *Data) maxGap() int {
	if d.BucketSeconds <= 0 {
		return 1
	}
	return max(1, int(3*d.SampleInterval/d.BucketSeconds))
}

func nanSeries(n int) Series {
	s := make(Series, n)
	for i := range s {
		s[i] = math.NaN()
	}
	return s
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }

// summarize writes the few sentences at the top of the page.
func (d *Data) summarize() []string {
	var out []string
	models := map[string]int{}
	for _, l := range d.Lanes {
		models[cmp.Or(l.Model, "unknown model")]++
	}
	var ms []string
	for _, m := range slices.Sorted(maps.Keys(models)) {
		ms = append(ms, fmt.Sprintf("%d × %s", models[m], m))
	}
	every := ""
	if d.SampleInterval > 0 {
		every = ", a sample every " + duration(d.SampleInterval)
	}
	out = append(out, fmt.Sprintf("%s on %s (%s), %s to %s UTC (%s%s).",
		plural(len(d.Lanes), "GPU"), plural(d.Hosts, "host"), strings.Join(ms, ", "),
		clock(d.Start, true), clock(d.End, d.End-d.Start >= 86400), duration(d.End-d.Start), every))

	var total float64
	for _, s := range d.ClassSeconds {
		total += s
	}
	if total > 0 {
		cls := slices.Clone(classes)
		slices.SortStableFunc(cls, func(a, b string) int { return cmp.Compare(d.ClassSeconds[b], d.ClassSeconds[a]) })
		var parts []string
		for _, cl := range cls {
			if share := d.ClassSeconds[cl] / total; share >= 0.005 {
				parts = append(parts, fmt.Sprintf("%s %.0f %%", cl, share*100))
			}
		}
		out = append(out, "Bottlenecks in GPU time: "+strings.Join(parts, ", ")+".")
	}

	if len(d.Stragglers) == 0 {
		out = append(out, "No GPU was a straggler.")
	} else {
		jobs := map[string][]string{}
		gpus := map[string]bool{}
		for _, s := range d.Stragglers {
			gpus[s.UUID] = true
			if !slices.Contains(jobs[s.Job], s.Name) {
				jobs[s.Job] = append(jobs[s.Job], s.Name)
			}
		}
		var parts []string
		for _, j := range slices.Sorted(maps.Keys(jobs)) {
			parts = append(parts, cmp.Or(j, "(no job)")+": "+strings.Join(jobs[j], ", "))
		}
		out = append(out, fmt.Sprintf("%s slowed %s: %s.", plural(len(gpus), "straggling GPU"), plural(len(jobs), "job"), strings.Join(parts, "; ")))
	}

	fired := map[string]int{}
	var nFired, nPending int
	for _, a := range d.Alerts {
		if a.Firing != 0 {
			fired[a.Alert]++
			nFired++
		} else {
			nPending++
		}
	}
	if nFired == 0 {
		out = append(out, "No alert fired"+pendingNote(nPending)+".")
	} else {
		var parts []string
		for _, a := range slices.Sorted(maps.Keys(fired)) {
			parts = append(parts, fmt.Sprintf("%s × %d", a, fired[a]))
		}
		out = append(out, fmt.Sprintf("%s fired: %s%s.", plural(nFired, "alert"), strings.Join(parts, ", "), pendingNote(nPending)))
	}

	if d.Cost != nil && len(d.Cost.Rows) > 0 {
		var sum [5]float64
		for _, r := range d.Cost.Rows {
			for i, st := range d.Cost.States {
				sum[i] += r.Cost[st]
			}
		}
		var total float64
		var parts []string
		for i, st := range d.Cost.States {
			total += sum[i]
			if sum[i] != 0 {
				parts = append(parts, fmt.Sprintf("%s %s", money(sum[i], d.Cost.Currency), stateWords[st]))
			}
		}
		if total == 0 {
			out = append(out, "No GPU time was priced: the analyzer's cost settings give no price (pass -cost with a price table).")
		} else {
			out = append(out, fmt.Sprintf("GPU time cost %s: %s.", money(total, d.Cost.Currency), strings.Join(parts, ", ")))
		}
	}
	if d.Autoscale != nil {
		scaled := 0
		for _, e := range d.Autoscale.Events {
			if e.Desired != e.Current {
				scaled++
			}
		}
		out = append(out, fmt.Sprintf("The autoscaler evaluated %s and asked for a different replica count %s.", plural(d.Autoscale.Evaluations, "time"), plural(scaled, "time")))
	}
	if d.Remediation != nil {
		if len(d.Remediation) == 0 {
			out = append(out, "Remediation decided nothing.")
		} else {
			acts := map[string]int{}
			for _, x := range d.Remediation {
				acts[x.Action]++
			}
			var parts []string
			for _, a := range slices.Sorted(maps.Keys(acts)) {
				parts = append(parts, fmt.Sprintf("%s × %d", a, acts[a]))
			}
			out = append(out, fmt.Sprintf("Remediation made %s (dry run): %s.", plural(len(d.Remediation), "decision"), strings.Join(parts, ", ")))
		}
	}
	if d.Downsampled {
		out = append(out, fmt.Sprintf("The timeline is downsampled: each point is the mean of a GPU's samples over %s (the class, the one most of them had); marks and tables keep every sample's time.", duration(d.BucketSeconds)))
	}
	return out
}

var stateWords = map[string]string{
	"used":          "used",
	"waiting":       "busy but waiting",
	"workload_idle": "idle while held by a pod",
	"cluster_idle":  "idle and unallocated",
	"unknown":       "unknown",
}

func pendingNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s went pending and resolved without firing)", plural(n, "other"))
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func money(x float64, currency string) string {
	if currency == "USD" {
		return fmt.Sprintf("$%.2f", x)
	}
	return fmt.Sprintf("%.2f %s", x, currency)
}

func clock(t float64, withDate bool) string {
	tm := time.Unix(0, int64(t*1e9)).UTC()
	if withDate {
		return tm.Format("2006-01-02 15:04:05")
	}
	return tm.Format("15:04:05")
}

// duration prints seconds the way a person says them: 5 s, 12 min, 1 h 30 min.
func duration(s float64) string {
	switch {
	case s < 1:
		return strconv.FormatFloat(round(s, 1000), 'f', -1, 64) + " s"
	case s < 120:
		return strconv.FormatFloat(round(s, 10), 'f', -1, 64) + " s"
	case s < 7200:
		return strconv.Itoa(int(math.Round(s/60))) + " min"
	default:
		h := int(s / 3600)
		m := int(math.Round((s - float64(h)*3600) / 60))
		if m == 60 {
			h, m = h+1, 0
		}
		return fmt.Sprintf("%d h %d min", h, m)
	}
}
