package gpuresetextension

import (
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
)

// FuzzConfig: any YAML under gpu_reset unmarshals and validates or is
// refused with a message; one that validates builds an actor.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_reset", "testdata/config.yaml", "../../examples/*/*.yaml") < 10 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("node: n\nreset: {command: ['{uuid}', '-i'], timeout: -1s}\nbackend: dcgm\ndcgm: {endpoint: 'unix://relative', diag_level: 0}"))
	configfuzz.Fuzz(f, func() component.Config { return createDefaultConfig() }, func(t *testing.T, cfg component.Config) {
		_, err := newActor(cfg.(*Config), metadatatest.NewSettings(componenttest.NewTelemetry()))
		require.NoError(t, err, "a configuration that validates builds")
	})
}
