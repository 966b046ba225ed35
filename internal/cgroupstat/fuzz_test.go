package cgroupstat

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParseCPUStat: any cpu.stat content parses or fails without
// panicking; a failure reports nothing; throttling is reported whole or
// not at all; and parsing is a function of the bytes alone.
func FuzzParseCPUStat(f *testing.F) {
	seedFiles(f, "cpu.stat")
	f.Add([]byte("nr_periods 1\nnr_throttled 1\n"))
	f.Add([]byte("usage_usec 18446744073709551615\nthrottled_time 18446744073709551615\nnr_periods 0\nnr_throttled 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseCPUStat("f", data)
		if err != nil {
			if s != (CPUStat{}) {
				t.Fatalf("%q: an error with figures %+v", data, s)
			}
			return
		}
		if !s.HasThrottling && (s.Periods != 0 || s.ThrottledPeriods != 0 || s.Throttled != 0) {
			t.Fatalf("%q: throttling figures %+v not reported", data, s)
		}
		if s.Usage < 0 || s.Throttled < 0 {
			t.Fatalf("%q: a negative duration %+v", data, s)
		}
		if again, err := ParseCPUStat("f", data); err != nil || again != s {
			t.Fatalf("%q: %+v, then %+v, %v", data, s, again, err)
		}
	})
}

// FuzzParsePressure: the same for PSI files.
func FuzzParsePressure(f *testing.F) {
	seedFiles(f, "*.pressure")
	f.Add([]byte("some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	f.Add([]byte("some total=18446744073709551615\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePressure("f", data)
		if err != nil {
			if p != (PSI{}) {
				t.Fatalf("%q: an error with figures %+v", data, p)
			}
			return
		}
		for _, st := range []Stall{p.Some, p.Full} {
			if st.Total < 0 || (!st.Has && st.Total != 0) {
				t.Fatalf("%q: stall %+v", data, st)
			}
		}
		if again, err := ParsePressure("f", data); err != nil || again != p {
			t.Fatalf("%q: %+v, then %+v, %v", data, p, again, err)
		}
	})
}

// seedFiles adds the shared real files matching pattern to the corpus,
// where the shared directory is present (the fuzz targets run without it).
func seedFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "realdata", "node", "cgroup", "*", pattern))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}
