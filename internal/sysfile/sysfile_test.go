package sysfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadKeepsTheFileOpenAndSeesNewContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "rx_bytes")
	require.NoError(t, os.WriteFile(p, []byte("100\n"), 0o600))
	var f Files
	b, err := f.Read(p)
	require.NoError(t, err)
	require.Equal(t, "100\n", string(b))
	require.Equal(t, 1, f.Open())

	// Written in place, as the kernel's value changes under an open
	// descriptor: the next read from offset 0 sees it, shorter or longer.
	require.NoError(t, os.WriteFile(p, []byte("7\n"), 0o600))
	b, err = f.Read(p)
	require.NoError(t, err)
	require.Equal(t, "7\n", string(b))
	require.NoError(t, os.WriteFile(p, []byte("123456789\n"), 0o600))
	b, err = f.ReadPath([]byte(p))
	require.NoError(t, err)
	require.Equal(t, "123456789\n", string(b))
	require.Equal(t, 1, f.Open(), "one descriptor for the path, however it is spelt")
}

func TestEndRoundClosesFilesNotRead(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, p := range []string{a, b} {
		require.NoError(t, os.WriteFile(p, []byte("1"), 0o600))
	}
	var f Files
	_, err := f.Read(a)
	require.NoError(t, err)
	_, err = f.Read(b)
	require.NoError(t, err)
	f.EndRound()
	require.Equal(t, 2, f.Open(), "both read in the round that ended")
	_, err = f.Read(a)
	require.NoError(t, err)
	f.EndRound()
	require.Equal(t, 1, f.Open(), "b was not read in the last round")
	f.EndRound()
	require.Equal(t, 0, f.Open())
	f.Close()
}

func TestMaxBoundsTheOpenFiles(t *testing.T) {
	dir := t.TempDir()
	f := Files{Max: 2}
	for i, name := range []string{"a", "b", "c", "d"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte{'0' + byte(i)}, 0o600))
		got, err := f.Read(p)
		require.NoError(t, err)
		require.Equal(t, string(rune('0'+i)), string(got), "a file past Max is still read")
	}
	require.Equal(t, 2, f.Open())
	f.Close()
	require.Equal(t, 0, f.Open())
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	var f Files

	_, err := f.Read(filepath.Join(dir, "absent"))
	require.ErrorIs(t, err, fs.ErrNotExist)
	var pe *fs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, filepath.Join(dir, "absent"), pe.Path)

	long := filepath.Join(dir, "long")
	require.NoError(t, os.WriteFile(long, []byte(strings.Repeat("x", BufSize+1)), 0o600))
	_, err = f.Read(long)
	require.ErrorIs(t, err, ErrTooLong)
	require.Contains(t, err.Error(), long)

	page := filepath.Join(dir, "page")
	require.NoError(t, os.WriteFile(page, []byte(strings.Repeat("x", BufSize)), 0o600))
	b, err := f.Read(page)
	require.NoError(t, err, "a whole page is not too long")
	require.Len(t, b, BufSize)

	_, err = f.Read(dir + "/a\x00b")
	require.Error(t, err, "a NUL cannot be in a path")

	// A directory opens but does not read: no descriptor is kept.
	_, err = f.Read(dir)
	require.Error(t, err)
	require.NotErrorIs(t, err, fs.ErrNotExist)
	require.Equal(t, 2, f.Open(), "the long file and the page are kept open, not the directory")
}

// A file removed and made again under its path (a regular file: its old
// descriptor would still read the old content) is read anew after the
// round in which it was not read; on sysfs and cgroupfs the old descriptor
// reads ENODEV and is replaced at once (TestRealKernel*).
func TestRemovedFileIsReadAnewAfterItsRound(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cpu.stat")
	require.NoError(t, os.WriteFile(p, []byte("old"), 0o600))
	var f Files
	_, err := f.Read(p)
	require.NoError(t, err)
	require.NoError(t, os.Remove(p))
	f.EndRound()
	f.EndRound() // not read in this round: closed
	require.NoError(t, os.WriteFile(p, []byte("new"), 0o600))
	b, err := f.Read(p)
	require.NoError(t, err)
	require.Equal(t, "new", string(b))
}

func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "port_xmit_data")
	require.NoError(b, os.WriteFile(p, []byte("2489603687\n"), 0o600))
	b.Run("kept-open", func(b *testing.B) {
		var f Files
		path := []byte(p)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.ReadPath(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open-read-close", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := os.ReadFile(p); err != nil {
				b.Fatal(err)
			}
		}
	})
}
