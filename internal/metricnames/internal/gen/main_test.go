package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpToDate fails when names.go differs from what the metadata.yaml files
// give: a metric renamed in metadata.yaml without `make generate` would
// otherwise leave the old name in the table.
func TestUpToDate(t *testing.T) {
	if err := run(true); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return name
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "receiver/a/metadata.yaml", `
resource_attributes:
  hw.id: {description: The GPU.}
attributes:
  hw.gpu.task: {description: The engine., enum: [general, decoder]}
metrics:
  hw.gpu.utilization: {description: Busy., unit: "1"}
telemetry:
  metrics:
    processor_internal: {unit: "1"}
`)
	b := write(t, dir, "processor/b/metadata.yaml", `
metrics:
  nvidia.gpu.sm.active: {unit: "1"}
`)
	src, err := generate(dir, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`HWGPUUtilization     = "hw.gpu.utilization"`,
		`HWGPUUtilizationUnit = "1"`,
		`AttrHWGPUTaskGeneral = "general"`,
		`AttrHWID = "hw.id"`,
		`{NvidiaGPUSMActive, NvidiaGPUSMActiveUnit, "processor/b"}`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated source lacks %s:\n%s", want, src)
		}
	}
	if strings.Contains(string(src), "processor_internal") {
		t.Errorf("telemetry metrics belong to mdatagen's TelemetryBuilder, not the table:\n%s", src)
	}
}

// TestShared: components may declare the same metric (same unit) and
// attributes; the first source keeps them, and attribute values add up.
func TestShared(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "receiver/a/metadata.yaml", `
resource_attributes:
  k8s.namespace.name: {description: The namespace.}
attributes:
  alertstate: {enum: [pending]}
metrics:
  hw.power: {unit: W}
`)
	b := write(t, dir, "connector/b/metadata.yaml", `
resource_attributes:
  k8s.namespace.name: {description: The target's namespace.}
attributes:
  alertstate: {enum: [pending, firing]}
metrics:
  hw.power: {unit: W}
`)
	src, err := generate(dir, []string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{HWPower, HWPowerUnit, "receiver/a"}`,
		`{AttrK8sNamespaceName, "receiver/a"}`,
		`AttrAlertstateFiring  = "firing"`,
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("generated source lacks %s:\n%s", want, src)
		}
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, tt := range []struct{ a, b, want string }{
		{"metrics:\n  hw.power: {unit: W}\n", "metrics:\n  hw.power: {unit: mW}\n", `metric "hw.power" has unit "W" in a/metadata.yaml but "mW" in b/metadata.yaml`},
		{"metrics:\n  hw.power: {unit: W}\n", "undeclared:metrics:\n  hw.power: {unit: W}\n", `metric "hw.power" is declared in both a/metadata.yaml and b/undeclared.yaml; remove it from undeclared.yaml`},
		{"attributes:\n  hw.gpu.task: {}\n", "undeclared:attributes:\n  hw.gpu.task: {}\n", `attribute "hw.gpu.task" is declared in both a/metadata.yaml and b/undeclared.yaml; remove it`},
		{"metrics:\n  hw.power: {description: x}\n", "", `a/metadata.yaml: metric "hw.power" has no unit`},
		{"metrics:\n  hw.gpu_io: {unit: By}\n", "metrics:\n  hw.gpu.io: {unit: By}\n", "metric hw.gpu.io and metric hw.gpu_io both make the identifier HWGPUIO"},
		{"metrics: [", "", "a/metadata.yaml: yaml:"},
	} {
		dir := t.TempDir()
		a := write(t, dir, "a/metadata.yaml", tt.a)
		bName, bText := "b/metadata.yaml", tt.b
		if rest, ok := strings.CutPrefix(tt.b, "undeclared:"); ok {
			bName, bText = "b/undeclared.yaml", rest
		}
		b := write(t, dir, bName, bText)
		_, err := generate(dir, []string{a, b})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q, %q: got error %v, want one saying %q", tt.a, tt.b, err, tt.want)
		}
	}
}
