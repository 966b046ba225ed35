package kmsg

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the zones below, on hosts without a zone database
	"unicode/utf8"
)

// The real logs are gpureplay's golden inputs; testdata/kmsg/README.md
// there says where each comes from.
var realDir = filepath.Join("..", "..", "cmd", "gpureplay", "testdata", "kmsg")

func parseFile(t *testing.T, name string, opts Options) []Event {
	t.Helper()
	f, err := os.Open(filepath.Join(realDir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := Parse(f, opts)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return evs
}

func codes(evs []Event) map[int]int {
	m := map[int]int{}
	for _, e := range evs {
		m[e.XID]++
	}
	return m
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return at
}

func sameEvent(t *testing.T, got, want Event) {
	t.Helper()
	if !got.Time.Equal(want.Time) {
		t.Errorf("line %d: time %s, want %s", got.Line, got.Time.Format(time.RFC3339Nano), want.Time.Format(time.RFC3339Nano))
	}
	got.Time, want.Time = time.Time{}, time.Time{}
	if got.Recovery != nil && want.Recovery != nil {
		if *got.Recovery != *want.Recovery {
			t.Errorf("line %d: recovery %+v, want %+v", got.Line, *got.Recovery, *want.Recovery)
		}
		got.Recovery, want.Recovery = nil, nil
	}
	if (got.Recovery == nil) != (want.Recovery == nil) {
		t.Errorf("line %d: recovery %v, want %v", got.Line, got.Recovery, want.Recovery)
	}
	got.Recovery, want.Recovery = nil, nil
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestBurst is the fault the parser is for: one application's fault made
// the driver log XID 13 sixteen times in under 2 ms, then XID 43 when the
// process was killed. Every line is its own event at its own microsecond.
func TestBurst(t *testing.T) {
	evs := parseFile(t, "gpud-xid13-burst.log", Options{})
	if len(evs) != 17 {
		t.Fatalf("%d events, want 17", len(evs))
	}
	for i, e := range evs[:16] {
		if e.XID != 13 || e.BusID != "0000:38:00" || e.Format != ISO || e.HasPID || e.Process != "" {
			t.Errorf("event %d: %+v", i, e)
		}
		if i > 0 && !e.Time.After(evs[i-1].Time) {
			t.Errorf("event %d at %s, not after the one before", i, e.Time.Format(time.RFC3339Nano))
		}
	}
	sameEvent(t, evs[0], Event{
		Line: 1, Format: ISO, Time: mustTime(t, "2025-01-21T04:41:44.283302Z"), BusID: "0000:38:00", XID: 13,
		Message: "Graphics SM Global Exception on (GPC 8, TPC 5, SM 1): Multiple Warp Errors",
	})
	sameEvent(t, evs[16], Event{
		Line: 17, Format: ISO, Time: mustTime(t, "2025-01-21T04:41:44.287197Z"), BusID: "0000:38:00", XID: 43,
		PID: 2924364, HasPID: true, Process: "pt_main_thread", Message: "Ch 00000008",
	})
	if span := evs[15].Time.Sub(evs[0].Time); span != 1845*time.Microsecond {
		t.Errorf("XID 13 burst spans %s, want 1.845ms", span)
	}
}

// TestRealFiles reads every real log and checks what it holds: the count
// of each code, and the first XID line field by field.
func TestRealFiles(t *testing.T) {
	boot := mustTime(t, "2025-01-01T00:00:00Z")
	for _, tc := range []struct {
		file  string
		opts  Options
		codes map[int]int
		first Event
	}{
		{
			file: "gpud-xid13-bursts.log", codes: map[int]int{13: 629, 43: 7},
			first: Event{Line: 1, Format: ISO, Time: mustTime(t, "2025-01-21T02:21:33.498559Z"), BusID: "0000:38:00", XID: 13,
				Message: "Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address"},
		},
		{
			file: "gpud-xid48-63-94.log", codes: map[int]int{48: 1, 63: 1, 94: 9},
			first: Event{Line: 11, Format: ISO, Time: mustTime(t, "2024-11-15T12:02:03.470068Z"), BusID: "0000:19:00", XID: 48,
				Message: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x12bac1c3e0 partition 2, subpartition 1."},
		},
		{
			file: "gpud-xid119.log", codes: map[int]int{119: 5},
			first: Event{Line: 3, Format: Ctime, Time: mustTime(t, "2025-02-23T16:24:18Z"), BusID: "0000:9b:00", XID: 119,
				PID: 2024380, HasPID: true, Process: "nvidia-smi",
				Message: "Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 103 (GSP_RM_ALLOC) (0x2081 0x4)."},
		},
		{
			file: "gpud-xid79.log", opts: Options{Boot: boot}, codes: map[int]int{79: 1},
			first: Event{Line: 3, Format: Monotonic, Time: boot.Add(6781741548779 * time.Microsecond), BusID: "0000:91:00", XID: 79,
				Message: "GPU has fallen off the bus."},
		},
		{
			file: "gpud-gb200-xid149-154.log", opts: Options{Boot: boot}, codes: map[int]int{149: 5, 154: 4},
			first: Event{Line: 1, Format: Monotonic, Time: boot.Add(171167620236 * time.Microsecond), BusID: "0009:01:00", XID: 149,
				Message: "NETIR_LINK_EVT  Fatal   XC0 i0 Link 01 (0x021425c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)"},
		},
		{
			file: "synthetic-journald-short.log", opts: Options{Year: 2024}, codes: map[int]int{48: 1, 63: 1, 94: 9},
			first: Event{Line: 1, Format: Short, Time: mustTime(t, "2024-11-15T12:02:03.470068Z"), Host: "gpu-node-07", BusID: "0000:19:00", XID: 48,
				Message: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x12bac1c3e0 partition 2, subpartition 1."},
		},
	} {
		t.Run(tc.file, func(t *testing.T) {
			evs := parseFile(t, tc.file, tc.opts)
			got := codes(evs)
			if len(got) != len(tc.codes) {
				t.Errorf("codes %v, want %v", got, tc.codes)
			}
			for c, n := range tc.codes {
				if got[c] != n {
					t.Errorf("XID %d: %d events, want %d", c, got[c], n)
				}
			}
			sameEvent(t, evs[0], tc.first)
			for i := 1; i < len(evs); i++ {
				if evs[i].Time.Before(evs[i-1].Time) {
					t.Errorf("line %d is earlier than line %d", evs[i].Line, evs[i-1].Line)
				}
			}
		})
	}
}

// TestRecovery: the GB200 log's XID 154s carry the recovery action, old
// and new, as number and name.
func TestRecovery(t *testing.T) {
	evs := parseFile(t, "gpud-gb200-xid149-154.log", Options{Boot: time.Unix(0, 0)})
	var got []string
	for _, e := range evs {
		if e.XID != 154 {
			if e.Recovery != nil {
				t.Errorf("line %d: XID %d with a recovery action", e.Line, e.XID)
			}
			continue
		}
		if e.Recovery == nil || !e.Recovery.HasFrom {
			t.Fatalf("line %d: %+v", e.Line, e)
		}
		got = append(got, e.BusID+" "+e.Recovery.From.String()+" -> "+e.Recovery.To.String())
	}
	want := []string{
		"0009:01:00 0x0 (None) -> 0x4 (Drain and Reset)",
		"0019:01:00 0x4 (Drain and Reset) -> 0x1 (GPU Reset Required)",
		"0018:01:00 0x4 (Drain and Reset) -> 0x1 (GPU Reset Required)",
		"0008:01:00 0x4 (Drain and Reset) -> 0x1 (GPU Reset Required)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFormats: one XID line in each form real hosts write, and what it
// reads as.
func TestFormats(t *testing.T) {
	const report = "NVRM: Xid (PCI:0000:3b:00): 13, pid=42, name=python, Graphics SM Warp Exception"
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	boot := mustTime(t, "2025-11-24T08:00:00Z")
	for _, tc := range []struct {
		name, line string
		opts       Options
		format     Format
		at, host   string
	}{
		{"ctime", "[Mon Nov 24 10:00:00 2025] " + report, Options{}, Ctime, "2025-11-24T10:00:00Z", ""},
		{"ctime padded day", "[Mon Nov  3 10:00:00 2025] " + report, Options{}, Ctime, "2025-11-03T10:00:00Z", ""},
		{"ctime in a zone", "[Mon Nov 24 10:00:00 2025] " + report, Options{Location: berlin}, Ctime, "2025-11-24T09:00:00Z", ""},
		{"dmesg iso", "2025-11-24T10:00:00,123456+00:00 " + report, Options{}, ISO, "2025-11-24T10:00:00.123456Z", ""},
		{"dmesg iso east", "2025-11-24T11:00:00,123456+01:00 " + report, Options{}, ISO, "2025-11-24T10:00:00.123456Z", ""},
		{"dmesg decode iso", "kern  :warn  : 2025-11-24T10:00:00,000001+00:00 " + report, Options{}, ISO, "2025-11-24T10:00:00.000001Z", ""},
		{"journalctl short-iso", "2025-11-24T10:00:00+0000 node-1 kernel: " + report, Options{}, ISO, "2025-11-24T10:00:00Z", "node-1"},
		{"journalctl short-iso new", "2025-11-24T10:00:00+00:00 node-1 kernel: " + report, Options{}, ISO, "2025-11-24T10:00:00Z", "node-1"},
		{"journalctl short-iso-precise", "2025-11-24T10:00:00.250000-0500 node-1 kernel: " + report, Options{}, ISO, "2025-11-24T15:00:00.25Z", "node-1"},
		{"rfc3339 syslog", "2025-11-24T10:00:00.5Z node-1 kernel: [12345.678901] " + report, Options{}, ISO, "2025-11-24T10:00:00.5Z", "node-1"},
		{"journald short", "Nov 24 10:00:00 node-1 kernel: " + report, Options{Year: 2025}, Short, "2025-11-24T10:00:00Z", "node-1"},
		{"journald short zero-padded day", "Nov 03 10:00:00 node-1 kernel: " + report, Options{Year: 2025}, Short, "2025-11-03T10:00:00Z", "node-1"},
		{"syslog short padded day", "Nov  3 10:00:00 node-1 kernel: [ 5.000000] " + report, Options{Year: 2025}, Short, "2025-11-03T10:00:00Z", "node-1"},
		{"journald short-precise", "Nov 24 10:00:00.000250 node-1 kernel: " + report, Options{Year: 2025, Location: berlin}, Short, "2025-11-24T09:00:00.00025Z", "node-1"},
		{"journald leap day", "Feb 29 10:00:00 node-1 kernel: " + report, Options{Year: 2024}, Short, "2024-02-29T10:00:00Z", "node-1"},
		{"dmesg raw", "[ 7200.000001] " + report, Options{Boot: boot}, Monotonic, "2025-11-24T10:00:00.000001Z", ""},
		{"dmesg raw no padding", "[7200.5] " + report, Options{Boot: boot}, Monotonic, "2025-11-24T10:00:00.5Z", ""},
		{"dmesg decode raw", "kern  :err   : [ 7200.000001] " + report, Options{Boot: boot}, Monotonic, "2025-11-24T10:00:00.000001Z", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := Parse(strings.NewReader("unrelated line\n"+tc.line+"\n"), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(evs) != 1 {
				t.Fatalf("%d events, want 1", len(evs))
			}
			sameEvent(t, evs[0], Event{
				Line: 2, Format: tc.format, Time: mustTime(t, tc.at), Host: tc.host, BusID: "0000:3b:00", XID: 13,
				PID: 42, HasPID: true, Process: "python", Message: "Graphics SM Warp Exception",
			})
			if !Sniff([]byte(tc.line)) {
				t.Error("Sniff: not a kernel log")
			}
		})
	}
}

// TestReports: the shapes of the report itself across driver versions.
func TestReports(t *testing.T) {
	for _, tc := range []struct {
		report string
		want   Event
	}{
		{"NVRM: Xid (PCI:0000:01:00): 79, GPU has fallen off the bus.", Event{BusID: "0000:01:00", XID: 79, Message: "GPU has fallen off the bus."}},
		{"NVRM: Xid (0000:03:00): 14, Channel 00000001", Event{BusID: "0000:03:00", XID: 14, Message: "Channel 00000001"}},
		{"NVRM: Xid (PCI:0002:00:00): 119, pid=1582259, name=nvc:[driver]", Event{BusID: "0002:00:00", XID: 119, PID: 1582259, HasPID: true, Process: "nvc:[driver]"}},
		{"NVRM: Xid (PCI:0000:3B:00): 31", Event{BusID: "0000:3b:00", XID: 31}},
		{"NVRM: Xid (PCI:0000:05:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", Event{BusID: "0000:05:00", XID: 79, Message: "GPU has fallen off the bus."}},
		{"NVRM: Xid (PCI:0000:02:00): 154, GPU recovery action changed to 0x2 (Node Reboot Required)", Event{BusID: "0000:02:00", XID: 154,
			Message:  "GPU recovery action changed to 0x2 (Node Reboot Required)",
			Recovery: &Recovery{To: Action{Code: 2, Name: "Node Reboot Required"}}}},
		{"NVRM: Xid (PCI:0000:0d:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)", Event{BusID: "0000:0d:00", XID: 154,
			Message:  "GPU recovery action changed from 0x0 (None) to 0x1 (PF FLR)",
			Recovery: &Recovery{From: Action{Name: "None"}, HasFrom: true, To: Action{Code: 1, Name: "PF FLR"}}}},
	} {
		evs, err := Parse(strings.NewReader("[1.000000] "+tc.report), Options{Boot: time.Unix(0, 0)})
		if err != nil {
			t.Errorf("%s: %v", tc.report, err)
			continue
		}
		tc.want.Line, tc.want.Format, tc.want.Time = 1, Monotonic, time.Unix(1, 0)
		sameEvent(t, evs[0], tc.want)
	}
}

// TestMalformed: an XID line that cannot be read is an error that says
// where; the events before it are returned with it.
func TestMalformed(t *testing.T) {
	const ok = "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, fine\n"
	for _, tc := range []struct {
		name, line string
		opts       Options
		want       string
	}{
		{"no timestamp", "NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: XID line without a timestamp this reads`},
		{"dmesg -t", "  NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: XID line without a timestamp this reads`},
		{"bad ctime", "[Mon Nov 31 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: dmesg --ctime timestamp "[Mon Nov 31 10:00:00 2025]": parsing time`},
		{"bad iso zone", "2025-11-24T10:00:00,1 NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: ISO 8601 timestamp "2025-11-24T10:00:00,1": want a date, a time and a zone`},
		{"short without year", "Nov 24 10:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: journald timestamp "Nov 24 10:00:00" has no year`},
		{"no Feb 29", "Feb 29 10:00:00 node kernel: NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{Year: 2025}, `kmsg: line 2, column 1: journald timestamp "Feb 29 10:00:00": no February 29 in 2025`},
		{"monotonic without boot", "[12345.678901] NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 1: timestamp "[12345.678901]" counts seconds since boot`},
		{"decoded monotonic without boot", "kern  :warn  : [12345.678901] NVRM: Xid (PCI:0000:3b:00): 13, x",
			Options{}, `kmsg: line 2, column 16: timestamp "[12345.678901]" counts seconds since boot`},
		{"no bus id", "[Mon Nov 24 10:00:00 2025] NVRM: Xid: 13, x",
			Options{}, `kmsg: line 2, column 37: want " (PCI:DOMAIN:BUS:DEVICE): CODE" after "NVRM: Xid"`},
		{"bad bus id", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3g:00): 13, x",
			Options{}, `kmsg: line 2, column 39: bus id "PCI:0000:3g:00": want DOMAIN:BUS:DEVICE[.FUNCTION] in hex`},
		{"unclosed bus id", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00: 13, x",
			Options{}, `kmsg: line 2, column 39: unclosed "(" around the bus id`},
		{"no colon", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00) 13, x",
			Options{}, `kmsg: line 2, column 54: want ": CODE" after the bus id`},
		{"no code", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): x13, y",
			Options{}, `kmsg: line 2, column 56: want an XID code (1 to 65535), got "x13"`},
		{"code 0", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 0, y",
			Options{}, `kmsg: line 2, column 56: want an XID code (1 to 65535), got "0"`},
		{"code too big", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 99999999999999999999, y",
			Options{}, `kmsg: line 2, column 56: want an XID code (1 to 65535), got "99999999999999999999"`},
		{"junk after code", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13x, y",
			Options{}, `kmsg: line 2, column 58: want "," after the XID code, got "x"`},
		{"bad pid", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, pid=abc, name=x, y",
			Options{}, `kmsg: line 2, column 64: want a pid, got "abc"`},
		{"154 without action", "[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed",
			Options{}, `kmsg: line 2, column 61: XID 154: want "GPU recovery action changed from 0xN (NAME) to 0xN (NAME)"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := Parse(strings.NewReader(ok+tc.line+"\n"+ok), tc.opts)
			var ke *Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v, want a *kmsg.Error", err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error\n%s\nwant it to start with\n%s", err, tc.want)
			}
			if len(evs) != 1 || evs[0].Line != 1 {
				t.Errorf("events before the error: %+v", evs)
			}
		})
	}
}

func TestNotXID(t *testing.T) {
	in := strings.Join([]string{
		"garbage without a timestamp",
		"[12345.678901] NVRM: GPU at PCI:0000:91:00: GPU-b6c3b2be-c55b-d076-fa0e-d464e4c7e08b",
		"[6781753.400584] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20034, Fatal, Link 48 LTSSM Fault Up",
		"Nov 24 10:00:00 node kernel: NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.",
		"",
	}, "\n")
	evs, err := Parse(strings.NewReader(in), Options{})
	if err != nil || len(evs) != 0 {
		t.Fatalf("got %v, %v; want no events and no error: lines without an XID are not read", evs, err)
	}
}

// TestCRLF: a log saved with Windows line ends reads the same.
func TestCRLF(t *testing.T) {
	evs, err := Parse(strings.NewReader("[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, pid=7, name=x, msg\r\n"), Options{})
	if err != nil || len(evs) != 1 || evs[0].Message != "msg" {
		t.Fatalf("%+v, %v", evs, err)
	}
}

// TestYearRollover: a journald log that runs from December into January.
func TestYearRollover(t *testing.T) {
	in := "Dec 31 23:59:59 n kernel: NVRM: Xid (PCI:0000:3b:00): 13, a\n" +
		"Jan  1 00:00:01 n kernel: NVRM: Xid (PCI:0000:3b:00): 13, b\n"
	evs, err := Parse(strings.NewReader(in), Options{Year: 2025})
	if err != nil {
		t.Fatal(err)
	}
	if got := evs[1].Time.Sub(evs[0].Time); got != 2*time.Second {
		t.Errorf("second line %s after the first, want 2s", got)
	}
}

func TestLongLine(t *testing.T) {
	in := "x\n" + strings.Repeat("a", MaxLine+1) + "\n"
	_, err := Parse(strings.NewReader(in), Options{})
	if err == nil || !strings.HasPrefix(err.Error(), "kmsg: line 2, column 1: line longer than") {
		t.Fatalf("error %v", err)
	}
}

func TestParseBusID(t *testing.T) {
	for in, want := range map[string]string{
		"PCI:0000:3b:00":   "0000:3b:00",
		"00000000:3B:00.0": "0000:3b:00",
		"00000009:01:00.0": "0009:01:00",
		"0000:91:00":       "0000:91:00",
	} {
		got, err := ParseBusID(in)
		if err != nil || got != want {
			t.Errorf("ParseBusID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "PCI:", "3b:00", "0000:3b:00:00", "0000:3b:00.", "0000:3b:00.x", "000000000:3b:00", "00010000:3b:00", "0000:3b:0g", "GPU-1234"} {
		if got, err := ParseBusID(in); err == nil {
			t.Errorf("ParseBusID(%q) = %q, want an error", in, got)
		}
	}
}

func TestSniff(t *testing.T) {
	for in, want := range map[string]bool{
		"timestamp,uuid,DCGM_FI_DEV_XID_ERRORS\n1,GPU-a,13\n": false,
		"":                   false,
		"\n\n":               false,
		"# comment\n[1.0] x": false,
		"\n-- Logs begin at Mon --\nNov 24 10:00:00 n kernel: x": true,
		"kern  :warn  : 2025-01-21T04:41:44,283302+00:00 x":      true,
		"[Sun Feb 23 16:24:18 2025] NVRM: GPU at":                true,
		"[6781741.548768] NVRM: GPU at":                          true,
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzParse: no input makes Parse panic, and what it returns holds
// together: events in line order, with a code, a bus id in the normal
// form, and a recovery action exactly on XID 154; an error names a line
// and column.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"gpud-xid13-burst.log", "gpud-xid48-63-94.log", "gpud-xid119.log", "gpud-xid79.log", "gpud-gb200-xid149-154.log", "synthetic-journald-short.log"} {
		b, err := os.ReadFile(filepath.Join(realDir, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add("kern  :warn  : [ 1.5] NVRM: Xid (PCI:0000:3b:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)")
	f.Add("Feb 29 10:00:00 n kernel: NVRM: Xid (0000:3b:00.0): 13, pid=, name=")
	f.Add("[Mon Nov  3 10:00:00 2025] NVRM: Xid (")
	f.Add("2025-11-24T10:00:00,1+00:00 NVRM: Xid (PCI:0:0:0): 1,pid=1")
	f.Fuzz(func(t *testing.T, in string) {
		evs, err := Parse(strings.NewReader(in), Options{Year: 2025, Boot: time.Unix(1_700_000_000, 0)})
		last := 0
		for _, e := range evs {
			if e.Line <= last {
				t.Fatalf("event on line %d after line %d", e.Line, last)
			}
			last = e.Line
			if e.XID < 1 || e.XID > 65535 {
				t.Fatalf("XID %d", e.XID)
			}
			if b, err := ParseBusID(e.BusID); err != nil || b != e.BusID {
				t.Fatalf("bus id %q not in normal form", e.BusID)
			}
			if (e.XID == 154) != (e.Recovery != nil) {
				t.Fatalf("XID %d with recovery %v", e.XID, e.Recovery)
			}
			if e.Format < Ctime || e.Format > Monotonic {
				t.Fatalf("format %d", e.Format)
			}
			if !utf8.ValidString(in) {
				continue
			}
			if !strings.Contains(in, e.BusID[5:]) && !strings.Contains(strings.ToLower(in), e.BusID[5:]) {
				t.Fatalf("bus id %q not in the input", e.BusID)
			}
		}
		var ke *Error
		if err != nil && errors.As(err, &ke) && (ke.Line < 1 || ke.Column < 1 || ke.Line <= last) {
			t.Fatalf("error %v after an event on line %d", err, last)
		}
	})
}
