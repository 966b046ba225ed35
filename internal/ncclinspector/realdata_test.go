package ncclinspector

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// realFile reads a fixture from the real NCCL outputs kept beside the
// repository (shared/realdata/node/nccl, sources in ../SOURCES.md), read
// in place.
func realFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedtest.Path(t, "realdata/node/nccl"), name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}
