package gpunodereceiver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.uber.org/zap"

	"github.com/otelcol-gpu/otelcol-gpu/internal/netdev"
	"github.com/otelcol-gpu/otelcol-gpu/receiver/gpunodereceiver/internal/metadata"
)

// networkSource emits one resource per NIC port: Ethernet netdevs,
// InfiniBand/RoCE and EFA ports, each with the GPUs of its rail.
type networkSource struct {
	sysRoot string
	host    string
	logger  *zap.Logger
	once    *onceLog
	scanner *netdev.Scanner
	ethtool *netdev.Ethtool // nil where the ioctl is unavailable or off

	// rails are found again when the ports change or every railsEvery:
	// the PCIe topology does not change while a node runs, but a NIC or a
	// GPU can be hot-added or its driver rebound.
	rails     map[string]netdev.Rail
	railKey   string
	railsAt   time.Time
	gpuBusIDs []string
}

// railsEvery is how often the rails are found again with the same ports.
const railsEvery = 10 * time.Minute

func newNetworkSource(env sourceEnv) (source, error) {
	nc := &env.cfg.Network
	if !nc.Enabled {
		return nil, nil //nolint:nilnil // disabled: no source, no error
	}
	// KnownOnly: the counters netdev does not classify are not emitted,
	// so they are not read either.
	opts := netdev.Options{PhysicalOnly: !nc.IncludeVirtual, KnownOnly: true, Netdev: func(name string) bool { return name != "lo" }}
	s := &networkSource{sysRoot: hostPath(env.cfg, "/sys"), host: env.host, logger: env.logger, once: newOnceLog(env.logger)}
	s.scanner = netdev.NewScanner(s.sysRoot, opts)
	if nc.Ethtool {
		// The ioctl reads the collector's own network namespace: right
		// for an agent with hostNetwork, whatever root_path says.
		e, err := netdev.OpenEthtool()
		if err != nil {
			env.logger.Info("ethtool statistics not read", zap.Error(err))
		} else {
			s.ethtool = e
		}
	}
	return s, nil
}

func (s *networkSource) scrape(now pcommon.Timestamp, mb *metadata.MetricsBuilder) error {
	ports, err := s.scanner.Scan()
	if err != nil {
		s.once.warn("scan", "some NIC ports were not read", err)
	} else {
		s.once.seen("scan")
	}
	if len(ports) == 0 && err != nil {
		return fmt.Errorf("network: %w", err)
	}
	s.findRails(ports)
	rb := mb.NewResourceBuilder()
	for i := range ports {
		p := &ports[i]
		if s.ethtool != nil && p.Kind == netdev.KindNetdev && p.Physical {
			if stats, err := s.ethtool.Stats(p.Device); err == nil {
				p.AddEthtool(stats)
			}
		}
		emitPort(now, mb, rb, s.host, p, s.rails[p.ID])
	}
	s.once.endRound()
	return nil
}

func (s *networkSource) close() { s.scanner.Close() }

// emitPort records one port and emits its resource, with the GPUs of its
// rail where it has any.
func emitPort(now pcommon.Timestamp, mb *metadata.MetricsBuilder, rb *metadata.ResourceBuilder, host string, p *netdev.Port, r netdev.Rail) {
	recordPort(now, mb, p)
	rb.SetHostName(host)
	rb.SetHwID(p.ID)
	rb.SetHwName(p.ID)
	rb.SetHwType("network")
	setIf(rb.SetHwModel, p.Model)
	setIf(rb.SetHwVendor, p.Vendor)
	setIf(rb.SetNetworkInterfaceName, p.Netdev)
	setIf(rb.SetOtelgpuNetworkLinkLayer, p.LinkLayer)
	if len(r.GPUs) > 0 {
		gpus := make([]any, len(r.GPUs))
		for j, g := range r.GPUs {
			gpus[j] = g
		}
		rb.SetOtelgpuNetworkRailGpus(gpus)
		// A rail a trace states has no "by": it was not found here.
		setIf(rb.SetOtelgpuNetworkRailBy, r.By)
	}
	mb.EmitForResource(metadata.WithResource(rb.Emit()))
}

// recordPort records one port's figures; what the kernel did not report
// is not recorded (no zeros for unknowns).
func recordPort(now pcommon.Timestamp, mb *metadata.MetricsBuilder, p *netdev.Port) {
	if p.HasBytes && !p.DataSaturated {
		mb.RecordHwNetworkIoDataPoint(now, clampInt(p.RxBytes), metadata.AttributeNetworkIoDirectionReceive)
		mb.RecordHwNetworkIoDataPoint(now, clampInt(p.TxBytes), metadata.AttributeNetworkIoDirectionTransmit)
	}
	if p.HasPackets {
		mb.RecordHwNetworkPacketsDataPoint(now, clampInt(p.RxPackets), metadata.AttributeNetworkIoDirectionReceive)
		mb.RecordHwNetworkPacketsDataPoint(now, clampInt(p.TxPackets), metadata.AttributeNetworkIoDirectionTransmit)
	}
	for _, c := range p.Errors {
		mb.RecordHwErrorsDataPoint(now, clampInt(c.Value), c.Name)
	}
	if p.RateBytesPerSec > 0 {
		mb.RecordHwNetworkBandwidthLimitDataPoint(now, int64(p.RateBytesPerSec))
	}
	if p.HasUp {
		var up int64
		if p.Up {
			up = 1
		}
		mb.RecordHwNetworkUpDataPoint(now, up)
	}
	if p.HasXmitWait {
		mb.RecordOtelgpuNetworkXmitWaitDataPoint(now, clampInt(p.XmitWait))
	}
	if p.HasRetransmits {
		mb.RecordOtelgpuNetworkRetransmitsDataPoint(now, clampInt(p.Retransmits))
	}
	for _, c := range p.Allowance {
		if a, ok := metadata.MapAttributeOtelgpuNetworkAllowance[c.Name]; ok {
			mb.RecordOtelgpuNetworkAllowanceExceededDataPoint(now, clampInt(c.Value), a)
		}
	}
}

// findRails ties each port to the GPUs it serves, when the ports changed
// or railsEvery passed.
func (s *networkSource) findRails(ports []netdev.Port) {
	var b strings.Builder
	for i := range ports {
		b.WriteString(ports[i].ID)
		b.WriteByte(0)
		b.WriteString(ports[i].PCI)
		b.WriteByte(0)
	}
	if key := b.String(); key != s.railKey || time.Since(s.railsAt) > railsEvery {
		s.gpuBusIDs = gpuBusIDs(s.sysRoot, s.gpuBusIDs[:0])
		s.rails = netdev.Rails(s.sysRoot, s.gpuBusIDs, ports)
		s.railKey, s.railsAt = key, time.Now()
	}
}

// gpuBusIDs lists the node's GPUs by PCI address: NVIDIA's and AMD's
// display controllers (PCI class 03) and AMD's processing accelerators
// (class 12), from sysfs, so that the receiver finds the rails without
// any GPU library. NVSwitches (class 06, bridges) are not GPUs.
func gpuBusIDs(sysRoot string, dst []string) []string {
	dir := filepath.Join(sysRoot, "bus", "pci", "devices")
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dst
	}
	for _, e := range entries {
		vendor := readTrim(filepath.Join(dir, e.Name(), "vendor"))
		if vendor != "0x10de" && vendor != "0x1002" {
			continue
		}
		class := readTrim(filepath.Join(dir, e.Name(), "class"))
		if strings.HasPrefix(class, "0x03") || strings.HasPrefix(class, "0x12") {
			dst = append(dst, strings.ToLower(e.Name()))
		}
	}
	return dst
}

func readTrim(name string) string {
	b, err := os.ReadFile(name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func clampInt(v uint64) int64 { return int64(min(v, 1<<63-1)) }

func setIf(set func(string), v string) {
	if v != "" {
		set(v)
	}
}
