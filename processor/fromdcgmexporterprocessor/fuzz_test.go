package fromdcgmexporterprocessor

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/badotlp"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor/internal/metadata"
)

// FuzzConfig: any YAML under from_dcgm_exporter unmarshals and validates
// or is refused with a message; a configuration that validates builds a
// processor that translates a page.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "from_dcgm_exporter", "testdata/config.yaml", "../../examples/*/*.yaml") < 3 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("max_gpus: 1\ngpu_ttl: 1ns\nkeep_originals: true"))
	f.Add([]byte("max_gpus: -9223372036854775808\ngpu_ttl: 1e400s"))
	page := scrape(f, capturedPage(f, 3), time.Now(), time.Now())
	configfuzz.Fuzz(f, createDefaultConfig, func(_ *testing.T, cfg component.Config) {
		p, err := newTranslator(cfg.(*Config), processortest.NewNopSettings(metadata.Type))
		if err != nil {
			return
		}
		md := pmetric.NewMetrics()
		page.CopyTo(md)
		_, _ = p.processMetrics(context.Background(), md)
		_ = p.shutdown(context.Background())
	})
}

// badScrapes are dcgm-exporter scrapes gone wrong: NaN and infinite
// values, staleness markers, no UUID, a UUID on two hosts, labels of the
// wrong type, MIG labels that are not numbers, absurd timestamps, XID
// counts out of range, histograms under DCGM names.
func badScrapes(tb testing.TB) []pmetric.Metrics {
	tb.Helper()
	var out []pmetric.Metrics
	for _, text := range []string{
		"DCGM_FI_DEV_GPU_UTIL{" + labels + "} NaN\nDCGM_FI_DEV_GPU_TEMP{" + labels + "} +Inf\nDCGM_FI_DEV_FB_USED{" + labels + "} -Inf",
		"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\nDCGM_FI_DEV_GPU_UTIL{UUID=\"\"} 50",
		"DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"a\"} 50\nDCGM_FI_DEV_GPU_TEMP{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"b\"} 50",
		"DCGM_FI_DEV_GPU_UTIL{gpu=\"-1\",UUID=\"GPU-a\",GPU_I_ID=\"-2\"} 50\nDCGM_FI_DEV_GPU_UTIL{gpu=\"99999999999999999999\",UUID=\"GPU-b\",GPU_I_ID=\"x\"} 50",
		"DCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-a\",xid=\"4294967296\"} 1\nDCGM_EXP_XID_ERRORS_COUNT{gpu=\"0\",UUID=\"GPU-a\",xid=\"79\"} 1e300\nDCGM_FI_DEV_XID_ERRORS{gpu=\"0\",UUID=\"GPU-a\"} 1e19",
		"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{" + labels + "} 1.7976931348623157e308\nDCGM_FI_PROF_SM_ACTIVE{" + labels + "} 2",
	} {
		out = append(out, page(tb, 0, text))
	}
	// Labels that are not strings, a staleness marker, timestamps at the
	// ends of time, a histogram under a DCGM name.
	md := page(tb, 0, "DCGM_FI_DEV_GPU_UTIL{"+labels+"} 50\nDCGM_FI_DEV_SM_CLOCK{"+labels+"} 1000")
	ms := md.ResourceMetrics().At(0).ScopeMetrics().At(0).Metrics()
	util := ms.At(0).Gauge().DataPoints()
	util.At(0).Attributes().PutInt("UUID", 7)
	util.At(0).Attributes().PutEmptyMap("gpu")
	stale := ms.At(1).Gauge().DataPoints().At(0)
	stale.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
	stale.SetDoubleValue(math.NaN())
	for _, ts := range []pcommon.Timestamp{0, 1, math.MaxInt64, math.MaxUint64} {
		dp := util.AppendEmpty()
		dp.SetTimestamp(ts)
		dp.SetIntValue(math.MinInt64)
		dp.Attributes().PutStr("UUID", "GPU-t")
	}
	h := ms.AppendEmpty()
	h.SetName("DCGM_FI_DEV_POWER_USAGE")
	h.SetEmptyHistogram().DataPoints().AppendEmpty()
	out = append(out, md)
	return out
}

// FuzzConsume: any OTLP batch goes through without a panic or an error;
// what the processor does not translate comes out unchanged and first;
// everything it adds is the dcgm receiver's, one resource per device with
// a hw.id, with finite values only.
func FuzzConsume(f *testing.F) {
	m := pmetric.ProtoMarshaler{}
	var seeds []pmetric.Metrics
	for _, md := range badotlp.Cases(t0) {
		seeds = append(seeds, md)
	}
	seeds = append(seeds, badScrapes(f)...)
	for n := 1; n <= 5; n++ {
		seeds = append(seeds, scrape(f, capturedPage(f, n), t0.Add(time.Duration(n)*15*time.Second), t0))
	}
	for _, md := range seeds {
		b, err := m.MarshalMetrics(md)
		require.NoError(f, err)
		f.Add(b)
	}
	p, err := newTranslator(defaultConfig(), processortest.NewNopSettings(metadata.Type))
	require.NoError(f, err)
	p.now = func() time.Time { return t0.Add(time.Hour) }
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(data)
		if err != nil {
			return
		}
		rest := pmetric.NewMetrics()
		md.CopyTo(rest)
		dropTranslated(rest)
		want, _ := m.MarshalMetrics(rest)

		out, err := p.processMetrics(context.Background(), md)
		require.NoError(t, err)
		n := rest.ResourceMetrics().Len()
		require.GreaterOrEqual(t, out.ResourceMetrics().Len(), n)
		added := pmetric.NewMetrics()
		out.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool {
			if n > 0 {
				n--
				return false
			}
			rm.CopyTo(added.ResourceMetrics().AppendEmpty())
			return true
		})
		got, _ := m.MarshalMetrics(out)
		require.True(t, bytes.Equal(want, got), "what is not translated changed on its way through")
		rms := added.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			rm := rms.At(i)
			id, ok := rm.Resource().Attributes().Get(metricnames.AttrHWID)
			require.True(t, ok && id.Str() != "", "a translated resource without hw.id")
			sms := rm.ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				require.Equal(t, receiverScope, sms.At(j).Scope().Name())
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					finite(t, ms.At(k))
				}
			}
		}
	})
}

func finite(t *testing.T, m pmetric.Metric) {
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		dps = m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		dps = m.Sum().DataPoints()
	default:
		t.Fatalf("%s: a %v in the translation", m.Name(), m.Type())
	}
	for i := 0; i < dps.Len(); i++ {
		if dp := dps.At(i); dp.ValueType() == pmetric.NumberDataPointValueTypeDouble {
			v := dp.DoubleValue()
			require.False(t, math.IsNaN(v) || math.IsInf(v, 0), "%s: %v", m.Name(), v)
		}
	}
}
