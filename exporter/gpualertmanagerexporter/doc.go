//go:generate go tool mdatagen metadata.yaml

// Package gpualertmanagerexporter sends the alerts that the gpu_analyzer
// processor decides (otelgpu.alerts) and the incidents of the
// gpu_remediation connector to Alertmanager's v2 API, with Prometheus'
// notifier semantics: every peer of an Alertmanager cluster is sent every
// alert, firing alerts are resent while they hold with an endsAt that
// outlives a few missed sends, resolved ones are resent for a while, and the
// alerts held survive a restart in a storage extension.
package gpualertmanagerexporter
