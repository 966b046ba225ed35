package replay

// The evidence behind each cause, in the analyzer's words. The analyzer
// puts the cause on the verdict's metric and logs it once, when it
// changes, with its evidence ("mlx5_0:1 at 92 % of 400 Gb/s"): the replay
// reads that log line and repeats the evidence on the GPU's rows while the
// cause stands (cause_evidence).

import (
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

type causeWhy struct{ cause, why string }

// causeLog is a logger core that keeps the latest logged cause of each
// GPU, by hw.id, and drops every other entry.
type causeLog struct {
	zapcore.LevelEnabler
	why map[string]causeWhy
}

func newCauseLog() *causeLog {
	return &causeLog{LevelEnabler: zapcore.InfoLevel, why: map[string]causeWhy{}}
}

func (c *causeLog) With([]zapcore.Field) zapcore.Core { return c }

func (c *causeLog) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == "GPU wait explained" || e.Message == "GPU straggler explained" {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *causeLog) Write(_ zapcore.Entry, fields []zapcore.Field) error {
	var id string
	var w causeWhy
	for _, f := range fields {
		switch f.Key {
		case metricnames.AttrHWID:
			id = f.String
		case "cause":
			w.cause = f.String
		case "evidence":
			w.why = f.String
		}
	}
	if id != "" {
		c.why[id] = w
	}
	return nil
}

func (c *causeLog) Sync() error { return nil }

// evidenceOf is the evidence of the GPU's cause, if the analyzer logged
// that cause last.
func (c *causeLog) evidenceOf(id, cause string) string {
	if w, ok := c.why[id]; ok && w.cause == cause {
		return w.why
	}
	return ""
}
