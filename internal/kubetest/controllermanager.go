package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
)

// ControllerManagerBinary finds kube-controller-manager
// (KUBE_CONTROLLER_MANAGER, or bin/kube-controller-manager in the
// repository, built by `make kube-controller-manager`).
func ControllerManagerBinary(repoRoot string) (string, error) {
	bin := os.Getenv("KUBE_CONTROLLER_MANAGER")
	if bin == "" {
		bin = filepath.Join(repoRoot, "bin", "kube-controller-manager")
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("kube-controller-manager not found at %s (run make kube-controller-manager): %w", bin, err)
	}
	return bin, nil
}

// StartDisruptionController runs kube-controller-manager against the server
// with only its disruption controller, which computes each
// PodDisruptionBudget's status: without it the Eviction API refuses every
// eviction a budget covers. It is stopped with the server. Like the
// kubelet's absence, nothing else runs: pods are Ready only when a test
// writes their status.
func (s *Server) StartDisruptionController(bin string) error {
	kubeconfig, err := s.Kubeconfig(s.dir, AdminToken)
	if err != nil {
		return err
	}
	return s.run(bin, "--kubeconfig="+kubeconfig, "--controllers=disruption-controller", "--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port=0", "--v=0")
}
