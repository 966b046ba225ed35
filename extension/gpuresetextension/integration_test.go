package gpuresetextension

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/otelcol-gpu/otelcol-gpu/extension/gpuresetextension/internal/metadatatest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/dcgmstandin"
	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nvmlmock"
)

var (
	apiServer    *kubetest.Server
	apiServerErr error
)

// runWithAPIServer starts one kube-apiserver with etcd for the package's
// tests, stops it after, checks that no goroutine leaked, and exits.
func runWithAPIServer(m *testing.M) {
	if kubetest.Fuzzing() {
		apiServerErr = errors.New("no kube-apiserver while fuzzing")
		os.Exit(m.Run())
	}
	apiBin, etcdBin, err := kubetest.Binaries("../..")
	if err == nil {
		apiServer, err = kubetest.Start(apiBin, etcdBin)
	}
	apiServerErr = err
	code := m.Run()
	if apiServer != nil {
		apiServer.Stop()
	}
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1")); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

func server(t *testing.T) *kubetest.Server {
	t.Helper()
	return kubetest.Require(t, apiServer, apiServerErr)
}

// statusHost keeps every status the component reported.
type statusHost struct {
	mu     sync.Mutex
	events []*componentstatus.Event
}

func (h *statusHost) GetExtensions() map[component.ID]component.Component { return nil }

func (h *statusHost) Report(ev *componentstatus.Event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, ev)
}

func (h *statusHost) statuses() []componentstatus.Status {
	h.mu.Lock()
	defer h.mu.Unlock()
	var s []componentstatus.Status
	for _, ev := range h.events {
		s = append(s, ev.Status())
	}
	return s
}

var seq atomic.Int32

// fixture is one test's node, GPUs (the NVML mock), stand-in reset
// command and actor.
type fixture struct {
	t    *testing.T
	cs   kubernetes.Interface
	node string
	srv  *dgxa100.Server
	log  string // what the stand-in command reset, one UUID a line
	tel  *componenttest.Telemetry
	host *statusHost
}

func newFixture(t *testing.T) *fixture {
	s := server(t)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	name := fmt.Sprintf("gpu-%d-%d", time.Now().UnixNano()%1e6, seq.Add(1))
	_, err := cs.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	require.NoError(t, err)
	return &fixture{t: t, cs: cs, node: name, srv: nvmlmock.New(), log: filepath.Join(t.TempDir(), "reset.log")}
}

func (f *fixture) uuid(i int) string { return f.dev(i).UUID }

func (f *fixture) dev(i int) *dgxa100.Device { return f.srv.Devices[i].(*dgxa100.Device) }

// config runs the stand-in reset command, which exits with code after
// sleeping sleep seconds.
func (f *fixture) config(code, sleep int) *Config {
	cfg := createDefaultConfig()
	cfg.Node = f.node
	cfg.Auth = AuthConfig{Type: "kubeconfig", Kubeconfig: "unused: the tests hand the actor its client"}
	cfg.Reset.Command = []string{"/bin/sh", "testdata/fakereset.sh", f.log, strconv.Itoa(code), strconv.Itoa(sleep), placeholder}
	cfg.Reset.Timeout = 20 * time.Second
	cfg.PollInterval = time.Second
	cfg.APITimeout = 5 * time.Second
	return cfg
}

// start starts an actor as the admin (rc nil) or as rc.
func (f *fixture) start(cfg *Config, rc *rest.Config) *actor {
	f.t.Helper()
	if rc == nil {
		rc = server(f.t).Config(kubetest.AdminToken)
	}
	return f.startWith(cfg, func() (kubernetes.Interface, error) { return kubernetes.NewForConfig(rc) })
}

// startWith starts an actor whose API client newAPI makes.
func (f *fixture) startWith(cfg *Config, newAPI func() (kubernetes.Interface, error)) *actor {
	f.t.Helper()
	require.NoError(f.t, cfg.Validate())
	tel := componenttest.NewTelemetry()
	f.t.Cleanup(func() { require.NoError(f.t, tel.Shutdown(context.Background())) })
	f.tel = tel
	a, err := newActor(cfg, metadatatest.NewSettings(f.tel))
	require.NoError(f.t, err)
	a.nvml = f.srv
	a.retryBase, a.attempts = 10*time.Millisecond, 3
	a.newAPI = newAPI
	f.host = &statusHost{}
	require.NoError(f.t, a.Start(context.Background(), f.host))
	f.t.Cleanup(func() { require.NoError(f.t, a.Shutdown(context.Background())) })
	return a
}

// request sets the reset request, as the connector does.
func (f *fixture) request(uuids, incident string) {
	f.t.Helper()
	f.annotate(map[string]*string{nodeagent.ResetRequest: &uuids, nodeagent.ResetIncident: &incident})
}

func (f *fixture) annotate(ann map[string]*string) {
	f.t.Helper()
	body, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": ann}})
	require.NoError(f.t, err)
	_, err = f.cs.CoreV1().Nodes().Patch(context.Background(), f.node, types.MergePatchType, body, metav1.PatchOptions{})
	require.NoError(f.t, err)
}

func (f *fixture) annotations() map[string]string {
	f.t.Helper()
	n, err := f.cs.CoreV1().Nodes().Get(context.Background(), f.node, metav1.GetOptions{})
	require.NoError(f.t, err)
	return n.Annotations
}

// answer waits for the answer to incident: the result written and the
// request gone.
func (f *fixture) answer(incident string) nodeagent.Result {
	f.t.Helper()
	var res nodeagent.Result
	require.Eventually(f.t, func() bool {
		ann := f.annotations()
		if _, ok := ann[nodeagent.ResetRequest]; ok {
			return false
		}
		r, err := nodeagent.ParseResult(ann[nodeagent.ResetResult])
		if err != nil || r.Incident != incident {
			return false
		}
		_, incidentLeft := ann[nodeagent.ResetIncident]
		require.False(f.t, incidentLeft, "the incident is removed with the request")
		res = r
		return true
	}, 20*time.Second, 20*time.Millisecond, "no answer to incident %s", incident)
	return res
}

// resets lists the GPUs the stand-in command was run for, in order.
func (f *fixture) resets() []string {
	raw, err := os.ReadFile(f.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(f.t, err)
	return strings.Fields(string(raw))
}

func (f *fixture) attempts(want map[string]int64) {
	f.t.Helper()
	var dps []metricdata.DataPoint[int64]
	for outcome, n := range want {
		dps = append(dps, metricdata.DataPoint[int64]{Attributes: attribute.NewSet(attribute.String("outcome", outcome)), Value: n})
	}
	metadatatest.AssertEqualExtensionGpuResetAttempts(f.t, f.tel, dps, metricdatatest.IgnoreTimestamp())
}

// watchNode records the reset annotations of every version of the node
// from now on, until the returned function is called.
func (f *fixture) watchNode() func() []map[string]string {
	f.t.Helper()
	w, err := f.cs.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", f.node).String(), ResourceVersion: "0",
	})
	require.NoError(f.t, err)
	var (
		mu       sync.Mutex
		versions []map[string]string
		done     = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			n, ok := ev.Object.(*corev1.Node)
			if !ok || ev.Type == watch.Error {
				continue
			}
			v := map[string]string{}
			for _, k := range []string{nodeagent.ResetRequest, nodeagent.ResetIncident, nodeagent.ResetResult} {
				if s, ok := n.Annotations[k]; ok {
					v[k] = s
				}
			}
			mu.Lock()
			versions = append(versions, v)
			mu.Unlock()
		}
	}()
	return func() []map[string]string {
		w.Stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return versions
	}
}

// TestResetOK: a request for two idle GPUs is answered ok, each GPU
// reset once by the command, in order, and the result written and the
// request removed in one write: no version of the node has both, or
// neither.
func TestResetOK(t *testing.T) {
	f := newFixture(t)
	stop := f.watchNode()
	f.start(f.config(0, 0), nil)
	f.request(f.uuid(0)+","+f.uuid(1), "inc-1")
	res := f.answer("inc-1")
	require.Equal(t, nodeagent.ResetOK, res.Outcome)
	require.Equal(t, []string{f.uuid(0), f.uuid(1)}, res.UUIDs)
	require.Empty(t, res.Diag, "no diagnostic with backend nvml")
	require.Contains(t, res.Detail, "reset and visible again")
	require.WithinDuration(t, time.Now(), res.Time, time.Minute)
	require.Equal(t, []string{f.uuid(0), f.uuid(1)}, f.resets())

	versions := stop()
	sawRequest := false
	for i, v := range versions {
		_, req := v[nodeagent.ResetRequest]
		_, inc := v[nodeagent.ResetIncident]
		_, result := v[nodeagent.ResetResult]
		require.Equal(t, req, inc, "version %d: the request and its incident go together: %v", i, v)
		require.False(t, req && result, "version %d has the request and its answer: %v", i, v)
		if req {
			sawRequest = true
		} else if sawRequest {
			require.True(t, result, "version %d: the request went without its answer: %v", i, v)
		}
	}
	require.True(t, sawRequest)
	f.attempts(map[string]int64{"ok": 1})
	require.Contains(t, f.host.statuses(), componentstatus.StatusOK)
	require.NotContains(t, f.host.statuses(), componentstatus.StatusRecoverableError)
}

// TestBusyGPUIsImpossible: a GPU that still runs processes is not reset:
// the answer is impossible with the PIDs, and the command never runs, not
// even for the idle GPU of the same request.
func TestBusyGPUIsImpossible(t *testing.T) {
	f := newFixture(t)
	f.dev(1).GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) {
		return []nvml.ProcessInfo{{Pid: 4242}, {Pid: 4243}}, nvml.SUCCESS
	}
	f.start(f.config(0, 0), nil)
	f.request(f.uuid(0)+","+f.uuid(1), "inc-busy")
	res := f.answer("inc-busy")
	require.Equal(t, nodeagent.ResetImpossible, res.Outcome)
	require.Equal(t, f.uuid(1)+" is not idle: compute PIDs 4242 4243", res.Detail)
	require.Empty(t, f.resets(), "the command never ran")
	f.attempts(map[string]int64{"impossible": 1})
}

// TestMIGIsImpossible: a GPU in MIG mode with GPU instances is not reset
// (nvidia-smi refuses until they are destroyed).
func TestMIGIsImpossible(t *testing.T) {
	f := newFixture(t)
	_, ret := f.dev(2).SetMigMode(nvml.DEVICE_MIG_ENABLE)
	require.Equal(t, nvml.SUCCESS, ret)
	info, ret := f.dev(2).GetGpuInstanceProfileInfo(nvml.GPU_INSTANCE_PROFILE_3_SLICE)
	require.Equal(t, nvml.SUCCESS, ret)
	_, ret = f.dev(2).CreateGpuInstance(&info)
	require.Equal(t, nvml.SUCCESS, ret)
	f.start(f.config(0, 0), nil)
	f.request(f.uuid(2), "inc-mig")
	res := f.answer("inc-mig")
	require.Equal(t, nodeagent.ResetImpossible, res.Outcome)
	require.Equal(t, f.uuid(2)+" is in MIG mode with 1 GPU instances: they must be destroyed before a reset, a reconfiguration this actor does not do", res.Detail)
	require.Empty(t, f.resets())
}

// TestCommandFails: the command's failure is the answer, with its stderr.
func TestCommandFails(t *testing.T) {
	f := newFixture(t)
	f.start(f.config(3, 0), nil)
	f.request(f.uuid(0), "inc-fail")
	res := f.answer("inc-fail")
	require.Equal(t, nodeagent.ResetFailed, res.Outcome)
	require.Contains(t, res.Detail, "reset of "+f.uuid(0)+" failed: ")
	require.Contains(t, res.Detail, "exit status 3")
	require.Contains(t, res.Detail, "GPU "+f.uuid(0)+": In use by another client", "the command's stderr")
	require.Equal(t, []string{f.uuid(0)}, f.resets())
	f.attempts(map[string]int64{"failed": 1})
}

// TestCommandTimesOut: a command that outlives reset::timeout is killed,
// and the reset has failed.
func TestCommandTimesOut(t *testing.T) {
	f := newFixture(t)
	cfg := f.config(0, 30)
	cfg.Reset.Timeout = 500 * time.Millisecond
	f.start(cfg, nil)
	f.request(f.uuid(0), "inc-slow")
	start := time.Now()
	res := f.answer("inc-slow")
	require.Less(t, time.Since(start), 5*time.Second, "the command's children die with it")
	require.Equal(t, nodeagent.ResetFailed, res.Outcome)
	require.Contains(t, res.Detail, "killed after reset::timeout 500ms")
}

// TestGPUNotBack: a GPU that NVML no longer finds by its UUID after the
// reset (it fell off the bus) fails the reset.
func TestGPUNotBack(t *testing.T) {
	f := newFixture(t)
	find := f.srv.DeviceGetHandleByUUIDFunc
	f.srv.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		for _, r := range f.resets() {
			if r == uuid {
				return nil, nvml.ERROR_GPU_IS_LOST
			}
		}
		return find(uuid)
	}
	f.start(f.config(0, 0), nil)
	f.request(f.uuid(5), "inc-lost")
	res := f.answer("inc-lost")
	require.Equal(t, nodeagent.ResetFailed, res.Outcome)
	require.Equal(t, f.uuid(5)+" did not come back with its UUID after the reset (NVML: "+nvml.ErrorString(nvml.ERROR_GPU_IS_LOST)+")", res.Detail)
	require.Equal(t, []string{f.uuid(5)}, f.resets(), "reset once: the check is retried, not the reset")
}

// TestBadRequestsAreImpossible: a request naming nothing, or naming
// something that is not a GPU of this node, is answered impossible, with
// the reason, and nothing is run.
func TestBadRequestsAreImpossible(t *testing.T) {
	f := newFixture(t)
	f.start(f.config(0, 0), nil)
	unknown := "GPU-00000000-0000-4000-8000-000000000000"
	for i, c := range []struct{ request, detail string }{
		{"", "annotation " + nodeagent.ResetRequest + " names no GPU: nothing to reset"},
		{" , ", "annotation " + nodeagent.ResetRequest + " names no GPU: nothing to reset"},
		{unknown, unknown + " is not a GPU of this node (NVML: " + nvml.ErrorString(nvml.ERROR_INVALID_ARGUMENT) + ")"},
		{"GPU-1234", `"GPU-1234" is not a GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`},
		{"--help", `"--help" is not a GPU UUID (GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)`},
		{"MIG-5ca1ab1e-0000-4000-9000-000000000000", "MIG-5ca1ab1e-0000-4000-9000-000000000000 is a MIG device: it cannot be reset on its own; the request must name its GPU"},
	} {
		incident := fmt.Sprintf("inc-bad-%d", i)
		f.request(c.request, incident)
		res := f.answer(incident)
		require.Equal(t, nodeagent.ResetImpossible, res.Outcome, "request %q", c.request)
		require.Equal(t, c.detail, res.Detail, "request %q", c.request)
	}
	require.Empty(t, f.resets())
	f.attempts(map[string]int64{"impossible": 6})
}

// TestRestartIsIdempotent: after a restart, a request whose incident the
// result already answers is removed without acting; a new incident is
// acted on.
func TestRestartIsIdempotent(t *testing.T) {
	f := newFixture(t)
	first := f.start(f.config(0, 0), nil)
	f.request(f.uuid(0), "inc-1")
	res := f.answer("inc-1")
	require.Equal(t, nodeagent.ResetOK, res.Outcome)
	require.NoError(t, first.Shutdown(context.Background()))

	// The same request again, as when the actor stopped after its reset
	// but before it saw its own answer, or the connector repeated itself.
	f.request(f.uuid(0), "inc-1")
	f.start(f.config(0, 0), nil)
	again := f.answer("inc-1")
	require.Equal(t, res, again, "the answer stays as it was")
	require.Equal(t, []string{f.uuid(0)}, f.resets(), "not reset twice")
	_, err := f.tel.GetMetric("otelcol_extension_gpu_reset_attempts")
	require.Error(t, err, "the second actor counted no reset")

	f.request(f.uuid(0), "inc-2")
	require.Equal(t, nodeagent.ResetOK, f.answer("inc-2").Outcome)
	require.Equal(t, []string{f.uuid(0), f.uuid(0)}, f.resets(), "a new incident is acted on")
}

// TestRequestChangedWhileResetting: the connector adds a GPU to the
// request while the first is being reset. The answer for the old request
// is not written (its write is refused: the node changed); the new
// request is handled and answered.
func TestRequestChangedWhileResetting(t *testing.T) {
	f := newFixture(t)
	stop := f.watchNode()
	f.start(f.config(0, 1), nil)
	f.request(f.uuid(0), "inc-1")
	require.Eventually(t, func() bool { return len(f.resets()) == 1 }, 10*time.Second, 10*time.Millisecond, "the reset starts")
	f.request(f.uuid(0)+","+f.uuid(1), "inc-1")
	res := f.answer("inc-1")
	require.Equal(t, nodeagent.ResetOK, res.Outcome)
	require.Equal(t, []string{f.uuid(0), f.uuid(1)}, res.UUIDs)
	require.Equal(t, []string{f.uuid(0), f.uuid(0), f.uuid(1)}, f.resets())
	for _, v := range stop() {
		if s, ok := v[nodeagent.ResetResult]; ok {
			r, err := nodeagent.ParseResult(s)
			require.NoError(t, err)
			require.Len(t, r.UUIDs, 2, "no answer for the old request was written: %v", v)
		}
	}
}

// TestAPIFailureIsRecoverable: while the API client cannot be built the
// component reports a recoverable error and retries; once it can, the
// request is answered and the status is OK again.
func TestAPIFailureIsRecoverable(t *testing.T) {
	f := newFixture(t)
	f.request(f.uuid(0), "inc-api")
	rc := server(t).Config(kubetest.AdminToken)
	var calls atomic.Int32
	f.startWith(f.config(0, 0), func() (kubernetes.Interface, error) {
		if calls.Add(1) <= 2 {
			return nil, errors.New("in-cluster Kubernetes config: unable to load in-cluster configuration")
		}
		return kubernetes.NewForConfig(rc)
	})
	res := f.answer("inc-api")
	require.Equal(t, nodeagent.ResetOK, res.Outcome)
	require.Eventually(t, func() bool { return len(f.host.statuses()) == 3 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, []componentstatus.Status{componentstatus.StatusRecoverableError, componentstatus.StatusRecoverableError, componentstatus.StatusOK}, f.host.statuses())
	metadatatest.AssertEqualExtensionGpuResetErrors(t, f.tel, []metricdata.DataPoint[int64]{{Value: 2}}, metricdatatest.IgnoreTimestamp())
}

// TestAPIUnreachable: an API server that does not answer is a recoverable
// error, retried, and the collector still stops promptly.
func TestAPIUnreachable(t *testing.T) {
	f := newFixture(t)
	dead := &rest.Config{Host: "https://127.0.0.1:1", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	a := f.startWith(f.config(0, 0), func() (kubernetes.Interface, error) { return kubernetes.NewForConfig(dead) })
	require.Eventually(t, func() bool {
		s := f.host.statuses()
		return len(s) > 0 && s[len(s)-1] == componentstatus.StatusRecoverableError
	}, 10*time.Second, 10*time.Millisecond)
	start := time.Now()
	require.NoError(t, a.Shutdown(context.Background()))
	require.Less(t, time.Since(start), 5*time.Second)
}

// TestDCGMDiagnostic: with backend dcgm the reset GPUs are diagnosed, at
// level 1, through the real go-dcgm code against the stand-in DCGM. A
// pass is ok with diag pass; a GPU that fails the diagnostic fails the
// reset with diag fail and DCGM's message; a DCGM that cannot be reached
// fails it as unverified, with no diag verdict.
func TestDCGMDiagnostic(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	state, diagLog := filepath.Join(dir, "state"), filepath.Join(dir, "diag.log")
	require.NoError(t, dcgmstandin.State{GPUs: 4, Connected: true, DiagFail: []int{1}}.Write(state))
	t.Setenv("STANDIN_DCGM_STATE", state)
	t.Setenv(dcgmstandin.DiagLogEnv, diagLog)
	require.NoError(t, dcgmstandin.Load("../../receiver/dcgmreceiver/testdata/standin-dcgm/libdcgm.c", dir))
	for i := range 4 { // the same GPUs under NVML and DCGM
		f.dev(i).UUID = fmt.Sprintf("GPU-5ca1ab1e-0000-4000-8000-%012d", i)
	}
	cfg := f.config(0, 0)
	cfg.Backend = "dcgm"
	f.start(cfg, nil)

	f.request(f.uuid(0)+","+f.uuid(2), "inc-pass")
	res := f.answer("inc-pass")
	require.Equal(t, nodeagent.ResetOK, res.Outcome)
	require.Equal(t, "pass", res.Diag)
	require.Equal(t, f.uuid(0)+", "+f.uuid(2)+" reset and visible again; DCGM diagnostic level 1 passed", res.Detail)

	f.request(f.uuid(1), "inc-diag")
	res = f.answer("inc-diag")
	require.Equal(t, nodeagent.ResetFailed, res.Outcome)
	require.Equal(t, "fail", res.Diag)
	require.Equal(t, "reset, but the DCGM diagnostic (level 1) failed: "+f.uuid(1)+": software: GPU 1 had memory errors and row remappings are pending", res.Detail)

	raw, err := os.ReadFile(diagLog)
	require.NoError(t, err)
	require.Equal(t, "diag 10 0 2\ndiag 10 1\n", string(raw), "level 1 (DCGM's short run) on exactly the GPUs reset")

	require.NoError(t, dcgmstandin.State{GPUs: 4}.Write(state)) // nv-hostengine gone
	f.request(f.uuid(3), "inc-nodcgm")
	res = f.answer("inc-nodcgm")
	require.Equal(t, nodeagent.ResetFailed, res.Outcome)
	require.Empty(t, res.Diag, "no diagnostic ran")
	require.Contains(t, res.Detail, "reset, but the DCGM diagnostic could not run, so the GPUs are unverified: nv-hostengine at localhost:5555")
	require.Contains(t, f.host.statuses(), componentstatus.StatusRecoverableError)
	require.Equal(t, []string{f.uuid(0), f.uuid(2), f.uuid(1), f.uuid(3)}, f.resets())
	f.attempts(map[string]int64{"ok": 1, "failed": 2})
}
