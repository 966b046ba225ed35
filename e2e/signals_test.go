//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// vllmServer serves what a vLLM pod's /metrics says about its queue and KV
// cache, on a port of its own.
func vllmServer(t *testing.T, waiting, kvCache float64) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{model_name=\"llama\"} %g\n", waiting)
		fmt.Fprintf(w, "# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{model_name=\"llama\"} %g\n", kvCache)
		fmt.Fprintf(w, "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{model_name=\"llama\"} 1234\n")
	})}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

// TestE2EServiceSignalsAutoscale runs examples/kubernetes/vllm-signals.yaml
// in the built collector against a real kube-apiserver: the prometheus
// receiver discovers the inference pods and scrapes their vLLM metrics,
// k8s_attributes finds their Deployment, and gpu_autoscale scales it on the
// queue (the GPU metric has no data here: an invalid metric does not block
// a scale-up, as with an HPA).
func TestE2EServiceSignalsAutoscale(t *testing.T) {
	apiBin, etcdBin, err := kubetest.Binaries("..")
	var s *kubetest.Server
	if err == nil {
		s, err = kubetest.Start(apiBin, etcdBin)
	}
	s = kubetest.Require(t, s, err)
	t.Cleanup(s.Stop)
	cs := kubernetes.NewForConfigOrDie(s.Config(kubetest.AdminToken))
	ctx := context.Background()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}

	// The inference Deployment, its ReplicaSet and two running pods, as the
	// controllers and kubelet would have made them; each pod serves its
	// metrics on its own port of 127.0.0.1.
	must(cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "serving"}}, metav1.CreateOptions{}))
	replicas := int32(2)
	labels := map[string]string{"app": "llm-inference"}
	dep, err := cs.AppsV1().Deployments("serving").Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "llm-inference"},
		Spec: appsv1.DeploymentSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai"}}}}},
	}, metav1.CreateOptions{})
	must(dep, err)
	yes := true
	rs, err := cs.AppsV1().ReplicaSets("serving").Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "llm-inference-7d9f8b6c5", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: dep.Name, UID: dep.UID, Controller: &yes}}},
		Spec: appsv1.ReplicaSetSpec{Replicas: &replicas, Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai"}}}}},
	}, metav1.CreateOptions{})
	must(rs, err)
	podLabels := map[string]string{"app": "llm-inference", "pod-template-hash": "7d9f8b6c5"} // as the ReplicaSet controller labels them
	for i := range 2 {
		port := vllmServer(t, 12, 0.5) // 12 waiting against 4 per pod: 3 x 2 = 6 replicas
		pod, err := cs.CoreV1().Pods("serving").Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("llm-inference-7d9f8b6c5-%d", i), Labels: podLabels,
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "vllm", Image: "vllm/vllm-openai",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: int32(port)}}}}},
		}, metav1.CreateOptions{})
		must(pod, err)
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "127.0.0.1", PodIPs: []corev1.PodIP{{IP: "127.0.0.1"}},
			StartTime:  &metav1.Time{Time: time.Now()},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		must(cs.CoreV1().Pods("serving").UpdateStatus(ctx, pod, metav1.UpdateOptions{}))
	}

	// The example, with what differs outside a cluster: the kubeconfig for
	// the API, no Prometheus to write to, and shorter periods.
	dir := t.TempDir()
	kc, err := s.Kubeconfig(dir, kubetest.AdminToken)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "examples", "kubernetes", "vllm-signals.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	get := func(m any, keys ...any) any {
		for _, k := range keys {
			switch k := k.(type) {
			case string:
				m = m.(map[string]any)[k]
			case int:
				m = m.([]any)[k]
			}
		}
		return m
	}
	job := get(cfg, "receivers", "prometheus", "config", "scrape_configs", 0).(map[string]any)
	job["scrape_interval"] = "1s"
	get(job, "kubernetes_sd_configs", 0).(map[string]any)["kubeconfig_file"] = kc
	get(cfg, "receivers", "otlp", "protocols", "grpc").(map[string]any)["endpoint"] = fmt.Sprintf("127.0.0.1:%d", freePort(t))
	get(cfg, "processors", "k8s_attributes").(map[string]any)["auth_type"] = "kubeConfig"
	conn := get(cfg, "connectors", "gpu_autoscale").(map[string]any)
	conn["interval"] = "2s"
	conn["auth"] = map[string]any{"type": "kubeconfig", "kubeconfig": kc}
	conn["leader_election"].(map[string]any)["lease_namespace"] = "default"
	conn["leader_election"].(map[string]any)["identity"] = "e2e"
	exporters := cfg["exporters"].(map[string]any)
	if os.Getenv("E2E_DEBUG") != "" {
		exporters["debug"] = map[string]any{"verbosity": "detailed"}
	}
	// No Prometheus here: its exporter and the queue on disk go.
	delete(exporters, "otlp_http/prometheus")
	delete(cfg, "extensions")
	delete(cfg["service"].(map[string]any), "extensions")
	for _, p := range get(cfg, "service", "pipelines").(map[string]any) {
		var kept []any
		for _, e := range p.(map[string]any)["exporters"].([]any) {
			if e != "otlp_http/prometheus" {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 || os.Getenv("E2E_DEBUG") != "" {
			kept = append(kept, "debug")
		}
		p.(map[string]any)["exporters"] = kept
	}
	// The example's own log settings (JSON), without internal metrics.
	cfg["service"].(map[string]any)["telemetry"].(map[string]any)["metrics"] = map[string]any{"level": "none"}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}

	c := startEnv(t, []string{"KUBECONFIG=" + kc}, "--config", path)
	deadline := time.Now().Add(90 * time.Second)
	for {
		d, err := cs.AppsV1().Deployments("serving").Get(ctx, "llm-inference", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if *d.Spec.Replicas == 6 {
			break
		}
		if !c.alive() || time.Now().After(deadline) {
			t.Fatalf("llm-inference has %d replicas, want 6 (queue 12 per pod against 4)\n%s", *d.Spec.Replicas, c.logs.String())
		}
		time.Sleep(500 * time.Millisecond)
	}
	want := `"metric":"vllm:num_requests_waiting","value":12` // the example's JSON log
	for !strings.Contains(c.logs.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("no log record %q:\n%s", want, c.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	c.stop(t)
}
