package resourceslices

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func writeKubeconfig(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
	return path
}

const twoContexts = `apiVersion: v1
kind: Config
current-context: agent
clusters:
- name: c
  cluster: {server: "https://10.0.0.1:6443/", insecure-skip-tls-verify: true}
users:
- name: agent
  user: {tokenFile: token, as: "system:serviceaccount:observability:otelcol-gpu-agent"}
- name: plugin
  user:
    exec: {apiVersion: client.authentication.k8s.io/v1, command: aws}
contexts:
- name: agent
  context: {cluster: c, user: agent}
- name: plugin
  context: {cluster: c, user: plugin}
`

// TestFromKubeconfig: the current context's cluster and user, a token file
// relative to the kubeconfig, impersonation; a context that does not exist
// and a user that needs a plugin are refused, naming them.
func TestFromKubeconfig(t *testing.T) {
	path := writeKubeconfig(t, twoContexts)
	cfg, err := FromKubeconfig(path, "")
	require.NoError(t, err)
	require.Equal(t, "https://10.0.0.1:6443", cfg.Host)
	require.True(t, cfg.TLS.InsecureSkipVerify)
	require.Equal(t, filepath.Join(filepath.Dir(path), "token"), cfg.TokenFile)
	require.Equal(t, "system:serviceaccount:observability:otelcol-gpu-agent", cfg.Impersonate)

	_, err = FromKubeconfig(path, "plugin")
	require.ErrorContains(t, err, `user "plugin" authenticates through a plugin (exec or auth-provider)`)
	_, err = FromKubeconfig(path, "absent")
	require.ErrorContains(t, err, `no context "absent"`)
	_, err = FromKubeconfig(filepath.Join(t.TempDir(), "none"), "")
	require.ErrorContains(t, err, "none")
	_, err = FromKubeconfig(writeKubeconfig(t, "clusters: [{name: c, cluster: {server: https://x, certificate-authority-data: bm90IGEgY2VydA==}}]\ncontexts: [{name: a, context: {cluster: c}}]\ncurrent-context: a\n"), "")
	require.ErrorContains(t, err, "no certificate in certificate-authority-data")
}

func TestInClusterOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := InCluster()
	require.ErrorContains(t, err, "not in a pod")
}
