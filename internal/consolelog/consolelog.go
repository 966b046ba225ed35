// Package consolelog registers a zap encoder for people reading a
// collector's log on a terminal: `encoding: console_short` under
// service::telemetry::logs.
//
// The collector's console encoding adds to every line its own resource
// (service.name, service.instance.id, service.version, about 120
// characters, which logs::disable_zap_resource removes) and each
// component's identity (otelcol.component.id, otelcol.component.kind,
// otelcol.pipeline.id, otelcol.signal, another 130, which no setting
// removes). On a terminal the line that matters then wraps across the
// screen. console_short is zap's console encoding with those fields left
// out and the time of day alone. A line's own fields stay, written for a
// person rather than a parser (fields.go): the GPU as host/gpuN, its pod as
// namespace/pod, numbers to three figures, the rest as key=value.
// Production configurations keep `encoding: json`, fields and all.
//
// The encoder is registered when this package is imported; the dcgm
// receiver and the gpu_analyzer processor import it, so that every build
// of the distribution has it.
package consolelog

import (
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/buffer"
	"go.uber.org/zap/zapcore"
)

// Encoding is the name to use under service::telemetry::logs::encoding.
const Encoding = "console_short"

func init() {
	// Registering twice fails only if another package took the name.
	_ = zap.RegisterEncoder(Encoding, func(cfg zapcore.EncoderConfig) (zapcore.Encoder, error) {
		return New(cfg), nil
	})
}

// New returns the console encoder with cfg, the time as hh:mm:ss.mmm, and
// the collector's own fields dropped.
func New(cfg zapcore.EncoderConfig) zapcore.Encoder {
	cfg.EncodeTime = zapcore.TimeEncoderOfLayout("15:04:05.000")
	cfg.EncodeLevel = zapcore.LowercaseLevelEncoder
	cfg.ConsoleSeparator = "  "
	return shortEncoder{zapcore.NewConsoleEncoder(cfg)}
}

// dropped says whether a field is the collector's own: its resource (one
// object) or a component's identity (strings named otelcol.*).
func dropped(key string) bool {
	return key == "resource" || strings.HasPrefix(key, "otelcol.")
}

// shortEncoder is the console encoder minus the dropped fields. The
// collector adds them with Logger.With, which reaches the encoder through
// AddObject (the resource) and AddString (each otelcol.* attribute, also
// when they come inlined in one field): those two skip them, and
// EncodeEntry drops them from a line's own fields.
type shortEncoder struct {
	zapcore.Encoder
}

func (e shortEncoder) Clone() zapcore.Encoder { return shortEncoder{e.Encoder.Clone()} }

func (e shortEncoder) AddString(key, value string) {
	if !dropped(key) {
		e.Encoder.AddString(key, value)
	}
}

func (e shortEncoder) AddObject(key string, m zapcore.ObjectMarshaler) error {
	if dropped(key) {
		return nil
	}
	return e.Encoder.AddObject(key, m)
}

func (e shortEncoder) EncodeEntry(ent zapcore.Entry, fields []zapcore.Field) (*buffer.Buffer, error) {
	kept := fields[:0:0]
	for _, f := range fields {
		if !dropped(f.Key) {
			kept = append(kept, f)
		}
	}
	if short := shortFields(ent.Time, kept); short != "" {
		ent.Message += "  " + short
	}
	return e.Encoder.EncodeEntry(ent, nil)
}
