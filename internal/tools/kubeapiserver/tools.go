//go:build tools

// Package kubeapiserver pins kube-apiserver for `make kube-apiserver`.
package kubeapiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
