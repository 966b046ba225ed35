package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/realtraces"
)

var reportData = regexp.MustCompile(`(?s)<script type="application/json" id="report-data">(.*?)</script>`)

// pageData reads the JSON a report embeds.
func pageData(t *testing.T, path string) map[string]any {
	t.Helper()
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	m := reportData.FindSubmatch(page)
	require.NotNil(t, m, "no embedded data in %s", path)
	var d map[string]any
	require.NoError(t, json.Unmarshal(m[1], &d))
	return d
}

// verdictLine is one line of gpureplay's verdicts.
type verdictLine struct {
	Time      float64  `json:"time"`
	UUID      string   `json:"uuid"`
	Straggler bool     `json:"straggler"`
	Alerts    []string `json:"alerts"`
}

func readVerdicts(t *testing.T, out string) []verdictLine {
	t.Helper()
	var vs []verdictLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"summary"`) {
			continue
		}
		var v verdictLine
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v))
		vs = append(vs, v)
	}
	return vs
}

// TestReportMatchesVerdicts replays the shared serving trace with -report
// and the example prices and holds the page's data to what the same
// replay printed: a lane per GPU, a straggler span over every straggler
// verdict and none elsewhere, an alert episode firing where the verdicts
// first say so, and -cost's figures in the cost table. The data, series
// aside, is golden (go test -run TestReportMatchesVerdicts -update).
func TestReportMatchesVerdicts(t *testing.T) {
	for _, name := range []string{"serving-mixed-5s", "training-h100-1s"} {
		t.Run(name, func(t *testing.T) {
			page := filepath.Join(t.TempDir(), "report.html")
			prices := filepath.Join("..", "..", "examples", "cost", "prices.yaml")
			out, stderr, code := runReplay(t, "-cost", prices, "-report", page, tracePath(name))
			require.Equal(t, 0, code, stderr)
			st, err := os.Stat(page)
			require.NoError(t, err)
			require.Less(t, st.Size(), int64(2<<20), "under 2 MB")
			d := pageData(t, page)

			verdicts := readVerdicts(t, out)
			uuids := map[string]bool{}
			for _, v := range verdicts {
				uuids[v.UUID] = true
			}
			lanes := d["lanes"].([]any)
			require.Len(t, lanes, len(uuids), "one lane per GPU")

			type span struct {
				from, to float64
				open     bool
			}
			spans := map[string][]span{}
			for _, s := range d["stragglers"].([]any) {
				m := s.(map[string]any)
				open, _ := m["open"].(bool)
				spans[m["uuid"].(string)] = append(spans[m["uuid"].(string)], span{m["from"].(float64), m["to"].(float64), open})
			}
			firstFiring := map[string]float64{} // uuid/alert
			for _, v := range verdicts {
				in := false
				for _, s := range spans[v.UUID] {
					in = in || (v.Time >= s.from && (v.Time < s.to || (s.open && v.Time <= s.to)))
				}
				require.Equal(t, v.Straggler, in, "%s at %v: straggler %v, in a span %v", v.UUID, v.Time, v.Straggler, in)
				for _, a := range v.Alerts {
					if _, ok := firstFiring[v.UUID+"/"+a]; !ok {
						firstFiring[v.UUID+"/"+a] = v.Time
					}
				}
			}
			episodes := map[string][]float64{}
			for _, a := range d["alerts"].([]any) {
				m := a.(map[string]any)
				if f, ok := m["firing"].(float64); ok {
					key := m["uuid"].(string) + "/" + m["alert"].(string)
					episodes[key] = append(episodes[key], f)
				}
			}
			require.Len(t, episodes, len(firstFiring), "an episode for each GPU and alert that fired")
			for key, at := range firstFiring {
				require.NotEmpty(t, episodes[key], key)
				require.Equal(t, at, episodes[key][0], "%s first fired at %v", key, at)
			}

			// The cost table is -cost's summary, figure for figure.
			var want []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
				if strings.HasPrefix(l, `{"summary": "cost"`) {
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(l), &m))
					want = append(want, map[string]any{"namespace": m["namespace"], "gpu_hours": m["gpu_hours"], "cost": m["cost"]})
				}
			}
			rows := d["cost"].(map[string]any)["rows"].([]any)
			require.Len(t, rows, len(want))
			for i := range want {
				require.Equal(t, want[i], rows[i])
			}

			// Golden: everything but the lanes' series (which the browser
			// test and TestReportSeries check).
			for _, l := range lanes {
				for _, k := range []string{"util", "sm", "power", "memory"} {
					delete(l.(map[string]any), k)
				}
			}
			got, err := json.MarshalIndent(d, "", " ")
			require.NoError(t, err)
			golden := filepath.Join("testdata", "report", name+".json")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(golden), 0o750))
				require.NoError(t, os.WriteFile(golden, append(got, '\n'), 0o644))
			}
			wantGolden, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.JSONEq(t, string(wantGolden), string(got))
		})
	}
}

// TestReportSeries: a trace sampled more coarsely than the report's
// buckets keeps every sample, its values as the trace has them.
func TestReportSeries(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "two.csv")
	require.NoError(t, os.WriteFile(tr, []byte(
		"timestamp,host,gpu,uuid,model,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_PROF_SM_ACTIVE,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_FB_USED,DCGM_FI_DEV_FB_FREE\n"+
			"100,h,0,GPU-a,H100,90,0.8,500,1000,3000\n"+
			"115,h,0,GPU-a,H100,10,0.05,100,2000,2000\n"+
			"130,h,0,GPU-a,H100,50,,300,4000,0\n"), 0o644))
	page := filepath.Join(dir, "r.html")
	_, stderr, code := runReplay(t, "-o", os.DevNull, "-report", page, tr)
	require.Equal(t, 0, code, stderr)
	d := pageData(t, page)
	require.Equal(t, float64(3), d["buckets"], "no more buckets than samples")
	require.Equal(t, false, d["downsampled"])
	lane := d["lanes"].([]any)[0].(map[string]any)
	require.Equal(t, "h/gpu0", lane["name"])
	require.Equal(t, []any{90.0, 10.0, 50.0}, lane["util"])
	require.Equal(t, []any{0.8, 0.05, nil}, lane["sm"], "a blank cell is null")
	require.Equal(t, []any{500.0, 100.0, 300.0}, lane["power"])
	require.Equal(t, []any{0.25, 0.5, 1.0}, lane["memory"])
}

// TestReportBadInput: an empty trace is a clear error and no page; one
// GPU with one row, and 512 GPUs (downsampled), are pages under 2 MB; a
// malformed row leaves no page; -report does not go with -whatif.
func TestReportBadInput(t *testing.T) {
	dir := t.TempDir()
	const header = "timestamp,host,gpu,uuid,model,namespace,pod,job,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_PROF_SM_ACTIVE,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_FB_USED,DCGM_FI_DEV_FB_FREE\n"

	empty := filepath.Join(dir, "empty.csv")
	require.NoError(t, os.WriteFile(empty, []byte(header), 0o644))
	page := filepath.Join(dir, "empty.html")
	_, stderr, code := runReplay(t, "-report", page, empty)
	require.Equal(t, 1, code)
	require.Equal(t, "gpureplay: "+empty+": the trace holds no samples: nothing to report\n", stderr)
	require.NoFileExists(t, page)

	one := filepath.Join(dir, "one.csv")
	require.NoError(t, os.WriteFile(one, []byte(header+"1767225600,h,0,GPU-1,H100,ml,p,j,50,0.5,300,10,70\n"), 0o644))
	page = filepath.Join(dir, "one.html")
	_, stderr, code = runReplay(t, "-o", os.DevNull, "-report", page, one)
	require.Equal(t, 0, code, stderr)
	d := pageData(t, page)
	require.Len(t, d["lanes"], 1)
	require.Equal(t, float64(1), d["buckets"])

	// 512 GPUs over an hour, a sample a minute: downsampled to 30 points.
	big := filepath.Join(dir, "big.csv")
	var b strings.Builder
	b.WriteString(header)
	for s := range 61 {
		for g := range 512 {
			util := 20 + (g*7+s*3)%80
			fmt.Fprintf(&b, "%d,node-%03d,%d,GPU-%08d,H100,ml,pod-%d,job-%d,%d,%.2f,%d,%d,%d\n",
				1767225600+60*s, g/8, g%8, g, g, g/64, util, float64(util)/100, 100+util*5, 1000+s*100, 80000-s*100)
		}
	}
	require.NoError(t, os.WriteFile(big, []byte(b.String()), 0o644))
	page = filepath.Join(dir, "big.html")
	_, stderr, code = runReplay(t, "-o", os.DevNull, "-report", page, big)
	require.Equal(t, 0, code, stderr)
	st, err := os.Stat(page)
	require.NoError(t, err)
	t.Logf("512 GPUs: %d bytes", st.Size())
	require.Less(t, st.Size(), int64(2<<20), "under 2 MB")
	d = pageData(t, page)
	require.Len(t, d["lanes"], 512)
	require.Equal(t, true, d["downsampled"])
	require.Equal(t, float64(30), d["buckets"])
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	require.Contains(t, string(html), `id="downsampled"`, "the page says it is downsampled")

	bad := filepath.Join(dir, "bad.csv")
	require.NoError(t, os.WriteFile(bad, []byte(header+"1767225600,h,0,GPU-1,H100,ml,p,j,50,0.5x,300,10,70\n"), 0o644))
	page = filepath.Join(dir, "bad.html")
	_, stderr, code = runReplay(t, "-o", os.DevNull, "-report", page, bad)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, bad+":2:")
	require.NoFileExists(t, page, "no half a page")
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		require.False(t, strings.HasPrefix(e.Name(), "."), "a temporary file left behind: %s", e.Name())
	}

	_, stderr, code = runReplay(t, "-whatif", "x.yaml", "-report", page, "demand.csv")
	require.Equal(t, 2, code)
	require.Equal(t, "gpureplay: -report goes with a trace replay, not with -whatif\n", stderr)
}

// TestReportDecisions: with -autoscale and -remediate the page has their
// sections, the remediation's every decision and the autoscaler's
// evaluation count.
func TestReportDecisions(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "a.html")
	out, stderr, code := runReplay(t, "-autoscale", filepath.Join("testdata", "autoscale-serving.yaml"), "-report", page, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	d := pageData(t, page)
	as := d["autoscale"].(map[string]any)
	require.Equal(t, float64(strings.Count(out, "\n")), as["evaluations"])
	require.NotEmpty(t, as["events"])
	require.Len(t, d["lanes"], 32, "the verdicts are read for the report too")

	page = filepath.Join(dir, "r.html")
	out, stderr, code = runReplay(t, "-remediate", filepath.Join("testdata", "remediate-defaults.yaml"), "-report", page, tracePath("serving-mixed-5s"))
	require.Equal(t, 0, code, stderr)
	d = pageData(t, page)
	fixes := d["remediation"].([]any)
	require.Len(t, fixes, strings.Count(out, "\n"))
	require.NotEmpty(t, fixes)
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var want map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &want))
		require.Equal(t, want, fixes[i])
	}
}

// TestReportRealFleet: a public recording of a real fleet (48 GPUs over
// about 23 hours, testdata/real/README.md) whose alerts flap thousands of
// times stays a page under 2 MB: close episodes are one mark on their
// lane, the alert table lists the first 200 (firing first) and says how
// many more, and every episode stays in the page's data.
func TestReportRealFleet(t *testing.T) {
	page := filepath.Join(t.TempDir(), "fleet.html")
	_, stderr, code := runReplay(t, "-o", os.DevNull, "-cost", "../../examples/cost/prices.yaml", "-report", page, realtraces.Path(t, "alibaba_gentd26_pods"))
	require.Equal(t, 0, code, stderr)
	st, err := os.Stat(page)
	require.NoError(t, err)
	t.Logf("%d bytes", st.Size())
	require.Less(t, st.Size(), int64(2<<20), "under 2 MB")
	d := pageData(t, page)
	require.Len(t, d["lanes"], 48)
	episodes := len(d["alerts"].([]any))
	require.Greater(t, episodes, maxRows, "the recording's alerts flap more than the table lists")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(html), `<section id="alerts">`)
	require.True(t, ok, "an alerts section")
	section, _, ok = strings.Cut(section, "</section>")
	require.True(t, ok)
	require.Equal(t, maxRows, strings.Count(section, "<tr data-uuid="))
	require.Contains(t, section, fmt.Sprintf("%d more episodes are not listed", episodes-maxRows))
	marks := strings.Count(string(html), `class="mark alert `)
	require.Less(t, marks, episodes, "episodes less than a point apart share a mark")
	require.Positive(t, marks)
}

// maxRows is the alert table's bound (report.maxAlertRows).
const maxRows = 200
