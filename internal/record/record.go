// Package record is the gpurecord command: it reads the GPUs of the machine
// it runs on through one of the dcgm receiver's backends (DCGM, NVML or the
// simulated fleet) and writes what it reads as a trace in the format that
// gpureplay replays (the analyzer contract's section 1).
//
// It lives here rather than in cmd/gpurecord so that gpureplay's tests can
// record a trace and replay it in one process.
package record

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/podresources"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// DefaultPodResources is the kubelet's pod-resources socket.
const DefaultPodResources = "/var/lib/kubelet/pod-resources/kubelet.sock"

// podRefresh is how often the device-to-pod map is reloaded, as in the
// receiver's default.
const podRefresh = 30 * time.Second

// criticalXIDs are the analyzer contract's default critical XID codes. When
// several XIDs occur between two samples the trace cell holds one of them;
// a critical one is kept in preference, so that a replay still sees the
// fault. All of them go into a comment line.
var criticalXIDs = []uint32{48, 64, 74, 79, 95, 119, 120, 140}

// Env holds what tests replace.
type Env struct {
	// NVML is the NVML library; nil means the real one.
	NVML nvml.Interface
}

// Exit statuses.
const (
	ExitOK    = 0
	ExitError = 1 // the recording failed: no GPU source, an unwritable output
	ExitUsage = 2 // bad flags
)

type options struct {
	backend, endpoint, hostname, out, pods, simulated string
	amdsmiLibrary                                     string
	embedded                                          bool
	unpaced                                           bool
	interval, duration                                time.Duration
	podsSet                                           bool
	prom                                              promOptions
}

func newFlags(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("gpurecord", flag.ContinueOnError)
	// One line per error, written by Main; the usage only on -h.
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.backend, "backend", "auto", "GPU source: `auto` (DCGM, then NVML, then AMD SMI), dcgm, nvml, amdsmi or simulated")
	fs.StringVar(&o.amdsmiLibrary, "amdsmi-library", "", "with -backend amdsmi or auto: libamd_smi.so's `path` (default: the dynamic loader's search path)")
	fs.StringVar(&o.endpoint, "endpoint", "localhost:5555", "nv-hostengine's `address`: host:port or unix:///path/to/socket")
	fs.BoolVar(&o.embedded, "embedded", false, "start DCGM's host engine in this process instead of connecting to nv-hostengine")
	fs.DurationVar(&o.interval, "interval", time.Second, "time between samples")
	fs.DurationVar(&o.duration, "duration", 0, "stop after this long (0: until interrupted by SIGINT or SIGTERM)")
	fs.BoolVar(&o.unpaced, "unpaced", false, "with -backend simulated and -duration: take the samples one after another without waiting, -interval apart in the trace's time")
	fs.StringVar(&o.out, "o", "-", "write the trace to `file` (-: standard output)")
	fs.StringVar(&o.hostname, "hostname", "", "the trace's host column (default: this machine's hostname; the simulated fleet names its own)")
	fs.StringVar(&o.pods, "pod-resources", DefaultPodResources, "the kubelet's pod-resources `socket`, for the namespace, pod and container columns; used when it exists, \"\" turns it off")
	fs.StringVar(&o.simulated, "simulated", "", "YAML `file` with the simulated fleet's settings (the dcgm receiver's simulated: keys; default: its default fleet)")
	fs.StringVar(&o.prom.url, "prometheus", "", "read what the Prometheus at this base `URL` (http://host:9090) holds instead of a GPU source; needs -start and -end")
	fs.StringVar(&o.prom.start, "start", "", "with -prometheus: the first `time` to read, RFC 3339 or Unix seconds")
	fs.StringVar(&o.prom.end, "end", "", "with -prometheus: the last `time` to read, RFC 3339 or Unix seconds")
	fs.StringVar(&o.prom.match, "match", "", "with -prometheus: label matchers added to every query, a `selector` such as {Hostname=\"node-7\"}")
	fs.DurationVar(&o.prom.step, "step", 0, "with -prometheus: read with query_range at this step (0: raw samples at their scrape times)")
	fs.IntVar(&o.prom.maxSeries, "max-series", DefaultMaxSeries, "with -prometheus: fail when one query returns more series than this")
	fs.StringVar(&o.prom.tokenFile, "bearer-token-file", "", "with -prometheus: send the bearer token in this `file` (default: $PROMETHEUS_BEARER_TOKEN; basic auth: user:password@ in the URL)")
	// The flag package calls Usage on every parse error; Main prints one
	// line instead, and the usage only for -h.
	fs.Usage = func() {}
	return fs
}

func printUsage(fs *flag.FlagSet, w io.Writer) {
	fmt.Fprintln(w, "usage: gpurecord [-backend auto|dcgm|nvml|amdsmi|simulated] [-endpoint ADDR] [-interval 1s] [-duration 10m] [-unpaced] [-o FILE]")
	fmt.Fprintln(w, "       gpurecord -prometheus URL -start TIME -end TIME [-match SELECTOR] [-step D] [-o FILE]")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// Main runs gpurecord with args (without the program name) until ctx is
// done, -duration has passed, or the recording fails, and returns the exit
// status. Errors are one line on stderr.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, env Env) int {
	var o options
	fs := newFlags(&o)
	usage := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "gpurecord: %s (gpurecord -h lists the flags)\n", fmt.Sprintf(format, a...))
		return ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, stderr)
			return ExitOK
		}
		return usage("%v", err)
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	o.podsSet = set["pod-resources"]
	if fs.NArg() > 0 {
		return usage("unexpected argument %q: the trace goes to -o FILE", fs.Arg(0))
	}
	if set["prometheus"] {
		return promMain(ctx, &o, set, stdout, stderr)
	}
	for _, name := range promFlags {
		if set[name] {
			return usage("-%s needs -prometheus", name)
		}
	}
	switch o.backend {
	case "auto", "dcgm", "nvml", "amdsmi", "simulated":
	default:
		return usage("-backend: unknown backend %q; want auto, dcgm, nvml, amdsmi or simulated", o.backend)
	}
	if o.interval <= 0 {
		return usage("-interval must be positive, got %v", o.interval)
	}
	if o.duration < 0 {
		return usage("-duration must not be negative, got %v", o.duration)
	}
	if o.simulated != "" && o.backend != "simulated" {
		return usage("-simulated needs -backend simulated")
	}
	// Only the simulated fleet's values are a function of the collection
	// times alone; a real GPU sampled faster than -interval would be
	// recorded at times it was not read. Without -duration it would never
	// stop, writing rows as fast as it can.
	if o.unpaced && (o.backend != "simulated" || o.duration <= 0) {
		return usage("-unpaced needs -backend simulated and a -duration")
	}
	if (o.backend == "auto" || o.backend == "dcgm") && !o.embedded {
		if _, _, err := dcgmbackend.ParseEndpoint(o.endpoint); err != nil {
			return usage("-endpoint: %v", err)
		}
	}
	fail := func(err error) int {
		fmt.Fprintf(stderr, "gpurecord: %v\n", err)
		return ExitError
	}
	if o.hostname == "" && o.backend != "simulated" {
		h, err := os.Hostname()
		if err != nil {
			return fail(fmt.Errorf("hostname: %w; set -hostname", err))
		}
		o.hostname = h
	}
	logger := zap.New(zapcore.NewCore(
		zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig()),
		zapcore.Lock(zapcore.AddSync(stderr)), zap.WarnLevel))
	candidates, err := newBackends(&o, env, logger)
	if err != nil {
		return fail(err)
	}
	var pods *podresources.Cache
	if o.pods != "" {
		if _, err := os.Stat(o.pods); err == nil {
			pods = podresources.NewCache(o.pods, podRefresh, logger)
			defer pods.Close()
		} else if o.podsSet {
			// Asked for by name: a missing socket is a mistake to report.
			return fail(fmt.Errorf("-pod-resources: %w", err))
		}
	}

	// The output first: a recording that cannot be written should not wait
	// for a GPU source.
	out, err := openOutput(o.out, stdout)
	if err != nil {
		return fail(err)
	}
	rec := &recorder{opts: &o, stderr: stderr, pods: pods}
	runErr := rec.run(ctx, candidates, out.w, out.name)
	// Nothing recorded (no GPU source): no empty trace is left.
	if runErr = out.close(rec.w != nil, runErr); runErr != nil {
		return fail(runErr)
	}
	fmt.Fprintf(stderr, "gpurecord: %d rows, %d samples of %d GPUs, written to %s\n", rec.rows, rec.batches, len(rec.gpus), out.name)
	return ExitOK
}

func newBackends(o *options, env Env, logger *zap.Logger) ([]backend.Backend, error) {
	dcgm := func() backend.Backend {
		addr, unix, _ := dcgmbackend.ParseEndpoint(o.endpoint)
		return dcgmbackend.New(dcgmbackend.Options{
			Address: addr, UnixSocket: unix, Embedded: o.embedded, Hostname: o.hostname, Logger: logger,
			UpdateEvery: o.interval, // every field, sampled once per -interval
		})
	}
	nvmlb := func() backend.Backend {
		return nvmlbackend.New(nvmlbackend.Options{Lib: env.NVML, Hostname: o.hostname, Logger: logger})
	}
	amdsmi := func() backend.Backend {
		return amdsmibackend.New(amdsmibackend.Options{Library: o.amdsmiLibrary, Hostname: o.hostname, Logger: logger})
	}
	switch o.backend {
	case "dcgm":
		return []backend.Backend{dcgm()}, nil
	case "nvml":
		return []backend.Backend{nvmlb()}, nil
	case "amdsmi":
		return []backend.Backend{amdsmi()}, nil
	case "simulated":
		cfg, err := loadSimulated(o.simulated)
		if err != nil {
			return nil, err
		}
		fl, err := simulated.New(cfg)
		if err != nil {
			return nil, fmt.Errorf("-simulated %s: %w", o.simulated, err)
		}
		return []backend.Backend{fl}, nil
	default:
		return []backend.Backend{dcgm(), nvmlb(), amdsmi()}, nil
	}
}

// recorder samples one backend and writes the trace.
type recorder struct {
	opts   *options
	stderr io.Writer
	pods   *podresources.Cache

	w       *trace.Writer
	active  backend.Backend
	lost    bool
	lastTS  int64 // milliseconds
	rows    int
	batches int
	gpus    map[string]bool
}

func (r *recorder) run(ctx context.Context, candidates []backend.Backend, out io.Writer, name string) error {
	var msgs []string
	for _, b := range candidates {
		if err := b.Connect(ctx); err != nil {
			msgs = append(msgs, fmt.Sprintf("%s backend: %v", b.Name(), err))
			continue
		}
		r.active = b
		break
	}
	if r.active == nil {
		return fmt.Errorf("no GPU source: %s", strings.Join(msgs, "; "))
	}
	defer func() { _ = r.active.Close() }()

	var err error
	if r.w, err = trace.NewWriter(out, dcgmfield.All()); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// The clock: wall time at the start plus monotonic time since, so that
	// timestamps never go backwards when the wall clock is stepped.
	start := time.Now()
	r.gpus = map[string]bool{}
	header := fmt.Sprintf("gpurecord: %s backend, a sample every %v from %s", r.active.Name(), r.opts.interval, start.UTC().Format(time.RFC3339))
	if r.opts.hostname != "" {
		header += " on " + r.opts.hostname
	}
	if r.opts.unpaced {
		header += ", unpaced (timestamps are the samples' simulated times, not when they were taken)"
	}
	if err := r.w.Comment(header); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	// With -duration, exactly duration/interval samples (rounded up), the
	// first at once: a 10m recording at 1s holds 600.
	limit := -1
	if r.opts.duration > 0 {
		limit = int((r.opts.duration + r.opts.interval - 1) / r.opts.interval)
	}
	tick := time.NewTicker(r.opts.interval)
	defer tick.Stop()
	for n := 0; limit < 0 || n < limit; n++ {
		switch {
		case r.opts.unpaced:
			// The trace's clock, not the wall's: a 10-minute
			// simulated recording in well under a second.
			if ctx.Err() != nil {
				return r.flush(name)
			}
		case n > 0:
			select {
			case <-ctx.Done():
				return r.flush(name)
			case <-tick.C:
			}
		case ctx.Err() != nil:
			return r.flush(name)
		}
		now := start.Add(time.Since(start))
		if r.opts.unpaced {
			now = start.Add(time.Duration(n) * r.opts.interval)
		}
		if err := r.sample(ctx, now); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		// Flush every sample: an interrupted or killed recording keeps
		// all but the sample in flight, and `tail -f` follows it.
		if err := r.flush(name); err != nil {
			return err
		}
	}
	return r.flush(name)
}

func (r *recorder) flush(name string) error {
	if err := r.w.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// sample collects once and writes one row per device. A lost source is
// noted in the trace and on stderr and reconnected at the next sample;
// write errors are returned.
func (r *recorder) sample(ctx context.Context, now time.Time) error {
	if r.lost {
		if err := r.active.Connect(ctx); err != nil {
			return nil // still gone; said so already
		}
		r.lost = false
		msg := fmt.Sprintf("%s backend reconnected at %s: cumulative counters may restart", r.active.Name(), now.UTC().Format(time.RFC3339))
		fmt.Fprintf(r.stderr, "gpurecord: %s\n", msg)
		if err := r.w.Comment(msg); err != nil {
			return err
		}
	}
	samples, err := r.active.Collect(ctx, now, r.opts.interval)
	if err != nil {
		_ = r.active.Close()
		r.lost = true
		msg := fmt.Sprintf("%s backend lost at %s: %v; reconnecting every %v", r.active.Name(), now.UTC().Format(time.RFC3339), err, r.opts.interval)
		fmt.Fprintf(r.stderr, "gpurecord: %s\n", msg)
		return r.w.Comment(msg)
	}
	if len(samples) == 0 {
		return nil
	}
	if r.pods != nil {
		r.pods.Refresh(ctx, now)
	}
	// Millisecond timestamps, strictly increasing between samples, so that
	// each sample is one batch of the trace.
	ms := max(now.UnixMilli(), r.lastTS+1)
	r.lastTS = ms
	ts := float64(ms) / 1000
	r.batches++
	for i := range samples {
		row, note := r.row(&samples[i], ts)
		if note != "" {
			if err := r.w.Comment(note); err != nil {
				return err
			}
		}
		if err := r.w.Write(&row); err != nil {
			return err
		}
		r.rows++
		r.gpus[row.UUID] = true
	}
	return nil
}

// row turns a sample into a trace row in DCGM's units, which every backend
// already produces; readings DCGM marks as blank or that are out of range
// are left blank, as the receiver leaves them out.
func (r *recorder) row(s *gpu.Sample, ts float64) (trace.Row, string) {
	d := s.Device
	row := trace.Row{
		Time: ts, UUID: d.UUID, Host: d.Host, GPU: d.Index, HasGPU: true, Model: d.Model,
		Namespace: d.Pod.Namespace, Pod: d.Pod.Name, Container: d.Pod.Container, Job: d.Pod.Job,
	}
	if r.pods != nil {
		if p, ok := r.pods.Lookup(d.UUID); ok {
			row.Namespace, row.Pod, row.Container = p.Namespace, p.Name, p.Container
		}
	}
	for _, f := range dcgmfield.All() {
		if v, ok := s.Values.Get(f); ok && dcgmfield.Valid(f, v) && !math.IsNaN(v) {
			row.Values.Set(f, v)
		}
	}
	// DCGM's XID field holds the last XID ever seen; the trace wants the
	// code at the sample where one occurred, and 0 elsewhere. AMD's GPUs
	// have no XIDs: a blank, not a 0 that reads as "none occurred".
	if !d.IsAMD() {
		row.Values.Set(dcgmfield.XIDErrors, float64(pickXID(s.XIDs)))
	}
	note := ""
	if len(s.XIDs) > 1 {
		codes := make([]string, len(s.XIDs))
		for i, x := range s.XIDs {
			codes[i] = strconv.FormatUint(uint64(x), 10)
		}
		note = fmt.Sprintf("%s at %.3f: XIDs %s since the previous sample", d.UUID, ts, strings.Join(codes, " "))
	}
	return row, note
}

// pickXID is the XID a trace cell holds: 0 for none, else the last
// critical one, else the last.
func pickXID(xids []uint32) uint32 {
	for i := len(xids) - 1; i >= 0; i-- {
		if slices.Contains(criticalXIDs, xids[i]) {
			return xids[i]
		}
	}
	if len(xids) == 0 {
		return 0
	}
	return xids[len(xids)-1]
}

// output is where a recording goes: standard output, or a file that is
// removed again when nothing was recorded in it.
type output struct {
	w    io.Writer
	file *os.File
	// name is how messages name it.
	name string
}

// openOutput opens path ("-": stdout) first of all, so that a recording
// that cannot be written does not wait for its source.
func openOutput(path string, stdout io.Writer) (*output, error) {
	if path == "-" {
		return &output{w: stdout, name: "standard output"}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	return &output{w: f, file: f, name: path}, nil
}

// close closes the file, removing it unless something was recorded, and
// returns the recording's error, or else the close's.
func (o *output) close(recorded bool, runErr error) error {
	if o.file == nil {
		return runErr
	}
	if err := o.file.Close(); err != nil && runErr == nil {
		runErr = fmt.Errorf("write %s: %w", o.name, err)
	}
	if !recorded {
		_ = os.Remove(o.name)
	}
	return runErr
}
