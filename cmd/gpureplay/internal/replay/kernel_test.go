package replay

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/cmd/gpureplay/internal/components"
	"github.com/otelcol-gpu/otelcol-gpu/internal/gpu"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kmsg"
	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
)

// evidence is what the receiver emits for one kernel log line: the XID
// counters of the line's GPU, and the recovery action if the line set one.
type evidence struct {
	at       time.Time
	gpu      string
	xids     map[int64]int64 // code → count since the counter's start
	recovery int64           // -1: none
}

// replayEvidence maps a kernel log the way RunKernelLog does, batch by
// batch, and returns what each batch carries to the processor.
func replayEvidence(t *testing.T, file string, opts kmsg.Options) []evidence {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "kmsg", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	evs, err := kmsg.Parse(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	src := &kernelSource{k: KernelLog{DefaultHost: "node"}, events: evs, name: file}
	rcv, err := components.Receiver()
	if err != nil {
		t.Fatal(err)
	}
	devices := map[string]*gpu.Device{}
	var out []evidence
	for {
		batch, err := src.NextBatch()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 1 {
			t.Fatalf("line %d: a batch of %d rows, want one per XID line", batch[0].Line, len(batch))
		}
		md := rcv.Map([]gpu.Sample{batch[0].Sample(devices)})
		rm := md.ResourceMetrics().At(0)
		src.addResource(rm, &batch[0])
		id, _ := rm.Resource().Attributes().Get(metricnames.AttrHWID)
		host, _ := rm.Resource().Attributes().Get(metricnames.AttrHostName)
		if host.Str() != "node" {
			t.Fatalf("host.name %q", host.Str())
		}
		e := evidence{gpu: id.Str(), xids: map[int64]int64{}, recovery: -1}
		forEachMetric(rm, func(m pmetric.Metric) {
			switch m.Name() {
			case metricnames.NvidiaGPUXIDErrors:
				for i := 0; i < m.Sum().DataPoints().Len(); i++ {
					dp := m.Sum().DataPoints().At(i)
					code, _ := dp.Attributes().Get(metricnames.AttrNvidiaGPUXID)
					e.xids[code.Int()] = dp.IntValue()
					e.at = dp.Timestamp().AsTime()
				}
			case metricnames.NvidiaGPURecoveryAction:
				dp := m.Gauge().DataPoints().At(0)
				e.recovery = dp.IntValue()
				if !dp.Timestamp().AsTime().Equal(e.at) {
					t.Errorf("recovery action at %s, XID at %s", dp.Timestamp().AsTime(), e.at)
				}
			}
		})
		out = append(out, e)
	}
}

func forEachMetric(rm pmetric.ResourceMetrics, fn func(pmetric.Metric)) {
	for i := 0; i < rm.ScopeMetrics().Len(); i++ {
		ms := rm.ScopeMetrics().At(i).Metrics()
		for j := 0; j < ms.Len(); j++ {
			fn(ms.At(j))
		}
	}
}

// TestKernelBurstEvidence: the 16 XID 13 lines of one fault reach the
// connector as 16 rises of the counter, each at its line's microsecond,
// and the XID 43 after them as its own counter's first event. Grouping
// them into one incident is left to the connector.
func TestKernelBurstEvidence(t *testing.T) {
	ev := replayEvidence(t, "gpud-xid13-burst.log", kmsg.Options{})
	if len(ev) != 17 {
		t.Fatalf("%d batches, want 17", len(ev))
	}
	start := time.Date(2025, 1, 21, 4, 41, 44, 283302000, time.UTC)
	for i, e := range ev[:16] {
		if e.gpu != "PCI:0000:38:00" || e.xids[13] != int64(i+1) || len(e.xids) != 1 || e.recovery != -1 {
			t.Errorf("line %d: %+v, want the XID 13 counter at %d", i+1, e, i+1)
		}
		if i > 0 && !e.at.After(ev[i-1].at) {
			t.Errorf("line %d at %s, not after the line before", i+1, e.at)
		}
	}
	if !ev[0].at.Equal(start) || ev[15].at.Sub(start) != 1845*time.Microsecond {
		t.Errorf("burst from %s to %s, want 1.845 ms from %s", ev[0].at, ev[15].at, start)
	}
	if last := ev[16]; last.xids[13] != 16 || last.xids[43] != 1 || last.at.Sub(start) != 3895*time.Microsecond {
		t.Errorf("XID 43: %+v", last)
	}
}

// TestKernelRecoveryAction: an XID 154 is an event of code 154 like any
// XID, and sets the GPU's recovery action gauge to the new action.
func TestKernelRecoveryAction(t *testing.T) {
	ev := replayEvidence(t, "gpud-gb200-xid149-154.log", kmsg.Options{Boot: time.Unix(1735689600, 0)})
	var got []string
	for _, e := range ev {
		if e.recovery >= 0 {
			got = append(got, fmt.Sprintf("%s xid154=%d action=%d", e.gpu, e.xids[154], e.recovery))
		}
	}
	want := fmt.Sprint([]string{
		"PCI:0009:01:00 xid154=1 action=4",
		"PCI:0019:01:00 xid154=1 action=1",
		"PCI:0018:01:00 xid154=1 action=1",
		"PCI:0008:01:00 xid154=1 action=1",
	})
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}
