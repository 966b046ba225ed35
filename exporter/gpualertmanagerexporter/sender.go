package gpualertmanagerexporter

// One queue and one sending goroutine per Alertmanager, as Prometheus'
// notifier keeps a send loop per Alertmanager (notifier/sendloop.go in
// prometheus/prometheus v3): a slow or dead peer never holds up the others,
// and each peer gets every alert, which is what an Alertmanager cluster
// expects from its clients (its gossip deduplicates notifications, not
// alerts). Unlike Prometheus, a request that fails is not dropped: its
// alerts stay queued, newest version kept, and are retried with back-off,
// so that a peer that comes back gets them at once rather than at the next
// resend.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/exporter/gpualertmanagerexporter/internal/metadata"
)

// maxBatch is the most alerts in one request: Prometheus' default
// (--alertmanager.notification-batch-size, 256).
const maxBatch = 256

// The back-off between attempts to a failing endpoint: short enough that a
// restarted Alertmanager is sent its alerts within seconds, long enough not
// to hammer one that is down.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// apiPath is Alertmanager's v2 endpoint for posting alerts.
const apiPath = "/api/v2/alerts"

type peer struct {
	url    string // the endpoint's alerts URL
	name   string // the endpoint as configured, for logs and telemetry
	client *http.Client
	logger *zap.Logger
	tb     *metadata.TelemetryBuilder
	attrs  metric.MeasurementOption
	size   int

	mu sync.Mutex
	// order holds the fingerprints queued, oldest first; latest each one's
	// newest version. An alert queued again before it was sent is sent
	// once, in its newest version.
	order  []uint64
	latest map[uint64]wireAlert
	wake   chan struct{}
	// failing says the last request failed: logged once per outage.
	failing bool
	// recovered returns every alert held, queued again when the endpoint
	// takes alerts after an outage: an Alertmanager that restarted has
	// forgotten the alerts it had (it keeps them in memory only), and would
	// otherwise learn them at their next resend, up to resend_delay later.
	recovered func() []wireAlert
}

func newPeer(endpoint string, client *http.Client, size int, logger *zap.Logger, tb *metadata.TelemetryBuilder) *peer {
	return &peer{
		url: strings.TrimSuffix(endpoint, "/") + apiPath, name: endpoint, client: client, size: size,
		logger: logger, tb: tb, attrs: metric.WithAttributes(attribute.String("endpoint", endpoint)),
		latest: map[uint64]wireAlert{}, wake: make(chan struct{}, 1),
	}
}

// enqueue queues alerts; it never blocks. Beyond the queue's size the
// oldest are dropped, as Prometheus does.
func (p *peer) enqueue(ctx context.Context, alerts []wireAlert) {
	if len(alerts) == 0 {
		return
	}
	p.mu.Lock()
	for _, a := range alerts {
		fp := fingerprint(a.Labels)
		if _, ok := p.latest[fp]; !ok {
			p.order = append(p.order, fp)
		}
		p.latest[fp] = a
	}
	dropped := 0
	for len(p.order) > p.size {
		delete(p.latest, p.order[0])
		p.order = p.order[1:]
		dropped++
	}
	queued := len(p.order)
	p.mu.Unlock()
	if dropped > 0 {
		p.logger.Warn("Alertmanager queue full: oldest alerts dropped; those still firing are sent at the next resend",
			zap.String("endpoint", p.name), zap.Int("dropped", dropped))
		p.tb.ExporterGpuAlertmanagerAlertsDropped.Add(ctx, int64(dropped), p.attrs)
	}
	p.tb.ExporterGpuAlertmanagerAlertsQueued.Record(ctx, int64(queued), p.attrs)
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// batch returns up to maxBatch queued alerts, oldest first, without taking
// them off the queue.
func (p *peer) batch() []wireAlert {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := min(len(p.order), maxBatch)
	out := make([]wireAlert, n)
	for i, fp := range p.order[:n] {
		out[i] = p.latest[fp]
	}
	return out
}

// sent takes the alerts of a batch off the queue, unless a newer version
// of one was queued meanwhile.
func (p *peer) sent(ctx context.Context, batch []wireAlert) {
	p.mu.Lock()
	done := map[uint64]bool{}
	for _, a := range batch {
		fp := fingerprint(a.Labels)
		if cur, ok := p.latest[fp]; ok && sameVersion(cur, a) {
			delete(p.latest, fp)
			done[fp] = true
		}
	}
	kept := p.order[:0]
	for _, fp := range p.order {
		if !done[fp] {
			kept = append(kept, fp)
		}
	}
	p.order = kept
	queued := len(p.order)
	p.mu.Unlock()
	p.tb.ExporterGpuAlertmanagerAlertsQueued.Record(ctx, int64(queued), p.attrs)
}

func sameVersion(a, b wireAlert) bool {
	return a.StartsAt.Equal(b.StartsAt) && a.EndsAt.Equal(b.EndsAt)
}

// run sends the queue until ctx ends.
func (p *peer) run(ctx context.Context) {
	backoff := minBackoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		for {
			b := p.batch()
			if len(b) == 0 {
				break
			}
			if err := p.post(ctx, b); err != nil {
				if ctx.Err() != nil {
					return
				}
				p.tb.ExporterGpuAlertmanagerAlertsFailed.Add(ctx, int64(len(b)), p.attrs)
				if refused := (refusedError{}); errors.As(err, &refused) {
					// The same request would be refused again: drop it,
					// or it would hold up every alert behind it.
					p.logger.Error("Alertmanager refused alerts: dropped", zap.String("endpoint", p.name),
						zap.Int("alerts", len(b)), zap.Error(err))
					p.sent(ctx, b)
					continue
				}
				if !p.failing {
					p.logger.Warn("Alertmanager did not take alerts: they stay queued and are retried",
						zap.String("endpoint", p.name), zap.Int("alerts", len(b)), zap.Error(err))
					p.failing = true
				} else {
					p.logger.Debug("Alertmanager still failing", zap.String("endpoint", p.name), zap.Error(err))
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, maxBackoff)
				continue
			}
			backoff = minBackoff
			p.tb.ExporterGpuAlertmanagerAlertsSent.Add(ctx, int64(len(b)), p.attrs)
			p.sent(ctx, b)
			if p.failing {
				p.logger.Info("Alertmanager takes alerts again: sending it every alert held", zap.String("endpoint", p.name))
				p.failing = false
				if p.recovered != nil {
					p.enqueue(ctx, p.recovered())
				}
			}
		}
	}
}

// post sends one batch; any answer but 2xx is an error naming the status
// and the start of the body, where Alertmanager says what it refused.
func (p *peer) post(ctx context.Context, batch []wireAlert) error {
	body, err := json.Marshal(batch)
	if err != nil {
		return fmt.Errorf("encoding alerts: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 == 2 {
		return nil
	}
	err = fmt.Errorf("POST %s: %s: %s", p.url, resp.Status, strings.TrimSpace(string(msg)))
	// A client error other than a timeout or a rate limit is the request's
	// own fault (Alertmanager's validation): retrying cannot help.
	if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
		return refusedError{err}
	}
	return err
}

// refusedError is an answer that a retry would get again.
type refusedError struct{ error }
