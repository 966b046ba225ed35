package consolelog

import (
	"bytes"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

type inlined []zap.Field

func (fs inlined) MarshalLogObject(enc zapcore.ObjectEncoder) error {
	for _, f := range fs {
		f.AddTo(enc)
	}
	return nil
}

// The collector's resource and component fields, added the way the
// collector adds them (a "resource" object, the otelcol.* strings
// inlined), are left out; the line's own fields stay.
func TestShortLine(t *testing.T) {
	var buf bytes.Buffer
	cfg := zap.NewProductionEncoderConfig()
	cfg.CallerKey = ""
	// The collector builds its logger from a zap.Config naming the encoding.
	if _, err := (zap.Config{Encoding: Encoding, EncoderConfig: cfg, Level: zap.NewAtomicLevel(), OutputPaths: []string{"stdout"}}).Build(); err != nil {
		t.Fatalf("%s is not registered: %v", Encoding, err)
	}
	logger := zap.New(zapcore.NewCore(New(cfg), zapcore.AddSync(&buf), zap.InfoLevel)).With(
		zap.Dict("resource", zap.String("service.instance.id", "c26ddff0-3b2a-4ac6-b6ef-ad074a139afe"), zap.String("service.name", "otelcol-gpu")),
		zap.Inline(inlined{zap.String("otelcol.component.id", "gpu_analyzer"), zap.String("otelcol.pipeline.id", "metrics"), zap.String("kept", "yes")}),
	)
	logger.Info("GPU is a straggler", zap.String("gpu", "gpu-node-0/gpu5"), zap.Float64("score", 2.5), zap.String("otelcol.signal", "metrics"))
	line := strings.TrimSuffix(buf.String(), "\n")
	_, rest, ok := strings.Cut(line, "  ") // after the time of day
	if !ok {
		t.Fatalf("no time: %q", line)
	}
	if want := `info  GPU is a straggler  {"kept": "yes", "gpu": "gpu-node-0/gpu5", "score": 2.5}`; rest != want {
		t.Errorf("got  %q\nwant %q", rest, want)
	}
	if strings.Contains(line, "otelcol.") || strings.Contains(line, "resource") {
		t.Errorf("the collector's fields are still there: %q", line)
	}
}
