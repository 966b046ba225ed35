//go:build tools

// Package alertmanager pins Alertmanager for `make alertmanager`: the second
// Alertmanager of the e2e tests of the gpu_alertmanager exporter, beside
// Debian's older prometheus-alertmanager package, so that both the v2 API of
// an old release and a current one are exercised.
package alertmanager

import (
	_ "github.com/prometheus/alertmanager/cmd/alertmanager"
	_ "github.com/prometheus/alertmanager/cmd/amtool"
)
