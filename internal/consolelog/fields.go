package consolelog

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap/zapcore"
)

// Attribute keys that name a GPU and its workload, as the receiver and the
// analyzer log them. On a terminal they are joined: host.name and hw.name
// as gpu-node-0/gpu5 (the UUID, hw.id, is then left out: the JSON log
// keeps it), k8s.namespace.name and k8s.pod.name as ml/worker-0.
const (
	keyHost      = "host.name"
	keyDevice    = "hw.name"
	keyID        = "hw.id"
	keyNamespace = "k8s.namespace.name"
	keyPod       = "k8s.pod.name"
	keyJob       = "k8s.job.name"
	keyAt        = "at"
)

// shortFields writes a line's fields for a person: the GPU and the pod
// first, joined, then the others in their order as key=value, numbers to
// three significant figures. A field "at" (the data's time) is left out
// when it is within a second of the line's own, as it is when the
// collector runs live rather than replaying.
func shortFields(now time.Time, fields []zapcore.Field) string {
	if len(fields) == 0 {
		return ""
	}
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	str := func(k string) string {
		s, _ := enc.Fields[k].(string)
		return s
	}
	var parts []string
	joined := map[string]bool{}
	if host, dev := str(keyHost), str(keyDevice); dev != "" {
		parts = append(parts, join(host, dev))
		joined[keyHost], joined[keyDevice], joined[keyID] = true, true, true
	}
	if ns, pod := str(keyNamespace), str(keyPod); pod != "" {
		parts = append(parts, join(ns, pod))
		joined[keyNamespace], joined[keyPod] = true, true
	}
	if at, ok := enc.Fields[keyAt].(time.Time); ok && at.Sub(now).Abs() < time.Second {
		joined[keyAt] = true
	}
	var kv []string
	seen := map[string]bool{}
	for _, f := range fields {
		if joined[f.Key] || seen[f.Key] {
			continue
		}
		seen[f.Key] = true
		v, ok := enc.Fields[f.Key]
		if !ok {
			continue
		}
		kv = append(kv, shortKey(f.Key)+"="+value(v))
	}
	if len(kv) > 0 {
		parts = append(parts, strings.Join(kv, " "))
	}
	return strings.Join(parts, "  ")
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// shortKey drops the namespace of the workload keys a reader knows without
// it: k8s.job.name reads as job.
func shortKey(k string) string {
	if k == keyJob {
		return "job"
	}
	return k
}

// number writes x to three significant figures, without an exponent for
// the thousands a reader meets in a log (watts, dollars, seconds).
func number(x float64) string {
	if a := math.Abs(x); a >= 1000 && a < 1e15 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// value writes one field's value: strings bare unless they hold a space
// (then quoted), numbers to three figures, anything else as Go prints it.
func value(v any) string {
	switch x := v.(type) {
	case string:
		if x == "" || strings.ContainsAny(x, " \t\n\"=") {
			return strconv.Quote(x)
		}
		return x
	case float64:
		return number(x)
	case float32:
		return number(float64(x))
	case time.Duration:
		return x.String()
	case time.Time:
		return x.Format("2006-01-02T15:04:05.000Z07:00")
	default:
		return fmt.Sprint(x)
	}
}
