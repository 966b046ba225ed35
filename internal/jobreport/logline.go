package jobreport

import (
	"fmt"
	"math"
	"strings"

	"go.uber.org/zap"
)

// LogLine is the one line the analyzer logs when a job ends: a sentence
// for a person reading the collector's output, and fields with the same
// figures for a machine.
func LogLine(r *Report) (string, []zap.Field) {
	f := &r.Facts
	run := f.RunSeconds()
	idle := f.IdleSeconds()
	var shares []string
	for i, c := range f.Classes {
		if i == 3 || c.Share < 0.05 {
			break
		}
		shares = append(shares, fmt.Sprintf("%s %s", c.Name, Percent(c.Share)))
	}
	if len(shares) == 0 {
		shares = append(shares, "no class above 5 %")
	}
	msg := fmt.Sprintf("Job %s ended after %s on %s: %s; %s held idle", f.Job.String(), Duration(run), plural(f.GPUs, "GPU"),
		strings.Join(shares, ", "), GPUHours(idle))
	if c := f.IdleCost(); c > 0 {
		msg += " (" + Money(c, f.Currency) + ")"
	}
	if len(r.Advice) > 0 {
		msg += ". " + r.Advice[0].Text
	} else {
		msg += "; nothing to advise."
	}
	fields := []zap.Field{
		zap.String("job", f.Job.String()),
		zap.String("scheduler", f.Job.Scheduler),
		zap.Int("gpus", f.GPUs),
		zap.Int("nodes", len(f.Nodes)),
		zap.Float64("run_seconds", round(run, 1)),
		zap.Float64("gpu_hours", round(f.GPUSeconds/3600, 1e4)),
		zap.Float64("gpu_hours_idle", round(idle/3600, 1e4)),
		zap.Float64("gpu_hours_waiting", round(f.Seconds("waiting")/3600, 1e4)),
		zap.Float64("cost", round(f.Cost(""), 1e4)),
		zap.Float64("cost_idle", round(f.IdleCost(), 1e4)),
	}
	if f.Currency != "" {
		fields = append(fields, zap.String("currency", f.Currency))
	}
	if !math.IsNaN(f.Util) {
		fields = append(fields, zap.Float64("gpu_utilization", round(f.Util/100, 1e3)))
	}
	for i, c := range f.Classes {
		if i == 3 {
			break
		}
		fields = append(fields, zap.Float64("share."+c.Name, round(c.Share, 1e3)))
	}
	if n := len(f.Stragglers); n > 0 {
		fields = append(fields, zap.Int("stragglers", n))
	}
	if len(r.Advice) > 0 {
		fields = append(fields, zap.String("advice", r.Advice[0].Code))
	}
	return msg, fields
}

func round(x, scale float64) float64 { return math.Round(x*scale) / scale }

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}
