package dcgmreceiver

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/receiver/receivertest"

	f "github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver/internal/metadata"
)

// TestDCGMStandinWatches checks what the receiver asks DCGM to sample, as
// the stand-in library logs it: every field at the collection interval
// (not faster), and only the fields of enabled metrics.
func TestDCGMStandinWatches(t *testing.T) {
	standin(t, dcgmstandin.State{GPUs: 2, Connected: true, Epoch: 1})
	ids := func(fields ...f.Field) []uint16 {
		var out []uint16
		for _, field := range fields {
			out = append(out, field.Info().ID)
		}
		slices.Sort(out)
		return out
	}
	without := func(drop ...f.Field) []uint16 {
		var keep []f.Field
		for _, field := range f.All() {
			if !slices.Contains(drop, field) {
				keep = append(keep, field)
			}
		}
		return ids(keep...)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		freq   time.Duration
		want   []uint16
	}{
		{"default", func(*Config) {}, 10 * time.Second, ids(f.All()...)},
		{"1s without pipes or energy", func(c *Config) {
			c.CollectionInterval = time.Second
			c.Metrics.NvidiaGpuPipeActive.Enabled = false
			c.Metrics.HwEnergy.Enabled = false
		}, time.Second, without(f.PipeTensorActive, f.PipeFP64Active, f.PipeFP32Active, f.PipeFP16Active, f.TotalEnergy)},
		{"SM activity alone", func(c *Config) {
			c.MetricsBuilderConfig = metadata.MetricsBuilderConfig{ResourceAttributes: c.ResourceAttributes}
			c.Metrics.NvidiaGpuSmActive.Enabled = true
		}, 10 * time.Second, ids(f.SMActive)},
		{"dcgm_exporter naming", func(c *Config) {
			c.Naming = NamingDCGMExporter
			c.CollectionInterval = 250 * time.Millisecond
		}, 250 * time.Millisecond, ids(f.All()...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "watches")
			t.Setenv(dcgmstandin.WatchLogEnv, log)
			cfg := createDefaultConfig().(*Config)
			cfg.Backend = BackendDCGM
			cfg.Endpoint = "localhost:5555"
			tc.mutate(cfg)
			require.NoError(t, cfg.Validate())
			s := newGPUScraper(cfg, receivertest.NewNopSettings(metadata.Type))
			ctx := context.Background()
			require.NoError(t, s.start(ctx, &statusHost{}))
			md, err := s.scrape(ctx)
			require.NoError(t, s.shutdown(ctx))
			require.NoError(t, err)
			require.Positive(t, md.DataPointCount())

			watches, err := dcgmstandin.ReadWatches(log)
			require.NoError(t, err)
			var sampled []uint16
			for _, w := range watches {
				if slices.Contains(w.Fields, fieldUUID) {
					// The identity strings, read once at connection.
					require.Equal(t, time.Minute.Microseconds(), w.FreqMicros)
					continue
				}
				require.Equalf(t, tc.freq.Microseconds(), w.FreqMicros, "fields %v", w.Fields)
				sampled = append(sampled, w.Fields...)
			}
			slices.Sort(sampled)
			sampled = slices.Compact(sampled)
			require.Equal(t, tc.want, sampled)
		})
	}
}

// fieldUUID is DCGM_FI_DEV_UUID, one of the identity fields.
const fieldUUID = 54
