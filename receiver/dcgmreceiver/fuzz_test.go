package dcgmreceiver

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component"

	"github.com/otelcol-gpu/otelcol-gpu/internal/configfuzz"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
)

// FuzzConfig: any YAML under dcgm unmarshals and validates or is refused
// with a message; a simulated fleet that validates is built and scraped.
func FuzzConfig(f *testing.F) {
	if configfuzz.Seeds(f, "dcgm", "testdata/config.yaml", "../../examples/*/*.yaml") < 5 {
		f.Fatal("too few seed configurations")
	}
	f.Add([]byte("backend: simulated\nsimulated: {hosts: 1000000000, gpus_per_host: 1000000000}"))
	f.Add([]byte("backend: simulated\nsimulated: {hosts: 1, gpus_per_host: 1, workloads: [{kind: training, gpus: '0-99999999', phases: [{kind: x, duration: -1s}]}], faults: [{kind: xid, gpus: '-1', start: -1h}]}"))
	f.Add([]byte("collection_interval: 0s\nreconnect: {initial_interval: -1s, max_interval: 0s}\nnaming: nope\npod_resources: {enabled: true, endpoint: '', refresh_interval: -1s}\nmetrics: {hw.temperature: {enabled: false}}"))
	configfuzz.Fuzz(f, createDefaultConfig, func(_ *testing.T, cfg component.Config) {
		c := cfg.(*Config)
		// Fleets up to 1,024 GPUs, so that each input takes milliseconds;
		// the bound on larger ones is Check's.
		if c.Backend != BackendSimulated || c.Simulated.Trace != "" || c.Simulated.Hosts*c.Simulated.GPUsPerHost > 1024 {
			return
		}
		fl, err := simulated.New(c.Simulated)
		if err != nil {
			return
		}
		if _, err := fl.Collect(context.Background(), time.Unix(1767225600, 0), time.Second); err != nil {
			return
		}
	})
}
