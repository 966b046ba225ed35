// Command gen writes each component's API stability table into its
// README (package apistability). `make generate` runs it from the module
// root.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelcol-gpu/otelcol-gpu/internal/apistability"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "apistability gen:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return fmt.Errorf("run from the module root: %w", err)
	}
	for _, c := range apistability.Components() {
		s, changed, err := apistability.README(root, c)
		if err != nil {
			return err
		}
		if changed {
			if err := os.WriteFile(filepath.Join(root, c.Dir, "README.md"), []byte(s), 0o644); err != nil { //nolint:gosec // G306: a README of the repository, readable as any other
				return err
			}
		}
	}
	return nil
}
