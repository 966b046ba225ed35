//go:build tools

// Package kubecontrollermanager pins kube-controller-manager for
// `make kube-controller-manager`: the remediation connector's integration
// tests run its disruption controller so that PodDisruptionBudgets gate
// evictions as on a real cluster.
package kubecontrollermanager

import _ "k8s.io/kubernetes/cmd/kube-controller-manager"
