package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// TestThrottledAndFaulted: a GPU the analyzer calls throttled and one it
// calls faulted are counted, drawn and summarized under those classes,
// not as unknown.
func TestThrottledAndFaulted(t *testing.T) {
	c := NewCollector()
	for i := range 10 {
		for _, g := range []struct{ uuid, class string }{
			{"GPU-hot", "throttled"}, {"GPU-bad", "faulted"}, {"GPU-ok", "compute_bound"},
		} {
			r := trace.Row{Time: float64(t0 + 60*i), UUID: g.uuid, Host: "h", Model: "H100"}
			c.Add(&r, Verdict{Class: g.class, Usage: "used"})
		}
	}
	d, err := c.Build(Options{Source: "fleet.csv"})
	require.NoError(t, err)
	assert.Equal(t, map[string]float64{"throttled": 600, "faulted": 600, "compute_bound": 600}, d.ClassSeconds)
	for _, l := range d.Lanes {
		require.Len(t, l.Segments, 1, l.UUID)
		want := map[string]string{"GPU-hot": "throttled", "GPU-bad": "faulted", "GPU-ok": "compute_bound"}[l.UUID]
		assert.Equal(t, want, d.Classes[l.Segments[0][2]], "%s's timeline", l.UUID)
	}
	assert.Contains(t, d.Summary, "Bottlenecks in GPU time: faulted 33 %, throttled 33 %, compute_bound 33 %.")

	page := render(t, d)
	for _, cl := range []string{"throttled", "faulted"} {
		i := slices.Index(classes, cl)
		assert.Contains(t, page, `<span><i style="background:`+classColors[i]+`"></i>`+cl+`</span>`, "the legend names %s", cl)
		assert.Contains(t, page, `<title>`+cl+` `, "a segment's tooltip names %s", cl)
	}
	assert.NotContains(t, page, "<title>unknown ")
}

// TestClassesAreTheAnalyzers: the report's classes are exactly the
// bottleneck classes the analyzer emits, the enum of
// otelgpu.bottleneck.class in its metadata.yaml (which the analyzer's own
// tests hold to its classes; the shared analysis spec, section 3, lists
// them), with unknown last, where classIndex sends any other name, and a
// distinct color each.
func TestClassesAreTheAnalyzers(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "processor", "gpuanalyzerprocessor", "metadata.yaml"))
	require.NoError(t, err)
	var md struct {
		Attributes map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"attributes"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &md))
	emitted := md.Attributes["otelgpu.bottleneck.class"].Enum
	require.NotEmpty(t, emitted, "metadata.yaml declares the classes")
	assert.ElementsMatch(t, emitted, classes)
	assert.Equal(t, "unknown", classes[len(classes)-1])
	for _, cl := range emitted {
		assert.Equal(t, cl, classes[classIndex(cl)], "%s maps to itself", cl)
	}
	assert.Equal(t, "unknown", classes[classIndex("power_limited")], "a name the analyzer does not emit")

	require.Len(t, classColors, len(classes), "a color per class")
	seen := map[string]bool{}
	for _, col := range classColors {
		col = strings.ToLower(col)
		assert.False(t, seen[col], "%s is used twice", col)
		seen[col] = true
	}
}
