package main

import (
	"bufio"
	"bytes"
	"log"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// vendorsResult is the receiver's scrape cost per GPU on the DCGM path
// and on the AMD SMI path, both the real cgo code against their stand-in
// libraries, in one run.
type vendorsResult struct {
	dcgmNs, amdNs         []float64 // per GPU per scrape
	dcgmPoints, amdPoints float64   // data points per GPU
	raw                   string
}

// measureVendors runs BenchmarkScrape's two stand-in paths, interleaved
// by -count, in one go test process.
func measureVendors() vendorsResult {
	cmd := exec.Command("go", "test", "./receiver/dcgmreceiver", "-run", "^$",
		"-bench", "BenchmarkScrape/(dcgm|amdsmi)-standin", "-benchmem", "-count", strconv.Itoa(*runs))
	cmd.Stderr = os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		log.Fatalf("vendor benchmarks: %v", err)
	}
	var r vendorsResult
	kv := regexp.MustCompile(`([0-9.]+) (\S+)`)
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		r.raw += sc.Text() + "\n"
		vals := map[string]float64{}
		for _, f := range kv.FindAllStringSubmatch(m[2], -1) {
			v, _ := strconv.ParseFloat(f[1], 64)
			vals[f[2]] = v
		}
		gpus := 32.0
		switch {
		case strings.HasPrefix(m[1], "BenchmarkScrape/dcgm-standin"):
			r.dcgmNs = append(r.dcgmNs, vals["ns/gpu"])
			r.dcgmPoints = vals["datapoints/scrape"] / gpus
		case strings.HasPrefix(m[1], "BenchmarkScrape/amdsmi-standin"):
			r.amdNs = append(r.amdNs, vals["ns/gpu"])
			r.amdPoints = vals["datapoints/scrape"] / gpus
		}
	}
	if len(r.dcgmNs) == 0 || len(r.amdNs) == 0 {
		log.Fatalf("no vendor benchmark results in:\n%s", raw)
	}
	log.Printf("vendors: AMD SMI %.1f µs/GPU, DCGM %.1f µs/GPU", median(r.amdNs)/1e3, median(r.dcgmNs)/1e3)
	return r
}

// markdown writes section 7.
func (v *vendorsResult) markdown(w func(format string, args ...any)) {
	w("## 7. AMD SMI and DCGM: the receiver's cost per GPU")
	w("")
	w("`go test ./receiver/dcgmreceiver -run '^$' -bench 'BenchmarkScrape/(dcgm|amdsmi)-standin' -benchmem -count %d`: one scrape of 32 GPUs, backend read and mapping to OTLP included, through the real cgo code of each path against its stand-in library (DCGM's `libdcgm.so.4`, AMD SMI's `libamd_smi.so`, both answering from memory), in the same run. What a real library spends (DCGM's host engine sampling in its own process, AMD SMI reading sysfs in the collector's) is not in these figures.", *runs)
	w("")
	a, d := median(v.amdNs), median(v.dcgmNs)
	w("| path | CPU per GPU per scrape (median) | data points per GPU | CPU per data point |")
	w("|---|---|---|---|")
	w("| DCGM (`backend: dcgm`, H100s) | %.1f µs | %.0f | %.0f ns |", d/1e3, v.dcgmPoints, d/v.dcgmPoints)
	w("| AMD SMI (`backend: amdsmi`, MI300Xs) | %.1f µs | %.0f | %.0f ns |", a/1e3, v.amdPoints, a/v.amdPoints)
	w("")
	w("AMD SMI / DCGM per GPU: %.2f× (target ≤ 1×: %s). XGMI is summed over an MI300X's 7 links by default (3 data points, as NVLink's traffic is 2); per link (`amd.gpu.xgmi.link.io`, `.link.bandwidth`, off by default) it would be 21.", a/d, verdict(a <= d))
	w("")
	w("<details><summary>raw benchmark lines</summary>")
	w("")
	w("```")
	w("%s", strings.TrimSuffix(v.raw, "\n"))
	w("```")
	w("</details>")
	w("")
}
