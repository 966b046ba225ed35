package netdev

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzParseCounterDump: any text parses without panicking; every stat it
// returns has a name with no colon at either end and no surrounding space,
// and a dump written back as "name: value" lines parses to the same stats.
func FuzzParseCounterDump(f *testing.F) {
	// The real dumps seed the corpus, where the checkout has them.
	dir := filepath.Join("..", "..", "..", "shared", "realdata", "node")
	for _, g := range []string{"ethtool/*/*.txt", "efa/*/*.txt"} {
		files, _ := filepath.Glob(filepath.Join(dir, g))
		for _, name := range files {
			if data, err := os.ReadFile(name); err == nil {
				f.Add(data)
			}
		}
	}
	f.Add([]byte("NIC statistics:\n     rx_packets: 12\n     tx_bytes: 18446744073709551615\n"))
	f.Add([]byte("alloc_pd_err :0\nlifespan :12\nbad: -1\nover: 18446744073709551616\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		stats, _ := ParseCounterDump(data)
		var out bytes.Buffer
		for _, s := range stats {
			if s.Name == "" || s.Name != string(bytes.TrimSpace([]byte(s.Name))) {
				t.Fatalf("name %q", s.Name)
			}
			out.WriteString(s.Name + ": " + strconv.FormatUint(s.Value, 10) + "\n")
		}
		again, err := ParseCounterDump(out.Bytes())
		if err != nil || len(again) != len(stats) {
			t.Fatalf("%q: round trip gives %d stats, %v; first parse %d", data, len(again), err, len(stats))
		}
		for i := range again {
			if again[i] != stats[i] {
				t.Fatalf("%q: %+v became %+v", data, stats[i], again[i])
			}
		}
		// Filing them into a port never panics either.
		var p Port
		p.AddEthtool(stats)
		p.AddEFA(stats)
	})
}

// FuzzPortLines: the one-line RDMA files (state, phys_state, rate) and
// numbers parse without panicking, to values in range.
func FuzzPortLines(f *testing.F) {
	for _, s := range []string{"4: ACTIVE", "5: LinkUp", "1: DOWN", "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X SDR)",
		"25 Gb/sec (1X EDR)", "10 Mb/sec", "-1", "18446744073709551615", "0000:18:00.0", "00000000:18:00.0"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, _, ok := parseState(b); ok && (n < 0 || n > 999) {
			t.Fatalf("%q: state %d", b, n)
		}
		if v, ok := parseRate(b); ok && !(v > 0) {
			t.Fatalf("%q: rate %v", b, v)
		}
		if v, ok := parseUint(b); ok && strconv.FormatUint(v, 10) != string(b) && b[0] != '0' {
			t.Fatalf("%q: uint %d", b, v)
		}
		if id, ok := NormalizeBusID(string(b)); ok {
			if again, ok2 := NormalizeBusID(id); !ok2 || again != id || !isPCIAddr(id) {
				t.Fatalf("%q: %q then %q %v", b, id, again, ok2)
			}
		}
		_ = pciAddrOf(string(b))
	})
}
