//go:generate go tool mdatagen metadata.yaml

// Package fromdcgmexporterprocessor translates NVIDIA dcgm-exporter's
// DCGM_FI_* series, as the prometheus receiver scrapes them, into exactly
// the metrics of the dcgm receiver: one resource per GPU or MIG instance,
// OpenTelemetry names and units, XIDs as event counts. The analyzer and the
// connectors then work on fleets that keep dcgm-exporter.
package fromdcgmexporterprocessor
