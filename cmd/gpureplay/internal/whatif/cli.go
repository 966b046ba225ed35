package whatif

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CLI holds gpureplay's what-if flags.
type CLI struct {
	settings string
	opts     Options
	compare  bool
	table    bool
	scales   string
	cycle    string
	holdout  string
}

// AddFlags registers the what-if flags on fs.
func AddFlags(fs *flag.FlagSet) *CLI {
	c := &CLI{}
	fs.StringVar(&c.settings, "whatif", "", "simulate DEMAND.csv under the gpu_autoscale settings in `file`")
	fs.DurationVar(&c.opts.Startup, "startup", 180*time.Second, "what-if: time from a replica's request to its readiness")
	fs.Float64Var(&c.opts.Scale, "scale", 1, "what-if: multiply the demand")
	fs.DurationVar(&c.opts.Sample, "sample", 5*time.Second, "what-if: how often ready pods report")
	fs.DurationVar(&c.opts.SLOWait, "slo-wait", 2*time.Second, "what-if: the longest wait within the SLO")
	fs.BoolVar(&c.opts.Cold, "cold", false, "what-if: start at min_replicas, none ready (the default is a warm start sized for the first demand)")
	fs.BoolVar(&c.compare, "compare", false, "what-if: compare with the reactive frontier at equal SLO minutes")
	fs.BoolVar(&c.table, "table", false, "what-if: compare on every DEMAND.csv given at each of -scales and startups 180s, 600s; print a Markdown table")
	fs.StringVar(&c.scales, "scales", "1,5,20", "what-if -table: the demand scales")
	fs.StringVar(&c.holdout, "holdout", "", "what-if: choose among the comma-separated -whatif settings on these comma-separated `DEMAND.csv,...` (at each of -scales and startups 180s, 600s), then report the chosen settings on the DEMAND.csv given, alone")
	fs.StringVar(&c.opts.Cache, "cache", "", "what-if -table: keep each scenario's reactive frontier and foresight points in `dir`, and reuse them when a later run asks for the same demand, scale, start-up and options with the same build")
	fs.StringVar(&c.cycle, "cycle", "", "what-if: loop the demand to LENGTH with a swing of PERIOD, as `LENGTH,PERIOD` (e.g. 12h,6h)")
	return c
}

// Enabled says -whatif was given.
func (c *CLI) Enabled() bool { return c.settings != "" }

// Usage is the what-if line of gpureplay's usage.
const Usage = "gpureplay -whatif SETTINGS.yaml[,SETTINGS.yaml...] [-startup 180s] [-scale 1] [-sample 5s] [-slo-wait 2s] [-cold] [-compare | -table [-scales 1,5,20] [-holdout CHOOSE.csv,...] [-cache DIR]] [-cycle LENGTH,PERIOD] [-o FILE] DEMAND.csv..."

// Run runs the what-if on the demand files and returns the exit status:
// 2 for a usage error, 1 for bad input (one line on stderr).
func (c *CLI) Run(demands []string, outPath string, stdout, stderr io.Writer) int {
	usage := func(format string, args ...any) int {
		fmt.Fprintf(stderr, "gpureplay: "+format+"\n", args...)
		return 2
	}
	if c.cycle != "" {
		l, p, _ := strings.Cut(c.cycle, ",")
		var err1, err2 error
		c.opts.CycleLength, err1 = time.ParseDuration(l)
		c.opts.CyclePeriod, err2 = time.ParseDuration(p)
		if err1 != nil || err2 != nil {
			return usage("-cycle wants LENGTH,PERIOD (e.g. 12h,6h), got %q", c.cycle)
		}
	}
	if len(demands) == 0 || (!c.table && len(demands) != 1) {
		return usage("usage: %s", Usage)
	}
	if c.holdout != "" && !c.table {
		return usage("-holdout goes with -table")
	}
	if c.opts.Cache != "" && !c.table {
		return usage("-cache goes with -table")
	}
	if strings.Contains(c.settings, ",") && c.holdout == "" {
		return usage("several -whatif settings are candidates of -holdout, which chooses among them")
	}
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
	var err error
	if c.table {
		var scales []float64
		for _, f := range strings.Split(c.scales, ",") {
			v, perr := strconv.ParseFloat(f, 64)
			if perr != nil || !(v > 0) {
				return usage("-scales wants positive numbers, got %q", c.scales)
			}
			scales = append(scales, v)
		}
		if c.holdout != "" {
			err = c.writeHeldOut(strings.Split(c.holdout, ","), demands, scales, out)
		} else {
			err = c.writeTable(demands, scales, out)
		}
	} else {
		err = Command(c.settings, demands[0], c.opts, c.compare, out)
	}
	if file != nil {
		err = errors.Join(err, file.Close())
	}
	if err != nil {
		fmt.Fprintf(stderr, "gpureplay: %s\n", OneLine(err))
		return 1
	}
	return 0
}

func (c *CLI) writeTable(demands []string, scales []float64, out io.Writer) error {
	if err := c.opts.withDefaults().validate(); err != nil {
		return err
	}
	cfg, err := LoadSettings(c.settings)
	if err != nil {
		return err
	}
	rows, err := CompareAll(cfg, Grid(demands, scales), c.opts, runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	WriteTable(out, rows, c.opts)
	return nil
}

func (c *CLI) writeHeldOut(choose, report []string, scales []float64, out io.Writer) error {
	if err := c.opts.withDefaults().validate(); err != nil {
		return err
	}
	candidates, chosen, rows, err := HeldOut(strings.Split(c.settings, ","), Grid(choose, scales), Grid(report, scales), c.opts, runtime.GOMAXPROCS(0))
	if err != nil {
		return err
	}
	WriteHeldOut(out, candidates, chosen, choose, rows, c.opts)
	return nil
}
