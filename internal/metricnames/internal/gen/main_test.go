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
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
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

func TestGenerateErrors(t *testing.T) {
	for name, files := range map[string][2]string{
		"declared in both": {"metrics:\n  hw.power: {unit: W}\n", "metrics:\n  hw.power: {unit: W}\n"},
		"has no unit":      {"metrics:\n  hw.power: {description: x}\n", ""},
		"both make":        {"metrics:\n  hw.gpu_io: {unit: By}\n", "metrics:\n  hw.gpu.io: {unit: By}\n"},
		"a.yaml":           {"metrics: [", ""},
	} {
		dir := t.TempDir()
		a := write(t, dir, "a.yaml", files[0])
		b := write(t, dir, "b.yaml", files[1])
		_, err := generate(dir, []string{a, b})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%q: got error %v, want one saying %q", files, err, name)
		}
	}
}
