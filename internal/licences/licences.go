// Package licences checks that the project's test data says under which
// licence it may be redistributed. The project is Apache-2.0 and is
// vendored by others, so it keeps only files whose terms allow that;
// third-party files without such terms are read in place from the shared
// real-data folder beside the repository instead (CONTRIBUTING.md, "Test
// data and licences").
//
// The rule, which Check applies: every testdata folder has a README.md,
// and every README.md in a testdata folder or below it has a line that
// starts with "Licence:" and names at least one licence of Known. A
// README may say more (which file is under which licence, the source and
// attribution); the line is what a reader and this check look for.
package licences

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Known are the licences a Licence line may name, as SPDX spells them
// (Creative Commons with spaces, as their deeds do), all of which allow
// redistribution. A licence that does not (CC BY-NC-ND, "research use
// only", none) is not in the list, and naming only such a one fails.
var Known = []string{
	"Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC",
	"CC BY 4.0", "CC BY-SA 4.0", "CC0 1.0", "public domain",
}

var known = func() *regexp.Regexp {
	alts := make([]string, len(Known))
	for i, k := range Known {
		alts[i] = regexp.QuoteMeta(k)
	}
	// A name counts only as a whole word: "MIT" is not in "SUBMIT".
	return regexp.MustCompile(`(?:^|[^\w-])(?:` + strings.Join(alts, "|") + `)(?:$|[^\w-])`)
}()

// Check walks the tree under root and returns one error per testdata
// folder without a README.md and per README.md in a testdata tree without
// a Licence line naming a known licence, each naming the path relative to
// root. It skips hidden folders, node_modules and folders whose name
// starts with "_" (build outputs, as the go tool does).
func Check(root string) ([]error, error) {
	var problems []error
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "node_modules") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(root, path)
		if !inTestdata(rel) {
			return nil
		}
		readme := filepath.Join(path, "README.md")
		if _, err := os.Stat(readme); errors.Is(err, fs.ErrNotExist) {
			if name == "testdata" && !inTestdata(filepath.Dir(rel)) {
				problems = append(problems, fmt.Errorf("%s: no README.md naming the licence of its files", rel))
			}
			return nil
		}
		if err := checkReadme(readme); err != nil {
			problems = append(problems, fmt.Errorf("%s: %w", filepath.Join(rel, "README.md"), err))
		}
		return nil
	})
	return problems, err
}

// inTestdata says whether rel is a testdata folder or inside one.
func inTestdata(rel string) bool {
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		if part == "testdata" {
			return true
		}
	}
	return false
}

func checkReadme(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	found := false
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(l, "Licence:") {
			continue
		}
		if !known.MatchString(strings.TrimPrefix(l, "Licence:")) {
			return fmt.Errorf("line %d: %q names none of the known licences (%s)", n, l, strings.Join(Known, ", "))
		}
		found = true
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !found {
		return errors.New(`no line starting "Licence:" that names the licence of the folder's files`)
	}
	return nil
}
