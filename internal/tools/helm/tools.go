//go:build tools

// Package helm pins Helm for `make helm`: the chart's tests lint, render,
// install, upgrade and roll back charts/otelcol-gpu with it.
package helm

import _ "helm.sh/helm/v3/cmd/helm"
