package fromdcgmexporterprocessor

import (
	"context"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/pdatatest/pmetrictest"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver/receivertest"

	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// receiverWith makes the dcgm receiver's mapping with the given naming.
func receiverWith(tb testing.TB, naming string) offline.Receiver {
	tb.Helper()
	f := dcgmreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*dcgmreceiver.Config)
	cfg.Naming = naming
	r, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, consumertest.NewNop())
	require.NoError(tb, err)
	or, ok := r.(offline.Receiver)
	require.True(tb, ok)
	return or
}

// asScraped regroups the dcgm receiver's dcgm_exporter naming (one
// resource per device) as the prometheus receiver delivers a scrape of
// dcgm-exporter: one resource for the target, one metric per name with a
// point per device.
func asScraped(md pmetric.Metrics) pmetric.Metrics {
	out := pmetric.NewMetrics()
	rm := out.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "dcgm-exporter")
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	byName := map[string]pmetric.Metric{}
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		sms := rms.At(i).ScopeMetrics()
		for j := 0; j < sms.Len(); j++ {
			in := sms.At(j).Metrics()
			for k := 0; k < in.Len(); k++ {
				m := in.At(k)
				o, ok := byName[m.Name()]
				if !ok {
					o = ms.AppendEmpty()
					o.SetName(m.Name())
					o.SetEmptyGauge()
					byName[m.Name()] = o
				}
				m.Gauge().DataPoints().MoveAndAppendTo(o.Gauge().DataPoints())
			}
		}
	}
	return out
}

// TestSameAsReceiver: the simulated fleet (16 GPUs, training, serving, a
// thermal throttle, ECC errors, XID 79 at 45 s) for 90 s, served through
// the dcgm receiver's dcgm_exporter naming and translated back, gives
// exactly what the receiver emits from the same samples, byte for byte
// but for the k8s.job.name that dcgm-exporter has no label for.
func TestSameAsReceiver(t *testing.T) {
	fl, err := simulated.New(simulated.DefaultConfig())
	require.NoError(t, err)
	otel := receiverWith(t, dcgmreceiver.NamingOTel)
	exporter := receiverWith(t, dcgmreceiver.NamingDCGMExporter)
	p, tel := newTestTranslator(t, defaultConfig())
	xids := 0
	for n := range 90 {
		samples, err := fl.Collect(context.Background(), t0.Add(time.Duration(n)*time.Second), time.Second)
		require.NoError(t, err)
		want := make([]gpu.Sample, len(samples))
		for i, s := range samples {
			d := *s.Device
			d.Pod.Job = ""
			// dcgm-exporter's series carry neither the board's serial,
			// VBIOS nor temperature thresholds.
			d.SerialNumber, d.FirmwareVersion, d.TempLimits = "", "", nil
			s.Device = &d
			want[i] = s
			xids += len(s.XIDs)
		}
		got := consume(t, p, asScraped(exporter.Map(samples)))
		// Drop the target's resource, now empty but for service.name.
		got.ResourceMetrics().RemoveIf(func(rm pmetric.ResourceMetrics) bool { return rm.ScopeMetrics().Len() == 0 })
		require.NoError(t, pmetrictest.CompareMetrics(zeroGaugeStarts(otel.Map(want)), zeroGaugeStarts(got)), "scrape %d", n)
	}
	require.Positive(t, xids, "the fleet's XID fault should have fired")
	require.Equal(t, map[string]int64{"last_xid": int64(xids)}, counts(t, tel, "otelcol_processor_from_dcgm_exporter_xid_events", "source"))
}
