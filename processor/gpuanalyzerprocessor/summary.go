package gpuanalyzerprocessor

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpuhealth"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/analysis"
)

// fleetSummary logs, every summary_interval of data time, one line per GPU
// whose class changed since the previous summary and one line that sums up
// the fleet, for a person watching the collector's output.
type fleetSummary struct {
	logger   *zap.Logger
	interval int64
	first    int64 // data time from the first sample to the first summary
	ttl      int64
	currency string
	next     int64 // data time of the next summary; 0 before the first sample
	origin   int64 // data time of the first sample
	now      int64 // latest data time seen
	gpus     map[string]*gpuLine
}

// gpuLine is what the summary knows of one GPU.
type gpuLine struct {
	name      string // host.name/hw.name, or hw.id without them
	workload  string // namespace/job, namespace/pod, or ""
	class     analysis.Class
	hint      analysis.Hint
	basis     analysis.Basis
	logged    analysis.Class // class at the previous summary
	straggler bool
	waiting   bool // busy at a small fraction of its power (usage waiting)
	held      bool // a pod or a Slurm job holds it
	slurm     bool // a Slurm job holds it
	health    gpuhealth.State
	price     float64
	last      int64
}

func newFleetSummary(logger *zap.Logger, cfg *Config) *fleetSummary {
	return &fleetSummary{
		logger: logger, interval: int64(cfg.SummaryInterval), first: int64(cmp.Or(cfg.FirstSummaryAfter, cfg.SummaryInterval)), ttl: int64(cfg.GPUTTL),
		currency: cfg.Cost.Currency, gpus: map[string]*gpuLine{},
	}
}

// observe takes one verdict, with the GPU's resource attributes.
func (f *fleetSummary) observe(v *analysis.Verdict, attrs pcommon.Map) {
	g, ok := f.gpus[v.ID]
	if !ok {
		g = &gpuLine{logged: v.Class}
		f.gpus[v.ID] = g
	}
	g.name, g.workload = gpuName(v.ID, attrs), workloadName(attrs)
	g.held = heldByWorkload(attrs)
	_, g.slurm = attrs.Get(metricnames.AttrSlurmJobID)
	g.class, g.hint, g.basis, g.straggler, g.price, g.last = v.Class, v.Hint, v.Basis, v.Straggler, v.Usage.PricePerHour, v.Time
	g.waiting = v.Usage.State == analysis.Waiting
	g.health = v.Health
	f.now = max(f.now, v.Time)
}

func gpuName(id string, attrs pcommon.Map) string {
	host, ok1 := attrs.Get(metricnames.AttrHostName)
	name, ok2 := attrs.Get(metricnames.AttrHWName)
	if !ok1 || !ok2 {
		return id
	}
	return host.AsString() + "/" + name.AsString()
}

func workloadName(attrs pcommon.Map) string {
	if job, ok := attrs.Get(metricnames.AttrSlurmJobID); ok && job.AsString() != "" {
		// "slurm job 4242 (climate)", as squeue would name it.
		s := "slurm job " + job.AsString()
		if name, ok := attrs.Get(metricnames.AttrSlurmJobName); ok && name.AsString() != "" {
			s += " (" + name.AsString() + ")"
		}
		return s
	}
	ns, ok := attrs.Get(metricnames.AttrK8sNamespaceName)
	if !ok {
		return ""
	}
	for _, k := range []string{metricnames.AttrK8sJobName, metricnames.AttrK8sDeploymentName, metricnames.AttrK8sPodName} {
		if v, ok := attrs.Get(k); ok && v.AsString() != "" {
			return ns.AsString() + "/" + v.AsString()
		}
	}
	return ns.AsString()
}

// flush logs if a summary is due at the latest data time.
func (f *fleetSummary) flush() {
	if f.now == 0 {
		return
	}
	if f.next == 0 {
		f.origin, f.next = f.now, f.now+f.first
		return
	}
	if f.now < f.next {
		return
	}
	// The next interval boundary after now, on the grid from the first
	// sample, in one step: a GPU stamped decades apart from the rest must
	// not make this loop for each interval in between.
	f.next = f.origin + ((f.now-f.origin)/f.interval+1)*f.interval
	ids := slices.SortedFunc(maps.Keys(f.gpus), func(a, b string) int {
		return cmp.Or(strings.Compare(f.gpus[a].name, f.gpus[b].name), strings.Compare(a, b))
	})
	live := ids[:0]
	for _, id := range ids {
		g := f.gpus[id]
		if f.now-g.last > f.ttl {
			delete(f.gpus, id) // forgotten by the analyzer too
			continue
		}
		live = append(live, id)
		if g.class != g.logged {
			fields := []zap.Field{zap.String("gpu", g.name), zap.String("from", g.logged.String()), zap.String("to", g.class.String())}
			if g.workload != "" {
				fields = append(fields, zap.String("workload", g.workload))
			}
			if g.hint != analysis.NoHint {
				fields = append(fields, zap.String("hint", g.hint.String()))
			}
			fields = appendBasis(fields, g.basis)
			f.logger.Info("GPU bottleneck changed", fields...)
			g.logged = g.class
		}
	}
	f.logger.Info(f.line(live))
}

// line sums up the GPUs: the busy classes, most GPUs first, and how many of
// them wait at low power; the idle ones, with what those held by a pod
// cost; the stragglers by name; then the GPUs in trouble.
func (f *fleetSummary) line(ids []string) string {
	var count [analysis.NumClasses]int
	var held, heldByJob, waiting int
	var wasted, waitingCost float64
	var stragglers []string
	var health [gpuhealth.NumStates]int
	for _, id := range ids {
		g := f.gpus[id]
		count[g.class]++
		health[g.health]++
		if g.class == analysis.Idle && g.held {
			held++
			if g.slurm {
				heldByJob++
			}
			wasted += g.price
		}
		if g.waiting {
			waiting++
			waitingCost += g.price
		}
		if g.straggler {
			s := g.name
			if g.workload != "" {
				s += " in " + g.workload
			}
			stragglers = append(stragglers, s)
		}
	}
	var parts []string
	trouble := func(c analysis.Class) bool {
		return c == analysis.Throttled || c == analysis.Faulted || c == analysis.Unknown
	}
	var busy []analysis.Class
	for c := range analysis.NumClasses {
		if count[c] > 0 && c != analysis.Idle && !trouble(c) {
			busy = append(busy, c)
		}
	}
	slices.SortStableFunc(busy, func(a, b analysis.Class) int { return count[b] - count[a] })
	for _, c := range busy {
		parts = append(parts, fmt.Sprintf("%d %s", count[c], c))
	}
	if waiting > 0 {
		// Within the busy classes: resident kernels at a small fraction of
		// the GPUs' power, paid for and not working.
		s := fmt.Sprintf("%d waiting at low power", waiting)
		if waitingCost > 0 {
			s += fmt.Sprintf(" (%s/h)", f.money(waitingCost))
		}
		parts = append(parts, s)
	}
	if n := count[analysis.Idle]; n > 0 {
		s := fmt.Sprintf("%d idle", n)
		by := "a pod"
		switch heldByJob {
		case 0:
		case held:
			by = "a Slurm job"
		default:
			by = "a pod or a Slurm job"
		}
		switch {
		case held > 0 && wasted > 0:
			s += fmt.Sprintf(" (%d held by %s: %s/h wasted)", held, by, f.money(wasted))
		case held > 0:
			s += fmt.Sprintf(" (%d held by %s)", held, by)
		}
		parts = append(parts, s)
	}
	if n := len(stragglers); n > 0 {
		shown := stragglers[:min(n, 3)]
		s := fmt.Sprintf("%d straggler %s", n, strings.Join(shown, ", "))
		if n > 1 {
			s = fmt.Sprintf("%d stragglers: %s", n, strings.Join(shown, ", "))
		}
		if n > len(shown) {
			s += fmt.Sprintf(" and %d more", n-len(shown))
		}
		parts = append(parts, s)
	}
	for _, c := range []analysis.Class{analysis.Throttled, analysis.Faulted, analysis.Unknown} {
		if count[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", count[c], c))
		}
	}
	if h := healthPart(health); h != "" {
		parts = append(parts, h)
	}
	head := fmt.Sprintf("%d GPUs", len(ids))
	if len(ids) == 1 {
		head = "1 GPU"
	}
	if len(parts) == 0 {
		return head
	}
	return head + ": " + strings.Join(parts, ", ")
}

func (f *fleetSummary) money(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if f.currency == "USD" {
		return "$" + s
	}
	return s + " " + f.currency
}

// appendBasis adds what a class rests on to a class change's log fields:
// its evidence, and a collective's scope, where there are.
func appendBasis(fields []zap.Field, b analysis.Basis) []zap.Field {
	if b.Evidence != analysis.NoEvidence {
		fields = append(fields, zap.String("evidence", b.Evidence.String()))
	}
	if b.Scope != analysis.NoScope {
		fields = append(fields, zap.String("scope", b.Scope.String()))
	}
	return fields
}
