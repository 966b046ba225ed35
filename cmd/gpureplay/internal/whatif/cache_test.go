package whatif

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func cacheFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	require.NoError(t, err)
	return files
}

// TestCacheReusesPoints: with -cache, a row's frontier and foresight
// points are written once and read back by the next run; a run with a
// cache gives the rows a run without one gives; the cached points are the
// ones used (points altered in the file show in the row); a file that is
// not complete points is computed again and replaced.
func TestCacheReusesPoints(t *testing.T) {
	series := writeSeries(t, "wave.csv", time.Hour, func(at time.Duration) float64 {
		if at >= 20*time.Minute && at < 35*time.Minute {
			return 4
		}
		return 1.5
	})
	settings, err := LoadSettings("../../../../examples/autoscaling/llm-serving-calibrated.yaml")
	require.NoError(t, err)
	scenarios := []Scenario{{series, 1, 180 * time.Second}}
	dir := filepath.Join(t.TempDir(), "points")

	plain, err := CompareAll(settings, scenarios, Options{}, 1)
	require.NoError(t, err)
	first, err := CompareAll(settings, scenarios, Options{Cache: dir}, 1)
	require.NoError(t, err)
	require.Equal(t, plain, first, "a cache changes no figure")
	files := cacheFiles(t, dir)
	require.Len(t, files, 1, "one file per scenario")

	// Double every frontier point's GPU-hours in the file: the next run
	// compares with those.
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var p cachedPoints
	require.NoError(t, json.Unmarshal(b, &p))
	for i := range p.Frontier {
		p.Frontier[i].Summary.GPUHours *= 2
	}
	b, err = json.Marshal(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(files[0], b, 0o600))
	reused, err := CompareAll(settings, scenarios, Options{Cache: dir}, 1)
	require.NoError(t, err)
	require.Equal(t, plain[0].Summary, reused[0].Summary, "the settings themselves still run")
	require.InDelta(t, 2*plain[0].FrontierGPUHours, reused[0].FrontierGPUHours, 1e-5, "the frontier came from the file")

	for _, bad := range []string{"{", `{"version":1,"frontier":[],"foresight":[]}`, `{"version":99}`} {
		require.NoError(t, os.WriteFile(files[0], []byte(bad), 0o600))
		again, err := CompareAll(settings, scenarios, Options{Cache: dir}, 1)
		require.NoError(t, err)
		require.Equal(t, plain, again, "points computed again for %q", bad)
		_, ok := loadPoints(files[0])
		require.True(t, ok, "and the file replaced")
	}
	require.Len(t, cacheFiles(t, dir), 1, "no temporary file is left")
}

// The file is found by what the points depend on: the demand's content,
// not its name; the scenario; every option of the model.
func TestCacheKey(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(t.TempDir(), "d.csv")
	require.NoError(t, os.WriteFile(path, []byte("t_seconds,demand_pods\n0,1\n15,2\n"), 0o600))
	base := Options{Scale: 1, Startup: 180 * time.Second}
	key := func(o Options) string {
		f, err := cacheFile(dir, path, o)
		require.NoError(t, err)
		return f
	}
	k := key(base)
	require.Equal(t, k, key(base), "the same scenario, the same file")
	require.Equal(t, k, key(Options{Scale: 1, Startup: 180 * time.Second, Sample: 5 * time.Second, SLOWait: 2 * time.Second}), "the defaults spelled out")
	seen := map[string]string{k: "base"}
	for name, o := range map[string]Options{
		"scale":    {Scale: 5, Startup: 180 * time.Second},
		"startup":  {Scale: 1, Startup: 600 * time.Second},
		"sample":   {Scale: 1, Startup: 180 * time.Second, Sample: 15 * time.Second},
		"slo wait": {Scale: 1, Startup: 180 * time.Second, SLOWait: 10 * time.Second},
		"cold":     {Scale: 1, Startup: 180 * time.Second, Cold: true},
		"cycle":    {Scale: 1, Startup: 180 * time.Second, CycleLength: 12 * time.Hour, CyclePeriod: 6 * time.Hour},
	} {
		f := key(o)
		require.NotContains(t, seen, f, "%s changes the file (as %s)", name, seen[f])
		seen[f] = name
	}
	require.NoError(t, os.WriteFile(path, []byte("t_seconds,demand_pods\n0,1\n15,3\n"), 0o600))
	require.NotEqual(t, k, key(base), "other content under the same name")
	_, err := cacheFile(dir, filepath.Join(dir, "missing.csv"), base)
	require.Error(t, err)

	// Another build (another executable) names other points: one with a
	// change of the model never reads points this one made.
	content, err := os.ReadFile(path)
	require.NoError(t, err)
	exe, err := executableHash()
	require.NoError(t, err)
	require.Len(t, exe, 64)
	ours := pointsKey(exe, content, base)
	require.Equal(t, filepath.Join(dir, ours+".json"), key(base), "the file is named by this executable's hash")
	require.NotEqual(t, ours, pointsKey(strings.Repeat("0", 64), content, base))
}
