package licences

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRepositoryTestdata: every testdata folder of this repository names
// the licence of its files.
func TestRepositoryTestdata(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the repository root is two folders up")
	problems, err := Check(root)
	require.NoError(t, err)
	for _, p := range problems {
		t.Error(p)
	}
	// The walk reaches the folders: at least the ones this package's
	// author counted (17), so that a broken walk cannot pass.
	n := 0
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		if err == nil && d.IsDir() && d.Name() == "testdata" {
			n++
		}
		return err
	}))
	require.GreaterOrEqual(t, n, 17)
}

func TestCheckFails(t *testing.T) {
	root := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o750))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	}
	write("a/testdata/x.csv", "1\n")                                                        // no README
	write("b/testdata/README.md", "# data\n\nFrom somewhere.\n")                            // no Licence line
	write("c/testdata/README.md", "Licence: none (all rights reserved)\n")                  // not a licence
	write("d/testdata/README.md", "Licence: research use only; SUBMIT a request\n")         // "MIT" inside a word
	write("e/testdata/README.md", "Licence: Apache-2.0\n")                                  // fine
	write("e/testdata/sub/README.md", "# sub\n")                                            // a README below, no line
	write("f/testdata/README.md", "Licence: CC BY 4.0 (Azure)\nLicence: CC BY-NC-ND 4.0\n") // one bad line
	write("g/testdata/sub/x.txt", "no README in a subfolder is fine\n")
	write("g/testdata/README.md", "Licence: MIT, AMD SMI's\n")
	write(".hidden/testdata/x", "skipped\n")
	write("_build/testdata/x", "skipped\n")
	problems, err := Check(root)
	require.NoError(t, err)
	var got []string
	for _, p := range problems {
		got = append(got, p.Error())
	}
	want := []string{
		filepath.Join("a", "testdata") + ": no README.md",
		filepath.Join("b", "testdata", "README.md") + `: no line starting "Licence:"`,
		filepath.Join("c", "testdata", "README.md") + `: line 1: "Licence: none (all rights reserved)" names none`,
		filepath.Join("d", "testdata", "README.md") + ": line 1:",
		filepath.Join("e", "testdata", "sub", "README.md") + `: no line starting "Licence:"`,
		filepath.Join("f", "testdata", "README.md") + `: line 2: "Licence: CC BY-NC-ND 4.0"`,
	}
	require.Len(t, got, len(want), strings.Join(got, "\n"))
	for i := range want {
		require.True(t, strings.HasPrefix(got[i], want[i]), "%q\ndoes not start with\n%q", got[i], want[i])
	}
}
