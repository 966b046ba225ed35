// Command writereal writes the converted real recordings (package
// realtraces) into a folder, for a reader who wants the CSV files by hand:
//
//	go run ./internal/realtraces/writereal OUTDIR
//
// run from the repository's root, with the shared real-data folder beside
// it (../shared/realdata; -recordings names another place). The tests
// convert the same files themselves; nothing here is needed to run them.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/otelcol-gpu/otelcol-gpu/internal/realtraces"
)

func main() {
	recordings := flag.String("recordings", "../shared/realdata/recordings", "the shared folder's recordings/")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: writereal [-recordings DIR] OUTDIR")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	dir := flag.Arg(0)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, tr := range realtraces.Traces {
		path, err := tr.Write(*recordings, dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(path)
	}
}
