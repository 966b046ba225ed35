package slurm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds scontrol's one-line records, as a slurmctld of any
// version (or a broken one) might print them, to the job and node parsers
// and hostlist expansion: an error is fine, a panic or an unbounded
// expansion is not.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txt"))
	for _, name := range files {
		raw, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.Split(string(raw), "\n") {
			if l != "" {
				f.Add(l)
			}
		}
	}
	for _, s := range []string{"NodeList=gpu[01-03,07]", "Nodes=n[0-99999999999999999999]", "Nodes=a[1-2][3-4],b",
		"JobId=1 GRES=gpu:2(IDX:0-1) TimeLimit=1-00:00:00", "NodeName=x State=DRAIN Reason=a=b Gres=gpu:8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if j, err := parseJob(line, time.UTC); err == nil && len(j.Nodes) > maxHosts {
			t.Fatalf("%d nodes from one record, over the bound %d", len(j.Nodes), maxHosts)
		}
		_, _ = parseNode(line, time.UTC)
		if hosts, err := ExpandHostlist(line); err == nil && len(hosts) > maxHosts {
			t.Fatalf("%d hosts, over the bound %d", len(hosts), maxHosts)
		}
	})
}
