package kubeauth

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRESTConfig(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: a, cluster: {server: "https://127.0.0.1:6443"}}
- {name: b, cluster: {server: "https://127.0.0.2:6443"}}
users:
- {name: u, user: {token: secret}}
contexts:
- {name: first, context: {cluster: a, user: u}}
- {name: second, context: {cluster: b, user: u}}
current-context: first
`), 0o600))

	c, err := RESTConfig("kubeconfig", path, "")
	require.NoError(t, err)
	require.Equal(t, "https://127.0.0.1:6443", c.Host, "the current context")
	c, err = RESTConfig("kubeconfig", path, "second")
	require.NoError(t, err)
	require.Equal(t, "https://127.0.0.2:6443", c.Host, "the named context")
	require.Equal(t, "secret", c.BearerToken)

	_, err = RESTConfig("kubeconfig", filepath.Join(dir, "missing"), "")
	require.ErrorContains(t, err, "kubeconfig "+filepath.Join(dir, "missing"))
	_, err = RESTConfig("none", "", "")
	require.EqualError(t, err, `no Kubernetes API for auth type "none"`)
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err = RESTConfig("in_cluster", "", "")
	require.ErrorContains(t, err, "in-cluster Kubernetes config")
}
