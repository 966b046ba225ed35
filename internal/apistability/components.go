package apistability

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuautoscaleconnector"
	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector"
	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter"
	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension"
	"github.com/otelcol-gpu/otelcol-gpu/processor/fromdcgmexporterprocessor"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver"
)

// Component is one component of the module: its directory, relative to the
// module root, and its default configuration.
type Component struct {
	Dir    string
	Config any
}

// Components are the module's components, each with a README.
func Components() []Component {
	return []Component{
		{"receiver/dcgmreceiver", dcgmreceiver.NewFactory().CreateDefaultConfig()},
		{"receiver/gpunodereceiver", gpunodereceiver.NewFactory().CreateDefaultConfig()},
		{"processor/gpuanalyzerprocessor", gpuanalyzerprocessor.NewFactory().CreateDefaultConfig()},
		{"processor/fromdcgmexporterprocessor", fromdcgmexporterprocessor.NewFactory().CreateDefaultConfig()},
		{"connector/gpuautoscaleconnector", gpuautoscaleconnector.NewFactory().CreateDefaultConfig()},
		{"connector/gpuremediationconnector", gpuremediationconnector.NewFactory().CreateDefaultConfig()},
		{"extension/gpuresetextension", gpuresetextension.NewFactory().CreateDefaultConfig()},
		{"exporter/gpualertmanagerexporter", gpualertmanagerexporter.NewFactory().CreateDefaultConfig()},
	}
}

// README returns the component's README as it should be: with its table
// made anew, and whether that differs from the one on disk.
func README(root string, c Component) (string, bool, error) {
	md, err := os.ReadFile(filepath.Join(root, c.Dir, "metadata.yaml"))
	if err != nil {
		return "", false, err
	}
	rows, err := Rows(md, c.Config)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", c.Dir, err)
	}
	path := filepath.Join(root, c.Dir, "README.md")
	old, err := os.ReadFile(path)
	if err != nil {
		return "", false, err
	}
	s, err := Replace(string(old), Section(rows))
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", path, err)
	}
	return s, s != string(old), nil
}
