// Package sharedtest finds, for tests, what lives beside the repository
// rather than in it: the shared folder of real data from public sources
// (shared/realdata, each file's origin and licence in its SOURCES.md) and
// OpenTelemetry's semantic conventions (shared/semconv). Those files are
// read in place, never copied into testdata.
//
// A checkout outside CI may lack the folder: the test skips, saying so.
// CI's machine has it: under CI=true its absence fails the test, so that a
// test that reads real data cannot pass there by checking nothing. The
// same rule holds for what a test needs of the machine (root, a kernel
// feature, a tool): Need.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Path returns the path of rel (e.g. "realdata/node/cgroup") under the
// shared folder, found from the module's root, which it finds from the
// test's working directory (its package's). It skips the test when rel is
// absent, or fails it under CI=true.
func Path(tb testing.TB, rel string) string {
	tb.Helper()
	root, err := moduleRoot()
	if err != nil {
		Need(tb, "the module root (go.mod) above the test's directory: %v", err)
	}
	p := filepath.Join(root, "..", "shared", filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		Need(tb, "%s beside the repository (only in the shared checkout): %v", p, err)
	}
	return p
}

// Need skips a test for what this machine or checkout lacks, saying what;
// under CI=true, where the machine is set up to have it, it fails the test
// instead.
func Need(tb testing.TB, format string, args ...any) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("CI=true: needs "+format, args...)
	}
	tb.Skipf("needs "+format, args...)
}

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
			return "", os.ErrNotExist
		}
		dir = parent
	}
}
