package consolelog

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

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
	if want := `info  GPU is a straggler  gpu=gpu-node-0/gpu5 score=2.5  {"kept": "yes"}`; rest != want {
		t.Errorf("got  %q\nwant %q", rest, want)
	}
	if strings.Contains(line, "otelcol.") || strings.Contains(line, "resource") {
		t.Errorf("the collector's fields are still there: %q", line)
	}
}

// A straggler as the analyzer logs it, live: the GPU and the pod joined,
// the UUID and the data time (the line's own) left out, the score to three
// figures. Replayed, the data time differs from the line's and stays.
func TestShortFields(t *testing.T) {
	now := time.Date(2026, 11, 25, 2, 51, 55, 750e6, time.UTC)
	straggler := func(at time.Time) []zap.Field {
		return []zap.Field{
			zap.String("hw.id", "GPU-6775dc77-0156-4f61-9afc-d44d14cf8bfe"), zap.Time("at", at),
			zap.String("host.name", "gpu-node-0"), zap.String("hw.name", "gpu5"),
			zap.String("k8s.namespace.name", "ml"), zap.String("k8s.job.name", "llm-pretrain"),
			zap.String("k8s.pod.name", "llm-pretrain-worker-0"), zap.Float64("score", 2.05321443932397),
		}
	}
	for _, tc := range []struct {
		name   string
		fields []zap.Field
		want   string
	}{
		{"live", straggler(now.Add(-3 * time.Millisecond)), "gpu-node-0/gpu5  ml/llm-pretrain-worker-0  job=llm-pretrain score=2.05"},
		{"replayed", straggler(now.Add(-24*time.Hour + 11*time.Minute)), "gpu-node-0/gpu5  ml/llm-pretrain-worker-0  at=2026-11-24T03:02:55.750Z job=llm-pretrain score=2.05"},
		{"no GPU", []zap.Field{zap.String("backend", "simulated"), zap.Int("gpus", 19)}, "backend=simulated gpus=19"},
		{"values", []zap.Field{zap.String("reason", "power cap"), zap.Float64("watts", 1234.56), zap.Duration("for", 90*time.Second),
			zap.Error(errors.New("connection refused")), zap.Bool("dry_run", true), zap.String("empty", "")},
			`reason="power cap" watts=1235 for=1m30s error="connection refused" dry_run=true empty=""`},
	} {
		if got := shortFields(now, tc.fields); got != tc.want {
			t.Errorf("%s: got  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
