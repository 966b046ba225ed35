package resourceslices

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// The watcher talks to the API server with net/http and encoding/json, not
// client-go: the handful of requests it makes (discovery, list, watch of
// one resource) do not need it, and client-go's packages keep about 350 KiB
// in a process's heap from start-up, which every garbage collection marks
// again. In a node agent scraping a few GPUs that was a tenth more time
// per scrape.

// Config says how to reach the API server: its URL, how to trust it, and
// who to be.
type Config struct {
	// Host is the API server's URL, https://host:port.
	Host string
	// TLS trusts the server (RootCAs, or InsecureSkipVerify) and holds
	// the client certificate, if any.
	TLS *tls.Config
	// Token is a bearer token; TokenFile one read at every request, as
	// a pod's projected service account token is rotated.
	Token, TokenFile string
	// Impersonate is a user to act as (kubeconfig's as).
	Impersonate string
}

// In-cluster locations of the service account's credentials.
const (
	saDir   = "/var/run/secrets/kubernetes.io/serviceaccount"
	saToken = saDir + "/token"
	saCA    = saDir + "/ca.crt"
)

// InCluster is the pod's service account, as the kubelet mounts it.
func InCluster() (*Config, error) {
	host, port := os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT")
	if host == "" || port == "" {
		return nil, errors.New("in-cluster Kubernetes config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set: not in a pod")
	}
	if _, err := os.Stat(saToken); err != nil {
		return nil, fmt.Errorf("in-cluster Kubernetes config: %w", err)
	}
	pool, err := caPool(nil, saCA)
	if err != nil {
		return nil, fmt.Errorf("in-cluster Kubernetes config: %w", err)
	}
	return &Config{Host: "https://" + net.JoinHostPort(host, port), TLS: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, TokenFile: saToken}, nil
}

// kubeconfig is the part of a kubeconfig file the watcher reads.
type kubeconfig struct {
	CurrentContext string `yaml:"current-context"`
	Clusters       []struct {
		Name    string `yaml:"name"`
		Cluster struct {
			Server                   string `yaml:"server"`
			CertificateAuthority     string `yaml:"certificate-authority"`
			CertificateAuthorityData string `yaml:"certificate-authority-data"`
			InsecureSkipTLSVerify    bool   `yaml:"insecure-skip-tls-verify"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Users []struct {
		Name string `yaml:"name"`
		User struct {
			Token                 string    `yaml:"token"`
			TokenFile             string    `yaml:"tokenFile"`
			ClientCertificate     string    `yaml:"client-certificate"`
			ClientCertificateData string    `yaml:"client-certificate-data"`
			ClientKey             string    `yaml:"client-key"`
			ClientKeyData         string    `yaml:"client-key-data"`
			As                    string    `yaml:"as"`
			Exec                  yaml.Node `yaml:"exec"`
			AuthProvider          yaml.Node `yaml:"auth-provider"`
		} `yaml:"user"`
	} `yaml:"users"`
	Contexts []struct {
		Name    string `yaml:"name"`
		Context struct {
			Cluster string `yaml:"cluster"`
			User    string `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
}

// FromKubeconfig reads a kubeconfig file: the cluster and user of context
// (the file's current context if empty). Tokens and client certificates
// are supported; exec and auth-provider plugins are not.
func FromKubeconfig(path, context string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	var kc kubeconfig
	if err := yaml.Unmarshal(raw, &kc); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	fail := func(format string, args ...any) (*Config, error) {
		return nil, fmt.Errorf("kubeconfig %s: %s", path, fmt.Sprintf(format, args...))
	}
	if context == "" {
		context = kc.CurrentContext
	}
	var clusterName, userName string
	found := false
	for _, c := range kc.Contexts {
		if c.Name == context {
			clusterName, userName, found = c.Context.Cluster, c.Context.User, true
		}
	}
	if !found {
		return fail("no context %q", context)
	}
	dir := filepath.Dir(path)
	rel := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	cfg := &Config{TLS: &tls.Config{MinVersion: tls.VersionTLS12}}
	found = false
	for _, c := range kc.Clusters {
		if c.Name != clusterName {
			continue
		}
		found = true
		cfg.Host = strings.TrimRight(c.Cluster.Server, "/")
		if c.Cluster.InsecureSkipTLSVerify {
			cfg.TLS.InsecureSkipVerify = true
		} else if c.Cluster.CertificateAuthority != "" || c.Cluster.CertificateAuthorityData != "" {
			data, err := base64.StdEncoding.DecodeString(c.Cluster.CertificateAuthorityData)
			if err != nil {
				return fail("cluster %q: certificate-authority-data: %v", clusterName, err)
			}
			if cfg.TLS.RootCAs, err = caPool(data, rel(c.Cluster.CertificateAuthority)); err != nil {
				return fail("cluster %q: %v", clusterName, err)
			}
		}
	}
	if !found || cfg.Host == "" {
		return fail("no cluster %q with a server", clusterName)
	}
	for _, u := range kc.Users {
		if u.Name != userName {
			continue
		}
		if !u.User.Exec.IsZero() || !u.User.AuthProvider.IsZero() {
			return fail("user %q authenticates through a plugin (exec or auth-provider), which dra does not run; use a token or a client certificate", userName)
		}
		cfg.Token, cfg.TokenFile, cfg.Impersonate = u.User.Token, rel(u.User.TokenFile), u.User.As
		if u.User.ClientCertificateData != "" || u.User.ClientCertificate != "" {
			var certPEM, keyPEM []byte
			if certPEM, err = dataOrFile(u.User.ClientCertificateData, rel(u.User.ClientCertificate)); err != nil {
				return fail("user %q: client certificate: %v", userName, err)
			}
			if keyPEM, err = dataOrFile(u.User.ClientKeyData, rel(u.User.ClientKey)); err != nil {
				return fail("user %q: client key: %v", userName, err)
			}
			cert, err := tls.X509KeyPair(certPEM, keyPEM)
			if err != nil {
				return fail("user %q: %v", userName, err)
			}
			cfg.TLS.Certificates = []tls.Certificate{cert}
		}
	}
	return cfg, nil
}

func dataOrFile(b64, path string) ([]byte, error) {
	if b64 != "" {
		return base64.StdEncoding.DecodeString(b64)
	}
	return os.ReadFile(path)
}

// caPool is the certificates of pemData, or of the file at path.
func caPool(pemData []byte, path string) (*x509.CertPool, error) {
	if len(pemData) == 0 {
		var err error
		if pemData, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemData) {
		return nil, fmt.Errorf("no certificate in %s", cmpOr(path, "certificate-authority-data"))
	}
	return pool, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// client makes the watcher's requests.
type client struct {
	cfg  *Config
	http *http.Client
}

func newClient(cfg *Config) *client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg.TLS
	return &client{cfg: cfg, http: &http.Client{Transport: tr}}
}

// statusError is an API server's answer other than 200, with its Status
// reason where it sent one.
type statusError struct {
	code    int
	message string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.message)
}

// get sends a GET of path with query and returns the response body, which
// the caller closes; an answer other than 200 is a *statusError.
func (c *client) get(ctx context.Context, path string, query url.Values) (io.ReadCloser, error) {
	u := c.cfg.Host + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, http.NoBody)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "otelcol-gpu")
	token := c.cfg.Token
	if c.cfg.TokenFile != "" {
		b, err := os.ReadFile(c.cfg.TokenFile)
		if err != nil {
			return nil, fmt.Errorf("token: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if c.cfg.Impersonate != "" {
		req.Header.Set("Impersonate-User", c.cfg.Impersonate)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var st struct {
			Message string `json:"message"`
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(body, &st) != nil || st.Message == "" {
			st.Message = strings.TrimSpace(string(body))
		}
		return nil, &statusError{code: resp.StatusCode, message: st.Message}
	}
	return resp.Body, nil
}

// getJSON decodes the answer to a GET into v.
func (c *client) getJSON(ctx context.Context, path string, query url.Values, v any) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	body, err := c.get(ctx, path, query)
	if err != nil {
		return err
	}
	defer body.Close()
	return json.NewDecoder(body).Decode(v)
}
