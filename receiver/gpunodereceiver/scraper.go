package gpunodereceiver

import (
	"context"
	"errors"
	"path/filepath"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/scraper/scrapererror"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// source is one part of the node the receiver reads. Each records its
// metrics into the shared MetricsBuilder and emits its own resources (a
// pod's, the node's, a NIC's).
type source interface {
	// scrape records and emits the source's resources. An error means
	// the source could not be read at all this time; a part of it that
	// could not (one pod, one file) is logged by the source and skipped.
	scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error
}

// sourceEnv is what every source is made from.
type sourceEnv struct {
	cfg    *Config
	host   string // host.name
	logger *zap.Logger
}

// sourceMaker makes a source when the configuration enables it, and nil
// otherwise. The readers of the network and nccl sections join the
// receiver by adding their makers to sourceMakers, each in its own file.
type sourceMaker func(env sourceEnv) (source, error)

// sourceMakers are the sources the receiver can run, in emission order.
var sourceMakers = []sourceMaker{newCgroupSource, newPressureSource, newNetworkSource, newNCCLSource}

// nodeScraper runs the enabled sources, one MetricsBuilder for all.
type nodeScraper struct {
	cfg     *Config
	sources []source
	mb      *metadata.MetricsBuilder
	logger  *zap.Logger
	now     func() time.Time // the data time of a scrape: the wall clock
}

func newNodeScraper(cfg *Config, host string, set receiver.Settings) (*nodeScraper, error) {
	env := sourceEnv{cfg: cfg, host: host, logger: set.Logger}
	s := &nodeScraper{
		cfg: cfg,
		// Counters of the cgroups and PSI start before the receiver
		// does; its start is the earliest time it vouches for.
		mb:     metadata.NewMetricsBuilder(cfg.MetricsBuilderConfig, set, metadata.WithStartTime(pcommon.NewTimestampFromTime(time.Now()))),
		logger: set.Logger,
		now:    time.Now,
	}
	makers := sourceMakers
	if cfg.Simulated != nil {
		// The fleet's nodes instead of this host's: no real source is made.
		makers = []sourceMaker{newSimulatedSource}
	}
	for _, mk := range makers {
		src, err := mk(env)
		if err != nil {
			return nil, err
		}
		if src != nil {
			s.sources = append(s.sources, src)
		}
	}
	return s, nil
}

// scrape reads every source. One that fails leaves the others' metrics
// to be sent: the error is a partial one.
func (s *nodeScraper) scrape(context.Context) (pmetric.Metrics, error) {
	now := pcommon.NewTimestampFromTime(s.now())
	var errs []error
	for _, src := range s.sources {
		if err := src.scrape(now, s.mb); err != nil {
			errs = append(errs, err)
		}
	}
	md := s.mb.Emit()
	if len(errs) > 0 {
		return md, scrapererror.NewPartialScrapeError(errors.Join(errs...), len(errs))
	}
	return md, nil
}

// closer is a source that keeps files open between scrapes.
type closer interface{ close() }

// shutdown closes what the sources keep open; the controller calls it once
// no scrape runs any more.
func (s *nodeScraper) shutdown(context.Context) error {
	for _, src := range s.sources {
		if c, ok := src.(closer); ok {
			c.close()
		}
	}
	return nil
}

// hostPath is a host file's path as the receiver sees it, under root_path.
func hostPath(cfg *Config, path string) string { return filepath.Join(cfg.RootPath, path) }

// onceLog logs one warning per key until the key stops being seen: a pod
// whose files are malformed is reported once, not every scrape, and again
// if it reappears.
type onceLog struct {
	logger *zap.Logger
	warned map[string]bool // key -> seen this round
}

func newOnceLog(logger *zap.Logger) *onceLog {
	return &onceLog{logger: logger, warned: map[string]bool{}}
}

func (o *onceLog) warn(key, msg string, err error) {
	if _, ok := o.warned[key]; !ok {
		o.logger.Warn(msg, zap.String("key", key), zap.Error(err))
	}
	o.warned[key] = true
}

// seen keeps key's warning from repeating this round.
func (o *onceLog) seen(key string) {
	if _, ok := o.warned[key]; ok {
		o.warned[key] = true
	}
}

// endRound forgets the keys not seen since the last endRound.
func (o *onceLog) endRound() {
	for k, seen := range o.warned {
		if !seen {
			delete(o.warned, k)
			continue
		}
		o.warned[k] = false
	}
}
