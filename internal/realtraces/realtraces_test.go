package realtraces

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// Python's formats, which the recorded checksums depend on, on the cases
// the sources hold (each expected string is what Python 3 prints): memory
// in MiB above 6 significant digits, rounding ties, integer and fractional
// timestamps, nvidia-smi's cells.
func TestPythonFormats(t *testing.T) {
	require.Equal(t, "20618.2", pyG(pyRound(21619779232/1048576.0, 2)))
	require.Equal(t, "1.23457e+06", pyG(1234567))
	require.Equal(t, "100000", pyG(100000))
	require.Equal(t, "0", pyG(0))
	require.Equal(t, "1e-05", pyG(0.00001))
	require.Equal(t, "66.667", pyG(pyRound(200.0/3, 3)))
	require.Equal(t, 0.062, pyRound(0.0625, 3), "a tie rounds to even")
	require.Equal(t, "1662858720.5", pyRepr(1662858720.5))
	require.Equal(t, "1e+16", pyRepr(1e16))
	ts, err := nvsmiTime("2025/07/27 00:34:45.155")
	require.NoError(t, err)
	require.Equal(t, "1753576485.155", strconv.FormatFloat(ts, 'f', 3, 64))
	_, err = nvsmiTime("2025-07-27 00:34:45")
	require.ErrorContains(t, err, "2025-07-27 00:34:45")
	for _, c := range []struct{ cell, unit, want string }{
		{"72.36 W", "W", "72.36"}, {" 0 %", "%", "0"}, {"131 MiB", "MiB", "131"},
		{"[N/A]", "W", ""}, {"[Not Supported]", "MiB", ""},
	} {
		got, err := nvsmiNumber(c.cell, c.unit)
		require.NoError(t, err, c.cell)
		require.Equal(t, c.want, got, c.cell)
	}
	_, err = nvsmiNumber("12 X", "W")
	require.ErrorContains(t, err, "12 X")
}

// A source that is not the recorded file fails the conversion, naming it:
// the goldens were made from the recorded bytes.
func TestWriteChecksSources(t *testing.T) {
	rec := t.TempDir()
	tr, err := Find("wilkins_h100x8_ckpt1")
	require.NoError(t, err)
	src := filepath.Join(rec, filepath.FromSlash(tr.Sources[0].Path))
	require.NoError(t, os.MkdirAll(filepath.Dir(src), 0o750))
	require.NoError(t, os.WriteFile(src, []byte("timestamp, power.draw [W], utilization.gpu [%], memory.used [MiB]\n"), 0o600))
	out := t.TempDir()
	_, err = tr.Write(rec, out)
	require.ErrorContains(t, err, src)
	require.ErrorContains(t, err, tr.Sources[0].SHA256)
	left, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Empty(t, left, "nothing written")
	_, err = Find("absent")
	require.ErrorContains(t, err, "absent")
}

// Each trace converts from the shared recordings to the recorded bytes
// (Write checks the SHA-256), with the rows and series that
// cmd/gpureplay/testdata/real/README.md gives.
func TestConvertedTraces(t *testing.T) {
	want := map[string][2]int{ // rows, series
		"alibaba_gentd26_pods":       {54915, 48},
		"wilkins_h100x8_ckpt100":     {54432, 8},
		"wilkins_h100x8_ckpt1":       {54456, 8},
		"olmo_amberish7_wandb_power": {34504, 8},
	}
	require.Len(t, Traces, len(want))
	for _, tr := range Traces {
		t.Run(tr.Name, func(t *testing.T) {
			p := Path(t, tr.Name)
			require.Equal(t, p, Path(t, tr.Name), "converted once")
			f, err := os.Open(p)
			require.NoError(t, err)
			defer f.Close()
			sc := bufio.NewScanner(f)
			rows, series := 0, map[string]bool{}
			for sc.Scan() {
				l := sc.Text()
				if strings.HasPrefix(l, "#") || strings.HasPrefix(l, "timestamp,") {
					continue
				}
				rows++
				series[strings.Split(l, ",")[1]] = true
			}
			require.NoError(t, sc.Err())
			got := [2]int{rows, len(series)}
			require.Equal(t, want[tr.Name], got, p)
		})
	}
}
