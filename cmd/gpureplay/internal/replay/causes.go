package replay

import (
	"go.uber.org/zap/zapcore"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// The analyzer puts a cause's name on the verdict's state metric
// (otelgpu.bottleneck.cause), and its evidence in a person's words only in
// the log line it writes when the cause changes ("GPU wait explained",
// "GPU straggler explained", with cause and evidence fields). The replay
// reads that log line, as a collector's log pipeline would, and keeps each
// GPU's last explanation until its cause changes.

// Messages of the analyzer's cause log lines (transitions.go in the
// processor).
const (
	msgWaitExplained      = "GPU wait explained"
	msgStragglerExplained = "GPU straggler explained"
)

// explanation is the cause a log line named for one GPU, and its evidence.
type explanation struct{ cause, why string }

// causeLog is a zap core that keeps the analyzer's cause log lines and
// drops every other line.
type causeLog struct {
	fields []zapcore.Field // from With
	// byGPU is each GPU's (hw.id's) latest explanation; shared by the
	// cores With derives.
	byGPU map[string]explanation
}

func newCauseLog() *causeLog { return &causeLog{byGPU: map[string]explanation{}} }

func (c *causeLog) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c *causeLog) With(fs []zapcore.Field) zapcore.Core {
	return &causeLog{fields: append(append([]zapcore.Field(nil), c.fields...), fs...), byGPU: c.byGPU}
}

func (c *causeLog) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == msgWaitExplained || e.Message == msgStragglerExplained {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *causeLog) Write(_ zapcore.Entry, fs []zapcore.Field) error {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range append(append([]zapcore.Field(nil), c.fields...), fs...) {
		f.AddTo(enc)
	}
	id, _ := enc.Fields[metricnames.AttrHWID].(string)
	name, _ := enc.Fields["cause"].(string)
	why, _ := enc.Fields["evidence"].(string)
	if id != "" && name != "" {
		c.byGPU[id] = explanation{cause: name, why: why}
	}
	return nil
}

func (c *causeLog) Sync() error { return nil }

// why is the evidence for a GPU's current cause: the sentence of the log
// line that named it; empty without a cause, or where the line named
// another (a cause is logged when it changes, before the verdict).
func (c *causeLog) why(id, cause string) string {
	if c == nil || cause == "" {
		return ""
	}
	if e, ok := c.byGPU[id]; ok && e.cause == cause {
		return e.why
	}
	return ""
}
