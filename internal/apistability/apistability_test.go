package apistability

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestREADMEsUpToDate: every component's README carries its table as the
// code and metadata.yaml make it (`make generate` writes them).
func TestREADMEsUpToDate(t *testing.T) {
	for _, c := range Components() {
		_, changed, err := README("../..", c)
		require.NoError(t, err)
		require.False(t, changed, "%s/README.md: its API stability table is out of date: run make generate", c.Dir)
	}
}

type inner struct {
	Window int `mapstructure:"window"`
	New    int `mapstructure:"new" stability:"development"`
}

type sample struct {
	Top     int              `mapstructure:"top"`
	Nested  inner            `mapstructure:"nested"`
	Squash  inner            `mapstructure:",squash"`
	ByName  map[string]inner `mapstructure:"by_name"`
	List    []inner          `mapstructure:"list"`
	Skipped int              `mapstructure:"-"`
	hidden  int
}

func TestRows(t *testing.T) {
	md := []byte(`
status:
  stability:
    beta: [metrics]
    alpha: [logs]
resource_attributes:
  hw.id: {}
attributes:
  a: {}
  b: {}
  unused: {}
metrics:
  m.alpha: {stability: alpha, attributes: [a, b]}
  m.dev: {stability: development, attributes: [b]}
`)
	rows, err := Rows(md, &sample{hidden: 1})
	require.NoError(t, err)
	require.Equal(t, []Row{
		{"metric", "m.alpha", "alpha"},
		{"metric", "m.dev", "development"},
		{"attribute", "a", "alpha"},
		{"attribute", "b", "development"}, // the least stable metric that carries it
		{"resource attribute", "hw.id", "alpha"},
		{"config", "top", "alpha"}, // the component's least stable level
		{"config", "nested", "alpha"},
		{"config", "nested::window", "alpha"},
		{"config", "nested::new", "development"},
		{"config", "window", "alpha"},
		{"config", "new", "development"},
		{"config", "by_name", "alpha"},
		{"config", "by_name::<name>::window", "alpha"},
		{"config", "by_name::<name>::new", "development"},
		{"config", "list", "alpha"},
		{"config", "list[]::window", "alpha"},
		{"config", "list[]::new", "development"},
	}, rows)

	_, err = Rows([]byte("metrics:\n  m: {stability: gamma}\nstatus: {stability: {alpha: [metrics]}}\n"), &sample{})
	require.ErrorContains(t, err, `metric m: stability "gamma"`)
	_, err = Rows([]byte("status: {stability: {}}\n"), &sample{})
	require.ErrorContains(t, err, "status::stability has no known level")
}

func TestReplace(t *testing.T) {
	s, err := Replace("# X\n\ntext\n", Section([]Row{{"metric", "m", "alpha"}}))
	require.NoError(t, err)
	require.Contains(t, s, "## API stability")
	again, err := Replace(s, Section([]Row{{"metric", "m", "beta"}}))
	require.NoError(t, err)
	require.Contains(t, again, "| metric | `m` | beta |")
	require.NotContains(t, again, "| metric | `m` | alpha |")
	require.Equal(t, 1, strings.Count(again, Begin))
	_, err = Replace("x "+Begin+" no end", "y")
	require.ErrorContains(t, err, "but not")
}
