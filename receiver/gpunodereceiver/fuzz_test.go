package gpunodereceiver

import (
	"context"
	"testing"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// FuzzConfig: any YAML under gpu_node unmarshals and validates or is
// refused with a message; one that validates makes a scraper that scrapes
// the (absent, or fake) host it names without panicking.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "gpu_node", "testdata/config.yaml", "../../examples/*/*.yaml") < 5 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("root_path: testdata/hostfs-v2\ncgroup: {enabled: true}\nnccl: {enabled: true, paths: ['[', '']}"))
	f.Add([]byte("collection_interval: -1s\nroot_path: ''\nhost_name: ''\nmetrics: {otelgpu.pod.cpu.time: {enabled: false}}"))
	configfuzz.Fuzz(f, createDefaultConfig, func(_ *testing.T, cfg component.Config) {
		c := cfg.(*Config)
		s, err := newNodeScraper(c, "h", receivertest.NewNopSettings(metadata.Type))
		if err != nil {
			return
		}
		_, _ = s.scrape(context.Background())
	})
}
