package dcgmreceiver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// semconvDepartures are where the receiver's hw.* metrics knowingly depart
// from the conventions (v1.44.0, hardware), each with its reason; the
// README's "Conformance" section lists them too. Anything not listed here
// must conform. A departure listed but no longer seen fails the test, so
// that the list stays true; one of a metric the receiver does not declare
// yet is only logged once it is, since the metric is then checked like
// the others.
var semconvDepartures = map[string]string{
	"hw.errors: error.type=deferred": "AMD's deferred errors (uncorrectable, not yet consumed) are a kind the GPU refinement does not name; counting them as uncorrected would page for errors no workload has met",
}

// semconvDeclarationOnly are the departures about a metric the receiver
// does not declare: once it is, the entry is stale but harmless.
var semconvDeclarationOnly = map[string]bool{}

// semconvFleet is a simulated fleet with every kind of device the receiver
// reports: NVIDIA GPUs with and without HBM and profiling, MIG instances,
// AMD MI300X (also in CPX partitions) and MI250, with ECC errors on both
// vendors.
func semconvFleet() simulated.Config {
	return simulated.Config{
		Seed: 3, Hosts: 4, GPUsPerHost: 2, HostPrefix: "node-", Models: []string{"h100", "mi300x", "t4", "mi250"},
		Workloads: []simulated.Workload{
			{Name: "mig", Kind: simulated.MIG, Namespace: "inference", GPUs: "0/1", Instances: 2,
				Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			{Name: "cpx", Kind: simulated.CPX, Namespace: "serving", GPUs: "1/1",
				Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
			{Name: "train", Kind: simulated.Training, Namespace: "ml", GPUs: "2-3/*",
				Phases: []simulated.Phase{{Kind: simulated.MemoryBound}}},
			{Name: "serve", Kind: simulated.Serving, Namespace: "serving", GPUs: "0-1/0",
				Phases: []simulated.Phase{{Kind: simulated.ComputeBound}}},
		},
		Faults: []simulated.Fault{
			{Kind: simulated.ECC, GPUs: "0/0"},
			{Kind: simulated.ECC, GPUs: "1/0"},
		},
	}
}

// receiverMetadata is what the conformance test reads of metadata.yaml.
type receiverMetadata struct {
	ResourceAttributes map[string]struct{} `yaml:"resource_attributes"`
	Attributes         map[string]struct {
		Enum []string `yaml:"enum"`
	} `yaml:"attributes"`
	Metrics map[string]struct {
		Enabled bool   `yaml:"enabled"`
		Unit    string `yaml:"unit"`
		Gauge   *struct {
			ValueType string `yaml:"value_type"`
		} `yaml:"gauge"`
		Sum *struct {
			ValueType string `yaml:"value_type"`
			Monotonic bool   `yaml:"monotonic"`
		} `yaml:"sum"`
		Attributes []string `yaml:"attributes"`
	} `yaml:"metrics"`
}

// semconvFindings collects departures from the conventions, each under a
// key the departures list can name.
type semconvFindings map[string]string

func (f semconvFindings) add(key, format string, args ...any) {
	if _, ok := f[key]; !ok {
		f[key] = fmt.Sprintf(format, args...)
	}
}

// TestSemconvConformance checks every hw.* metric the receiver declares
// and emits against the conventions' hardware model: name, instrument,
// unit, value type, required attributes (the resource's included) and
// allowed values; and that every metric the conventions define for GPUs
// is declared.
func TestSemconvConformance(t *testing.T) {
	model := loadSemconv(t, semconvModelDir(t))
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md receiverMetadata
	require.NoError(t, yaml.Unmarshal(raw, &md))
	addAnalyzerMetrics(t, &md)

	found := semconvFindings{}
	declared := checkDeclarations(model, &md, found)
	emitted := checkEmitted(t, model, analyzeSemconvFleet(t, scrapeSemconvFleet(t)), found)
	for _, name := range declared {
		if md.Metrics[name].Enabled && !emitted[name] {
			t.Errorf("%s is declared and enabled but the simulated fleet emits none: the data check does not cover it", name)
		}
	}

	keys := make([]string, 0, len(found))
	for k := range found {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if reason, ok := semconvDepartures[k]; ok {
			t.Logf("departure %s (%s): %s", k, found[k], reason)
			continue
		}
		t.Errorf("%s: %s", k, found[k])
	}
	for k := range semconvDepartures {
		if _, ok := found[k]; ok {
			continue
		}
		if semconvDeclarationOnly[k] {
			t.Logf("departure %q is no longer seen: remove it from semconvDepartures and the README", k)
			continue
		}
		t.Errorf("departure %q is no longer seen: remove it from semconvDepartures and the README", k)
	}
}

// checkDeclarations checks metadata.yaml's hw.* metrics, and returns their
// names.
func checkDeclarations(model *semconvModel, md *receiverMetadata, found semconvFindings) []string {
	var names []string
	for name := range md.Metrics {
		if strings.HasPrefix(name, "hw.") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range model.gpuMetrics() {
		if !slices.Contains(names, name) {
			found.add(name+": not declared", "the conventions define it for GPUs")
		}
	}
	for _, name := range names {
		m := md.Metrics[name]
		spec, ok := model.spec(name)
		if !ok {
			found.add(name+": not in the conventions", "declared in metadata.yaml")
			continue
		}
		var instrument, valueType string
		switch {
		case m.Gauge != nil:
			instrument, valueType = "gauge", m.Gauge.ValueType
		case m.Sum != nil && m.Sum.Monotonic:
			instrument, valueType = "counter", m.Sum.ValueType
		case m.Sum != nil:
			instrument, valueType = "updowncounter", m.Sum.ValueType
		}
		if instrument != spec.instrument {
			found.add(name+": instrument", "metadata.yaml declares a %s, the conventions a %s", instrument, spec.instrument)
		}
		if m.Unit != spec.unit {
			found.add(name+": unit", "metadata.yaml declares %q, the conventions %q", m.Unit, spec.unit)
		}
		if valueType != spec.valueType {
			found.add(name+": value type", "metadata.yaml declares %s, the conventions %s", valueType, spec.valueType)
		}
		for attr, req := range spec.attrs {
			_, onResource := md.ResourceAttributes[attr]
			if req.level == "required" && !onResource && !slices.Contains(m.Attributes, attr) {
				found.add(name+": missing required "+attr, "metadata.yaml declares it neither on the metric nor on the resource")
			}
		}
		for _, attr := range m.Attributes {
			req, ok := spec.attrs[attr]
			if !ok {
				found.add(name+": attribute "+attr, "the conventions do not name it for the metric")
				continue
			}
			for _, v := range md.Attributes[attr].Enum {
				if req.allowed != nil && !slices.Contains(req.allowed, v) {
					found.add(name+": "+attr+"="+v, "declared in metadata.yaml; the conventions allow %v", req.allowed)
				}
			}
		}
	}
	return names
}

// addAnalyzerMetrics adds the hw.* metrics the gpu_analyzer processor
// declares (hw.status: the GPU's health is decided there, from the
// receiver's evidence) to the receiver's, on the receiver's resource.
func addAnalyzerMetrics(t *testing.T, md *receiverMetadata) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "processor", "gpuanalyzerprocessor", "metadata.yaml"))
	require.NoError(t, err)
	var an receiverMetadata
	require.NoError(t, yaml.Unmarshal(raw, &an))
	for name, m := range an.Metrics {
		if !strings.HasPrefix(name, "hw.") {
			continue
		}
		require.NotContains(t, md.Metrics, name, "declared by the receiver and the analyzer")
		md.Metrics[name] = m
		for _, a := range m.Attributes {
			md.Attributes[a] = an.Attributes[a]
		}
	}
}

// analyzeSemconvFleet passes the scrapes through the gpu_analyzer
// processor, as every pipeline of the product does, and returns what it
// sends on: the receiver's metrics and the analyzer's on each device.
func analyzeSemconvFleet(t *testing.T, scrapes []pmetric.Metrics) []pmetric.Metrics {
	t.Helper()
	f := gpuanalyzerprocessor.NewFactory()
	cfg := f.CreateDefaultConfig().(*gpuanalyzerprocessor.Config)
	cfg.VerdictInterval = 0
	sink := new(consumertest.MetricsSink)
	p, err := f.CreateMetrics(context.Background(), processortest.NewNopSettings(f.Type()), cfg, sink)
	require.NoError(t, err)
	require.NoError(t, p.Start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, p.Shutdown(context.Background())) }()
	for _, md := range scrapes {
		require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	}
	return sink.AllMetrics()
}

// scrapeSemconvFleet runs the receiver's scraper on the simulated fleet,
// every metric enabled, and returns two scrapes (counters need an
// interval).
func scrapeSemconvFleet(t *testing.T) []pmetric.Metrics {
	t.Helper()
	cfg := createDefaultConfig().(*Config)
	cfg.Backend = BackendSimulated
	cfg.Simulated = semconvFleet()
	cfg.MetricsBuilderConfig = metadata.NewDefaultMetricsBuilderConfig()
	enableAll(t, &cfg.MetricsBuilderConfig)
	require.NoError(t, cfg.Validate())
	s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
	require.NoError(t, s.start(context.Background(), componenttest.NewNopHost()))
	defer func() { require.NoError(t, s.shutdown(context.Background())) }()
	t0 := time.Unix(1767225600, 0)
	var out []pmetric.Metrics
	for k := range 2 {
		s.now = func() time.Time { return t0.Add(time.Duration(k) * 10 * time.Second) }
		md, err := s.scrape(context.Background())
		require.NoError(t, err)
		require.Positive(t, md.ResourceMetrics().Len())
		out = append(out, md)
	}
	return out
}

// enableAll enables every metric of the configuration, through its
// confmap form, so that a metric added to metadata.yaml is enabled without
// naming it here.
func enableAll(t *testing.T, mbc *metadata.MetricsBuilderConfig) {
	t.Helper()
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md receiverMetadata
	require.NoError(t, yaml.Unmarshal(raw, &md))
	metrics := map[string]any{}
	for name := range md.Metrics {
		metrics[name] = map[string]any{"enabled": true}
	}
	require.NoError(t, confmap.NewFromStringMap(map[string]any{"metrics": metrics}).Unmarshal(mbc))
}

// checkEmitted walks every data point of the hw.* metrics, and returns the
// names of those seen.
func checkEmitted(t *testing.T, model *semconvModel, scrapes []pmetric.Metrics, found semconvFindings) map[string]bool {
	t.Helper()
	seen := map[string]bool{}
	for _, md := range scrapes {
		rms := md.ResourceMetrics()
		for i := 0; i < rms.Len(); i++ {
			res := rms.At(i).Resource().Attributes()
			sms := rms.At(i).ScopeMetrics()
			for j := 0; j < sms.Len(); j++ {
				ms := sms.At(j).Metrics()
				for k := 0; k < ms.Len(); k++ {
					if m := ms.At(k); strings.HasPrefix(m.Name(), "hw.") {
						seen[m.Name()] = true
						checkMetric(model, m, res, found)
					}
				}
			}
		}
	}
	return seen
}

func checkMetric(model *semconvModel, m pmetric.Metric, res pcommon.Map, found semconvFindings) {
	name := m.Name()
	spec, ok := model.spec(name)
	if !ok {
		found.add(name+": not in the conventions", "emitted")
		return
	}
	var instrument string
	var dps pmetric.NumberDataPointSlice
	switch m.Type() {
	case pmetric.MetricTypeGauge:
		instrument, dps = "gauge", m.Gauge().DataPoints()
	case pmetric.MetricTypeSum:
		instrument, dps = "updowncounter", m.Sum().DataPoints()
		if m.Sum().IsMonotonic() {
			instrument = "counter"
		}
	default:
		found.add(name+": instrument", "emitted as a %v", m.Type())
		return
	}
	if instrument != spec.instrument {
		found.add(name+": instrument", "emitted as a %s, the conventions define a %s", instrument, spec.instrument)
	}
	if m.Unit() != spec.unit {
		found.add(name+": unit", "emitted in %q, the conventions define %q", m.Unit(), spec.unit)
	}
	for i := 0; i < dps.Len(); i++ {
		dp := dps.At(i)
		vt := map[pmetric.NumberDataPointValueType]string{pmetric.NumberDataPointValueTypeInt: "int", pmetric.NumberDataPointValueTypeDouble: "double"}[dp.ValueType()]
		if vt != spec.valueType {
			found.add(name+": value type", "a point is %s, the conventions define %s", vt, spec.valueType)
		}
		for attr, req := range spec.attrs {
			v, onPoint := dp.Attributes().Get(attr)
			if !onPoint {
				v, onPoint = res.Get(attr)
			}
			if !onPoint {
				if req.level == "required" {
					found.add(name+": missing required "+attr, "a point of %s lacks it", resourceID(res))
				}
				continue
			}
			if req.allowed != nil && !slices.Contains(req.allowed, v.AsString()) {
				found.add(name+": "+attr+"="+v.AsString(), "emitted by %s; the conventions allow %v", resourceID(res), req.allowed)
			}
		}
		for attr := range dp.Attributes().All() {
			if _, ok := spec.attrs[attr]; !ok {
				found.add(name+": attribute "+attr, "emitted; the conventions do not name it for the metric")
			}
		}
	}
}

func resourceID(res pcommon.Map) string {
	name, _ := res.Get("hw.name")
	host, _ := res.Get("host.name")
	return host.AsString() + "/" + name.AsString()
}
