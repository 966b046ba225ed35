package ncclinspector

import (
	"math"
	"strings"
	"testing"
)

// FuzzParsePromLine: any line parses or fails without panicking; a line
// that parses names a metric, and parses again to the same value.
func FuzzParsePromLine(f *testing.F) {
	f.Add(`nccl_bus_bandwidth_gbs{version="v5.1",node="n",gpu="GPU0",comm_name="DP Group 0",collective="AllReduce",message_size="4-5GB"} 678.263`)
	f.Add(`m{a="x\"y\\z\n"} NaN 1700000000000`)
	f.Add(`m{a="`)
	f.Fuzz(func(t *testing.T, line string) {
		pl, err := ParsePromLine(line)
		if err != nil {
			return
		}
		if pl.Name == "" {
			t.Fatalf("%q: no name", line)
		}
		again, err := ParsePromLine(line)
		if err != nil || (again.Value != pl.Value && !math.IsNaN(pl.Value)) || len(again.Labels) != len(pl.Labels) {
			t.Fatalf("%q: parsed to %+v, then %+v, %v", line, pl, again, err)
		}
		// A whole file of the line gives at most one sample, well formed.
		for _, s := range ParseProm([]byte(line + "\n" + line)) {
			if s.HasBusBandwidth && (s.BusBandwidth <= 0 || math.IsInf(s.BusBandwidth, 0)) {
				t.Fatalf("%q: bandwidth %v", line, s.BusBandwidth)
			}
			if s.HasExecTime && (s.ExecTime < 0 || math.IsNaN(s.ExecTime) || math.IsInf(s.ExecTime, 0)) {
				t.Fatalf("%q: exec time %v", line, s.ExecTime)
			}
			if s.GPU < -1 {
				t.Fatalf("%q: GPU %d", line, s.GPU)
			}
		}
	})
}

// FuzzParseJSON: any bytes parse without panicking; what is consumed is
// within the input, and a record completed later by more bytes does not
// change what the consumed prefix gave.
func FuzzParseJSON(f *testing.F) {
	v40 := `{` + hdr + `,` + meta + `,` + coll + `}`
	f.Add(v40 + "\n" + v40[:30])
	f.Add(`{"dump_stats":{}}` + "\n" + `{` + coll + `}`)
	f.Add("{\"a\":\"}\\\"\"}\n{")
	f.Fuzz(func(t *testing.T, data string) {
		got, used := ParseJSON([]byte(data))
		if used < 0 || used > len(data) {
			t.Fatalf("%q: consumed %d of %d", data, used, len(data))
		}
		for _, s := range got {
			if s.HasBusBandwidth && !(s.BusBandwidth > 0) || s.GPU != -1 || s.Rank < -1 {
				t.Fatalf("%q: sample %+v", data, s)
			}
		}
		prefix, _ := ParseJSON([]byte(data[:used]))
		if len(prefix) != len(got) {
			t.Fatalf("%q: %d samples, %d from the consumed prefix", data, len(got), len(prefix))
		}
	})
}

// FuzzParseRAS: any text parses without panicking, and what it names is
// well formed: ranks not negative, relations only where counts were given,
// stragglers within the communicator.
func FuzzParseRAS(f *testing.F) {
	f.Add("#0-0 (fa93daea854b060b) MISMATCH\n  Communicator ranks have different AllGather operation counts\n" +
		"  30 ranks have launched up to operation 640\n  2 ranks have launched up to operation 641\n" +
		"  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124\n")
	f.Add("The outlier node:\n  Node 10.4.109.13 running processes 60004,60035\n")
	f.Add("    0         1         1         1         2         1   RUNNING  INCOMPLETE\n")
	f.Fuzz(func(t *testing.T, text string) {
		rep := ParseRAS([]byte(text))
		for _, c := range rep.Communicators {
			for _, r := range c.Ranks {
				if r.Rank < 0 {
					t.Fatalf("%q: rank %d", text, r.Rank)
				}
			}
			for _, m := range c.Mismatches {
				for _, r := range m.Ranks {
					if r.Rank < 0 || (r.Relation != RelationNone && len(m.Counts) == 0) {
						t.Fatalf("%q: rank %+v", text, r)
					}
				}
				for _, rk := range m.Lagging(c.NRanks) {
					if rk < 0 || (c.NRanks > 0 && rk >= c.NRanks && !named(m, rk)) {
						t.Fatalf("%q: lagging rank %d of %d", text, rk, c.NRanks)
					}
				}
			}
		}
	})
}

func named(m RASMismatch, rank int) bool {
	for _, r := range m.Ranks {
		if r.Rank == rank {
			return true
		}
	}
	return false
}

// FuzzParseIBCompletion: any line parses or not without panicking; a
// completion found names its status consistently.
func FuzzParseIBCompletion(f *testing.F) {
	f.Add("kp-ddp-worker-0:3468:3905 [4] ib_plugin.c:1615 NCCL WARN NET/IB : Got completion from peer 10.216.210.236<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid fd00::1 remoteGidsfd00::2")
	f.Add("NET/IB: Got completion from peer p with status=X(99999999999999999999) opcode=Y(1) vendor_err=2 hca mlx5_0")
	f.Fuzz(func(t *testing.T, line string) {
		c, ok := ParseIBCompletion(line)
		if !ok {
			return
		}
		if c.StatusName != IBVWCStatusName(c.Status) || !strings.Contains(line, "Got completion from peer") {
			t.Fatalf("%q: %+v", line, c)
		}
	})
}
