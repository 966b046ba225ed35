// Command gpureplay replays a recorded GPU telemetry trace through the
// gpu_analyzer processor, the way `promtool test rules` replays series
// through alerting rules, and prints the verdicts as JSON Lines.
//
//	gpureplay [-config FILE] [-o FILE] TRACE.csv
//	gpureplay -autoscale FILE [-config FILE] [-o FILE] TRACE.csv
//	gpureplay -whatif SETTINGS.yaml [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-cold] [-compare | -table] [-o FILE] DEMAND.csv...
//	gpureplay -whatif A.yaml,B.yaml,... -table -holdout CHOOSE.csv,... [-scales 1] [-o FILE] DEMAND.csv...
//	gpureplay -cost FILE [-config FILE] [-o FILE] TRACE.csv
//	gpureplay -report FILE.html [-cost FILE | -autoscale FILE | -remediate FILE] [-o FILE] TRACE.csv
//	gpureplay -labels LABELS.csv -o VERDICTS.jsonl [-config FILE] [-report FILE.html] TRACE.csv
//	gpureplay -job ID [-time-limit DURATION] [-cost FILE] [-config FILE] [-report FILE.html] [-o FILE] TRACE.csv
//
// Any of these but -whatif takes -resample INTERVAL (e.g. 30s): the trace
// becomes what a collector sampling DCGM every INTERVAL would have
// recorded: the first batch at or after every INTERVAL from its first
// timestamp, its profiling fields (DCGM_FI_PROF_*) the mean of the GPU's
// rows since its previous kept one (DCGM aggregates them to its watch
// interval), every other field the kept row's own, and an XID of a dropped
// row carried to the GPU's next kept row (dcgm-exporter keeps the last
// XID). It answers "what would the analyzer say on data scraped every
// 30 s".
//
// Each batch of rows (one timestamp) becomes OTLP metrics through the dcgm
// receiver's own mapping and goes through a processor made by the
// gpu_analyzer factory; the verdicts are read back from the metrics the
// processor adds (every row's: a -config's verdict_interval does not
// apply). One line per trace row, in input order:
//
//	{"time":1767225600,"uuid":"GPU-...","bottleneck":"compute_bound","straggler":false,"alerts":[],"score":0.12,"hint":"enable_mixed_precision"}
//
// hint is the next step for the bottleneck, empty where there is none.
// Where the analyzer found a cause on the node's evidence, cause names it
// and cause_evidence says it in words, as the analyzer's log line does.
//
// With -autoscale, FILE holds gpu_autoscale connector settings (the keys
// under `connectors: gpu_autoscale:`), and the trace also goes through the
// connector's algorithm, with time from the trace and each target's current
// replica count from its distinct pods in the batch. Then gpureplay prints
// one line per evaluation instead:
//
//	{"time":1767225600,"target":"serving/Deployment/chat","current":4,"desired":6,"reason":"Scaled"}
//
// With -remediate, FILE holds gpu_remediation connector settings (the keys
// under `connectors: gpu_remediation:`; an empty file for the defaults), and
// gpureplay prints one line per remediation decision, always as a dry run,
// the node being the trace's host column:
//
//	{"time":1767226900,"node":"gpu-node-02","uuid":"GPU-...","fault":"xid_79","action":"drain","reason":"policy","dry_run":true}
//
// -remediate also replays a node's kernel log in place of TRACE.csv:
//
//	gpureplay -remediate FILE [-year YYYY] [-boot TIME] [-tz ZONE] [-host NAME] [-gpus FILE] [-o FILE] KERNEL.log
//
// The input is a kernel log when its first line (blank lines and
// journalctl's "-- ... --" banners aside) starts with a kernel log
// timestamp: dmesg --ctime, ISO 8601 (dmesg --time-format iso, journalctl
// -o short-iso), journald's short format, or raw dmesg's seconds since
// boot, with or without dmesg --decode's prefix. Content decides rather
// than a flag because a CSV trace starts with its header row, which never
// looks like one. Only -remediate reads a kernel log: it holds faults, not
// the telemetry the analyzer, the autoscaler or -cost need.
//
// Every "NVRM: Xid" line is one event of its GPU at the line's own time
// (internal/kmsg reads them): the receiver's nvidia.gpu.xid.errors counter
// for that code rises by one, so a burst of lines milliseconds apart is as
// many events. An XID 154 is an event of code 154 and also sets the GPU's
// nvidia.gpu.recovery_action gauge to the new action's number. Other lines
// are skipped; an XID line that cannot be read stops the replay with its
// line and column, after the decisions before it.
//
//   - hw.id is "PCI:" and the bus id ("PCI:0000:3b:00"): the log has no
//     UUID. -gpus FILE maps bus ids to UUIDs, one "BUS_ID, UUID" per line,
//     as `nvidia-smi --query-gpu=pci.bus_id,uuid --format=csv,noheader`
//     prints them (00000000:3B:00.0, GPU-...).
//   - host.name is -host, else the line's journald host field, else the
//     file's base name without its extension.
//   - -year is the year of the first line in journald's short format
//     ("Nov 24 10:00:00" has none; December to January moves to the next).
//   - -boot (RFC 3339 or Unix seconds) places raw dmesg's seconds since
//     boot; without it such an XID line is an error.
//   - -tz (IANA name, default UTC) is the host's zone for dmesg --ctime and
//     journald's short format, which print local time without one.
//
// With -whatif, DEMAND.csv drives a closed-loop model of an inference
// Deployment scaled by the connector with SETTINGS.yaml, as version 2 of
// the what-if contract fixes it (a warm start; -cold for a start at
// min_replicas, none ready); see cmd/gpureplay/internal/whatif for the
// model, the output and the flags. With -holdout, the settings files are
// candidates: each runs on the CHOOSE series, and the one chosen (the most
// rows no worse than the reactive frontier, then the largest sum of
// savings) is reported alone on the DEMAND series, which the choice never
// saw.
//
// With -cost, FILE holds gpu_analyzer settings too (its `cost:` prices;
// an empty file means the defaults), read over -config's; after the
// verdicts gpureplay prints one line per namespace ("" for GPUs without
// one) with its GPU-hours and cost per usage state and its hours per
// bottleneck class:
//
//	{"summary": "cost", "namespace": "serving", "currency": "USD", "gpu_hours": {"used": 1.2, "workload_idle": 0.3, "cluster_idle": 0, "unknown": 0}, "cost": {...}, "class_hours": {"compute_bound": 0.8, ...}}
//
// With -report FILE.html (beside any of these but -whatif), gpureplay
// also writes a self-contained HTML page of the replay: a written summary,
// the report of each job (as -job prints it), a timeline per GPU of its bottleneck class, utilization, SM activity,
// power and memory with straggler and alert marks, the stragglers per job,
// the alerts from pending to firing to resolved, -cost's figures (with
// -cost's prices if given, else -config's), and the autoscaler's and
// remediation's decisions when replayed with them. See
// cmd/gpureplay/internal/report. An empty trace is an error; on any error
// no page is written.
//
// With -labels LABELS.csv (the analyzer contract's labels format:
// uuid,kind,value,start,end), gpureplay writes the verdicts to -o, which it
// then needs, and prints on standard output a table with one row per label:
// its window [start, end) in seconds from the first verdict, and what the
// verdicts inside it say (the most common class of a bottleneck label and
// the share of verdicts with it, whether an alert label's alert fired)
// against the label. Unlike the contract's scoring there is no grace after
// start: a labels file for such a check leaves each phase's edges out
// itself. A label of an unknown kind or value, or with start not before
// end, is an error naming its line; no verdict in any label's window is an
// error after the table (its uuids or times do not match the trace), a
// verdict that disagrees is not.
//
// With -job ID, gpureplay prints on standard output the job's report
// (internal/jobreport): jobstats' facts (GPUs per node, utilization and
// peak memory per GPU, run time against -time-limit when given, CPU
// efficiency where the trace has its pod's cgroup), the time per
// bottleneck class, the causes on the node's evidence, the stragglers,
// GPU-hours and cost per usage state (with -cost's prices), the alerts
// and health incidents, and a short list of advice in plain words. ID is
// the trace's job column, alone or as namespace/job; the verdicts go to
// -o, or nowhere. An ID the trace does not have is an error listing the
// jobs it has. With -report, the page's job section shows that job only
// (without -job, every job of the trace).
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
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
	_ "time/tzdata" // -tz names a zone on hosts without a zone database too

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/replay"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/report"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/score"
	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/whatif"
	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kmsg"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
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
	remediatePath := fs.String("remediate", "", "print the gpu_remediation connector's decisions with the settings in `file` (always a dry run)")
	resample := fs.Duration("resample", 0, "replay the trace as sampled every `interval` (e.g. 30s): profiling fields averaged over it, the rest the latest value; 0: every row")
	fieldsFlag := fs.String("fields", "all", "replay only these DCGM `fields`, as a collector recording only them would have recorded the trace: all, defaults (dcgm-exporter's default counters: no SM activity, occupancy, NVLink bytes, clock event reasons or ECC counts), or DCGM_FI_* names separated by commas")
	reportPath := fs.String("report", "", "also write a self-contained HTML report of the replay to `file` (timeline per GPU, stragglers, alerts, cost, decisions)")
	costPath := fs.String("cost", "", "after the verdicts, print GPU-hours and cost per namespace, with the gpu_analyzer settings (prices) in `file`")
	labelsPath := fs.String("labels", "", "print, per label in `file` (uuid,kind,value,start,end), the verdicts over its window against it; the verdicts go to -o")
	year := fs.Int("year", 0, "kernel log: the `year` of its first journald short-format line (\"Nov 24 10:00:00\" has none)")
	boot := fs.String("boot", "", "kernel log: when the host booted (RFC 3339 or Unix seconds), for dmesg's [seconds since boot]")
	tz := fs.String("tz", "UTC", "kernel log: the host's time `zone` (IANA name) for dmesg --ctime and journald short, which print local time without one")
	hostName := fs.String("host", "", "kernel log: the node of every event (default: a line's journald host field, else the file's base name)")
	jobID := fs.String("job", "", "print the report of the job `id` (the trace's job column, or namespace/job) instead of the verdicts, which go to -o")
	timeLimit := fs.Duration("time-limit", 0, "-job: the job's time `limit` (Slurm's --time), for its run time against it; 0: unknown")
	gpusPath := fs.String("gpus", "", "kernel log: `file` mapping PCI bus id to UUID, as nvidia-smi --query-gpu=pci.bus_id,uuid --format=csv,noheader prints it")
	wi := whatif.AddFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: gpureplay [-autoscale FILE | -remediate FILE | -cost FILE] [-report FILE.html] [-config FILE] [-resample INTERVAL] [-o FILE] TRACE.csv")
		fmt.Fprintln(stderr, "       gpureplay -labels LABELS.csv -o VERDICTS.jsonl [-report FILE.html] [-config FILE] TRACE.csv")
		fmt.Fprintln(stderr, "       gpureplay -job ID [-time-limit DURATION] [-cost FILE] [-report FILE.html] [-config FILE] [-o FILE] TRACE.csv")
		fmt.Fprintln(stderr, "       gpureplay -remediate FILE [-year YYYY] [-boot TIME] [-tz ZONE] [-host NAME] [-gpus FILE] [-o FILE] KERNEL.log")
		fmt.Fprintln(stderr, "       "+whatif.Usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *resample < 0 {
		fmt.Fprintln(stderr, "gpureplay: -resample: want a positive interval, got", *resample)
		return 2
	}
	fieldSet, err := trace.ParseFieldSet(*fieldsFlag)
	if err != nil {
		fmt.Fprintln(stderr, "gpureplay: -fields:", err)
		return 2
	}
	if *labelsPath != "" {
		switch {
		case wi.Enabled():
			fmt.Fprintln(stderr, "gpureplay: -labels goes with a trace replay, not with -whatif")
			return 2
		case *autoscalePath != "" || *remediatePath != "":
			fmt.Fprintln(stderr, "gpureplay: -labels reads verdicts: it goes with neither -autoscale nor -remediate, which print decisions")
			return 2
		case *outPath == "":
			fmt.Fprintln(stderr, "gpureplay: -labels prints its table on standard output: write the verdicts to -o FILE")
			return 2
		}
	}
	if *jobID != "" {
		switch {
		case wi.Enabled():
			fmt.Fprintln(stderr, "gpureplay: -job goes with a trace replay, not with -whatif")
			return 2
		case *labelsPath != "":
			fmt.Fprintln(stderr, "gpureplay: -job and -labels both print on standard output: use one")
			return 2
		}
	}
	if *timeLimit < 0 || (*timeLimit > 0 && *jobID == "") {
		fmt.Fprintln(stderr, "gpureplay: -time-limit: want a positive duration, with -job")
		return 2
	}
	if wi.Enabled() {
		if *reportPath != "" {
			fmt.Fprintln(stderr, "gpureplay: -report goes with a trace replay, not with -whatif")
			return 2
		}
		return wi.Run(fs.Args(), *outPath, stdout, stderr)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gpureplay: %v\n", err)
		return 1
	}

	cfg, err := replay.LoadConfig(*configPath)
	if err != nil {
		return fail(err)
	}
	var tally *replay.CostTally
	if *costPath != "" {
		if *autoscalePath != "" || *remediatePath != "" {
			return fail(errors.New("-cost goes with neither -autoscale nor -remediate"))
		}
		if err := replay.ApplyCost(cfg, *costPath); err != nil {
			return fail(err)
		}
		tally = replay.NewCostTally(cfg)
	}
	// The report's cost table is -cost's summary: the same tally, with the
	// -cost file's prices if given, else -config's.
	var rep *report.Collector
	reportCost := tally
	if *reportPath != "" || *jobID != "" {
		rep = report.NewCollector()
		if reportCost == nil {
			reportCost = replay.NewCostTally(cfg)
		}
	}
	var scaler *replay.Autoscale
	if *autoscalePath != "" {
		if scaler, err = replay.LoadAutoscale(*autoscalePath); err != nil {
			return fail(err)
		}
	}
	var remediate *replay.Remediate
	if *remediatePath != "" {
		if remediate, err = replay.LoadRemediate(*remediatePath); err != nil {
			return fail(err)
		}
	}
	// The labels before the replay: a typo in them should not wait for it.
	var labels []score.Label
	if *labelsPath != "" {
		if labels, err = readLabels(*labelsPath); err != nil {
			return fail(err)
		}
	}
	tracePath := fs.Arg(0)
	f, err := os.Open(tracePath)
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	in := bufio.NewReaderSize(f, 1<<16)
	head, _ := in.Peek(1 << 16)
	var klog *replay.KernelLog
	if kmsg.Sniff(head) {
		if klog, err = kernelLog(tracePath, *year, *boot, *tz, *hostName, *gpusPath); err != nil {
			return fail(err)
		}
		if remediate == nil || scaler != nil || tally != nil || *resample > 0 || fieldSet != nil {
			return fail(fmt.Errorf("%s is a kernel log: it replays with -remediate only, without -autoscale, -cost, -resample or -fields", tracePath))
		}
	} else {
		var kflags []string
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "year", "boot", "tz", "host", "gpus":
				kflags = append(kflags, "-"+f.Name)
			}
		})
		if len(kflags) > 0 {
			return fail(fmt.Errorf("%s is not a kernel log (its first line has no kernel log timestamp): %s apply to kernel logs only", tracePath, strings.Join(kflags, ", ")))
		}
	}

	out := stdout
	if *jobID != "" {
		out = io.Discard // the report is on standard output; the verdicts go to -o only
	}
	var file *os.File
	if *outPath != "" {
		if file, err = os.Create(*outPath); err != nil {
			return fail(err)
		}
		out = file
	}
	w := bufio.NewWriterSize(out, 1<<16)
	opts := replay.Options{Autoscale: scaler, Remediate: remediate, Cost: reportCost, Resample: resample.Seconds(), Fields: fieldSet, Report: rep}
	var replayErr error
	switch {
	case klog != nil:
		replayErr = replay.RunKernelLog(context.Background(), cfg, opts, *klog, in, tracePath, w)
	case tally != nil:
		replayErr = replay.RunCost(context.Background(), cfg, opts, in, tracePath, w)
	default:
		replayErr = replay.Run(context.Background(), cfg, opts, in, tracePath, w)
	}
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
	jobs := report.JobOptions{Job: *jobID, TimeLimit: timeLimit.Seconds(), Currency: replay.Currency(cfg)}
	if *jobID != "" {
		if err := writeJobs(stdout, rep, jobs); err != nil {
			return fail(fmt.Errorf("%s: %w", tracePath, err))
		}
	}
	if *reportPath != "" {
		ropts := report.Options{Source: filepath.Base(tracePath), Cost: reportCost.Report(), Autoscaled: scaler != nil, Remediated: remediate != nil, Jobs: jobs}
		if err := writeReport(*reportPath, rep, ropts); err != nil {
			return fail(fmt.Errorf("%s: %w", tracePath, err))
		}
	}
	if labels != nil {
		return phaseTable(labels, *labelsPath, *outPath, tracePath, stdout, stderr)
	}
	return 0
}

// writeJobs prints the report of each job -job names.
func writeJobs(w io.Writer, rep *report.Collector, o report.JobOptions) error {
	reports, err := rep.JobReports(o)
	if err != nil {
		return err
	}
	for i := range reports {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if err := jobreport.WriteText(w, &reports[i]); err != nil {
			return err
		}
	}
	return nil
}

// readLabels reads and checks a labels file; errors name it.
func readLabels(path string) ([]score.Label, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	labels, err := score.ReadLabels(f)
	if err == nil {
		err = score.CheckLabels(labels)
	}
	if err == nil && len(labels) == 0 {
		err = errors.New("no labels after the header")
	}
	if err != nil {
		// One line, as every error here: CheckLabels joins one per label.
		return nil, fmt.Errorf("%s: %s", path, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return labels, nil
}

// phaseTable reads back the verdicts just written and prints the labels'
// table; no verdict in any label's window is an error.
func phaseTable(labels []score.Label, labelsPath, verdictsPath, tracePath string, stdout, stderr io.Writer) int {
	f, err := os.Open(verdictsPath)
	if err != nil {
		fmt.Fprintf(stderr, "gpureplay: %v\n", err)
		return 1
	}
	verdicts, err := score.ReadVerdicts(f)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "gpureplay: %s: %v\n", verdictsPath, err)
		return 1
	}
	// Windows in seconds from the trace's first verdict: the recording's
	// own clock, as its report's timeline reads.
	origin := math.Inf(1)
	for _, vs := range verdicts {
		if len(vs) > 0 {
			origin = math.Min(origin, vs[0].Time)
		}
	}
	if math.IsInf(origin, 1) {
		origin = 0
	}
	phases := score.Phases(labels, verdicts)
	if err := score.WriteTable(stdout, phases, origin); err != nil {
		fmt.Fprintf(stderr, "gpureplay: %v\n", err)
		return 1
	}
	for _, p := range phases {
		if p.Samples > 0 {
			return 0
		}
	}
	fmt.Fprintf(stderr, "gpureplay: %s: no verdict of %s falls in any label's window: do its uuids and times match the trace?\n", labelsPath, tracePath)
	return 1
}

// writeReport renders the report into a temporary file beside path and
// renames it into place, so that a failed write leaves no half a page.
func writeReport(path string, rep *report.Collector, opts report.Options) error {
	data, err := rep.Build(opts)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	if err := report.Write(f, data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Readable as a file os.Create makes: a report is for sharing.
	if err := os.Chmod(f.Name(), 0o644); err != nil { //nolint:gosec // G302: see above
		return err
	}
	return os.Rename(f.Name(), path)
}

// kernelLog gathers the flags that say what a kernel log leaves out.
func kernelLog(path string, year int, boot, tz, host, gpus string) (*replay.KernelLog, error) {
	k := &replay.KernelLog{Host: host, Parse: kmsg.Options{Year: year}}
	base := filepath.Base(path)
	k.DefaultHost = strings.TrimSuffix(base, filepath.Ext(base))
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("-tz: %w", err)
	}
	k.Parse.Location = loc
	if boot != "" {
		if k.Parse.Boot, err = replay.ParseBoot(boot); err != nil {
			return nil, err
		}
	}
	if gpus != "" {
		if k.GPUs, err = replay.ReadGPUs(gpus); err != nil {
			return nil, err
		}
	}
	return k, nil
}
