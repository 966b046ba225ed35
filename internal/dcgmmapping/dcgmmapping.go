// Package dcgmmapping reaches the dcgm receiver's own mapping from GPU
// samples to OTLP metrics, for the code that must emit exactly what the
// receiver emits without running it: trace replay (gpureplay) and the
// from_dcgm_exporter processor. The receiver is made by its factory, with
// its default settings, and never started: no backend, no ticker.
package dcgmmapping

import (
	"context"
	"errors"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver"

	"github.com/otelcol-gpu/otelcol-gpu/internal/offline"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/dcgmreceiver"
)

// New returns the dcgm receiver's mapping. set.ID is replaced by the
// receiver's own ID; set.BuildInfo gives the version of the scope the
// metrics are emitted in, as in a running receiver. A Receiver keeps the
// state of the devices' counters and is not safe for concurrent use.
func New(set receiver.Settings) (offline.Receiver, error) {
	f := dcgmreceiver.NewFactory()
	set.ID = component.NewID(f.Type())
	r, err := f.CreateMetrics(context.Background(), set, f.CreateDefaultConfig(), consumertest.NewNop())
	if err != nil {
		return nil, err
	}
	or, ok := r.(offline.Receiver)
	if !ok {
		return nil, errors.New("dcgm receiver: its mapping cannot be reached")
	}
	return or, nil
}
