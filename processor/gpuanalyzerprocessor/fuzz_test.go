package gpuanalyzerprocessor

import (
	"bytes"
	"context"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/otelcol-gpu/otelcol-gpu/internal/badotlp"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadatatest"
)

// FuzzConfig: any YAML under gpu_analyzer unmarshals and validates or is
// refused with a message; a configuration that validates builds an
// analyzer that processes a batch.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_analyzer", "testdata/config.yaml", "../../examples/*/*.yaml") < 5 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("window: 1ns\ngpu_ttl: 1ns\nmax_gpus: 1\nstraggler: {min_group_size: 0, sustain: -1s}"))
	f.Add([]byte("cost: {default_per_gpu_hour: .nan, per_gpu_hour: {'': 1e308}, overrides: [{attribute: x, factor: .inf}]}"))
	f.Add([]byte("bottleneck: {throttle_reasons: [nope], critical_xids: [4294967295]}\nalerts: {gpu_overheating: {for: -1s, threshold: .nan}}"))
	batch := badotlp.Cases(time.Unix(1767225600, 0))["good"]
	configfuzz.Fuzz(f, createDefaultConfig, func(_ *testing.T, cfg component.Config) {
		p, err := newAnalyzerProcessor(cfg.(*Config), processortest.NewNopSettings(metadata.Type))
		if err != nil {
			return
		}
		md := pmetric.NewMetrics()
		batch.CopyTo(md)
		_, _ = p.processMetrics(context.Background(), md)
		_ = p.shutdown(context.Background())
	})
}

// FuzzConsume: any OTLP batch passes through unchanged, with the
// analyzer's verdicts only added, and nothing panics.
func FuzzConsume(f *testing.F) {
	m := pmetric.ProtoMarshaler{}
	for _, md := range badotlp.Cases(time.Unix(1767225600, 0)) {
		b, err := m.MarshalMetrics(md)
		require.NoError(f, err)
		f.Add(b)
	}
	fl := newFleet(f, simulated.DefaultConfig())
	b, err := m.MarshalMetrics(fl.next(f))
	require.NoError(f, err)
	f.Add(b)

	cfg := createDefaultConfig().(*Config)
	cfg.Cost.DefaultPerGPUHour = 2
	cfg.SummaryInterval = time.Minute
	p, err := newAnalyzerProcessor(cfg, processortest.NewNopSettings(metadata.Type))
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, data []byte) {
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(data)
		if err != nil {
			return
		}
		in, _ := m.MarshalMetrics(md)
		scopes := make([]int, md.ResourceMetrics().Len())
		for i := range scopes {
			scopes[i] = md.ResourceMetrics().At(i).ScopeMetrics().Len()
		}
		out, err := p.processMetrics(context.Background(), md)
		require.NoError(t, err)
		require.Equal(t, len(scopes), out.ResourceMetrics().Len())
		// Remove what the analyzer added: the rest is the input, unchanged.
		for i, n := range scopes {
			sms := out.ResourceMetrics().At(i).ScopeMetrics()
			k := 0
			sms.RemoveIf(func(pmetric.ScopeMetrics) bool { k++; return k > n })
		}
		got, _ := m.MarshalMetrics(out)
		require.True(t, bytes.Equal(in, got), "the batch changed on its way through")
	})
}

// TestBadInputCounted: each bad case passes through, and its bad points
// are counted by reason.
func TestBadInputCounted(t *testing.T) {
	now := time.Unix(1767225600, 0)
	cases := badotlp.Cases(now)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	type counts struct{ unanalyzed, ignored, future, wrongType int64 }
	want := map[string]counts{
		"nan":  {ignored: 17}, // every reading the analyzer reads (the verdict and the queue are not)
		"inf":  {ignored: 17},
		"-inf": {ignored: 17},
		// Negative readings: all but the XID counter (its code is read, its
		// value 0 or more is checked the same way).
		"negative":                  {ignored: 17},
		"no hw.id":                  {unanalyzed: 19},
		"hw.id not a string":        {unanalyzed: 19},
		"histogram for a gauge":     {wrongType: 5}, // not the verdict's: the analyzer does not read it
		"huge":                      {ignored: 11},  // the ratios, temperature, clock, reasons and step time
		"timestamp a century ahead": {future: 19},
		"timestamp year 2262":       {future: 19},
		"timestamp beyond int64":    {future: 19},
		"xid codes":                 {ignored: 3},
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			tel := componenttest.NewTelemetry()
			t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
			p, err := newAnalyzerProcessor(createDefaultConfig().(*Config), metadatatest.NewSettings(tel))
			require.NoError(t, err)
			p.now = func() time.Time { return now }
			md := cases[name]
			before := md.DataPointCount()
			out, err := p.processMetrics(context.Background(), md)
			require.NoError(t, err)
			require.GreaterOrEqual(t, out.DataPointCount(), before, "nothing accepted is lost")

			w := want[name]
			sum := func(name string) (n int64, byReason map[string]int64) {
				byReason = map[string]int64{}
				rm, err := tel.GetMetric(name)
				if err != nil {
					return 0, byReason
				}
				for _, dp := range rm.Data.(metricdata.Sum[int64]).DataPoints {
					n += dp.Value
					r, _ := dp.Attributes.Value(attribute.Key("reason"))
					byReason[r.AsString()] += dp.Value
				}
				return n, byReason
			}
			unanalyzed, _ := sum("otelcol_processor_gpu_analyzer_unanalyzed_data_points")
			ignored, _ := sum("otelcol_processor_gpu_analyzer_values_ignored")
			_, rejected := sum("otelcol_processor_gpu_analyzer_rejected_data_points")
			got := counts{unanalyzed, ignored, rejected["future_timestamp"], rejected["wrong_type"]}
			require.Equal(t, w, got)
		})
	}
}
