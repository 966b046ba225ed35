package realtraces

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The number formats are Python's, because the traces were first written
// by Python converters and the goldens were made from those bytes: pyG is
// format(x, "g") (6 significant digits, trailing zeros dropped, which Go's
// 'g' with precision 6 also does), pyRound is round(x, n) (correctly
// rounded, half to even, as strconv's fixed format is).

func pyG(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func pyRound(x float64, n int) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
	if err != nil {
		return math.NaN()
	}
	return r
}

// pyRepr is repr(x) for a finite float: the shortest digits that read
// back as x, in fixed notation from 1e-4 to 1e16, else exponent notation.
func pyRepr(x float64) string {
	if a := math.Abs(x); a != 0 && (a < 1e-4 || a >= 1e16) {
		return strconv.FormatFloat(x, 'e', -1, 64)
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// GenTD26 writes Alibaba's GenTD26 pod series (cluster-trace-v2026-GenAI:
// GPU utilization in %, memory used in bytes; each a .tar.gz holding one
// CSV with the columns value, timestamp_anon and container_ip, an MD5 hash
// that is the only identity) as a trace of the first npods pods in
// ascending order of that hash (an arbitrary, reproducible sample), whole
// recording, not resampled. uuid = GPU-gentd26-<first 12 hex> (synthetic:
// the source has no GPU identity), pod = the same 12 hex; utilization
// rounded to 3 decimals, memory in MiB to 2; a pod with one metric missing
// at a timestamp gets a blank cell.
func GenTD26(w io.Writer, duty, memory string, npods int) error {
	util, err := gentdSeries(duty)
	if err != nil {
		return err
	}
	used, err := gentdSeries(memory)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	keys := map[gentdKey]bool{}
	for _, m := range []map[gentdKey]float64{util, used} {
		for k := range m {
			seen[k.pod] = true
			keys[k] = true
		}
	}
	pods := make([]string, 0, len(seen))
	for p := range seen {
		pods = append(pods, p)
	}
	slices.Sort(pods)
	keep := map[string]bool{}
	for _, p := range pods[:min(npods, len(pods))] {
		keep[p] = true
	}
	var rows []gentdKey
	for k := range keys {
		if keep[k.pod] {
			rows = append(rows, k)
		}
	}
	slices.SortFunc(rows, func(a, b gentdKey) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return strings.Compare(a.pod, b.pod)
	})
	bw := bufio.NewWriter(w)
	// The Python converter's comment said CC BY 4.0, the licence of another
	// folder of the same repository; this one has research-use terms only.
	bw.WriteString("# Alibaba GenTD26 (github.com/alibaba/clusterdata, cluster-trace-v2026-GenAI), no licence, research-use terms;" +
		" anonymised at the source (timestamps shifted, values scaled); see README.md\n")
	bw.WriteString("timestamp,uuid,pod,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED\n")
	for _, k := range rows {
		ts := pyRepr(k.t)
		if k.t == math.Trunc(k.t) {
			ts = strconv.FormatFloat(k.t, 'f', 0, 64)
		}
		var u, m string
		if v, ok := util[k]; ok {
			u = pyG(pyRound(v, 3))
		}
		if v, ok := used[k]; ok {
			m = pyG(pyRound(v/1048576, 2))
		}
		id := k.pod[:min(12, len(k.pod))]
		fmt.Fprintf(bw, "%s,GPU-gentd26-%s,%s,%s,%s\n", ts, id, id, u, m)
	}
	return bw.Flush()
}

type gentdKey struct {
	t   float64
	pod string
}

// gentdSeries reads one GenTD26 metric, a later row for the same
// timestamp and pod replacing an earlier one; blank and NULL values are
// skipped.
func gentdSeries(path string) (map[gentdKey]float64, error) {
	data, err := firstCSV(path)
	if err != nil {
		return nil, err
	}
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range hdr {
		col[h] = i
	}
	vi, ok1 := col["value"]
	ti, ok2 := col["timestamp_anon"]
	pi, ok3 := col["container_ip"]
	if !ok1 || !ok2 || !ok3 {
		return nil, fmt.Errorf("%s: header %v lacks value, timestamp_anon or container_ip", path, hdr)
	}
	out := map[gentdKey]float64{}
	err = eachRecord(path, r, len(hdr), func(rec []string, line int) error {
		v := strings.TrimSpace(rec[vi])
		if v == "" || v == "NULL" || v == "None" {
			return nil
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s: line %d: value: %w", path, line, err)
		}
		t, err := strconv.ParseFloat(strings.TrimSpace(rec[ti]), 64)
		if err != nil {
			return fmt.Errorf("%s: line %d: timestamp_anon: %w", path, line, err)
		}
		out[gentdKey{t, strings.TrimSpace(rec[pi])}] = x
		return nil
	})
	return out, err
}

// eachRecord calls fn with every record after the header and its line,
// each of which must have n fields.
func eachRecord(path string, r *csv.Reader, n int, fn func(rec []string, line int) error) error {
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != n {
			return fmt.Errorf("%s: line %d has %d fields, not %d", path, line, len(rec), n)
		}
		if err := fn(rec, line); err != nil {
			return err
		}
	}
}

// firstCSV returns the first .csv file of a .tar.gz, or the file itself.
func firstCSV(path string) ([]byte, error) {
	if !strings.HasSuffix(path, ".tar.gz") && !strings.HasSuffix(path, ".tgz") {
		return os.ReadFile(path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: no CSV inside", path)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if h.Typeflag == tar.TypeReg && strings.HasSuffix(h.Name, ".csv") {
			return io.ReadAll(tr)
		}
	}
}

// Wilkins writes an nvidia-smi trace of grantwilkins/training_profile's
// 8×H100 Llama-3.1-8B training (h100-traces/ckpt<N>.csv, from
// `nvidia-smi --query-gpu=timestamp,power.draw,utilization.gpu,memory.used
// --format=csv -lms 100`) as a trace, every tick kept. The source has no
// GPU index: nvidia-smi prints the GPUs in index order at each tick, so
// line k (header excluded) is GPU k mod 8, and the line count must be a
// multiple of 8. The 8 rows of a tick get the tick's first timestamp (the
// lines differ by milliseconds), local time read as UTC. uuid =
// GPU-wilkins-h100-<index> and host = h100x8 are synthetic.
func Wilkins(w io.Writer, src string) error {
	const ngpu = 8
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	var lines []string
	for l := range strings.Lines(string(data)) {
		l = strings.TrimRight(l, "\r\n")
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("%s: empty", src)
	}
	hdr := trimAll(strings.Split(lines[0], ","))
	want := []string{"timestamp", "power.draw [W]", "utilization.gpu [%]", "memory.used [MiB]"}
	if !slices.Equal(hdr, want) {
		return fmt.Errorf("%s: unexpected header %q", src, hdr)
	}
	body := lines[1:]
	if len(body)%ngpu != 0 {
		return fmt.Errorf("%s: %d lines, not a multiple of %d", src, len(body), ngpu)
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("# nvidia-smi trace of 8xH100 Llama-3.1-8B training, github.com/grantwilkins/training_profile " +
		filepath.Base(src) + "; no licence in the source repository; see README.md\n")
	bw.WriteString("timestamp,uuid,host,gpu,model,DCGM_FI_DEV_POWER_USAGE,DCGM_FI_DEV_GPU_UTIL,DCGM_FI_DEV_FB_USED\n")
	last := math.Inf(-1)
	for tick := 0; tick < len(body); tick += ngpu {
		first := trimAll(strings.Split(body[tick], ","))
		ts, err := nvsmiTime(first[0])
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", src, tick+2, err)
		}
		if ts < last {
			return fmt.Errorf("%s: time goes back at line %d", src, tick+2)
		}
		last = ts
		for i := range ngpu {
			c := trimAll(strings.Split(body[tick+i], ","))
			if len(c) < 4 {
				return fmt.Errorf("%s: line %d: %d fields, not 4", src, tick+i+2, len(c))
			}
			var cells [3]string
			for j, unit := range []string{"W", "%", "MiB"} {
				if cells[j], err = nvsmiNumber(c[j+1], unit); err != nil {
					return fmt.Errorf("%s: line %d: %w", src, tick+i+2, err)
				}
			}
			fmt.Fprintf(bw, "%s,GPU-wilkins-h100-%d,h100x8,%d,NVIDIA H100,%s,%s,%s\n",
				strconv.FormatFloat(ts, 'f', 3, 64), i, i, cells[0], cells[1], cells[2])
		}
	}
	return bw.Flush()
}

func trimAll(cells []string) []string {
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

// nvsmiTime reads nvidia-smi's "2025/07/27 00:34:45.155" as UTC and
// returns Unix seconds, computed as Python's datetime.timestamp() does:
// whole microseconds divided by 10^6, one correctly rounded division.
func nvsmiTime(s string) (float64, error) {
	date, frac, ok := strings.Cut(s, ".")
	if !ok || frac == "" || len(frac) > 6 {
		return 0, fmt.Errorf("timestamp %q is not YYYY/MM/DD HH:MM:SS.ffffff", s)
	}
	t, err := time.Parse("2006/01/02 15:04:05", date)
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", s, err)
	}
	us, err := strconv.Atoi(frac + strings.Repeat("0", 6-len(frac)))
	if err != nil {
		return 0, fmt.Errorf("timestamp %q: %w", s, err)
	}
	return float64(t.Unix()*1_000_000+int64(us)) / 1e6, nil
}

// nvsmiNumber reads a cell such as "72.36 W": the number in Python's "g"
// format, or blank where nvidia-smi has none.
func nvsmiNumber(cell, unit string) (string, error) {
	cell = strings.TrimSpace(cell)
	if strings.HasSuffix(cell, unit) {
		cell = strings.TrimSpace(strings.TrimSuffix(cell, unit))
	}
	switch cell {
	case "", "[N/A]", "N/A", "[Not Supported]":
		return "", nil
	}
	x, err := strconv.ParseFloat(cell, 64)
	if err != nil {
		return "", fmt.Errorf("%q: %w", cell, err)
	}
	return pyG(x), nil
}

// OLMo writes one W&B run of jacob-morrison/olmo-co2's amberish-power.csv
// (the `_timestamp` and `system.gpu.<i>.powerWatts` of every W&B run of
// OLMo 7B "amberish7", appended run after run; columns "", timestamp,
// GPU 0..GPU 7) as a trace. A segment is a stretch whose timestamps never
// go back, one W&B run, numbered from 0 in file order; only segment is
// kept, so every series is one run on one node. Timestamps are copied as
// written, values in Python's "g" format. uuid =
// GPU-olmo-amberish7-s<segment>-<i> and host = amberish7-s<segment> are
// synthetic; model NVIDIA H100 (700 W peaks), job amberish7.
func OLMo(w io.Writer, src string, segment int) error {
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	hdr, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	type gcol struct{ col, index int }
	var gcols []gcol
	tcol := -1
	for k, h := range hdr {
		if h == "timestamp" && tcol < 0 {
			tcol = k
		}
		if strings.HasPrefix(h, "GPU ") {
			i, err := strconv.Atoi(strings.Fields(h)[1])
			if err != nil {
				return fmt.Errorf("%s: column %q: %w", src, h, err)
			}
			gcols = append(gcols, gcol{k, i})
		}
	}
	if tcol < 0 {
		return fmt.Errorf("%s: no timestamp column in %q", src, hdr)
	}
	var kept [][]string
	seg, last := 0, math.NaN()
	err = eachRecord(src, r, len(hdr), func(rec []string, line int) error {
		t, err := strconv.ParseFloat(strings.TrimSpace(rec[tcol]), 64)
		if err != nil {
			return fmt.Errorf("%s: line %d: timestamp: %w", src, line, err)
		}
		if t < last {
			seg++
		}
		last = t
		if seg == segment {
			kept = append(kept, rec)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(kept) == 0 {
		return fmt.Errorf("%s: no segment %d (last is %d)", src, segment, seg)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# W&B system.gpu.<i>.powerWatts of OLMo 7B 'amberish7' training (one W&B run, 8 GPUs), "+
		"github.com/jacob-morrison/olmo-co2 amberish-power.csv segment %d; no licence in the source repository; see README.md\n", segment)
	bw.WriteString("timestamp,uuid,host,gpu,model,job,DCGM_FI_DEV_POWER_USAGE\n")
	for _, rec := range kept {
		for _, g := range gcols {
			var p string
			if v := strings.TrimSpace(rec[g.col]); v != "" {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return fmt.Errorf("%s: power %q: %w", src, v, err)
				}
				p = pyG(x)
			}
			fmt.Fprintf(bw, "%s,GPU-olmo-amberish7-s%d-%d,amberish7-s%d,%d,NVIDIA H100,amberish7,%s\n",
				rec[tcol], segment, g.index, segment, g.index, p)
		}
	}
	return bw.Flush()
}
