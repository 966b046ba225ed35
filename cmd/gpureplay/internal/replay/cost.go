package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/report"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
)

// RunCost replays like Run and then writes the tally's summary: one line
// per namespace after the verdicts, then one per job whose GPUs waited
// (waitTally). It sets cost::report_interval to 0, so
// that the counters come with every sample: the tally then covers each GPU
// to its last sample and follows its namespace at every sample.
func RunCost(ctx context.Context, cfg component.Config, opts Options, in io.Reader, name string, out io.Writer) error {
	cfg.(*gpuanalyzerprocessor.Config).Cost.ReportInterval = 0
	if err := Run(ctx, cfg, opts, in, name, out); err != nil {
		return err
	}
	if err := opts.Cost.Write(out); err != nil {
		return err
	}
	return opts.Cost.waits.Write(out)
}

// Currency is the analyzer's currency in cfg.
func Currency(cfg component.Config) string {
	return cfg.(*gpuanalyzerprocessor.Config).Cost.Currency
}

// usageStates are the keys of the cost summary, in its order.
var usageStates = [...]string{"used", "waiting", "workload_idle", "cluster_idle", "unknown"}

// ApplyCost reads the processor settings in path over cfg (what -config
// gave, or the defaults) and validates the result. An empty file changes
// nothing.
func ApplyCost(cfg component.Config, path string) error {
	m, err := components.ReadYAML(path)
	if err != nil {
		return err
	}
	if err := components.Unmarshal(m, cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := confmap.Validate(cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Usage is one GPU's, or one namespace's, time and cost per usage state
// and time per bottleneck class, summed over the whole replay.
type Usage struct {
	Seconds [len(usageStates)]float64
	Cost    [len(usageStates)]float64
	Class   map[string]float64 // seconds per class
	// Nanos is Seconds in nanoseconds, as the analyzer counts them.
	Nanos [len(usageStates)]int64
}

func (u *Usage) add(state int, seconds, cost float64) {
	u.Seconds[state] += seconds
	u.Nanos[state] += int64(math.Round(seconds * 1e9))
	u.Cost[state] += cost
}

// gpuTally follows one GPU's cumulative usage counters.
type gpuTally struct {
	start pcommon.Timestamp
	seen  bool
	// The counters' values at the previous sample of this lifetime.
	time, cost [len(usageStates)]float64
	class      map[string]float64
	namespace  string // at the previous sample
	first      pcommon.Timestamp
	last       pcommon.Timestamp
	wall       int64 // nanoseconds observed in earlier lifetimes
	total      Usage
}

// CostTally sums the analyzer's usage counters per namespace. Each
// increase of a GPU's counter covers the interval since its previous sample,
// which the analyzer attributes to that sample's state: so the increase goes
// to the namespace the GPU had at its previous sample.
type CostTally struct {
	currency   string
	gpus       map[string]*gpuTally
	namespaces map[string]*Usage
	classes    map[string]bool
	// waits: per job, the GPU time that waited and on which GPU.
	waits *waitTally
}

// NewCostTally returns an empty tally in the configuration's currency.
func NewCostTally(cfg component.Config) *CostTally {
	return &CostTally{
		currency:   cfg.(*gpuanalyzerprocessor.Config).Cost.Currency,
		gpus:       map[string]*gpuTally{},
		namespaces: map[string]*Usage{},
		classes:    map[string]bool{},
	}
}

func (c *CostTally) add(md pmetric.Metrics) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		attrs := rm.Resource().Attributes()
		id, ok := attrs.Get(metricnames.AttrHWID)
		if !ok {
			continue
		}
		var ns string
		if v, ok := attrs.Get(metricnames.AttrK8sNamespaceName); ok {
			ns = v.Str()
		}
		spent, cost, classes, ok := usageMetrics(rm)
		if !ok {
			continue // not analysed
		}
		g := c.gpus[id.Str()]
		if g == nil {
			g = &gpuTally{}
			c.gpus[id.Str()] = g
		}
		dps := spent.Sum().DataPoints()
		start, ts := dps.At(0).StartTimestamp(), dps.At(0).Timestamp()
		if !g.seen || start != g.start {
			// A new lifetime: the analyzer forgot the GPU and restarted
			// its counters.
			if g.seen {
				g.wall += int64(g.last - g.first)
			}
			g.seen, g.start, g.first, g.namespace = true, start, ts, ns
			g.time, g.cost, g.class = [len(usageStates)]float64{}, [len(usageStates)]float64{}, map[string]float64{}
		}
		g.last = ts
		u := c.namespaces[g.namespace]
		if u == nil {
			u = &Usage{Class: map[string]float64{}}
			c.namespaces[g.namespace] = u
		}
		costs := map[int]float64{}
		if cost != (pmetric.Metric{}) {
			cdps := cost.Sum().DataPoints()
			for j := 0; j < cdps.Len(); j++ {
				st := stateIndex(cdps.At(j).Attributes())
				if st >= 0 {
					costs[st] = cdps.At(j).DoubleValue() - g.cost[st]
					g.cost[st] = cdps.At(j).DoubleValue()
				}
			}
		}
		for j := 0; j < dps.Len(); j++ {
			st := stateIndex(dps.At(j).Attributes())
			if st < 0 {
				continue
			}
			d := dps.At(j).DoubleValue() - g.time[st]
			g.time[st] = dps.At(j).DoubleValue()
			u.add(st, d, costs[st])
			g.total.add(st, d, costs[st])
		}
		if classes != (pmetric.Metric{}) {
			cdps := classes.Sum().DataPoints()
			for j := 0; j < cdps.Len(); j++ {
				name, _ := cdps.At(j).Attributes().Get(metricnames.AttrOTelGPUBottleneckClass)
				d := cdps.At(j).DoubleValue() - g.class[name.Str()]
				g.class[name.Str()] = cdps.At(j).DoubleValue()
				u.Class[name.Str()] += d
				c.classes[name.Str()] = true
			}
		}
		g.namespace = ns
	}
}

func stateIndex(attrs pcommon.Map) int {
	v, _ := attrs.Get(metricnames.AttrOTelGPUUsageState)
	return slices.Index(usageStates[:], v.Str())
}

// usageMetrics finds the analyzer's usage and class time metrics on a GPU's
// resource; ok is false if it has no usage time.
func usageMetrics(rm pmetric.ResourceMetrics) (spent, cost, classes pmetric.Metric, ok bool) {
	sms := rm.ScopeMetrics()
	for i := 0; i < sms.Len(); i++ {
		ms := sms.At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			switch m := ms.At(j); m.Name() {
			case metricnames.OTelGPUTime:
				spent, ok = m, m.Sum().DataPoints().Len() > 0
			case metricnames.OTelGPUCost:
				cost = m
			case metricnames.OTelGPUBottleneckTime:
				classes = m
			}
		}
	}
	return spent, cost, classes, ok
}

// GPU returns one GPU's totals and its wall time: the nanoseconds from its
// first to its last sample, over every lifetime.
func (c *CostTally) GPU(uuid string) (Usage, int64, bool) {
	g, ok := c.gpus[uuid]
	if !ok {
		return Usage{}, 0, false
	}
	return g.total, g.wall + int64(g.last-g.first), true
}

// Write prints one JSON line per namespace, sorted, "" for GPUs without
// one; hours rounded to the microhour, costs to 1/10,000 of the currency.
func (c *CostTally) Write(out io.Writer) error {
	classes := slices.Sorted(maps.Keys(c.classes))
	for _, ns := range slices.Sorted(maps.Keys(c.namespaces)) {
		u := c.namespaces[ns]
		b := []byte(`{"summary": "cost", "namespace": `)
		b = appendJSONString(b, ns)
		b = append(b, `, "currency": `...)
		b = appendJSONString(b, c.currency)
		b = append(b, `, "gpu_hours": {`...)
		for i, st := range usageStates {
			b = appendKey(b, i, st)
			b = appendRounded(b, u.Seconds[i]/3600, 1e6)
		}
		b = append(b, `}, "cost": {`...)
		for i, st := range usageStates {
			b = appendKey(b, i, st)
			b = appendRounded(b, u.Cost[i], 1e4)
		}
		b = append(b, `}, "class_hours": {`...)
		for i, cl := range classes {
			b = appendKey(b, i, cl)
			b = appendRounded(b, u.Class[cl]/3600, 1e6)
		}
		b = append(b, "}}\n"...)
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func appendKey(b []byte, i int, key string) []byte {
	if i > 0 {
		b = append(b, ", "...)
	}
	b = appendJSONString(b, key)
	return append(b, ": "...)
}

func appendRounded(b []byte, x, scale float64) []byte {
	return strconv.AppendFloat(b, rounded(x, scale), 'f', -1, 64)
}

func rounded(x, scale float64) float64 {
	r := math.Round(x*scale) / scale
	if r == 0 {
		r = 0 // no "-0"
	}
	return r
}

// Report gives the figures Write prints, rounded the same way, for the
// HTML report's cost table.
func (c *CostTally) Report() *report.Cost {
	rc := &report.Cost{Currency: c.currency, States: usageStates[:], Rows: []report.CostRow{}}
	for _, ns := range slices.Sorted(maps.Keys(c.namespaces)) {
		u := c.namespaces[ns]
		row := report.CostRow{Namespace: ns, GPUHours: map[string]float64{}, Cost: map[string]float64{}}
		for i, st := range usageStates {
			row.GPUHours[st] = rounded(u.Seconds[i]/3600, 1e6)
			row.Cost[st] = rounded(u.Cost[i], 1e4)
		}
		rc.Rows = append(rc.Rows, row)
	}
	return rc
}
