package gpuresetextension

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
)

// placeholder is replaced, in each argument of reset::command, by the UUID
// of the GPU being reset.
const placeholder = "{uuid}"

// Config is the gpu_reset extension's configuration.
type Config struct {
	// Node is the name of the Kubernetes node this collector runs on, the
	// only node it watches and writes (in a DaemonSet:
	// ${env:K8S_NODE_NAME} from the downward API's spec.nodeName).
	Node string     `mapstructure:"node"`
	Auth AuthConfig `mapstructure:"auth"`
	// Backend answers the checks before and after the reset: nvml (idle,
	// MIG, the UUID back after the reset), dcgm (those and DCGM's
	// diagnostic), or none (no check: the command alone decides).
	Backend string      `mapstructure:"backend"`
	Reset   ResetConfig `mapstructure:"reset"`
	DCGM    DCGMConfig  `mapstructure:"dcgm"`
	// PollInterval is how often the node is read even without a watch
	// event, so that a broken watch delays a request by at most this; it
	// also caps the back-off after a failure.
	PollInterval time.Duration `mapstructure:"poll_interval"`
	// APITimeout bounds each call to the Kubernetes API.
	APITimeout time.Duration `mapstructure:"api_timeout"`

	// prevent unkeyed literal initialization
	_ struct{}
}

// AuthConfig says how to reach the Kubernetes API.
type AuthConfig struct {
	// Type is in_cluster (the pod's service account) or kubeconfig.
	Type       string `mapstructure:"type"`
	Kubeconfig string `mapstructure:"kubeconfig"`
	Context    string `mapstructure:"context"`
}

// ResetConfig is the reset itself.
type ResetConfig struct {
	// Command is run once per GPU, without a shell, with every {uuid} in
	// its arguments replaced by the GPU's UUID.
	Command []string `mapstructure:"command"`
	// Timeout bounds each run of Command; it is then killed, and the
	// reset has failed.
	Timeout time.Duration `mapstructure:"timeout"`
}

// DCGMConfig is where the diagnostic runs, with backend dcgm.
type DCGMConfig struct {
	// Endpoint is nv-hostengine's host:port or unix:///path.
	Endpoint string `mapstructure:"endpoint"`
	// DiagLevel is dcgmi diag's run level, 1 (seconds) to 4 (hours).
	DiagLevel int `mapstructure:"diag_level"`
}

func createDefaultConfig() *Config {
	return &Config{
		Auth:    AuthConfig{Type: "in_cluster"},
		Backend: "nvml",
		Reset: ResetConfig{
			Command: []string{"nvidia-smi", "--gpu-reset", "-i", placeholder},
			Timeout: 2 * time.Minute,
		},
		DCGM:         DCGMConfig{Endpoint: "localhost:5555", DiagLevel: 1},
		PollInterval: 30 * time.Second,
		APITimeout:   10 * time.Second,
	}
}

// Validate checks the configuration; each error names its key.
func (cfg *Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if cfg.Node == "" {
		bad("node must be set to this node's name, e.g. ${env:K8S_NODE_NAME} from the downward API's spec.nodeName")
	} else if msgs := validation.IsDNS1123Subdomain(cfg.Node); len(msgs) > 0 {
		bad("node %q is not a node name: %s", cfg.Node, strings.Join(msgs, "; "))
	}
	switch cfg.Auth.Type {
	case "in_cluster":
	case "kubeconfig":
		if cfg.Auth.Kubeconfig == "" {
			bad("auth::kubeconfig must name a file when auth::type is kubeconfig")
		}
	case "none":
		bad("auth::type none is not allowed: the reset request and its answer are annotations on the node")
	default:
		bad("auth::type: unknown type %q; want in_cluster or kubeconfig", cfg.Auth.Type)
	}
	switch cfg.Backend {
	case "nvml", "none":
	case "dcgm":
		if _, _, err := dcgmbackend.ParseEndpoint(cfg.DCGM.Endpoint); err != nil {
			bad("dcgm::endpoint %w", err)
		}
		if cfg.DCGM.DiagLevel < 1 || cfg.DCGM.DiagLevel > 4 {
			bad("dcgm::diag_level must be 1 to 4 (dcgmi diag -r), got %d", cfg.DCGM.DiagLevel)
		}
	default:
		bad("backend: unknown backend %q; want nvml, dcgm or none", cfg.Backend)
	}
	switch cmd := cfg.Reset.Command; {
	case len(cmd) == 0 || cmd[0] == "":
		bad("reset::command must name a program, e.g. [nvidia-smi, --gpu-reset, -i, %q]", placeholder)
	case strings.Contains(cmd[0], placeholder):
		bad("reset::command: the program (the first element) must not contain %s", placeholder)
	case !slices.ContainsFunc(cmd[1:], func(a string) bool { return strings.Contains(a, placeholder) }):
		bad("reset::command must pass the GPU as %s in an argument, or it would reset GPUs not asked for", placeholder)
	}
	if cfg.Reset.Timeout <= 0 {
		bad("reset::timeout must be positive, got %v", cfg.Reset.Timeout)
	}
	if cfg.PollInterval <= 0 {
		bad("poll_interval must be positive, got %v", cfg.PollInterval)
	}
	if cfg.APITimeout <= 0 {
		bad("api_timeout must be positive, got %v", cfg.APITimeout)
	}
	return errors.Join(errs...)
}
