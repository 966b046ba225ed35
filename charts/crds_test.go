package charts

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
)

// operatorCRDs installs the OpenTelemetry Operator's CRDs, from the
// Operator's Go module at a pinned release, into the API server, and the
// Prometheus Operator's PrometheusRule CRD from its module.
func operatorCRDs(t *testing.T, s *kubetest.Server) {
	t.Helper()
	createCRDs(t, s, operatorModule, filepath.Join("config", "crd", "bases", "*.yaml"))
	createCRDs(t, s, prometheusOperatorModule, filepath.Join("example", "prometheus-operator-crd", "monitoring.coreos.com_prometheusrules.yaml"))
}

// createCRDs creates the CRDs in the files of a Go module that match glob.
func createCRDs(t *testing.T, s *kubetest.Server, module, glob string) {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", module, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	crds, _ := filepath.Glob(filepath.Join(mod.Dir, glob))
	if len(crds) == 0 {
		t.Fatalf("no CRDs at %s in %s", glob, mod.Dir)
	}
	for _, f := range crds {
		objs, err := kubetest.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, obj := range objs {
			if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("%s %s: %v", obj.GetKind(), obj.GetName(), err)
			}
		}
	}
}
