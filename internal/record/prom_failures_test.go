package record

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/promfake"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// TestPrometheusFailures: each failure is one line on stderr and exit
// status 1; nothing is written when nothing was read.
func TestPrometheusFailures(t *testing.T) {
	want := loadTrace(t, "memory-leak-15s.csv", 0, 1767225700)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name  string
		fail  func(string, url.Values) (int, string)
		args  []string
		empty bool // a Prometheus without GPU series
		want  string
	}{
		{name: "down", want: "dial tcp"},
		{name: "http", fail: func(string, url.Values) (int, string) { return 502, "upstream\nbroke" },
			want: "/api/v1/label/__name__/values", // replaced below
		},
		{name: "api", fail: func(p string, _ url.Values) (int, string) {
			if p != "/api/v1/query" {
				return 0, ""
			}
			return 422, `{"status":"error","errorType":"execution","error":"query processing would load too many samples into memory"}`
		}, want: "execution: query processing would load too many samples into memory (HTTP 422)"},
		{name: "status", fail: func(p string, _ url.Values) (int, string) {
			if p != "/api/v1/query" {
				return 0, ""
			}
			return 200, `{"status":"error","errorType":"timeout","error":"query timed out"}`
		}, want: "prometheus says timeout: query timed out"},
		{name: "too many", args: []string{"-max-series", "5"}, want: "more than 5 series (-max-series): narrow the selection with -match, or raise -max-series"},
		{name: "nothing", empty: true, want: "holds no GPU series from 2026-01-01T00:00:00.000Z to 2026-01-01T00:01:40.000Z"},
		{name: "no match", args: []string{"-match", `{Hostname="nowhere"}`}, want: `holds no GPU series matching {Hostname="nowhere"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prom := promfake.New()
			if !tc.empty {
				prom.AddSeries(promfake.DCGMExporter(want)...)
			}
			prom.Fail = tc.fail
			base := serve(t, prom)
			if tc.name == "down" {
				base = closed.URL
			}
			out := filepath.Join(t.TempDir(), "t.csv")
			code, stderr := record(t, context.Background(), Env{}, append([]string{"-prometheus", base, "-start", "1767225600", "-end", "1767225700", "-o", out}, tc.args...)...)
			require.Equal(t, ExitError, code, stderr)
			require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
			if tc.name == "http" {
				tc.want = "HTTP 502 Bad Gateway: upstream broke"
			}
			require.Contains(t, stderr, tc.want)
			require.True(t, strings.HasPrefix(stderr, "gpurecord: "), stderr)
			require.NoFileExists(t, out, "nothing read, nothing written")
		})
	}

	// Without a UUID on any series: nothing to write.
	prom := promfake.New()
	prom.Add(map[string]string{"__name__": "DCGM_FI_DEV_GPU_UTIL", "gpu": "0"}, promfake.Sample{T: 1767225600000, V: 1})
	out := filepath.Join(t.TempDir(), "t.csv")
	code, stderr := record(t, context.Background(), Env{}, "-prometheus", serve(t, prom), "-start", "1767225600", "-end", "1767225700", "-o", out)
	require.Equal(t, ExitError, code)
	require.Contains(t, stderr, "returned no samples with a GPU UUID from 2026-01-01T00:00:00.000Z to 2026-01-01T00:01:40.000Z (1 series without one)\n")
	require.NoFileExists(t, out)
}

// TestPrometheusFailsMidway: a failure after the first window keeps the
// rows written, says where the trace stops, in it and on stderr.
func TestPrometheusFailsMidway(t *testing.T) {
	want := loadTrace(t, "memory-leak-15s.csv", 0, math.Inf(1))
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	prom.Fail = func(p string, form url.Values) (int, string) {
		if p == "/api/v1/query" && form.Get("time") != "1767229199.999" {
			return 503, "Service Unavailable"
		}
		return 0, ""
	}
	out := filepath.Join(t.TempDir(), "t.csv")
	code, stderr := record(t, context.Background(), Env{}, "-prometheus", serve(t, prom), "-start", "1767225600", "-end", "1767234585", "-o", out)
	require.Equal(t, ExitError, code)
	require.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
	require.Contains(t, stderr, "at 2026-01-01T01:59:59.999Z: HTTP 503 Service Unavailable: Service Unavailable; the 2880 rows up to 2026-01-01T00:59:59.999Z are in "+out+"\n")
	raw, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Contains(t, string(raw), "\n# gpurecord: stopped after the rows up to 2026-01-01T00:59:59.999Z: query DCGM_FI_")
	got := readTrace(t, out)
	var first [][]trace.Row
	for _, b := range want {
		if b[0].Time < 1767229200 {
			first = append(first, b)
		}
	}
	requireSameRows(t, first, got, traceFields(want))
}

// TestPrometheusInterrupted: SIGINT (a cancelled context) stops the
// recording with what was read written.
func TestPrometheusInterrupted(t *testing.T) {
	want := loadTrace(t, "memory-leak-15s.csv", 0, math.Inf(1))
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prom.Fail = func(p string, form url.Values) (int, string) {
		if p == "/api/v1/query" && form.Get("time") != "1767229199.999" {
			cancel()
		}
		return 0, ""
	}
	out := filepath.Join(t.TempDir(), "t.csv")
	code, stderr := record(t, ctx, Env{}, "-prometheus", serve(t, prom), "-start", "1767225600", "-end", "1767234585", "-o", out)
	require.Equal(t, ExitError, code)
	require.Equal(t, "gpurecord: interrupted; the 2880 rows up to 2026-01-01T00:59:59.999Z are in "+out+"\n", stderr)
	require.Len(t, readTrace(t, out), 240)
}

func TestPrometheusAuth(t *testing.T) {
	want := loadTrace(t, "memory-leak-15s.csv", 0, 1767225610)
	prom := promfake.New()
	prom.AddSeries(promfake.DCGMExporter(want)...)
	base := serve(t, prom)
	seen := 0
	auth := func() string {
		reqs := prom.Requests()[seen:]
		seen += len(reqs)
		a := reqs[0].Get("authorization")
		for _, r := range reqs {
			require.Equal(t, a, r.Get("authorization"), "every request")
		}
		return a
	}
	run := func(url string, args ...string) {
		t.Helper()
		code, stderr, _ := promRecord(t, context.Background(), append([]string{"-prometheus", url, "-start", "1767225600", "-end", "1767225605"}, args...)...)
		require.Equal(t, ExitOK, code, stderr)
	}
	run(strings.Replace(base, "http://", "http://gpu:s3cret@", 1))
	require.Equal(t, "Basic Z3B1OnMzY3JldA==", auth())

	t.Setenv("PROMETHEUS_BEARER_TOKEN", "from-env")
	run(base)
	require.Equal(t, "Bearer from-env", auth())

	file := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(file, []byte("from-file\n"), 0o600))
	run(base, "-bearer-token-file", file)
	require.Equal(t, "Bearer from-file", auth())
}

func TestPrometheusBadFlags(t *testing.T) {
	dir := t.TempDir()
	p := []string{"-prometheus", "http://127.0.0.1:9"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-start", "1767225600"}, ExitUsage, "gpurecord: -start needs -prometheus"},
		{[]string{"-step", "1m"}, ExitUsage, "gpurecord: -step needs -prometheus"},
		{append(p, "-backend", "nvml", "-start", "0", "-end", "1"), ExitUsage, "gpurecord: -backend does not apply to -prometheus"},
		{append(p, "-interval", "1s", "-start", "0", "-end", "1"), ExitUsage, "gpurecord: -interval does not apply to -prometheus"},
		{[]string{"-prometheus", "", "-start", "0", "-end", "1"}, ExitUsage, "gpurecord: -prometheus: empty URL"},
		{[]string{"-prometheus", "localhost:9090", "-start", "0", "-end", "1"}, ExitUsage, `gpurecord: -prometheus: "localhost:9090" is not an http:// or https:// URL`},
		{[]string{"-prometheus", "http://h:9090/api/v1/query?x=1", "-start", "0", "-end", "1"}, ExitUsage, `gpurecord: -prometheus: "http://h:9090/api/v1/query?x=1": want the base URL, without a query`},
		{p, ExitUsage, "gpurecord: -prometheus needs -start and -end"},
		{append(p, "-start", "yesterday", "-end", "1"), ExitUsage, `gpurecord: -start: "yesterday" is neither RFC 3339 (2026-01-01T00:00:00Z) nor Unix seconds`},
		{append(p, "-start", "2026-01-01T00:00:00Z", "-end", "1767225600"), ExitUsage, "gpurecord: -end 2026-01-01T00:00:00Z is not after -start 2026-01-01T00:00:00Z"},
		{append(p, "-start", "0", "-end", "1", "-step", "0s"), ExitUsage, "gpurecord: -step must be at least 1ms, got 0s"},
		{append(p, "-start", "0", "-end", "1", "-max-series", "0"), ExitUsage, "gpurecord: -max-series must be positive, got 0"},
		{append(p, "-start", "0", "-end", "1", "-match", `DCGM_FI_DEV_GPU_UTIL{Hostname="a"}`), ExitUsage, "gpurecord: -match: "},
		{append(p, "-start", "0", "-end", "1", "-match", `{Hostname="a"`), ExitUsage, "gpurecord: -match: "},
		{append(p, "-start", "0", "-end", "1", "-bearer-token-file", filepath.Join(dir, "none")), ExitError, "gpurecord: -bearer-token-file: open "},
	} {
		code, stderr := record(t, context.Background(), Env{}, append(tc.args, "-o", filepath.Join(dir, "t.csv"))...)
		require.Equalf(t, tc.code, code, "%v: %s", tc.args, stderr)
		require.Equalf(t, 1, strings.Count(stderr, "\n"), "%v: one line, got %q", tc.args, stderr)
		require.Truef(t, strings.HasPrefix(stderr, tc.want), "%v: got %q, want %q", tc.args, stderr, tc.want)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "no output is created on a flag error")
}
