package promfake

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	ot "github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// series collects samples by label set, in the order series first appear.
type series struct {
	byKey map[string]*Series
	order []string
}

func (c *series) add(labels map[string]string, x Sample) {
	if c.byKey == nil {
		c.byKey = map[string]*Series{}
	}
	k := labelKey(labels)
	s := c.byKey[k]
	if s == nil {
		s = &Series{Labels: maps.Clone(labels)}
		c.byKey[k] = s
		c.order = append(c.order, k)
	}
	s.Samples = append(s.Samples, x)
}

func (c *series) list() []Series {
	out := make([]Series, len(c.order))
	for i, k := range c.order {
		out[i] = *c.byKey[k]
	}
	return out
}

func millis(t float64) int64 { return int64(math.Round(t * 1000)) }

// DCGMExporter returns a trace's rows as dcgm-exporter's series: a
// DCGM_FI_* gauge per field, labelled UUID, gpu, modelName, Hostname, and
// namespace, pod, container where a pod holds the GPU. Its XID gauge holds
// the last XID seen, 0 before the first, labelled with the code (err_code,
// err_msg), as dcgm-exporter's is: each XID starts a new series.
func DCGMExporter(batches [][]trace.Row) []Series {
	var c series
	lastXID := map[string]float64{}
	for _, b := range batches {
		for i := range b {
			r := &b[i]
			labels := map[string]string{"UUID": r.UUID, "modelName": r.Model}
			if r.HasGPU {
				labels["gpu"] = strconv.Itoa(r.GPU)
				labels["device"] = "nvidia" + strconv.Itoa(r.GPU)
			}
			if r.Host != "" {
				labels["Hostname"] = r.Host
			}
			if r.Pod != "" {
				labels["namespace"], labels["pod"], labels["container"] = r.Namespace, r.Pod, r.Container
			}
			for _, f := range dcgmfield.All() {
				v, ok := r.Values.Get(f)
				if !ok {
					continue
				}
				l := labels
				if f == dcgmfield.XIDErrors {
					if v > 0 {
						lastXID[r.UUID] = v
					}
					v = lastXID[r.UUID]
					l = maps.Clone(labels)
					l["err_code"] = strconv.FormatFloat(v, 'f', -1, 64)
					l["err_msg"] = xidText(v)
				}
				l["__name__"] = f.String()
				c.add(l, Sample{T: millis(r.Time), V: v})
			}
		}
	}
	return c.list()
}

// xidText is dcgm-exporter's err_msg for a few XIDs.
func xidText(code float64) string {
	switch code {
	case 0:
		return "No Error"
	case 13:
		return "Graphics Engine Exception"
	case 48:
		return "DBE (Double Bit Error) ECC Error"
	case 79:
		return "GPU has fallen off the bus"
	}
	return "Unknown Error"
}

// Collector returns a trace's rows as the collector leaves them in
// Prometheus: mapped by the dcgm receiver, with its default settings, as it
// maps what a backend collects (as gpureplay does), then named by the
// OpenTelemetry-to-Prometheus translation that the prometheus and
// prometheusremotewrite exporters use, with their unit and type suffixes
// (or without, suffixes false), resource attributes as labels
// (resource_to_telemetry_conversion).
func Collector(batches [][]trace.Row, suffixes bool) ([]Series, error) {
	f := dcgmreceiver.NewFactory()
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), f.CreateDefaultConfig(), consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	rcv, ok := r.(offline.Receiver)
	if !ok {
		return nil, errors.New("dcgm receiver: cannot be driven offline")
	}
	devices := map[string]*gpu.Device{}
	var c series
	for _, b := range batches {
		samples := make([]gpu.Sample, len(b))
		for i := range b {
			// As gpureplay samples the row, at the millisecond Prometheus
			// keeps of its time.
			samples[i] = b[i].Sample(devices)
			samples[i].Time = time.UnixMilli(millis(b[i].Time))
		}
		if err := addOTLP(&c, rcv.Map(samples), suffixes); err != nil {
			return nil, err
		}
	}
	return c.list(), nil
}

func addOTLP(c *series, md pmetric.Metrics, suffixes bool) error {
	namer := ot.MetricNamer{WithMetricSuffixes: suffixes}
	var labeler ot.LabelNamer
	putAll := func(dst map[string]string, attrs pcommon.Map) error {
		var err error
		attrs.Range(func(k string, v pcommon.Value) bool {
			var l string
			if l, err = labeler.Build(k); err == nil {
				dst[l] = v.AsString()
			}
			return err == nil
		})
		return err
	}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		rm := rms.At(i)
		base := map[string]string{}
		if err := putAll(base, rm.Resource().Attributes()); err != nil {
			return err
		}
		sms := rm.ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			ms := sms.At(j).Metrics()
			for k := 0; k < ms.Len(); k++ {
				m := ms.At(k)
				var dps pmetric.NumberDataPointSlice
				typ := ot.MetricType(ot.MetricTypeGauge)
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					dps = m.Gauge().DataPoints()
				case pmetric.MetricTypeSum:
					dps = m.Sum().DataPoints()
					typ = ot.MetricTypeNonMonotonicCounter
					if m.Sum().IsMonotonic() {
						typ = ot.MetricTypeMonotonicCounter
					}
				default:
					continue
				}
				name, err := namer.Build(ot.Metric{Name: m.Name(), Unit: m.Unit(), Type: typ})
				if err != nil {
					return err
				}
				for l := 0; l < dps.Len(); l++ {
					dp := dps.At(l)
					labels := maps.Clone(base)
					labels["__name__"] = name
					if err := putAll(labels, dp.Attributes()); err != nil {
						return err
					}
					v := dp.DoubleValue()
					if dp.ValueType() == pmetric.NumberDataPointValueTypeInt {
						v = float64(dp.IntValue())
					}
					c.add(labels, Sample{T: dp.Timestamp().AsTime().UnixMilli(), V: v})
				}
			}
		}
	}
	return nil
}

// WriteOpenMetrics writes series as OpenMetrics text with timestamps, one
// metric family after another, for `promtool tsdb create-blocks-from
// openmetrics`.
func WriteOpenMetrics(w io.Writer, ss []Series) error {
	byName := map[string][]*Series{}
	for i := range ss {
		n := ss[i].Labels["__name__"]
		byName[n] = append(byName[n], &ss[i])
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	sort.Strings(names)
	bw := bufio.NewWriter(w)
	for _, n := range names {
		fmt.Fprintf(bw, "# TYPE %s gauge\n", n)
		for _, s := range byName[n] {
			keys := make([]string, 0, len(s.Labels))
			for k := range s.Labels {
				if k != "__name__" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			var lb strings.Builder
			for i, k := range keys {
				if i > 0 {
					lb.WriteByte(',')
				}
				fmt.Fprintf(&lb, "%s=\"%s\"", k, omEscape.Replace(s.Labels[k]))
			}
			labels := lb.String()
			if labels != "" {
				labels = "{" + labels + "}"
			}
			for _, x := range s.Samples {
				fmt.Fprintf(bw, "%s%s %s %s\n", n, labels, formatValue(x.V), strconv.FormatFloat(float64(x.T)/1000, 'f', 3, 64))
			}
		}
	}
	fmt.Fprintln(bw, "# EOF")
	return bw.Flush()
}

var omEscape = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
