// Command gen writes internal/metricnames/names.go, the table of every
// metric name and unit and every attribute name that otelcol-gpu reads or
// writes, from the components' metadata.yaml files and undeclared.yaml.
// `make generate` (go generate ./internal/metricnames) runs it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// sources are the files the table is read from, relative to the module
// root. A name may be declared in one of them only.
var sources = []string{
	"receiver/dcgmreceiver/metadata.yaml",
	"receiver/gpunodereceiver/metadata.yaml",
	"processor/gpuanalyzerprocessor/metadata.yaml",
	"connector/gpuautoscaleconnector/metadata.yaml",
	"connector/gpuremediationconnector/metadata.yaml",
	// Names no component declares in its metadata.yaml (yet): the
	// analyzer's outputs, and inputs from outside (a training framework,
	// the k8s_attributes processor).
	"internal/metricnames/undeclared.yaml",
}

const output = "internal/metricnames/names.go"

// undeclared is the base name of the source for names no component declares.
const undeclared = "undeclared.yaml"

func main() {
	check := flag.Bool("check", false, "exit 1 if "+output+" is not up to date, instead of writing it")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "metricnames gen:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := moduleRoot()
	if err != nil {
		return err
	}
	src, err := generate(root, sources)
	if err != nil {
		return err
	}
	path := filepath.Join(root, output)
	if check {
		old, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, src) {
			return fmt.Errorf("%s is out of date: run make generate", output)
		}
		return nil
	}
	return os.WriteFile(path, src, 0o644) //nolint:gosec // G306: a source file of the repository, readable as any other
}

// moduleRoot is the nearest directory up from here with a go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// metadata is the part of mdatagen's metadata.yaml the table needs. The
// telemetry section (the component's own internal metrics) is left out:
// mdatagen's TelemetryBuilder names those.
type metadata struct {
	ResourceAttributes map[string]attribute `yaml:"resource_attributes"`
	Attributes         map[string]attribute `yaml:"attributes"`
	Metrics            map[string]metric    `yaml:"metrics"`
}

type attribute struct {
	Description string   `yaml:"description"`
	Enum        []string `yaml:"enum"`
}

type metric struct {
	Description string  `yaml:"description"`
	Unit        *string `yaml:"unit"`
}

type entry struct {
	name, unit, desc, origin string
	enum                     []string
	resource                 bool
}

// generate reads the sources (paths relative to root) and returns the
// formatted Go source of the table.
//
// Components may declare the same metric (with the same unit) or attribute:
// the first source keeps it, and an attribute's values are the union. A name
// in undeclared.yaml that a component declares too is an error, so that
// undeclared.yaml only ever holds what no component declares.
func generate(root string, files []string) ([]byte, error) {
	metrics, attrs := map[string]*entry{}, map[string]*entry{}
	from := map[*entry]string{}
	for _, file := range files {
		raw, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			return nil, err
		}
		var md metadata
		if err := yaml.Unmarshal(raw, &md); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		origin := filepath.ToSlash(filepath.Dir(file))
		twice := func(kind, name string, prev *entry) error {
			if filepath.Base(from[prev]) == undeclared || filepath.Base(file) == undeclared {
				return fmt.Errorf("%s %q is declared in both %s and %s; remove it from %s", kind, name, from[prev], file, undeclared)
			}
			return nil
		}
		for _, name := range slices.Sorted(maps.Keys(md.Metrics)) {
			m := md.Metrics[name]
			if m.Unit == nil {
				return nil, fmt.Errorf("%s: metric %q has no unit", file, name)
			}
			if prev, ok := metrics[name]; ok {
				if err := twice("metric", name, prev); err != nil {
					return nil, err
				}
				if prev.unit != *m.Unit {
					return nil, fmt.Errorf("metric %q has unit %q in %s but %q in %s", name, prev.unit, from[prev], *m.Unit, file)
				}
				// An exporter keeps one description per name (Prometheus
				// logs a conflict at every scrape): components share it.
				if prev.desc != m.Description {
					return nil, fmt.Errorf("metric %q has one description in %s and another in %s; give both the same", name, from[prev], file)
				}
				continue
			}
			e := &entry{name: name, unit: *m.Unit, desc: m.Description, origin: origin}
			metrics[name], from[e] = e, file
		}
		add := func(set map[string]attribute, resource bool) error {
			for _, name := range slices.Sorted(maps.Keys(set)) {
				a := set[name]
				if prev, ok := attrs[name]; ok {
					if err := twice("attribute", name, prev); err != nil {
						return err
					}
					for _, v := range a.Enum {
						if !slices.Contains(prev.enum, v) {
							prev.enum = append(prev.enum, v)
						}
					}
					continue
				}
				e := &entry{name: name, desc: a.Description, origin: origin, enum: a.Enum, resource: resource}
				attrs[name], from[e] = e, file
			}
			return nil
		}
		if err := add(md.ResourceAttributes, true); err != nil {
			return nil, err
		}
		if err := add(md.Attributes, false); err != nil {
			return nil, err
		}
	}
	sorted := func(m map[string]*entry) []entry {
		var out []entry
		for _, name := range slices.Sorted(maps.Keys(m)) {
			out = append(out, *m[name])
		}
		return out
	}
	metricList, attrList := sorted(metrics), sorted(attrs)

	idents := map[string]string{}
	ident := func(id, of string) (string, error) {
		if prev, ok := idents[id]; ok {
			return "", fmt.Errorf("%s and %s both make the identifier %s", prev, of, id)
		}
		idents[id] = of
		return id, nil
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by internal/metricnames/internal/gen from %s; DO NOT EDIT.\n\n", strings.Join(files, ", "))
	b.WriteString("package metricnames\n\n")
	b.WriteString("// Metric names, and their units as NAMEUnit.\nconst (\n")
	for _, m := range metricList {
		id, err := ident(goName(m.name), "metric "+m.name)
		if err != nil {
			return nil, err
		}
		unitID, err := ident(id+"Unit", "the unit of "+m.name)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "\t// %s (%s): %s\n", id, m.origin, oneLine(m.desc))
		fmt.Fprintf(&b, "\t%s = %q\n\t%s = %q\n", id, m.name, unitID, m.unit)
	}
	b.WriteString(")\n\n// Attribute names (AttrNAME) and their values (AttrNAMEVALUE).\nconst (\n")
	for _, a := range attrList {
		id, err := ident("Attr"+goName(a.name), "attribute "+a.name)
		if err != nil {
			return nil, err
		}
		kind := "attribute"
		if a.resource {
			kind = "resource attribute"
		}
		fmt.Fprintf(&b, "\t// %s (%s, %s): %s\n", id, kind, a.origin, oneLine(a.desc))
		fmt.Fprintf(&b, "\t%s = %q\n", id, a.name)
		for _, v := range a.enum {
			vid, err := ident(id+goName(v), "value "+v+" of "+a.name)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "\t%s = %q\n", vid, v)
		}
	}
	b.WriteString(")\n\n// Metrics lists every metric of the table, sorted by name.\nvar Metrics = [...]Metric{\n")
	for _, m := range metricList {
		id := goName(m.name)
		fmt.Fprintf(&b, "\t{%s, %sUnit, %q},\n", id, id, m.origin)
	}
	b.WriteString("}\n\n// Attributes lists every attribute of the table, sorted by name.\nvar Attributes = [...]Attribute{\n")
	for _, a := range attrList {
		fmt.Fprintf(&b, "\t{Attr%s, %q},\n", goName(a.name), a.origin)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// initialisms are spelled in capitals in identifiers, as Go does.
var initialisms = map[string]string{
	"id": "ID", "gpu": "GPU", "io": "IO", "xid": "XID", "sm": "SM", "dram": "DRAM", "pcie": "PCIe",
	"nvlink": "NVLink", "mig": "MIG", "pci": "PCI", "hw": "HW", "k8s": "K8s", "usd": "USD",
	"otelgpu": "OTelGPU", "cpu": "CPU",
}

// goName makes an identifier of a dotted name: hw.gpu.memory_copy.utilization
// is HWGPUMemoryCopyUtilization.
func goName(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if s, ok := initialisms[part]; ok {
			b.WriteString(s)
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
