package nodeagent

import (
	"testing"
	"time"
)

func TestResultRoundTrip(t *testing.T) {
	in := Result{UUIDs: []string{"GPU-1", "GPU-2"}, Incident: "inc-1", Outcome: ResetFailed, Detail: "exit status 255", Time: time.Unix(1767226500, 0).UTC()}
	out, err := ParseResult(in.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if out.Outcome != in.Outcome || out.Detail != in.Detail || len(out.UUIDs) != 2 || !out.Time.Equal(in.Time) {
		t.Fatalf("round trip: got %+v, want %+v", out, in)
	}
}

func TestParseResultRejects(t *testing.T) {
	for _, s := range []string{"", "{", `{"outcome":"maybe"}`} {
		if _, err := ParseResult(s); err == nil {
			t.Errorf("ParseResult(%q): no error", s)
		}
	}
}
