// Command gpureplay replays a recorded GPU telemetry trace through the
// gpu_analyzer processor, the way `promtool test rules` replays series
// through alerting rules, and prints the verdicts as JSON Lines.
//
//	gpureplay [-config FILE] [-o FILE] TRACE.csv
//	gpureplay -autoscale FILE [-config FILE] [-o FILE] TRACE.csv
//	gpureplay -whatif SETTINGS.yaml [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-compare] [-o FILE] DEMAND.csv
//	gpureplay -whatif SETTINGS.yaml -table [-scales 1,5,20] [-cycle 12h,6h] DEMAND.csv...
//
// Each batch of rows (one timestamp) becomes OTLP metrics through the dcgm
// receiver's own mapping and goes through a processor made by the
// gpu_analyzer factory; the verdicts are read back from the metrics the
// processor adds. One line per trace row, in input order:
//
//	{"time":1767225600,"uuid":"GPU-...","bottleneck":"compute_bound","straggler":false,"alerts":[],"score":0.12}
//
// With -autoscale, FILE holds gpu_autoscale connector settings (the keys
// under `connectors: gpu_autoscale:`), and the trace also goes through the
// connector's algorithm, with time from the trace and each target's current
// replica count from its distinct pods in the batch. Then gpureplay prints
// one line per evaluation instead:
//
//	{"time":1767225600,"target":"serving/Deployment/chat","current":4,"desired":6,"reason":"Scaled"}
//
// With -whatif, DEMAND.csv drives a closed-loop model of an inference
// Deployment scaled by the connector with SETTINGS.yaml (the contract of the
// what-if: a fluid queue, pods ready -startup after they are requested); it
// prints one line per evaluation and a summary line (see
// cmd/gpureplay/internal/whatif). With -compare it prints the reactive
// frontier, the settings' summary and the saving at equal SLO minutes;
// with -table, a Markdown table of that comparison over every DEMAND.csv at
// each of -scales and start-ups of 180 s and 600 s.
//
// The same trace and configuration give byte-identical output. On bad input
// gpureplay exits with status 1 and one line on stderr naming the file,
// line and column; the verdicts of the rows before it are written.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/replay"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/whatif"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gpureplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "YAML `file` with the gpu_analyzer processor's settings (default: the defaults)")
	outPath := fs.String("o", "", "write the verdicts to `file` instead of standard output")
	autoscalePath := fs.String("autoscale", "", "replay through the gpu_autoscale connector with the settings in `file`")
	whatifPath := fs.String("whatif", "", "simulate DEMAND.csv under the gpu_autoscale settings in `file`")
	var wo whatif.Options
	fs.DurationVar(&wo.Startup, "startup", 180*time.Second, "what-if: time from a replica's request to its readiness")
	fs.Float64Var(&wo.Scale, "scale", 1, "what-if: multiply the demand")
	fs.DurationVar(&wo.Sample, "sample", 5*time.Second, "what-if: how often ready pods report")
	fs.DurationVar(&wo.SLOWait, "slo-wait", 2*time.Second, "what-if: the longest wait within the SLO")
	compare := fs.Bool("compare", false, "what-if: compare with the reactive frontier at equal SLO minutes")
	table := fs.Bool("table", false, "what-if: compare on every DEMAND.csv given at each of -scales and startups 180s, 600s; print a Markdown table")
	scales := fs.String("scales", "1,5,20", "what-if -table: the demand scales")
	cycle := fs.String("cycle", "", "what-if: loop the demand to LENGTH with a swing of PERIOD, as `LENGTH,PERIOD` (e.g. 12h,6h)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gpureplay [-autoscale FILE] [-config FILE] [-o FILE] TRACE.csv")
		fmt.Fprintln(stderr, "       gpureplay -whatif SETTINGS.yaml [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-compare] [-o FILE] DEMAND.csv")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cycle != "" {
		l, p, _ := strings.Cut(*cycle, ",")
		var err1, err2 error
		wo.CycleLength, err1 = time.ParseDuration(l)
		wo.CyclePeriod, err2 = time.ParseDuration(p)
		if err1 != nil || err2 != nil {
			fmt.Fprintf(stderr, "gpureplay: -cycle wants LENGTH,PERIOD (e.g. 12h,6h), got %q\n", *cycle)
			return 2
		}
	}
	if *whatifPath != "" && *table && fs.NArg() > 0 {
		return runWhatIfTable(*whatifPath, fs.Args(), *scales, wo, stdout, stderr)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gpureplay: %v\n", err)
		return 1
	}

	if *whatifPath != "" {
		return runWhatIf(*whatifPath, fs.Arg(0), wo, *compare, *outPath, stdout, stderr)
	}
	cfg, err := replay.LoadConfig(*configPath)
	if err != nil {
		return fail(err)
	}
	var scaler *replay.Autoscale
	if *autoscalePath != "" {
		if scaler, err = replay.LoadAutoscale(*autoscalePath); err != nil {
			return fail(err)
		}
	}
	tracePath := fs.Arg(0)
	in, err := os.Open(tracePath)
	if err != nil {
		return fail(err)
	}
	defer in.Close()

	out := stdout
	var file *os.File
	if *outPath != "" {
		if file, err = os.Create(*outPath); err != nil {
			return fail(err)
		}
		out = file
	}
	w := bufio.NewWriterSize(out, 1<<16)
	replayErr := replay.Run(context.Background(), cfg, scaler, in, tracePath, w)
	flushErr := w.Flush()
	if file != nil {
		flushErr = errors.Join(flushErr, file.Close())
	}
	if replayErr != nil {
		return fail(replayErr)
	}
	if flushErr != nil {
		return fail(flushErr)
	}
	return 0
}

func runWhatIf(settings, demand string, opts whatif.Options, compare bool, outPath string, stdout, stderr io.Writer) int {
	out := stdout
	var file *os.File
	if outPath != "" {
		var err error
		if file, err = os.Create(outPath); err != nil {
			fmt.Fprintf(stderr, "gpureplay: %v\n", err)
			return 1
		}
		out = file
	}
	err := whatif.Command(settings, demand, opts, compare, out)
	if file != nil {
		err = errors.Join(err, file.Close())
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpureplay: %s\n", whatif.OneLine(err))
		return 1
	}
	return 0
}

func runWhatIfTable(settings string, demands []string, scaleList string, cycle whatif.Options, stdout, stderr io.Writer) int {
	var scales []float64
	for _, f := range strings.Split(scaleList, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || !(v > 0) {
			fmt.Fprintf(stderr, "gpureplay: -scales wants positive numbers, got %q\n", scaleList)
			return 2
		}
		scales = append(scales, v)
	}
	cfg, err := whatif.LoadSettings(settings)
	if err == nil {
		var rows []whatif.Row
		var lengths map[string]time.Duration
		if rows, lengths, err = whatif.CompareAll(cfg, whatif.Grid(demands, scales), cycle, runtime.GOMAXPROCS(0)); err == nil {
			whatif.WriteTable(stdout, rows, lengths)
			return 0
		}
	}
	fmt.Fprintf(stderr, "gpureplay: %s\n", whatif.OneLine(err))
	return 1
}
