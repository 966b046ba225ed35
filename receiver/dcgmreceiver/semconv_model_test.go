package dcgmreceiver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// The OpenTelemetry semantic conventions' hardware model, as much of it as
// the conformance test (semconv_test.go) checks: metrics, their GPU
// refinements, attribute groups and the registry's enums.

// semconvModelDir is the conventions' model beside the repository
// (shared/semconv/v1.44.0/model). Outside CI a checkout may lack it, and
// the test that reads it skips; under CI=true a missing folder fails it.
func semconvModelDir(t *testing.T) string {
	t.Helper()
	return sharedtest.Path(t, "semconv/v1.44.0/model")
}

// scAttr is an attribute as a group or metric lists it: a ref (or a
// registry definition, id and type) or a ref_group.
type scAttr struct {
	Ref      string    `yaml:"ref"`
	RefGroup string    `yaml:"ref_group"`
	ID       string    `yaml:"id"`
	Type     yaml.Node `yaml:"type"`
	Level    yaml.Node `yaml:"requirement_level"`
	Examples yaml.Node `yaml:"examples"`
}

// examples returns an attribute's examples where they are a list of
// strings (elsewhere they may be a scalar or a list of lists).
func (a *scAttr) examples() []string {
	var out []string
	if a.Examples.Kind != yaml.SequenceNode || a.Examples.Decode(&out) != nil {
		return nil
	}
	return out
}

type scMetric struct {
	Name        string `yaml:"name"`
	Instrument  string `yaml:"instrument"`
	Unit        string `yaml:"unit"`
	Annotations struct {
		CodeGeneration struct {
			ValueType string `yaml:"metric_value_type"`
		} `yaml:"code_generation"`
	} `yaml:"annotations"`
	Attributes []scAttr `yaml:"attributes"`
}

type scGroup struct {
	ID         string   `yaml:"id"`
	Ref        string   `yaml:"ref"`
	Attributes []scAttr `yaml:"attributes"`
}

type scFile struct {
	AttributeGroups   []scGroup  `yaml:"attribute_groups"`
	Groups            []scGroup  `yaml:"groups"`
	Metrics           []scMetric `yaml:"metrics"`
	MetricRefinements []scGroup  `yaml:"metric_refinements"`
}

// scRequirement is what a metric's spec says of one attribute: its
// requirement level (required, recommended, conditionally_required, ...)
// and, where the spec names them, its allowed values (nil: any).
type scRequirement struct {
	level   string
	allowed []string
}

// scSpec is one metric as the conventions define it for a GPU.
type scSpec struct {
	instrument, unit, valueType string
	attrs                       map[string]scRequirement
}

type semconvModel struct {
	metrics     map[string]scMetric
	refinements map[string][]scGroup // by the metric they refine
	groups      map[string][]scAttr
	enums       map[string][]string // registry attribute → its members' values
}

// loadSemconv reads the hardware model, and the registries of the
// attributes it borrows (error.type, network.io.direction).
func loadSemconv(t *testing.T, dir string) *semconvModel {
	t.Helper()
	m := &semconvModel{
		metrics: map[string]scMetric{}, refinements: map[string][]scGroup{},
		groups: map[string][]scAttr{}, enums: map[string][]string{},
	}
	files, err := filepath.Glob(filepath.Join(dir, "hardware", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hardware model in %s: %v", dir, err)
	}
	for _, other := range []string{"error", "network"} {
		if p := filepath.Join(dir, other, "registry.yaml"); fileExists(p) {
			files = append(files, p)
		}
	}
	for _, p := range files {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var f scFile
		if err := yaml.Unmarshal(raw, &f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		for _, g := range append(f.AttributeGroups, f.Groups...) {
			m.groups[g.ID] = g.Attributes
			for _, a := range g.Attributes {
				if a.ID != "" {
					if vs := enumValues(&a.Type); len(vs) > 0 {
						m.enums[a.ID] = vs
					}
				}
			}
		}
		for _, mt := range f.Metrics {
			m.metrics[mt.Name] = mt
		}
		for _, r := range f.MetricRefinements {
			m.refinements[r.Ref] = append(m.refinements[r.Ref], r)
		}
	}
	return m
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// enumValues returns the values of an enum type's members.
func enumValues(n *yaml.Node) []string {
	var typ struct {
		Members []struct {
			Value string `yaml:"value"`
		} `yaml:"members"`
	}
	if n.Kind != yaml.MappingNode || n.Decode(&typ) != nil {
		return nil
	}
	var out []string
	for _, mb := range typ.Members {
		out = append(out, mb.Value)
	}
	return out
}

// gpuRefinement returns the refinement of a metric for GPUs
// (metric.hw.gpu.*), if any.
func (m *semconvModel) gpuRefinement(name string) (scGroup, bool) {
	for _, r := range m.refinements[name] {
		if strings.HasPrefix(r.ID, "metric.hw.gpu.") {
			return r, true
		}
	}
	return scGroup{}, false
}

// gpuMetrics are the metrics the conventions define for GPUs: hw.gpu.*,
// and those a GPU refinement refines (hw.errors, hw.status).
func (m *semconvModel) gpuMetrics() []string {
	var out []string
	for name := range m.metrics {
		if _, ok := m.gpuRefinement(name); ok || strings.HasPrefix(name, "hw.gpu.") {
			out = append(out, name)
		}
	}
	return out
}

// spec returns a metric as the conventions define it for a GPU: the
// metric, with its GPU refinement's attributes over its own. The values a
// GPU refinement names for an enum attribute (hw.type: gpu; error.type:
// corrected, uncorrected) are the allowed ones; otherwise an enum's
// members are, unless the enum is open (error.type's registry lists only
// _OTHER).
func (m *semconvModel) spec(name string) (scSpec, bool) {
	mt, ok := m.metrics[name]
	if !ok {
		return scSpec{}, false
	}
	s := scSpec{instrument: mt.Instrument, unit: mt.Unit, valueType: mt.Annotations.CodeGeneration.ValueType, attrs: map[string]scRequirement{}}
	m.resolve(mt.Attributes, s.attrs, false)
	if r, ok := m.gpuRefinement(name); ok {
		m.resolve(r.Attributes, s.attrs, true)
	}
	return s, true
}

func (m *semconvModel) resolve(attrs []scAttr, into map[string]scRequirement, refinement bool) {
	for _, a := range attrs {
		if a.RefGroup != "" {
			m.resolve(m.groups[a.RefGroup], into, refinement)
			continue
		}
		if a.Ref == "" {
			continue
		}
		req, seen := into[a.Ref]
		if !seen {
			req.level = "recommended" // the conventions' default
			if vs := m.enums[a.Ref]; len(vs) > 1 || (len(vs) == 1 && vs[0] != "_OTHER") {
				req.allowed = vs
			}
		}
		switch a.Level.Kind {
		case yaml.ScalarNode:
			req.level = a.Level.Value
		case yaml.MappingNode:
			if len(a.Level.Content) > 0 {
				req.level = a.Level.Content[0].Value
			}
		}
		if ex := a.examples(); refinement && len(ex) > 0 && len(m.enums[a.Ref]) > 0 {
			req.allowed = ex
		}
		into[a.Ref] = req
	}
}
