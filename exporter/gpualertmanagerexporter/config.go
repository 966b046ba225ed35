package gpualertmanagerexporter

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/config/confighttp"
)

// Config is the gpu_alertmanager exporter's configuration.
type Config struct {
	// Endpoints are the Alertmanagers, each by its base URL
	// (http://alertmanager:9093): every peer of a cluster, since each is sent
	// every alert, as Prometheus sends to each Alertmanager it discovers.
	Endpoints []string `mapstructure:"endpoints"`
	// Client is the HTTP client for all endpoints: timeout, TLS, headers
	// and auth, as for the collector's other HTTP clients. Its endpoint is
	// not used: the endpoints above are.
	Client confighttp.ClientConfig `mapstructure:"client"`
	// ResendDelay is how often an alert that still holds is sent again
	// (Prometheus' --rules.alert.resend-delay, 1m).
	ResendDelay time.Duration `mapstructure:"resend_delay"`
	// EvaluationInterval is the longest time between two points of an alert
	// that still holds: the gpu_analyzer's verdict_interval. With
	// ResendDelay it sets a firing alert's endsAt, as a rule group's interval
	// does in Prometheus.
	EvaluationInterval time.Duration `mapstructure:"evaluation_interval"`
	// ResolveResend is how long a resolved alert is still sent (Prometheus
	// keeps them 15 minutes), so that an Alertmanager that missed the
	// resolve, or restarted, learns it.
	ResolveResend time.Duration `mapstructure:"resolve_resend"`
	// QueueSize is the most alerts waiting for one endpoint; beyond it the
	// oldest are dropped (Prometheus' --alertmanager.notification-queue-capacity).
	QueueSize int `mapstructure:"queue_size"`
	// Storage is a storage extension (file_storage) that keeps the alerts
	// held across a restart of the collector; none keeps them in memory.
	Storage *component.ID `mapstructure:"storage"`
	// ResourceLabels are the resource attributes that become labels, with
	// Prometheus' names (dots as underscores), as the prometheus exporter's
	// resource_constant_labels put them on otelgpu_alerts.
	ResourceLabels []string `mapstructure:"resource_labels"`
	// ExternalLabels are added to every alert (Prometheus'
	// global::external_labels), e.g. the cluster. They must be the same on
	// every replica: Alertmanager deduplicates identical label sets only.
	ExternalLabels map[string]string `mapstructure:"external_labels"`
	// RunbookURL is the runbook_url annotation's prefix; the alert's name
	// and ".md" are appended, as the mixin's runbooks are named
	// (docs/runbooks/<alertname>.md). Empty: no runbook_url.
	RunbookURL string `mapstructure:"runbook_url"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// The defaults. Prometheus' own for the resend delay, the resolved alerts'
// retention (rules/alerting.go, resolvedRetention) and the queue
// (cmd/prometheus: notification-queue-capacity); the analyzer's default
// verdict_interval for the evaluation interval.
const (
	defaultResendDelay   = time.Minute
	defaultEvaluation    = 30 * time.Second
	defaultResolveResend = 15 * time.Minute
	defaultQueueSize     = 10000
	defaultTimeout       = 10 * time.Second
	defaultRunbookURL    = "https://github.com/otelcol-gpu/otelcol-gpu/blob/main/docs/runbooks/"
)

func defaultConfig() *Config {
	client := confighttp.NewDefaultClientConfig()
	client.Timeout = defaultTimeout
	return &Config{
		Client:             client,
		ResendDelay:        defaultResendDelay,
		EvaluationInterval: defaultEvaluation,
		ResolveResend:      defaultResolveResend,
		QueueSize:          defaultQueueSize,
		ResourceLabels:     []string{"hw.id", "hw.name", "hw.vendor", "host.name", "k8s.namespace.name", "k8s.pod.name", "k8s.job.name"},
		RunbookURL:         defaultRunbookURL,
	}
}

// labelName is a valid Alertmanager label name (Prometheus' legacy rule,
// which every Alertmanager release accepts).
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// Validate checks the configuration; each error names its key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if len(cfg.Endpoints) == 0 {
		bad("endpoints must list at least one Alertmanager (its base URL, e.g. http://alertmanager:9093)")
	}
	seen := map[string]bool{}
	for i, e := range cfg.Endpoints {
		if err := checkEndpoint(e); err != nil {
			bad("endpoints[%d]: %w", i, err)
		}
		if seen[e] {
			bad("endpoints[%d]: %q is listed twice", i, e)
		}
		seen[e] = true
	}
	if cfg.Client.Endpoint != "" {
		bad("client::endpoint is not used: list every Alertmanager under endpoints")
	}
	if cfg.Client.Timeout <= 0 {
		bad("client::timeout must be positive, got %v", cfg.Client.Timeout)
	}
	if cfg.ResendDelay <= 0 {
		bad("resend_delay must be positive, got %v", cfg.ResendDelay)
	}
	if cfg.EvaluationInterval <= 0 {
		bad("evaluation_interval must be positive, got %v", cfg.EvaluationInterval)
	}
	if cfg.ResolveResend < 0 {
		bad("resolve_resend must not be negative, got %v", cfg.ResolveResend)
	}
	if cfg.QueueSize < maxBatch {
		bad("queue_size must be at least %d (one request's alerts), got %d", maxBatch, cfg.QueueSize)
	}
	for i, k := range cfg.ResourceLabels {
		if k == "" {
			bad("resource_labels[%d] must not be empty", i)
		}
	}
	for k := range cfg.ExternalLabels {
		if !labelName.MatchString(k) {
			bad("external_labels: %q is not a label name ([a-zA-Z_][a-zA-Z0-9_]*)", k)
		}
		if k == labelAlertname || k == labelSeverity {
			bad("external_labels: %q is set by the exporter", k)
		}
	}
	if cfg.RunbookURL != "" {
		if u, err := url.Parse(cfg.RunbookURL); err != nil || u.Scheme == "" || u.Host == "" {
			bad("runbook_url: %q is not an absolute URL", cfg.RunbookURL)
		}
	}
	return errors.Join(errs...)
}

func checkEndpoint(e string) error {
	u, err := url.Parse(e)
	if err != nil {
		return fmt.Errorf("%q is not a URL: %w", e, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: the scheme must be http or https", e)
	}
	if u.Host == "" {
		return fmt.Errorf("%q has no host", e)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("%q: a base URL takes no query or fragment", e)
	}
	return nil
}
