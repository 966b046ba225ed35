package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files: the kernel logs' remediation decisions (testdata/kmsg/golden), the reports' data (testdata/report)")

// kmsgBoot is the boot time given to the logs that count seconds since
// boot: their sources give none, so any fixed time will do.
const kmsgBoot = "2025-01-01T00:00:00Z"

// kmsgLogs are the kernel logs in testdata/kmsg (its README says where
// each comes from) with the flags each needs.
var kmsgLogs = []struct {
	name string
	args []string
}{
	{"gpud-xid13-burst", nil},
	{"gpud-xid13-bursts", nil},
	{"gpud-xid48-63-94", nil},
	{"gpud-xid119", nil},
	{"gpud-xid79", []string{"-boot", kmsgBoot}},
	{"gpud-gb200-xid149-154", []string{"-boot", kmsgBoot}},
	{"synthetic-journald-short", []string{"-year", "2024"}},
}

func kmsgPath(name string) string { return filepath.Join("testdata", "kmsg", name+".log") }

func emptySettings(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "remediate.yaml")
	require.NoError(t, os.WriteFile(p, nil, 0o600))
	return p
}

// TestKmsgGolden replays each real kernel log through the gpu_remediation
// connector with its default settings: the decisions are the golden file,
// byte for byte. When the connector's decisions change on purpose, rewrite
// them with `go test ./cmd/gpureplay/ -run Kmsg -update` and read the diff.
func TestKmsgGolden(t *testing.T) {
	settings := emptySettings(t)
	files, err := filepath.Glob(filepath.Join("testdata", "kmsg", "*.log"))
	require.NoError(t, err)
	require.Len(t, kmsgLogs, len(files), "every log in testdata/kmsg has a golden file")
	for _, l := range kmsgLogs {
		t.Run(l.name, func(t *testing.T) {
			args := append([]string{"-remediate", settings}, l.args...)
			out, stderr, code := runReplay(t, append(args, kmsgPath(l.name))...)
			require.Equal(t, 0, code, stderr)
			require.NotEmpty(t, out, "every real log has an XID the connector decides on")
			golden := filepath.Join("testdata", "kmsg", "golden", l.name+".remediate.jsonl")
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(out), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden file: run go test ./cmd/gpureplay/ -run Kmsg -update")
			require.Equal(t, string(want), out)
		})
	}
}

// decisions reduces gpureplay -remediate's lines to what these tests are
// about (when, where, what), so that they keep passing when the connector
// adds fields to its decisions; the golden files check the whole lines.
func decisions(t *testing.T, out string) []string {
	t.Helper()
	var keys []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if line == "" {
			continue
		}
		var d struct {
			Time              json.Number
			Node, UUID, Fault string
			Action            string
		}
		require.NoError(t, json.Unmarshal([]byte(line), &d), line)
		keys = append(keys, fmt.Sprintf("%s %s %s %s %s", d.Time, d.Node, d.UUID, d.Fault, d.Action))
	}
	return keys
}

// TestKmsgNodeAndGPU: the node is -host, else a line's journald host,
// else the file's base name; the GPU is its UUID from -gpus, else its PCI
// bus id.
func TestKmsgNodeAndGPU(t *testing.T) {
	settings := emptySettings(t)
	gpus := filepath.Join(t.TempDir(), "gpus.csv")
	require.NoError(t, os.WriteFile(gpus, []byte("pci.bus_id, uuid\n00000000:19:00.0, GPU-5f6a1c9e-0000-4000-8000-000000000019\n00000000:1A:00.0, GPU-other\n"), 0o600))

	first := func(args ...string) string {
		t.Helper()
		out, stderr, code := runReplay(t, append([]string{"-remediate", settings}, args...)...)
		require.Equal(t, 0, code, stderr)
		return decisions(t, out)[0]
	}
	require.Equal(t, "1731672123.470068 gpud-xid48-63-94 PCI:0000:19:00 xid_48 drain",
		first(kmsgPath("gpud-xid48-63-94")))
	require.Equal(t, "1731672123.470068 gpu-node-07 PCI:0000:19:00 xid_48 drain",
		first("-year", "2024", kmsgPath("synthetic-journald-short")))
	require.Equal(t, "1731672123.470068 node-a GPU-5f6a1c9e-0000-4000-8000-000000000019 xid_48 drain",
		first("-host", "node-a", "-gpus", gpus, "-year", "2024", kmsgPath("synthetic-journald-short")))
	// -tz: journald's local time in New York is five hours behind UTC in November.
	require.Equal(t, "1731690123.470068 gpu-node-07 PCI:0000:19:00 xid_48 drain",
		first("-year", "2024", "-tz", "America/New_York", kmsgPath("synthetic-journald-short")))
	// -boot as Unix seconds: the XID 79 is 6781741.548779 s after it.
	require.Equal(t, "1742471341.548779 gpud-xid79 PCI:0000:91:00 xid_79 drain",
		first("-boot", "1735689600", kmsgPath("gpud-xid79")))
}

// TestKmsgErrors: what a kernel log leaves out, or a flag that does not
// fit, is an error on stderr with exit status 1.
func TestKmsgErrors(t *testing.T) {
	settings := emptySettings(t)
	bad := filepath.Join(t.TempDir(), "bad.log")
	require.NoError(t, os.WriteFile(bad, []byte(
		"[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, first\n"+
			"[Mon Nov 24 10:00:01 2025] NVRM: Xid (PCI:0000:3b:00): 1x3, second\n"), 0o600))
	back := filepath.Join(t.TempDir(), "back.log")
	require.NoError(t, os.WriteFile(back, []byte(
		"[Mon Nov 24 10:00:01 2025] NVRM: Xid (PCI:0000:3b:00): 13, first\n"+
			"[Mon Nov 24 10:00:00 2025] NVRM: Xid (PCI:0000:3b:00): 13, second\n"), 0o600))
	badGPUs := filepath.Join(t.TempDir(), "gpus.csv")
	require.NoError(t, os.WriteFile(badGPUs, []byte("00000000:19:00.0, GPU-a\nGPU-b, 00000000:1a:00.0\n"), 0o600))
	xid79 := kmsgPath("gpud-xid79")
	for _, tc := range []struct {
		name   string
		args   []string
		stdout string
		stderr string
	}{
		{"no boot time", []string{"-remediate", settings, xid79}, "",
			"gpureplay: " + xid79 + `: kmsg: line 3, column 1: timestamp "[6781741.548779]" counts seconds since boot: give the boot time (Options.Boot, gpureplay -boot) to place it` + "\n"},
		{"no year", []string{"-remediate", settings, kmsgPath("synthetic-journald-short")}, "",
			"gpureplay: " + kmsgPath("synthetic-journald-short") + `: kmsg: line 1, column 1: journald timestamp "Nov 15 12:02:03.470068" has no year: give the year of the log's first line (Options.Year, gpureplay -year)` + "\n"},
		{"malformed line after a good one", []string{"-remediate", settings, bad},
			"1763978400 bad PCI:0000:3b:00 xid_13 restart_app" + "\n",
			"gpureplay: " + bad + `: kmsg: line 2, column 57: want "," after the XID code, got "x3"` + "\n"},
		{"clock going back", []string{"-remediate", settings, back},
			"1763978401 back PCI:0000:3b:00 xid_13 restart_app" + "\n",
			"gpureplay: " + back + ": kmsg: line 2: 2025-11-24T10:00:00Z is earlier than the XID line before it (2025-11-24T10:00:01Z); the replay needs the lines in time order\n"},
		{"verdicts", []string{xid79}, "",
			"gpureplay: " + xid79 + " is a kernel log: it replays with -remediate only, without -autoscale, -cost, -resample or -fields\n"},
		{"resample", []string{"-remediate", settings, "-resample", "30s", "-boot", kmsgBoot, xid79}, "",
			"gpureplay: " + xid79 + " is a kernel log: it replays with -remediate only, without -autoscale, -cost, -resample or -fields\n"},
		{"fields", []string{"-remediate", settings, "-fields", "defaults", xid79}, "",
			"gpureplay: " + xid79 + " is a kernel log: it replays with -remediate only, without -autoscale, -cost, -resample or -fields\n"},
		{"kernel flags on a trace", []string{"-remediate", settings, "-year", "2024", "-host", "n", tracePath("serving-mixed-5s")}, "",
			"gpureplay: " + tracePath("serving-mixed-5s") + " is not a kernel log (its first line has no kernel log timestamp): -host, -year apply to kernel logs only\n"},
		{"bad boot", []string{"-remediate", settings, "-boot", "yesterday", xid79}, "",
			"gpureplay: -boot \"yesterday\": want RFC 3339 (2025-11-24T08:00:00Z) or Unix seconds\n"},
		{"bad zone", []string{"-remediate", settings, "-tz", "Mars/Olympus", xid79}, "",
			"gpureplay: -tz: unknown time zone Mars/Olympus\n"},
		{"bad gpus", []string{"-remediate", settings, "-gpus", badGPUs, xid79}, "",
			"gpureplay: " + badGPUs + `:2: bus id "GPU-b": want DOMAIN:BUS:DEVICE[.FUNCTION] in hex` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, stderr, code := runReplay(t, tc.args...)
			require.Equal(t, 1, code, stderr)
			require.Equal(t, tc.stderr, stderr)
			require.Equal(t, tc.stdout, strings.Join(append(decisions(t, out), ""), "\n"), "the decisions before the error")
		})
	}
}
