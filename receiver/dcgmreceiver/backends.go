package dcgmreceiver

import (
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/amdsmibackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/backend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlbackend"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
)

// newBackends returns the backends to try, in order of preference.
// cursors keeps the amdsmi backend's CPER cursors; nil keeps them in
// memory.
func newBackends(cfg *Config, logger *zap.Logger, cursors amdsmibackend.Cursors) ([]backend.Backend, error) {
	dcgm := func() backend.Backend {
		addr, unix, _ := dcgmbackend.ParseEndpoint(cfg.Endpoint)
		return dcgmbackend.New(dcgmbackend.Options{
			Address: addr, UnixSocket: unix, Embedded: cfg.Embedded, Hostname: cfg.Hostname, Logger: logger,
			UpdateEvery: cfg.CollectionInterval, Fields: neededFields(cfg),
			Health: healthWanted(cfg),
		})
	}
	nvml := func() backend.Backend {
		return nvmlbackend.New(nvmlbackend.Options{
			Hostname: cfg.Hostname, Logger: logger, Health: healthWanted(cfg),
			PerProcess: cfg.PerProcess.Enabled, ProcRoot: cfg.PerProcess.ProcRoot,
		})
	}
	amdsmi := func() backend.Backend {
		return amdsmibackend.New(amdsmibackend.Options{
			Library: cfg.AMDSMI.LibraryPath, Hostname: cfg.Hostname, Logger: logger, Cursors: cursors,
			SkipPCIeThroughput: !cfg.Metrics.HwGpuIo.Enabled && !exporterNaming(cfg.Naming),
			PerProcess:         cfg.PerProcess.Enabled, ProcRoot: cfg.PerProcess.ProcRoot,
		})
	}
	switch cfg.Backend {
	case BackendDCGM:
		return []backend.Backend{dcgm()}, nil
	case BackendNVML:
		return []backend.Backend{nvml()}, nil
	case BackendAMDSMI:
		return []backend.Backend{amdsmi()}, nil
	case BackendSimulated:
		fl, err := simulated.New(cfg.Simulated)
		if err != nil {
			return nil, err
		}
		if cfg.PerProcess.Enabled {
			fl.EnableProcesses()
		}
		return []backend.Backend{fl}, nil
	default:
		// A node has NVIDIA's or AMD's GPUs: one configuration serves
		// both kinds of node of a mixed fleet.
		return []backend.Backend{dcgm(), nvml(), amdsmi()}, nil
	}
}

// healthWanted says whether a backend should check the GPUs' health: only
// for nvidia.gpu.health, which the exporter namings do not emit.
func healthWanted(cfg *Config) bool {
	return cfg.Metrics.NvidiaGpuHealth.Enabled && !exporterNaming(cfg.Naming)
}
