// Package manifests checks the distribution's Kubernetes manifests against a
// real kube-apiserver: every object is created with a server-side dry run
// and strict field validation, the OpenTelemetry Operator's resources
// against the Operator's own CRDs.
package manifests

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// operatorModule holds the OpenTelemetry Operator's CRDs; they are read from
// the module cache at test time, never copied into this repository.
const operatorModule = "github.com/open-telemetry/opentelemetry-operator@v0.140.0"

var (
	server    *kubetest.Server
	serverErr error
)

func TestMain(m *testing.M) {
	apiBin, etcdBin, err := kubetest.Binaries(filepath.Join("..", ".."))
	if err == nil {
		server, err = kubetest.Start(apiBin, etcdBin)
	}
	serverErr = err
	code := m.Run()
	if server != nil {
		server.Stop()
	}
	os.Exit(code)
}

func requireServer(t *testing.T) *kubetest.Server {
	t.Helper()
	return kubetest.Require(t, server, serverErr)
}

// decode reads every object of a multi-document YAML file.
func decode(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubetest.Decode(path)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestManifestsServerSideDryRun(t *testing.T) {
	s := requireServer(t)
	ctx := context.Background()
	cfg := s.Config(kubetest.AdminToken)
	cs := kubernetes.NewForConfigOrDie(cfg)

	// The Operator's CRDs, installed for real.
	out, err := exec.Command("go", "mod", "download", "-json", operatorModule).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", operatorModule, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	dir := mod.Dir
	crds, _ := filepath.Glob(filepath.Join(dir, "config", "crd", "bases", "*.yaml"))
	if len(crds) == 0 {
		t.Fatalf("no CRDs under %s", dir)
	}
	for _, f := range crds {
		for _, obj := range decode(t, f) {
			if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
	files, _ := filepath.Glob("kubernetes/*.yaml")
	operator, _ := filepath.Glob("operator/*.yaml")
	files = append(append(files, operator...), filepath.Join("..", "..", "examples", "kubernetes", "rbac.yaml"),
		filepath.Join("..", "..", "examples", "kubernetes", "remediation-rbac.yaml"))
	var objects []*unstructured.Unstructured
	var from []string
	for _, f := range files {
		for _, obj := range decode(t, f) {
			objects, from = append(objects, obj), append(from, f)
		}
	}
	// Namespaces first, while they do not exist; then create them for real,
	// since a namespaced object's dry run needs its namespace.
	checked := 0
	dryRun := func(i int) {
		obj := objects[i]
		if err := s.Create(obj, true); err != nil {
			t.Errorf("%s: %s %s: %v", from[i], obj.GetKind(), obj.GetName(), err)
			return
		}
		checked++
	}
	for i, obj := range objects {
		if obj.GetKind() == "Namespace" {
			dryRun(i)
		}
	}
	for _, ns := range []string{"observability", "serving", "ml"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for i, obj := range objects {
		if obj.GetKind() != "Namespace" {
			dryRun(i)
		}
	}
	t.Logf("%d objects passed a server-side dry run with strict field validation", checked)
	if checked < 35 {
		t.Errorf("only %d objects checked", checked)
	}
}
