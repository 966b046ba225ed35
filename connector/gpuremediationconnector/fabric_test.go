package gpuremediationconnector

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/otelcol-gpu/otelcol-gpu/connector/gpuremediationconnector/internal/policy"
)

// nicReport is one NIC port's metrics in one batch, as the gpu_node
// receiver writes them (CONTRACT-36).
type nicReport struct {
	node, port, layer string
	gpus              []string
	up                int64            // hw.network.up; -1: not reported
	rate              float64          // hw.network.bandwidth.limit, By/s; 0: not reported
	errors            map[string]int64 // hw.errors by error.type, cumulative
}

const gbps = 1e9 / 8 // By/s in a Gb/s

func nicResource(n nicReport, start, ts pcommon.Timestamp) pmetric.ResourceMetrics {
	rm := pmetric.NewResourceMetrics()
	a := rm.Resource().Attributes()
	a.PutStr("host.name", n.node)
	a.PutStr("hw.id", n.port)
	a.PutStr("hw.type", "network")
	layer := n.layer
	if layer == "" {
		layer = "infiniband"
	}
	a.PutStr(attrLinkLayer, layer)
	if len(n.gpus) > 0 {
		s := a.PutEmptySlice(attrRailGPUs)
		for _, g := range n.gpus {
			s.AppendEmpty().SetStr(g)
		}
	}
	ms := rm.ScopeMetrics().AppendEmpty().Metrics()
	if n.up >= 0 {
		m := ms.AppendEmpty()
		m.SetName(metricNetUp)
		dp := m.SetEmptySum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetIntValue(n.up)
	}
	if n.rate > 0 {
		m := ms.AppendEmpty()
		m.SetName(metricNetLimit)
		dp := m.SetEmptySum().DataPoints().AppendEmpty()
		dp.SetStartTimestamp(start)
		dp.SetTimestamp(ts)
		dp.SetDoubleValue(n.rate)
	}
	if len(n.errors) > 0 {
		m := ms.AppendEmpty()
		m.SetName(metricECC)
		s := m.SetEmptySum()
		s.SetIsMonotonic(true)
		for typ, v := range n.errors {
			dp := s.DataPoints().AppendEmpty()
			dp.SetStartTimestamp(start)
			dp.SetTimestamp(ts)
			dp.SetIntValue(v)
			dp.Attributes().PutStr(attrErrorType, typ)
		}
	}
	return rm
}

// fabricShadow is a shadow remediator with fabric faults on.
func fabricShadow(t *testing.T) *remediator {
	r := shadow(t)
	r.cfg.Fabric.Enabled = true
	return r
}

// feedNIC reads the ports' batch at ts and returns the faults, as names.
func feedNIC(r *remediator, start, ts pcommon.Timestamp, ports ...nicReport) []string {
	var out []string
	for _, n := range ports {
		for _, d := range r.detect(nicResource(n, start, ts)) {
			out = append(out, d.node+"/"+d.gpu+":"+d.fault.String())
		}
	}
	for _, d := range r.speedFaults() {
		out = append(out, d.node+"/"+d.gpu+":"+d.fault.String())
	}
	return out
}

var t0 = pcommon.NewTimestampFromTime(time.Unix(1_700_000_000, 0))

func at(d time.Duration) pcommon.Timestamp { return t0 + pcommon.Timestamp(d) }

func TestFabricDisabledByDefault(t *testing.T) {
	r := shadow(t)
	require.False(t, r.cfg.Fabric.Enabled)
	require.Empty(t, feedNIC(r, t0, t0, nicReport{node: "n", port: "mlx5_0:1", up: 1}))
	require.Empty(t, feedNIC(r, t0, at(time.Minute), nicReport{node: "n", port: "mlx5_0:1", up: 0}))
	require.Empty(t, r.gpus, "a NIC's resource is never taken for a GPU")
}

// A port seen up, then down, is nic_down; a port down from the first
// sight (unused, uncabled) is not, nor when it stays down.
func TestNICDown(t *testing.T) {
	r := fabricShadow(t)
	up := nicReport{node: "n", port: "mlx5_0:1", up: 1}
	never := nicReport{node: "n", port: "mlx5_1:1", up: 0}
	require.Empty(t, feedNIC(r, t0, t0, up, never))
	up.up = 0
	require.Equal(t, []string{"n/mlx5_0:1:nic_down"}, feedNIC(r, t0, at(time.Minute), up, never))
	require.Empty(t, feedNIC(r, t0, at(2*time.Minute), up, never), "still down: no new fault")
	up.up = 1
	require.Empty(t, feedNIC(r, t0, at(3*time.Minute), up, never))
	up.up = 0
	require.Equal(t, []string{"n/mlx5_0:1:nic_down"}, feedNIC(r, t0, at(4*time.Minute), up, never), "down again")
}

// One link_downed is a link that went down once (a reseat, a switch
// reboot); flap_count of them within flap_window is a flapping port.
func TestNICFlapping(t *testing.T) {
	r := fabricShadow(t)
	p := nicReport{node: "n", port: "mlx5_0:1", up: 1, errors: map[string]int64{"link_downed": 7}}
	require.Empty(t, feedNIC(r, t0, t0, p), "history before the collector watched is no fault")
	p.errors["link_downed"] = 8
	require.Empty(t, feedNIC(r, t0, at(time.Minute), p), "a single increment")
	require.Empty(t, feedNIC(r, t0, at(2*time.Minute), p))
	p.errors["link_downed"] = 9
	require.Empty(t, feedNIC(r, t0, at(3*time.Minute), p), "two of three")
	p.errors["link_downed"] = 10
	require.Equal(t, []string{"n/mlx5_0:1:nic_flapping"}, feedNIC(r, t0, at(4*time.Minute), p))
	p.errors["link_downed"] = 11
	require.Empty(t, feedNIC(r, t0, at(5*time.Minute), p), "still flapping: one fault")
	// Increments further apart than the window never add up.
	q := nicReport{node: "n", port: "mlx5_2:1", up: 1, errors: map[string]int64{"link_downed": 0}}
	require.Empty(t, feedNIC(r, t0, t0, q))
	for i := int64(1); i <= 4; i++ {
		q.errors["link_downed"] = i
		require.Empty(t, feedNIC(r, t0, at(time.Duration(i)*6*time.Minute), q), "increment %d", i)
	}
}

// A counter first reported late carries history, not events; one that
// restarts after the port was first seen counts from zero.
func TestNICCountersHistoryAndReset(t *testing.T) {
	r := fabricShadow(t)
	p := nicReport{node: "n", port: "mlx5_0:1", up: 1}
	require.Empty(t, feedNIC(r, t0, t0, p))
	p.errors = map[string]int64{"link_downed": 40}
	require.Empty(t, feedNIC(r, t0, at(time.Minute), p), "40 link-downs from before: no flapping")
	p.errors["link_downed"] = 41
	require.Empty(t, feedNIC(r, t0, at(2*time.Minute), p))
	s := r.fab.ports["n"]["mlx5_0:1"]
	require.Len(t, s.downs, 1)
	// The driver reloaded: the counter restarts, at 2 since its new start.
	p.errors["link_downed"] = 2
	require.Equal(t, []string{"n/mlx5_0:1:nic_flapping"}, feedNIC(r, at(150*time.Second), at(3*time.Minute), p))
	require.Len(t, s.downs, 3)
}

// Link errors at 10 a minute or more, over each half of 5 minutes, are
// nic_errors; fewer, a single burst, or drops are not.
func TestNICErrors(t *testing.T) {
	feed := func(perMinute []int64, typ string) []string {
		r := fabricShadow(t)
		p := nicReport{node: "n", port: "mlx5_0:1", up: 1, errors: map[string]int64{typ: 100}}
		var faults []string
		faults = append(faults, feedNIC(r, t0, t0, p)...)
		for i, n := range perMinute {
			p.errors[typ] += n
			faults = append(faults, feedNIC(r, t0, at(time.Duration(i+1)*time.Minute), p)...)
		}
		return faults
	}
	steady := []int64{12, 12, 12, 12, 12, 12}
	require.Equal(t, []string{"n/mlx5_0:1:nic_errors"}, feed(steady, "symbol_error"))
	require.Equal(t, []string{"n/mlx5_0:1:nic_errors"}, feed(steady, "port_rcv_errors"))
	require.Empty(t, feed([]int64{8, 8, 8, 8, 8, 8, 8, 8}, "symbol_error"), "under the threshold")
	require.Empty(t, feed([]int64{5000, 0, 0, 0, 0, 0, 0, 0}, "symbol_error"), "one burst is not sustained")
	require.Empty(t, feed([]int64{12, 12, 12, 12}, "symbol_error"), "not a whole window yet")
	require.Empty(t, feed(steady, "port_xmit_discards"), "discards are congestion, not link errors")
}

// A port below the most common rate of its node's ports of its link layer
// is nic_degraded_speed; a port at its peers' rate, one of another link
// layer, or a node with no common rate, is not.
func TestNICDegradedSpeed(t *testing.T) {
	r := fabricShadow(t)
	ports := []nicReport{
		{node: "n", port: "mlx5_0:1", up: 1, rate: 400 * gbps, gpus: []string{"0000:18:00.0"}},
		{node: "n", port: "mlx5_1:1", up: 1, rate: 400 * gbps},
		{node: "n", port: "mlx5_2:1", up: 1, rate: 400 * gbps},
		{node: "n", port: "eth0", layer: "ethernet", up: 1, rate: 25 * gbps},
		{node: "n", port: "mlx5_3:1", up: 1, rate: 200 * gbps, gpus: []string{"0000:9a:00.0", "0000:9b:00.0"}},
	}
	faults := feedNIC(r, t0, t0, ports...)
	require.Equal(t, []string{"n/mlx5_3:1:nic_degraded_speed"}, faults)
	require.Empty(t, feedNIC(r, t0, at(time.Minute), ports...), "still slow: one fault")
	ports[4].rate = 400 * gbps
	require.Empty(t, feedNIC(r, t0, at(2*time.Minute), ports...))
	require.False(t, r.fab.ports["n"]["mlx5_3:1"].degraded, "back at its peers' rate")

	// Two ports at 400 and two at 200: no rate is the most common.
	r = fabricShadow(t)
	tie := []nicReport{
		{node: "m", port: "a:1", up: 1, rate: 400 * gbps}, {node: "m", port: "b:1", up: 1, rate: 400 * gbps},
		{node: "m", port: "c:1", up: 1, rate: 200 * gbps}, {node: "m", port: "d:1", up: 1, rate: 200 * gbps},
	}
	require.Empty(t, feedNIC(r, t0, t0, tie...))
}

// In shadow mode a fabric fault is decided as a GPU's: one decision per
// incident, naming the node, the port and the rail, with the taint
// fabric::action says, and nothing written.
func TestFabricShadowDecision(t *testing.T) {
	r := fabricShadow(t)
	rail := []string{"0000:18:00.0", "0000:19:00.0"}
	p := nicReport{node: "n", port: "mlx5_3:1", up: 1, gpus: rail}
	for _, ts := range []pcommon.Timestamp{t0, at(time.Minute)} {
		md := pmetric.NewMetrics()
		nicResource(p, t0, ts).MoveTo(md.ResourceMetrics().AppendEmpty())
		require.NoError(t, r.consume(context.Background(), md))
		r.tick(context.Background(), ts.AsTime())
		p.up = 0
	}
	require.Len(t, r.out, 1)
	d := r.out[0]
	require.Equal(t, "nic_down", d.Fault)
	require.Equal(t, "taint", d.Action)
	require.Equal(t, "policy", d.Reason)
	require.Equal(t, "mlx5_3:1", d.UUID)
	require.True(t, d.DryRun)
	require.Equal(t, []string{stepEvent, stepCondition, stepTaint}, r.fabricSteps())
	r.cfg.Fabric.Action = fabricCordon
	require.Equal(t, []string{stepEvent, stepCondition, stepTaint, stepCordon}, r.fabricSteps())
	r.cfg.Fabric.Action = fabricNone
	require.Empty(t, r.fabricSteps())
	require.Equal(t, "nic-mlx5_3-1", nicTaintName("mlx5_3:1"))
	require.Equal(t, "nic_degraded_speed", policy.Fault{Kind: policy.NICDegradedSpeed}.String())
}

func TestFabricSettingsValidated(t *testing.T) {
	cfg := createDefaultConfig()
	require.NoError(t, cfg.Validate())
	cfg.Fabric = FabricConfig{Action: "drain", FlapCount: 1, ErrorWindow: time.Minute}
	err := cfg.Validate()
	require.Error(t, err)
	for _, key := range []string{"fabric::action", "fabric::flap_count", "fabric::flap_window", "fabric::error_rate", "fabric::error_window", "fabric::error_types"} {
		require.ErrorContains(t, err, key)
	}
}

// Ports silent for gpu_ttl are forgotten, with their incidents.
func TestFabricStateForgotten(t *testing.T) {
	r := fabricShadow(t)
	feedNIC(r, t0, t0, nicReport{node: "n", port: "mlx5_0:1", up: 1})
	r.forget(t0.AsTime().Add(r.cfg.GPUTTL + time.Minute))
	require.Empty(t, r.fab.ports)
}
