//go:build tools

// Package prometheus3 pins Prometheus 3 for `make prometheus3`: the OTLP
// receiver (--web.enable-otlp-receiver) that the restart-proof gateway
// exports to in the e2e fault test.
package prometheus3

import _ "github.com/prometheus/prometheus/cmd/prometheus"
