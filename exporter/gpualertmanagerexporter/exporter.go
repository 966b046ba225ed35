package gpualertmanagerexporter

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter/internal/metadata"
)

// tick is how often the due resends are queued and changes saved: a
// second, so that a collector killed loses at most a second of changes
// (the analyzer sends firing alerts again after its own restart anyway).
const tick = time.Second

type alertExporter struct {
	cfg    *Config
	id     component.ID
	logger *zap.Logger
	tel    component.TelemetrySettings
	tb     *metadata.TelemetryBuilder
	set    *alertSet
	now    func() time.Time

	peers  []*peer
	client storage.Client
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func newAlertExporter(cfg *Config, set exporter.Settings) (*alertExporter, error) {
	tb, err := metadata.NewTelemetryBuilder(set.TelemetrySettings)
	if err != nil {
		return nil, err
	}
	return &alertExporter{
		cfg: cfg, id: set.ID, logger: set.Logger, tel: set.TelemetrySettings, tb: tb,
		set: newAlertSet(cfg), now: time.Now,
	}, nil
}

func (e *alertExporter) start(ctx context.Context, host component.Host) error {
	client, err := e.cfg.Client.ToClient(ctx, host.GetExtensions(), e.tel)
	if err != nil {
		return err
	}
	if e.cfg.Storage != nil {
		if e.client, err = openStorage(ctx, host, *e.cfg.Storage, e.id); err != nil {
			return err
		}
		if err := e.set.restore(ctx, e.client, e.logger); err != nil {
			return err
		}
		if f, r := e.set.counts(); f+r > 0 {
			e.logger.Info("Alerts restored: sending them again", zap.Int64("firing", f), zap.Int64("resolved", r))
		}
	}
	// The loops outlive start's context: they stop at shutdown.
	runCtx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	restored := e.set.all()
	for _, ep := range e.cfg.Endpoints {
		p := newPeer(ep, client, e.cfg.QueueSize, e.logger, e.tb)
		p.recovered = e.set.all
		e.peers = append(e.peers, p)
		p.enqueue(runCtx, restored)
		e.wg.Go(func() { p.run(runCtx) })
	}
	e.wg.Go(func() { e.loop(runCtx) })
	return nil
}

// loop queues the resends as they fall due, saves the changes, and reports
// the alerts held.
func (e *alertExporter) loop(ctx context.Context) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		e.enqueue(ctx, e.set.due(e.now()))
		e.save(ctx)
		f, r := e.set.counts()
		e.tb.ExporterGpuAlertmanagerAlertsActive.Record(ctx, f, metric.WithAttributes(attribute.String("state", "firing")))
		e.tb.ExporterGpuAlertmanagerAlertsActive.Record(ctx, r, metric.WithAttributes(attribute.String("state", "resolved")))
	}
}

func (e *alertExporter) save(ctx context.Context) {
	if e.client == nil {
		return
	}
	if err := e.set.save(ctx, e.client); err != nil {
		e.logger.Warn("Could not save the alerts held; retried", zap.Error(err))
	}
}

func (e *alertExporter) enqueue(ctx context.Context, alerts []wireAlert) {
	for _, p := range e.peers {
		p.enqueue(ctx, alerts)
	}
}

// consumeMetrics takes the batch's alerts; it never waits for an
// Alertmanager and never fails the pipeline.
func (e *alertExporter) consumeMetrics(ctx context.Context, md pmetric.Metrics) error {
	res := e.consume(md, e.now())
	e.enqueue(ctx, res.send)
	for reason, n := range res.rejected {
		e.tb.ExporterGpuAlertmanagerRejectedDataPoints.Add(ctx, n, metric.WithAttributes(attribute.String("reason", reason)))
	}
	return nil
}

func (e *alertExporter) shutdown(ctx context.Context) error {
	if e.cancel != nil {
		e.cancel()
		e.wg.Wait()
	}
	var errs []error
	if e.client != nil {
		if err := e.set.save(ctx, e.client); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, e.client.Close(ctx))
	}
	e.tb.Shutdown()
	return errors.Join(errs...)
}
