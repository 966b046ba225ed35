package replay

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmfield"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kmsg"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// KernelLog says how a kernel log's XID events become the receiver's
// telemetry.
type KernelLog struct {
	// Parse holds what the log leaves out: the year of journald's short
	// format, the zone of the forms without one, the boot time.
	Parse kmsg.Options
	// Host, if set, is every event's node; otherwise a line's journald
	// host field, and for a line without one DefaultHost.
	Host, DefaultHost string
	// GPUs maps a PCI bus id ("0000:3b:00") to the GPU's UUID. A GPU not
	// in it is named "PCI:0000:3b:00": the log carries no UUID.
	GPUs map[string]string
}

// RunKernelLog replays the XID events of a kernel log read from in (named
// name in errors) as Run replays a trace: each XID line becomes one
// sample of its GPU at the line's time, the receiver's XID counter for
// that code rising by one, so a burst of lines milliseconds apart stays as
// many events milliseconds apart. An XID 154 also sets the GPU's
// nvidia.gpu.recovery_action gauge to the new action. The events before a
// malformed line are replayed, then its error returned.
func RunKernelLog(ctx context.Context, cfg component.Config, opts Options, k KernelLog, in io.Reader, name string, out io.Writer) error {
	evs, parseErr := kmsg.Parse(in, k.Parse)
	if parseErr != nil {
		parseErr = fmt.Errorf("%s: %w", name, parseErr)
	}
	src := &kernelSource{k: k, events: evs, name: name}
	if err := run(ctx, cfg, opts, src, name, out); err != nil {
		return err
	}
	return parseErr
}

// kernelSource gives one batch per XID event.
type kernelSource struct {
	k      KernelLog
	name   string
	events []kmsg.Event
	next   int
	last   time.Time
}

func (s *kernelSource) NextBatch() ([]trace.Row, error) {
	if s.next >= len(s.events) {
		return nil, io.EOF
	}
	e := &s.events[s.next]
	s.next++
	if e.Time.Before(s.last) {
		// A replay runs forward; a log whose clock stepped back (a
		// reboot in a dmesg --ctime file, a pasted file) is out of order.
		return nil, fmt.Errorf("%s: kmsg: line %d: %s is earlier than the XID line before it (%s); the replay needs the lines in time order",
			s.name, e.Line, e.Time.UTC().Format(time.RFC3339Nano), s.last.UTC().Format(time.RFC3339Nano))
	}
	s.last = e.Time
	host := s.k.Host
	if host == "" {
		host = e.Host
	}
	if host == "" {
		host = s.k.DefaultHost
	}
	uuid := s.k.GPUs[e.BusID]
	if uuid == "" {
		uuid = "PCI:" + e.BusID
	}
	r := trace.Row{
		Line: e.Line, UUID: uuid, Host: host,
		Time:     float64(e.Time.UnixMicro()) / 1e6,
		TimeText: e.Time.UTC().Format(time.RFC3339Nano),
	}
	r.Values.Set(dcgmfield.XIDErrors, float64(e.XID))
	return []trace.Row{r}, nil
}

// addResource adds the recovery action an XID 154 reports, at the event's
// time, to its GPU's resource. The event itself travels as every XID does,
// in the receiver's counter with code 154.
func (s *kernelSource) addResource(rm pmetric.ResourceMetrics, r *trace.Row) {
	e := &s.events[s.next-1]
	if e.Recovery == nil {
		return
	}
	sm := rm.ScopeMetrics().AppendEmpty()
	sm.Scope().SetName("gpureplay")
	m := sm.Metrics().AppendEmpty()
	m.SetName(metricnames.NvidiaGPURecoveryAction)
	m.SetUnit(metricnames.NvidiaGPURecoveryActionUnit)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Unix(0, int64(math.Round(r.Time*1e6))*1000)))
	dp.SetIntValue(int64(e.Recovery.To.Code))
}

// ReadGPUs reads a map from PCI bus id to UUID as
// `nvidia-smi --query-gpu=pci.bus_id,uuid --format=csv,noheader` prints it:
//
//	00000000:3B:00.0, GPU-5f6a1c9e-...
//
// A header line ("pci.bus_id, uuid") and blank lines are skipped.
func ReadGPUs(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := csv.NewReader(f)
	c.TrimLeadingSpace = true
	c.FieldsPerRecord = 2
	m := map[string]string{}
	for {
		rec, err := c.Read()
		if errors.Is(err, io.EOF) {
			return m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := c.FieldPos(0)
		if strings.EqualFold(rec[0], "pci.bus_id") {
			continue
		}
		bus, err := kmsg.ParseBusID(strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		uuid := strings.TrimSpace(rec[1])
		if uuid == "" {
			return nil, fmt.Errorf("%s:%d: no UUID for %s", path, line, rec[0])
		}
		if prev, dup := m[bus]; dup {
			return nil, fmt.Errorf("%s:%d: %s named twice (%s, %s)", path, line, rec[0], prev, uuid)
		}
		m[bus] = uuid
	}
}

// ParseBoot reads -boot: RFC 3339, or Unix seconds as `date +%s -d "$(uptime -s)"` prints.
func ParseBoot(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if sec, err := strconv.ParseFloat(s, 64); err == nil && sec >= 0 && sec < 1e11 {
		return time.Unix(0, int64(math.Round(sec*1e6))*1000), nil
	}
	return time.Time{}, fmt.Errorf("-boot %q: want RFC 3339 (2025-11-24T08:00:00Z) or Unix seconds", s)
}
