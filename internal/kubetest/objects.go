package kubetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
)

// Require returns the server started for a package's tests, given the
// error its start returned. Under `make test` (OTELCOL_GPU_REQUIRE_KUBE set)
// a missing server fails the test; elsewhere the test is skipped and says why.
func Require(tb testing.TB, s *Server, startErr error) *Server {
	tb.Helper()
	if startErr != nil {
		if os.Getenv("OTELCOL_GPU_REQUIRE_KUBE") != "" {
			tb.Fatalf("kube-apiserver integration test: %v", startErr)
		}
		tb.Skipf("needs a kube-apiserver and etcd (make kube-apiserver; apt-get install etcd-server): %v", startErr)
	}
	return s
}

// Decode reads every object of a multi-document YAML file.
func Decode(path string) ([]*unstructured.Unstructured, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(obj.Object) > 0 {
			out = append(out, obj)
		}
	}
}

// objectClient creates objects of any kind, as the admin.
type objectClient struct {
	once   sync.Once
	dyn    dynamic.Interface
	mapper *restmapper.DeferredDiscoveryRESTMapper
}

// Create creates an object as the admin, with strict field validation;
// with dryRun, server-side only. A kind that is not served yet (a CRD just
// installed) is looked up again for up to 10 s.
func (s *Server) Create(obj *unstructured.Unstructured, dryRun bool) error {
	c := &s.objects
	c.once.Do(func() {
		cfg := s.Config(AdminToken)
		c.dyn = dynamic.NewForConfigOrDie(cfg)
		c.mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(discovery.NewDiscoveryClientForConfigOrDie(cfg)))
	})
	opts := metav1.CreateOptions{FieldValidation: "Strict"}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	gvk := obj.GroupVersionKind()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			_, err = c.dyn.Resource(m.Resource).Namespace(obj.GetNamespace()).Create(context.Background(), obj, opts)
		}
		if err == nil || !notServedYet(err) || time.Now().After(deadline) {
			return err
		}
		c.mapper.Reset()
		time.Sleep(200 * time.Millisecond)
	}
}

// notServedYet says whether err means the kind is unknown to discovery or
// its resource is not served yet, both transient right after a CRD's create.
func notServedYet(err error) bool {
	return meta.IsNoMatchError(err) || apierrors.IsNotFound(err)
}
