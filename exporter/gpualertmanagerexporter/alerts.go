package gpualertmanagerexporter

// The alerts held, and when each is due to be sent: Prometheus' rules
// (rules/alerting.go in prometheus/prometheus v3: Alert.needsSending and
// AlertingRule.sendAlerts; rules/manager.go: SendAlerts for startsAt and
// endsAt), with the points of otelgpu.alerts in place of a rule's
// evaluations.

import (
	"encoding/binary"
	"encoding/hex"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// Label names the exporter sets itself.
const (
	labelAlertname = "alertname"
	labelSeverity  = "severity"
)

// alert is one alert held: firing, or resolved and still resent.
type alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	// StartsAt is when it fired: the data time of its first firing point.
	StartsAt time.Time `json:"startsAt"`
	// ResolvedAt is when it resolved (data time); zero while it fires.
	ResolvedAt time.Time `json:"resolvedAt,omitzero"`
	// LastSeen is the clock's time of its latest firing point: its endsAt
	// is reckoned from it, as Prometheus' ValidUntil from the evaluation.
	LastSeen time.Time `json:"lastSeen"`
	// LastSent is when it was last handed to the endpoints' queues.
	LastSent time.Time `json:"lastSent,omitzero"`
	// Remediation marks the gpu_remediation's incidents, which resolve by
	// leaving the connector's snapshot.
	Remediation bool `json:"remediation,omitempty"`
	// resolvedSent says the resolve has been queued at least once.
	resolvedSent bool
}

// wireAlert is an alert as Alertmanager's v2 API takes it
// (postableAlert in its OpenAPI spec).
type wireAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL,omitempty"`
}

// fingerprint identifies a label set, as Alertmanager does (a hash of the
// sorted names and values): two replicas sending the same alert give it the
// same one, and so do restarts.
func fingerprint(labels map[string]string) uint64 {
	h := fnv.New64a()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		h.Write([]byte(k))
		h.Write([]byte{0xff})
		h.Write([]byte(labels[k]))
		h.Write([]byte{0xff})
	}
	return h.Sum64()
}

// incidentID names one firing of an alert, the way the gpu_remediation
// names its incidents (<name>-<8 hex digits>): from the label set and the
// time it fired, so that every replica and every resend name it alike.
func incidentID(labels map[string]string, startsAt time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], fingerprint(labels))
	binary.BigEndian.PutUint64(b[8:], uint64(startsAt.UnixNano()))
	h := fnv.New32a()
	h.Write(b[:])
	return strings.ToLower(labels[labelAlertname]) + "-" + hex.EncodeToString(h.Sum(nil))
}

// alertSet holds the alerts, by fingerprint. It decides what is sent when;
// the endpoints' queues (sender.go) send it.
type alertSet struct {
	mu     sync.Mutex
	alerts map[uint64]*alert
	// dirty are the fingerprints changed since the last save; a nil entry
	// in alerts means deleted.
	dirty map[uint64]bool

	resendDelay   time.Duration
	validFor      time.Duration // 4 × max(evaluation interval, resend delay)
	resolveResend time.Duration
}

func newAlertSet(cfg *Config) *alertSet {
	return &alertSet{
		alerts: map[uint64]*alert{}, dirty: map[uint64]bool{},
		resendDelay: cfg.ResendDelay,
		// "Allow for two Eval or Alertmanager send failures": Prometheus'
		// sendAlerts sets ValidUntil to 4 × max(interval, resendDelay).
		validFor:      4 * max(cfg.EvaluationInterval, cfg.ResendDelay),
		resolveResend: cfg.ResolveResend,
	}
}

// fire records a firing point. It returns the alert to send at once when it
// is new (or fires again after a resolve); one already firing waits for its
// resend.
func (s *alertSet) fire(labels, annotations map[string]string, at, now time.Time, remediation bool) (wireAlert, bool) {
	fp := fingerprint(labels)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.alerts[fp]
	if a != nil && a.ResolvedAt.IsZero() {
		a.LastSeen = now
		maps.Copy(a.Annotations, annotations)
		s.dirty[fp] = true
		return wireAlert{}, false
	}
	a = &alert{Labels: labels, Annotations: annotations, StartsAt: at, LastSeen: now, LastSent: now, Remediation: remediation}
	if a.Annotations == nil {
		a.Annotations = map[string]string{}
	}
	if !remediation {
		a.Annotations["incident_id"] = incidentID(labels, at)
	}
	s.alerts[fp], s.dirty[fp] = a, true
	return s.wire(a), true
}

// resolve records a resolve of the alert with the labels, at data time at.
// It returns the alert to send at once, if it was firing.
func (s *alertSet) resolve(labels map[string]string, at time.Time) (wireAlert, bool) {
	fp := fingerprint(labels)
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.alerts[fp]
	if a == nil || !a.ResolvedAt.IsZero() {
		return wireAlert{}, false // resolved already, or never seen firing
	}
	return s.resolveLocked(fp, a, at), true
}

func (s *alertSet) resolveLocked(fp uint64, a *alert, at time.Time) wireAlert {
	// A resolve stamped before the alert fired (clocks apart, a replay)
	// would make endsAt precede startsAt, which Alertmanager refuses.
	a.ResolvedAt = at
	if at.Before(a.StartsAt) {
		a.ResolvedAt = a.StartsAt
	}
	a.resolvedSent = true
	s.dirty[fp] = true
	return s.wire(a)
}

// resolveRemediation resolves the gpu_remediation's incidents that are not
// in a snapshot of the connector (the fingerprints of those it holds).
func (s *alertSet) resolveRemediation(holding map[uint64]bool, at time.Time) []wireAlert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wireAlert
	for fp, a := range s.alerts {
		if a.Remediation && a.ResolvedAt.IsZero() && !holding[fp] {
			out = append(out, s.resolveLocked(fp, a, at))
		}
	}
	return out
}

// wire is the alert as sent: startsAt when it fired; endsAt when it
// resolved, or, while it fires, validFor after it was last seen, so that
// Alertmanager resolves it by itself if the collector stops sending
// (Prometheus: rules/manager.go, SendAlerts).
func (s *alertSet) wire(a *alert) wireAlert {
	w := wireAlert{Labels: a.Labels, Annotations: a.Annotations, StartsAt: a.StartsAt}
	if !a.ResolvedAt.IsZero() {
		w.EndsAt = a.ResolvedAt
	} else {
		w.EndsAt = a.LastSeen.Add(s.validFor)
	}
	return w
}

// due returns the alerts to send again at now: each firing one every
// resend delay, each resolved one every resend delay for resolve_resend
// (Prometheus: Alert.needsSending). It forgets resolved alerts past
// resolve_resend, and firing ones not seen for validFor: Alertmanager has
// resolved those at their endsAt (the GPU left the analyzer, say).
func (s *alertSet) due(now time.Time) []wireAlert {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []wireAlert
	for fp, a := range s.alerts {
		resolved := !a.ResolvedAt.IsZero()
		if (resolved && now.Sub(a.ResolvedAt) > s.resolveResend && a.resolvedSent) || (!resolved && now.Sub(a.LastSeen) > s.validFor) {
			delete(s.alerts, fp)
			s.dirty[fp] = true
			continue
		}
		if (resolved && !a.resolvedSent) || now.Sub(a.LastSent) >= s.resendDelay {
			a.LastSent, a.resolvedSent = now, a.resolvedSent || resolved
			s.dirty[fp] = true
			out = append(out, s.wire(a))
		}
	}
	return out
}

// all returns every alert held, for endpoints that start with nothing
// queued (after a restart).
func (s *alertSet) all() []wireAlert {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]wireAlert, 0, len(s.alerts))
	for _, a := range s.alerts {
		out = append(out, s.wire(a))
	}
	return out
}

// counts returns how many alerts fire and how many are resolved.
func (s *alertSet) counts() (firing, resolved int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.alerts {
		if a.ResolvedAt.IsZero() {
			firing++
		} else {
			resolved++
		}
	}
	return firing, resolved
}
