package record

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// ident is a GPU's identity from a series' labels.
type ident struct {
	uuid, host, model, namespace, pod, container, job string
	gpu                                               int
	hasGPU                                            bool
}

// identify reads a series' GPU. dcgm-exporter labels a MIG instance with
// its parent's UUID and its GPU instance id (GPU_I_ID), not with the
// instance's own UUID: such a series' uuid is "PARENT-UUID/giN". Where
// Prometheus renamed dcgm-exporter's pod labels because the scrape target
// had its own (exported_pod, ...), those are the workload's.
func identify(sh shape, l map[string]string) (ident, bool) {
	pick := func(names ...string) string {
		for _, n := range names {
			if v := l[n]; v != "" {
				return v
			}
		}
		return ""
	}
	var id ident
	var gpu string
	if sh == shapeDCGM {
		if id.uuid = pick(dcgmUUID, "uuid"); id.uuid == "" {
			return id, false
		}
		if gi := l[dcgmMIG]; gi != "" {
			id.uuid += "/gi" + gi
		}
		id.host = pick(dcgmHost, otelHost)
		gpu = pick(dcgmGPU, otelGPU)
		id.model = pick(dcgmModel, otelModel)
		id.namespace = pick("exported_"+dcgmNamespace, dcgmNamespace, otelNamespace)
		id.pod = pick("exported_"+dcgmPod, dcgmPod, otelPod)
		id.container = pick("exported_"+dcgmContainer, dcgmContainer, otelContainer)
		id.job = l[otelJob]
	} else {
		if id.uuid = l[otelUUID]; id.uuid == "" {
			return id, false
		}
		id.host, gpu, id.model = l[otelHost], l[otelGPU], l[otelModel]
		id.namespace, id.pod, id.container, id.job = l[otelNamespace], l[otelPod], l[otelContainer], l[otelJob]
	}
	if n, err := strconv.Atoi(gpu); err == nil && n >= 0 {
		id.gpu, id.hasGPU = n, true
	}
	return id, true
}

// What a pending row holds beside its cells.
const (
	hasUtil uint8 = 1 << iota
	hasCopy
	hasMemUtil
	hasGR
	hasDRAM
)

// pendingRow is one GPU at one timestamp, being filled.
type pendingRow struct {
	row  trace.Row
	otel bool // has the collector's series
	// XIDs that occurred at this sample; xidZero: an XID series said none.
	xids    []uint32
	xidZero bool
	notes   []string
	// The collector's ratios that give trace fields only together.
	has                                     uint8
	utilRatio, copyRatio, memUtil, gr, dram float64
}

func (wr *windowRows) row(t int64, id *ident, sh shape) *pendingRow {
	k := rowKey{t, id.uuid}
	p := wr.rows[k]
	if p == nil {
		p = &pendingRow{row: trace.Row{Time: float64(t) / 1000, UUID: id.uuid}}
		wr.rows[k] = p
		if first, ok := wr.first[id.uuid]; !ok || t < first {
			wr.first[id.uuid] = t
		}
	}
	r := &p.row
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&r.Host, id.host)
	set(&r.Model, id.model)
	set(&r.Namespace, id.namespace)
	set(&r.Pod, id.pod)
	set(&r.Container, id.container)
	set(&r.Job, id.job)
	if !r.HasGPU && id.hasGPU {
		r.GPU, r.HasGPU = id.gpu, true
	}
	if sh == shapeOTel {
		p.otel = true
	}
	return p
}

// finish fills the cells that come from several of the collector's series,
// and the XID cell.
func (p *pendingRow) finish() {
	vs := &p.row.Values
	// hw.gpu.memory.utilization is FB_USED / (FB_USED + FB_FREE), so FB_FREE
	// is FB_USED / utilization - FB_USED, in whole MiB as DCGM gives it;
	// with nothing used, the utilization does not tell.
	if p.has&hasMemUtil != 0 && !vs.Has(f.FBFree) && p.memUtil > 0 && p.memUtil <= 1 {
		if used, ok := vs.Get(f.FBUsed); ok {
			if free := math.Round(used/p.memUtil - used); f.Valid(f.FBFree, free) {
				vs.Set(f.FBFree, free)
			}
		}
	}
	// Without profiling the receiver reports GPU_UTIL / 100 as the graphics
	// engine activity and MEM_COPY_UTIL / 100 as DRAM activity: a GPU
	// without SM activity whose value is exactly that did not report the
	// profiling field.
	noProf := !vs.Has(f.SMActive)
	if p.has&hasGR != 0 && !vs.Has(f.GREngineActive) && !(noProf && p.has&hasUtil != 0 && p.gr == p.utilRatio) && f.Valid(f.GREngineActive, p.gr) {
		vs.Set(f.GREngineActive, p.gr)
	}
	if p.has&hasDRAM != 0 && !vs.Has(f.DRAMActive) && !(noProf && p.has&hasCopy != 0 && p.dram == p.copyRatio) && f.Valid(f.DRAMActive, p.dram) {
		vs.Set(f.DRAMActive, p.dram)
	}
	switch {
	case len(p.xids) > 0:
		vs.Set(f.XIDErrors, float64(pickXID(p.xids)))
	case (p.xidZero || p.otel) && !vs.Has(f.XIDErrors):
		vs.Set(f.XIDErrors, 0)
	}
}

// round15 rounds to 15 significant digits: a unit conversion's last-bit
// error (0.07 * 100 = 7.000000000000001) does not reach the trace.
func round15(v float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 15, 64), 64)
	if err != nil {
		return v
	}
	return r
}

// seriesKey identifies a series by all its labels.
func seriesKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte(0)
		b.WriteString(labels[k])
		b.WriteByte(0)
	}
	return b.String()
}

// formatSeries writes a series as PromQL would: name{label="value", ...}.
func formatSeries(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		if k != "__name__" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	s := labels["__name__"] + "{" + strings.Join(parts, ", ") + "}"
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
