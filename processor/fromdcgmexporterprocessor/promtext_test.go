package fromdcgmexporterprocessor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
)

// scrape turns a /metrics page in Prometheus' text format into the batch
// the contrib prometheus receiver (v0.161) delivers for one scrape: one
// resource for the target (service.name = job, service.instance.id =
// instance, server.address, server.port, url.scheme), the receiver's
// scope, one metric per family (gauge as a gauge, counter as a cumulative
// monotonic sum with its start time, untyped as a gauge), every point
// stamped with the scrape's time and labelled with the series' labels, and
// the synthetic up and scrape_* gauges. The e2e test checks the real
// receiver against what this gives.
func scrape(tb testing.TB, page []byte, at time.Time, start time.Time) pmetric.Metrics {
	tb.Helper()
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	ra := rm.Resource().Attributes()
	ra.PutStr("service.name", "dcgm-exporter")
	ra.PutStr("service.instance.id", "127.0.0.1:9400")
	ra.PutStr("server.address", "127.0.0.1")
	ra.PutStr("server.port", "9400")
	ra.PutStr("url.scheme", "http")
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver")
	sm.Scope().SetVersion("0.161.0")
	ms := sm.Metrics()
	ts := pcommon.NewTimestampFromTime(at)

	types := map[string]string{}
	help := map[string]string{}
	metrics := map[string]pmetric.Metric{}
	samples := 0
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = strings.TrimSpace(typ)
			continue
		}
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, h, _ := strings.Cut(rest, " ")
			help[name] = h
			continue
		}
		if strings.HasPrefix(line, "#") {
			continue
		}
		name, labels, value, err := parseSample(line)
		require.NoError(tb, err, line)
		samples++
		m, ok := metrics[name]
		if !ok {
			m = ms.AppendEmpty()
			m.SetName(name)
			m.SetDescription(help[name])
			if types[name] == "counter" {
				s := m.SetEmptySum()
				s.SetIsMonotonic(true)
				s.SetAggregationTemporality(pmetric.AggregationTemporalityCumulative)
			} else {
				m.SetEmptyGauge()
			}
			metrics[name] = m
		}
		var dp pmetric.NumberDataPoint
		if m.Type() == pmetric.MetricTypeSum {
			dp = m.Sum().DataPoints().AppendEmpty()
			dp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		} else {
			dp = m.Gauge().DataPoints().AppendEmpty()
		}
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(value)
		for _, kv := range labels {
			dp.Attributes().PutStr(kv[0], kv[1])
		}
	}
	require.NoError(tb, sc.Err())
	for _, g := range []struct {
		name string
		v    float64
	}{
		{"up", 1}, {"scrape_duration_seconds", 0.004}, {"scrape_samples_scraped", float64(samples)},
		{"scrape_samples_post_metric_relabeling", float64(samples)}, {"scrape_series_added", 0},
	} {
		m := ms.AppendEmpty()
		m.SetName(g.name)
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(g.v)
	}
	return md
}

// parseSample parses `name{k="v",...} value`.
func parseSample(line string) (string, [][2]string, float64, error) {
	var labels [][2]string
	i := strings.IndexAny(line, "{ ")
	if i < 0 {
		return "", nil, 0, errors.New("no value")
	}
	name, rest := line[:i], line[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if strings.HasPrefix(rest, "}") {
				rest = rest[1:]
				break
			}
			eq := strings.Index(rest, `="`)
			if eq < 0 {
				return "", nil, 0, fmt.Errorf("bad label at %q", rest)
			}
			key := rest[:eq]
			rest = rest[eq+2:]
			var v strings.Builder
			j := 0
			for ; j < len(rest) && rest[j] != '"'; j++ {
				if rest[j] == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(rest[j])
					}
					continue
				}
				v.WriteByte(rest[j])
			}
			if j == len(rest) {
				return "", nil, 0, errors.New("unterminated label value")
			}
			labels = append(labels, [2]string{key, v.String()})
			rest = rest[j+1:]
		}
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, errors.New("no value")
	}
	var v float64
	switch fields[0] {
	case "NaN":
		v = math.NaN()
	case "+Inf":
		v = math.Inf(1)
	case "-Inf":
		v = math.Inf(-1)
	default:
		var err error
		if v, err = strconv.ParseFloat(fields[0], 64); err != nil {
			return "", nil, 0, err
		}
	}
	return name, labels, v, nil
}
