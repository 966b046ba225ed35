package dcgmreceiver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/receiver"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/podresources"
	"github.com/otelcol-gpu/otelcol-gpu/internal/resourceslices"
	"github.com/otelcol-gpu/otelcol-gpu/internal/slurmjobs"
)

// gpuScraper drives a backend: it connects, collects, maps, and when the
// backend fails it reports a recoverable status, backs off and reconnects.
//
// An outage is not returned as a scrape error. Such an error would not stop
// the collector: scraperhelper logs it at error level, marks the scrape's
// span failed and goes on. But it would do so on every interval of the
// outage, while the recoverable status and one warning per distinct failure
// already say it. Nor is there a partial failure to return as a
// scrapererror.PartialScrapeError: a backend's Collect returns every device
// or an error (see backend.Backend), and a field a GPU does not support is
// not a failure.
type gpuScraper struct {
	cfg    *Config
	set    receiver.Settings
	logger *zap.Logger
	host   component.Host
	now    func() time.Time

	// candidates are the backends to try, in order; active is the one
	// connected, or nil.
	candidates []backend.Backend
	active     backend.Backend

	backoff     time.Duration
	nextAttempt time.Time
	lastErr     string
	healthy     bool

	mapper *mapper
	pods   *podresources.Cache
	// slices names the devices DRA claims hold; nil unless dra is enabled.
	slices *resourceslices.Watcher
	// containers names the pods of per-process series; nil unless
	// per_process has a container_logs_dir.
	containers *podresources.ContainerIndex
	// slurm attributes GPUs to Slurm jobs; nil unless slurm is enabled.
	slurm *slurmAttributor
	// unnamedWarned is set once a process's pod could not be named; that
	// is logged once.
	unnamedWarned bool // storage keeps the amdsmi backend's CPER cursors; nil without
	// amdsmi::storage.
	storage storage.Client
	// jobSource answers Slurm job details in tests; nil asks Slurm.
	jobSource slurmjobs.Source
}

func newGPUScraper(cfg *Config, set receiver.Settings) *gpuScraper {
	return &gpuScraper{
		cfg:     cfg,
		set:     set,
		logger:  set.Logger,
		now:     time.Now,
		backoff: cfg.Reconnect.InitialInterval,
		mapper:  newMapper(cfg.MetricsBuilderConfig, cfg.Naming, set),
	}
}

func (s *gpuScraper) start(ctx context.Context, host component.Host) error {
	var cursors amdsmibackend.Cursors
	if id := s.cfg.AMDSMI.Storage; id != nil && (s.cfg.Backend == BackendAMDSMI || s.cfg.Backend == BackendAuto) {
		client, err := openStorage(ctx, host, *id, s.set.ID)
		if err != nil {
			return fmt.Errorf("amdsmi::storage: %w", err)
		}
		s.storage = client
		cursors = storageCursors{client}
	}
	bs, err := newBackends(s.cfg, s.logger, cursors)
	if err != nil {
		return err
	}
	return s.startWith(ctx, host, bs)
}

// startWith starts the scraper on the given backends; tests pass backends
// on mocks.
func (s *gpuScraper) startWith(ctx context.Context, host component.Host, bs []backend.Backend) error {
	s.host = host
	s.candidates = bs
	if s.cfg.PodResources.Enabled {
		s.pods = podresources.NewCache(s.cfg.PodResources.Endpoint, s.cfg.PodResources.RefreshInterval, s.logger)
		if s.cfg.DRA.Enabled {
			s.startDRA()
		}
	}
	if s.cfg.PerProcess.Enabled && s.cfg.PerProcess.ContainerLogsDir != "" {
		s.containers = podresources.NewContainerIndex(s.cfg.PerProcess.ContainerLogsDir, s.logger)
	}
	if s.cfg.Slurm.Enabled {
		var src slurmjobs.Source
		if s.cfg.Slurm.Details.Enabled {
			src = s.jobSource
			if src == nil {
				src = newJobSource(s.cfg.Slurm.Details, s.logger)
			}
		}
		s.slurm = newSlurmAttributor(s.cfg.Slurm, src, s.logger)
	}
	// Try once now so that a healthy host reports from the first scrape; a
	// failure here is not fatal.
	s.connect(ctx)
	return nil
}

func (s *gpuScraper) shutdown(context.Context) error {
	var errs []error
	if s.active != nil {
		errs = append(errs, s.active.Close())
		s.active = nil
	}
	if s.slices != nil {
		s.slices.Stop()
	}
	if s.pods != nil {
		errs = append(errs, s.pods.Close())
	}
	if s.slurm != nil {
		s.slurm.close()
	}
	if s.storage != nil {
		errs = append(errs, s.storage.Close(context.Background()))
		s.storage = nil
	}
	return errors.Join(errs...)
}

// startDRA follows the DRA driver's ResourceSlices. Without a Kubernetes
// API the GPUs are still read, without DRA attribution: a collector does
// not stop for want of a cluster.
func (s *gpuScraper) startDRA() {
	c := s.cfg.DRA
	var rc *resourceslices.Config
	var err error
	if c.Auth.Type == "kubeconfig" {
		rc, err = resourceslices.FromKubeconfig(c.Auth.Kubeconfig, c.Auth.Context)
	} else {
		rc, err = resourceslices.InCluster()
	}
	if err != nil {
		s.logger.Error("DRA attribution off: no Kubernetes API", zap.Error(err))
		return
	}
	s.slices = resourceslices.New(rc, c.Driver, c.NodeName, s.logger)
	// The informer outlives start's context, which ends with start.
	s.slices.Start(context.Background())
	s.pods.ResolveDRA(c.Driver, s.slices)
}

// connect tries each candidate backend in order, once the back-off allows.
func (s *gpuScraper) connect(ctx context.Context) bool {
	now := s.now()
	if now.Before(s.nextAttempt) {
		return false
	}
	var msgs []string
	for _, b := range s.candidates {
		err := b.Connect(ctx)
		if err == nil {
			s.active = b
			s.backoff = s.cfg.Reconnect.InitialInterval
			s.logger.Info("Connected to GPU backend", zap.String("backend", b.Name()))
			if s.cfg.PerProcess.Enabled && b.Name() == BackendDCGM {
				s.logger.Warn("per_process is enabled but the dcgm backend does not read per-process data; " +
					"no per-process series (backend: nvml reads them)")
			}
			s.reportOK()
			return true
		}
		msgs = append(msgs, fmt.Sprintf("%s backend: %v", b.Name(), err))
	}
	// One line, so that log pipelines keep it whole.
	err := errors.New(strings.Join(msgs, "; "))
	s.nextAttempt = now.Add(s.backoff)
	s.reportError(err, s.backoff)
	s.backoff = min(2*s.backoff, s.cfg.Reconnect.MaxInterval)
	return false
}

func (s *gpuScraper) scrape(ctx context.Context) (pmetric.Metrics, error) {
	if s.active == nil && !s.connect(ctx) {
		// Nothing to report: no value is better than a stale one.
		return pmetric.NewMetrics(), nil
	}
	now := s.now()
	samples, err := s.active.Collect(ctx, now, s.cfg.CollectionInterval)
	if err != nil {
		name := s.active.Name()
		_ = s.active.Close()
		s.active = nil
		s.nextAttempt = now.Add(s.backoff)
		s.reportError(fmt.Errorf("%s backend lost: %w", name, err), s.backoff)
		s.backoff = min(2*s.backoff, s.cfg.Reconnect.MaxInterval)
		return pmetric.NewMetrics(), nil
	}
	s.reportOK()
	if s.pods != nil {
		s.pods.Refresh(ctx, now)
	}
	if s.slurm != nil {
		s.slurm.refresh()
	}
	return s.Map(samples), nil
}

// Map attributes the samples of one collection to their pods and maps
// them; trace replay calls it through offline.Receiver.
func (s *gpuScraper) Map(samples []gpu.Sample) pmetric.Metrics {
	for i := range samples {
		smp := &samples[i]
		if len(smp.Processes) > 0 {
			s.nameProcesses(smp)
		}
		if s.pods != nil {
			if p, ok := s.lookupPod(smp.Device); ok {
				d := *smp.Device
				p.Job = d.Pod.Job // the kubelet does not know the job
				d.Pod = p
				smp.Device = &d
			}
		}
		if s.slurm != nil {
			s.slurm.attribute(smp)
		}
		s.mapper.Append(smp)
	}
	return s.mapper.Emit()
}

// lookupPod returns the container a device is allocated to. NVIDIA's
// device plugin names devices by UUID; AMD's names a GPU, and each
// partition, by its PCI address, which the kubelet reports as given.
func (s *gpuScraper) lookupPod(d *gpu.Device) (gpu.Pod, bool) {
	if d.IsAMD() && d.PCIBusID != "" {
		if p, ok := s.pods.Lookup(strings.ToLower(d.PCIBusID)); ok {
			return p, true
		}
	}
	return s.pods.Lookup(d.UUID)
}

// nameProcesses names the pods of a sample's processes that the backend
// placed by pod UID and container ID only (NVML), through the kubelet's
// container log directory. A pod it cannot name keeps its UID, which the
// k8s_attributes processor can associate by.
func (s *gpuScraper) nameProcesses(smp *gpu.Sample) {
	unnamed := 0
	for j := range smp.Processes {
		p := &smp.Processes[j]
		if p.Owner != gpu.OwnerPod || p.Pod.Name != "" {
			continue
		}
		if s.containers != nil && p.ContainerID != "" {
			if pod, ok := s.containers.Lookup(p.ContainerID, smp.Time); ok {
				p.Pod = pod
				continue
			}
		}
		unnamed++
	}
	if unnamed > 0 && !s.unnamedWarned {
		s.unnamedWarned = true
		s.logger.Info("Some GPU processes' pods are named by k8s.pod.uid only: their containers are not in the container log directory (per_process::container_logs_dir)",
			zap.String("container_logs_dir", s.cfg.PerProcess.ContainerLogsDir), zap.String("hw.id", smp.Device.UUID))
	}
}

func (s *gpuScraper) reportError(err error, retry time.Duration) {
	msg := err.Error()
	if msg != s.lastErr || s.healthy {
		s.logger.Warn("GPU backend unavailable; retrying with back-off",
			zap.Error(err), zap.Duration("next_attempt_in", retry))
	} else {
		s.logger.Debug("GPU backend still unavailable", zap.Error(err), zap.Duration("next_attempt_in", retry))
	}
	s.lastErr, s.healthy = msg, false
	if s.host != nil {
		componentstatus.ReportStatus(s.host, componentstatus.NewRecoverableErrorEvent(err))
	}
}

func (s *gpuScraper) reportOK() {
	if s.healthy {
		return
	}
	s.healthy, s.lastErr = true, ""
	if s.host != nil {
		componentstatus.ReportStatus(s.host, componentstatus.NewEvent(componentstatus.StatusOK))
	}
}
