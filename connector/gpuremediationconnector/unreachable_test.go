package gpuremediationconnector

import (
	"io"
	"net"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// statusHost keeps the last status the component reported.
type statusHost struct {
	last atomic.Pointer[componentstatus.Event]
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }
func (h *statusHost) Report(ev *componentstatus.Event)                    { h.last.Store(ev) }

// flakyProxy forwards TCP to the API server until it is cut: then every
// connection, open or new, is closed, as when the API server is unreachable.
type flakyProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	down   bool
	conns  []net.Conn
	wg     sync.WaitGroup
}

func newFlakyProxy(t *testing.T, target string) *flakyProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &flakyProxy{l: l, target: target}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { l.Close(); p.cut(); p.wg.Wait() })
	return p
}

func (p *flakyProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			c.Close()
			continue
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() { defer p.wg.Done(); _, _ = io.Copy(up, c); up.Close() }()
		go func() { defer p.wg.Done(); _, _ = io.Copy(c, up); c.Close() }()
	}
}

func (p *flakyProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *flakyProxy) restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = false
}

// With the API server unreachable nothing is written, the plan backs off
// (1 s, 2 s, 4 s: no call before its time), and once the API is back the
// whole remediation goes through.
func TestAPIUnreachableNothingHalfDoneRetriedWithBackoff(t *testing.T) {
	f := newFixture(t)
	node := f.node("n", nil)
	f.pod("p", node, nil, true)
	s := server(t)
	u, err := url.Parse(s.URL)
	require.NoError(t, err)
	proxy := newFlakyProxy(t, u.Host)
	rc := s.Config(kubetest.AdminToken)
	rc.Host = "https://" + proxy.l.Addr().String()
	f.remediator(testConfig(), rc)
	host := &statusHost{}
	f.r.host = host
	gpu := gpuID(node, 0)
	f.feed(gpuReport{node: node, gpu: gpu})
	before := f.getNode(node).ResourceVersion

	proxy.cut()
	f.step(time.Second)
	require.Empty(t, f.feed(gpuReport{node: node, gpu: gpu, xids: map[int64]int64{79: 1}}), "no decision is final without the API")
	require.Len(t, f.r.plans, 1)
	require.Equal(t, time.Second, f.r.plans[0].backoff)
	require.Equal(t, componentstatus.StatusRecoverableError, host.last.Load().Status())
	for _, wait := range []time.Duration{2 * time.Second, 4 * time.Second} {
		f.step(time.Second / 2)
		f.tick() // within the back-off: not tried
		require.Equal(t, wait/2, f.r.plans[0].backoff)
		f.step(wait / 2)
		f.tick() // tried, failed again
		require.Equal(t, wait, f.r.plans[0].backoff)
	}
	require.Equal(t, before, f.getNode(node).ResourceVersion, "nothing written while unreachable")
	require.Empty(t, f.events(node))
	require.True(t, f.podExists("p"))

	proxy.restore()
	f.step(4 * time.Second)
	require.Equal(t, []string{"xid_79:drain:policy"}, reasons(f.tick()))
	n := f.getNode(node)
	require.True(t, n.Spec.Unschedulable)
	require.True(t, hasTaint(n, gpu))
	require.False(t, f.podExists("p"))
	require.Len(t, f.r.plans, 1, "the plan waits for the reboot")
	require.Equal(t, "awaiting_reboot", f.r.plans[0].state())
	require.Equal(t, componentstatus.StatusOK, host.last.Load().Status())
}
