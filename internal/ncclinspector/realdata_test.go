package ncclinspector

import (
	"os"
	"path/filepath"
	"testing"
)

// realFile reads a fixture from the real NCCL outputs kept beside the
// repository (shared/realdata/node/nccl, sources in ../SOURCES.md). They
// are not copied into the repository: outside CI a checkout may lack them
// and the test skips; under CI=true a missing file fails it.
func realFile(t *testing.T, name string) []byte {
	t.Helper()
	path := filepath.Join("..", "..", "..", "shared", "realdata", "node", "nccl", name)
	data, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real NCCL fixture missing under CI: %v", err)
		}
		t.Skipf("no real NCCL fixture beside the repository (%s): %v", path, err)
	}
	return data
}
