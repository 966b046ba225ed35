package realtraces

import (
	"os"
	"sync"
	"testing"

	"github.com/otelcol-gpu/otelcol-gpu/internal/sharedtest"
)

// The converted files are made once per test binary, in one folder that
// Cleanup removes: a conversion takes seconds and the tests replay the
// same file many times.
var cache struct {
	sync.Mutex
	dir   string
	paths map[string]string
}

// Path returns the converted trace named name, converting it on first
// use from the shared folder's recordings. Like every test that reads the
// shared folder, it skips the test when the folder is absent, and fails it
// under CI=true (sharedtest.Path); a failed conversion fails the test.
func Path(tb testing.TB, name string) string {
	tb.Helper()
	tr, err := Find(name)
	if err != nil {
		tb.Fatal(err)
	}
	recordings := sharedtest.Path(tb, "realdata/recordings")
	cache.Lock()
	defer cache.Unlock()
	if p, ok := cache.paths[name]; ok {
		return p
	}
	if cache.dir == "" {
		// One folder for the test binary's run, not the test's: the
		// conversions are shared by every test that asks (TestMain
		// removes it), which tb.TempDir would undo after the first.
		dir, err := os.MkdirTemp("", "realtraces-") //nolint:usetesting // shared across the binary's tests, see above

		if err != nil {
			tb.Fatal(err)
		}
		cache.dir, cache.paths = dir, map[string]string{}
	}
	p, err := tr.Write(recordings, cache.dir)
	if err != nil {
		tb.Fatalf("converting %s from the shared recordings: %v", name, err)
	}
	cache.paths[name] = p
	return p
}

// Cleanup removes the converted files; a package whose tests call Path
// calls it from TestMain after m.Run.
func Cleanup() {
	cache.Lock()
	defer cache.Unlock()
	if cache.dir != "" {
		_ = os.RemoveAll(cache.dir)
		cache.dir, cache.paths = "", nil
	}
}
