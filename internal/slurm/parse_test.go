package slurm

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestExpandHostlist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"gpu[01-03,07]", []string{"gpu01", "gpu02", "gpu03", "gpu07"}},
		{"gpu[8-10]", []string{"gpu8", "gpu9", "gpu10"}}, // no padding: lo has one digit
		{"gpu[098-101]", []string{"gpu098", "gpu099", "gpu100", "gpu101"}},
		{"login1,gpu[1-2],cpu", []string{"login1", "gpu1", "gpu2", "cpu"}},
		{"rack[1-2]-n[1-2]", []string{"rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"}},
		{"node-a", []string{"node-a"}},
		{"(null)", nil},
		{"", nil},
	} {
		got, err := ExpandHostlist(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestExpandHostlistErrors(t *testing.T) {
	for in, want := range map[string]string{
		"gpu[01-03":       "not closed",
		"gpu01]":          "without '['",
		"gpu[3-1]":        "LO <= HI",
		"gpu[a-b]":        "LO <= HI",
		"gpu[]":           "LO <= HI",
		"n[0-999999999]":  "more than",
		"n[0-999]m[0-99]": "more than",
	} {
		_, err := ExpandHostlist(in)
		require.ErrorContains(t, err, want, in)
		require.ErrorContains(t, err, in, "the error names the hostlist")
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"UNLIMITED":   0,
		"INFINITE":    0,
		"1-00:00:00":  24 * time.Hour,
		"2-12:00:00":  60 * time.Hour,
		"01:30:00":    90 * time.Minute,
		"00:00:16":    16 * time.Second,
		"90":          90 * time.Minute, // sbatch --time=90: minutes
		"5:30":        5*time.Minute + 30*time.Second,
		"1-06":        30 * time.Hour,
		"1-06:15":     30*time.Hour + 15*time.Minute,
		"10-00:00:01": 240*time.Hour + time.Second,
	} {
		got, err := ParseDuration(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "abc", "1-", "1:2:3:4", "-1", "1--2", "1-a:00"} {
		_, err := ParseDuration(in)
		require.ErrorContains(t, err, "slurm time", in)
	}
}

func TestParseRecordKeepsSpacesInValues(t *testing.T) {
	rec := parseRecord("JobId=4 JobName=train llama 70b UserId=root(0) CPUs/Task=1 AllocNode:Sid=h:1  Reason=gpu bad [root@2026-12-02T05:06:24]")
	require.Equal(t, "train llama 70b", rec.get("JobName"))
	require.Equal(t, "1", rec.get("CPUs/Task"))
	require.Equal(t, "h:1", rec.get("AllocNode:Sid"))
	require.Equal(t, "gpu bad [root@2026-12-02T05:06:24]", rec.get("Reason"))
}

func TestSafeReason(t *testing.T) {
	require.Equal(t, "otelcol-gpu incident a_b: xid_79 on GPU-1 _x_", SafeReason(" otelcol-gpu incident a=b: xid_79 on GPU-1 \"x\"\n"))
	long := SafeReason(string(make([]byte, 500)))
	require.Len(t, long, MaxReasonLen)
	require.Equal(t, "caf__", SafeReason("café"), "non-ASCII bytes become _")
}
