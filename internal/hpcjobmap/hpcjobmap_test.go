package hpcjobmap

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600))
}

// TestRead reads the cases dcgm-exporter's hpc_test.go distinguishes: a
// GPU with one job, one with two (a shared GPU), a MIG instance's file
// keyed by GPU instance, names that are no GPU's, a directory.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "0", "4242\n")
	write(t, dir, "1", "4243\n4244\n")
	write(t, dir, "3.1", "4245") // no final newline
	write(t, dir, "2", "\n  \n") // a finished job's file the epilog emptied
	for _, name := range []string{"NaN", "foo", "1e5", "0.", ".1", "0.1.2", "-1"} {
		write(t, dir, name, "9999\n")
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "4"), 0o700))

	m, err := Read(dir)
	require.NoError(t, err)
	require.Equal(t, Map{"0": {"4242"}, "1": {"4243", "4244"}, "3.1": {"4245"}}, m)

	g1 := &gpu.Device{Index: 1}
	require.Equal(t, []string{"4243", "4244"}, m.Jobs(g1))
	mig := &gpu.Device{Index: 3, MIG: &gpu.MIG{GPUInstance: 1, ComputeInstance: 0}}
	require.Equal(t, "3.1", Key(mig))
	require.Equal(t, []string{"4245"}, m.Jobs(mig))
	// Another compute instance of the same GPU instance shares its file.
	require.Equal(t, []string{"4245"}, m.Jobs(&gpu.Device{Index: 3, MIG: &gpu.MIG{GPUInstance: 1, ComputeInstance: 1}}))
	// The whole GPU 3 is not its instance.
	require.Empty(t, m.Jobs(&gpu.Device{Index: 3}))
	require.Empty(t, m.Jobs(&gpu.Device{Index: 2}))
}

// TestReadMissing: no directory yet is no jobs, not an error; a directory
// that is a file is one.
func TestReadMissing(t *testing.T) {
	m, err := Read(filepath.Join(t.TempDir(), "none"))
	require.NoError(t, err)
	require.Empty(t, m)

	f := filepath.Join(t.TempDir(), "file")
	write(t, filepath.Dir(f), "file", "")
	_, err = Read(f)
	require.ErrorContains(t, err, "job mapping directory")
}

// TestReadUnreadable: a file that cannot be opened (here a link to
// nothing, which root cannot open either) is named, and the other GPUs'
// jobs are still read.
func TestReadUnreadable(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "0", "1\n")
	require.NoError(t, os.Symlink(filepath.Join(dir, "gone"), filepath.Join(dir, "1")))
	m, err := Read(dir)
	require.ErrorContains(t, err, filepath.Join(dir, "1"))
	require.Equal(t, Map{"0": {"1"}}, m)
}

// TestReadBounded: a runaway file is read up to MaxFileBytes.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	line := "123456789\n"
	big := make([]byte, 0, 2*MaxFileBytes)
	for len(big) < 2*MaxFileBytes {
		big = append(big, line...)
	}
	write(t, dir, "0", string(big))
	m, err := Read(dir)
	require.NoError(t, err)
	require.Len(t, m["0"], MaxFileBytes/len(line)+1) // the last line cut short
}

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{"0": true, "12": true, "2.0": true, "3.10": true, "": false, "a": false, "1.": false, ".1": false, "1.2.3": false, "1 ": false} { //nolint:gocritic // mapKey: "1 ", a trailing space, is a case
		require.Equal(t, want, ValidName(name), name)
	}
}
