// Package kubetest runs a real kube-apiserver with etcd for integration
// tests: both on loopback, on ports chosen at run time, with a temporary
// data directory, stopped by PID when the tests end. kube-apiserver is built
// from the module proxy by `make kube-apiserver`; etcd is Debian's
// etcd-server. No controllers run: only spec fields change.
package kubetest

import (
	"bytes"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/rest"
)

// Tokens of the users the server knows.
const (
	AdminToken   = "admin-token"   // system:masters
	LimitedToken = "limited-token" // no groups; RBAC decides
	LimitedUser  = "limited"
)

// Server is a running kube-apiserver.
type Server struct {
	URL     string
	dir     string
	procs   []proc
	logs    *syncBuffer
	objects objectClient
}

type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// syncBuffer collects both processes' output.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Binaries finds kube-apiserver (KUBE_APISERVER, or bin/kube-apiserver in
// the repository) and etcd (ETCD, or on the PATH).
func Binaries(repoRoot string) (apiserver, etcd string, err error) {
	apiserver = os.Getenv("KUBE_APISERVER")
	if apiserver == "" {
		apiserver = filepath.Join(repoRoot, "bin", "kube-apiserver")
	}
	if _, err := os.Stat(apiserver); err != nil {
		return "", "", fmt.Errorf("kube-apiserver not found at %s (run make kube-apiserver): %w", apiserver, err)
	}
	etcd = os.Getenv("ETCD")
	if etcd == "" {
		if etcd, err = exec.LookPath("etcd"); err != nil {
			return "", "", fmt.Errorf("etcd not found (apt-get install etcd-server): %w", err)
		}
	}
	return apiserver, etcd, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Start runs etcd and kube-apiserver and waits for /readyz. extraArgs are
// added to the API server's flags (e.g. --runtime-config to serve an older
// API version).
func Start(apiserverBin, etcdBin string, extraArgs ...string) (*Server, error) {
	dir, err := os.MkdirTemp("", "kubetest-")
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, logs: &syncBuffer{}}
	ports := make([]int, 3)
	for i := range ports {
		if ports[i], err = freePort(); err != nil {
			return nil, err
		}
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	if err := s.run(etcdBin, "--data-dir", filepath.Join(dir, "etcd"), "--name", "kubetest",
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "kubetest="+peerURL, "--log-level", "error"); err != nil {
		return nil, err
	}
	sa := filepath.Join(dir, "sa")
	if out, err := exec.Command("openssl", "genrsa", "-out", sa+".key", "2048").CombinedOutput(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("openssl genrsa: %w: %s", err, out)
	}
	if out, err := exec.Command("openssl", "rsa", "-in", sa+".key", "-pubout", "-out", sa+".pub").CombinedOutput(); err != nil {
		s.Stop()
		return nil, fmt.Errorf("openssl rsa: %w: %s", err, out)
	}
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(AdminToken+",admin,admin-uid,\"system:masters\"\n"+LimitedToken+","+LimitedUser+",limited-uid\n"), 0o600); err != nil {
		s.Stop()
		return nil, err
	}
	port := ports[2]
	s.URL = fmt.Sprintf("https://127.0.0.1:%d", port)
	args := append([]string{"--advertise-address=127.0.0.1", "--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(port), "--etcd-servers=" + etcdURL, "--cert-dir=" + filepath.Join(dir, "certs"),
		"--service-account-issuer=" + s.URL + "/", "--service-account-key-file=" + sa + ".pub",
		"--service-account-signing-key-file=" + sa + ".key", "--token-auth-file=" + tokens,
		"--authorization-mode=RBAC", "--service-cluster-ip-range=10.0.0.0/24",
		"--disable-admission-plugins=ServiceAccount", "--v=0"}, extraArgs...)
	if err := s.run(apiserverBin, args...); err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, s.URL+"/readyz", http.NoBody)
		req.Header.Set("Authorization", "Bearer "+AdminToken)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		for _, p := range s.procs {
			select {
			case <-p.done:
				s.Stop()
				return nil, fmt.Errorf("%s exited: %s", p.cmd.Path, s.logs.String())
			default:
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	s.Stop()
	return nil, fmt.Errorf("kube-apiserver not ready within 60 s: %s", s.logs.String())
}

func (s *Server) run(bin string, args ...string) error {
	c := exec.Command(bin, args...)
	c.Stdout, c.Stderr = s.logs, s.logs
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		s.Stop()
		return err
	}
	p := proc{cmd: c, done: make(chan struct{})}
	s.procs = append(s.procs, p)
	go func() { _ = c.Wait(); close(p.done) }()
	return nil
}

// Stop stops the processes by PID, API server first, and removes the data.
func (s *Server) Stop() {
	for i := len(s.procs) - 1; i >= 0; i-- {
		p := s.procs[i]
		pid := p.cmd.Process.Pid
		_ = syscall.Kill(-pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-p.done
		}
	}
	os.RemoveAll(s.dir)
}

// Config returns a client configuration with the given token.
func (s *Server) Config(token string) *rest.Config {
	return &rest.Config{Host: s.URL, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 100, Burst: 200}
}

// Kubeconfig writes a kubeconfig file for the token and returns its path.
func (s *Server) Kubeconfig(dir, token string) (string, error) {
	path := filepath.Join(dir, "kubeconfig-"+token)
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster: {server: %q, insecure-skip-tls-verify: true}
users:
- name: test
  user: {token: %q}
contexts:
- name: test
  context: {cluster: test, user: test}
current-context: test
`, s.URL, token)
	return path, os.WriteFile(path, []byte(body), 0o600)
}

// Fuzzing reports whether the test binary runs to fuzz (go test -fuzz), as
// the coordinator or as one of its workers. Neither runs a package's
// integration tests, so neither needs a cluster; a worker that started one
// in TestMain would spend seconds on it and, when the coordinator stops the
// worker, leave its etcd behind.
func Fuzzing() bool {
	if !flag.Parsed() {
		flag.Parse()
	}
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil {
			if v := f.Value.String(); v != "" && v != "false" {
				return true
			}
		}
	}
	return false
}
