// Package legacynamestest sets the otelgpu.emitNvidiaNames feature gate for
// one test.
package legacynamestest

import (
	"testing"

	"go.opentelemetry.io/collector/featuregate"

	"github.com/otelcol-gpu/otelcol-gpu/internal/legacynames"
)

// SetGate enables or disables the gate until the test ends. Tests that set it
// must not run in parallel with tests that read it.
func SetGate(tb testing.TB, enabled bool) {
	tb.Helper()
	was := legacynames.Enabled()
	if err := featuregate.GlobalRegistry().Set(legacynames.GateID, enabled); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := featuregate.GlobalRegistry().Set(legacynames.GateID, was); err != nil {
			tb.Error(err)
		}
	})
}
