package nodeagent

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRequestedUUIDs(t *testing.T) {
	require.Equal(t, []string{"GPU-a", "GPU-b"}, RequestedUUIDs(" GPU-a,GPU-b ,GPU-a,"))
	require.Empty(t, RequestedUUIDs(""))
	require.Empty(t, RequestedUUIDs(" , "))
}

func TestAnswers(t *testing.T) {
	r := Result{Incident: "i-1", Outcome: ResetOK}
	require.True(t, r.Answers("i-1"))
	require.False(t, r.Answers("i-2"))
	require.False(t, Result{Outcome: ResetOK}.Answers(""), "a request without an incident is never answered before")
}

func TestResultPatch(t *testing.T) {
	r := Result{UUIDs: []string{"GPU-a"}, Incident: "i-1", Outcome: ResetFailed, Detail: "exit status 1", Time: time.Unix(100, 0).UTC()}
	var got map[string]any
	require.NoError(t, json.Unmarshal(ResultPatch("42", &r), &got))
	require.Equal(t, map[string]any{"metadata": map[string]any{
		"resourceVersion": "42",
		"annotations":     map[string]any{ResetRequest: nil, ResetIncident: nil, ResetResult: r.Encode()},
	}}, got)
	back, err := ParseResult(got["metadata"].(map[string]any)["annotations"].(map[string]any)[ResetResult].(string))
	require.NoError(t, err)
	require.Equal(t, r, back)

	require.NoError(t, json.Unmarshal(ResultPatch("43", nil), &got))
	require.Equal(t, map[string]any{"metadata": map[string]any{
		"resourceVersion": "43",
		"annotations":     map[string]any{ResetRequest: nil, ResetIncident: nil},
	}}, got, "without a result, the result already there stays")
}

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
