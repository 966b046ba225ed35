package kube

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestLeaseNameIsAValidObjectName(t *testing.T) {
	for _, r := range []Ref{
		{Kind: "Deployment", Namespace: "serving", Name: "llm-inference"},
		{Kind: "InferencePool", Namespace: "ns", Name: "Pool_1"},
		{Kind: "Deployment", Namespace: "a-very-long-namespace-name-for-serving", Name: strings.Repeat("x", 200)},
	} {
		name := LeaseName("otelcol-gpu-autoscaler", r)
		if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 || len(name) > 63 {
			t.Errorf("%v: %q: %v", r, name, errs)
		}
	}
	a := LeaseName("p", Ref{Kind: "Deployment", Namespace: "n", Name: strings.Repeat("a", 100) + "1"})
	b := LeaseName("p", Ref{Kind: "Deployment", Namespace: "n", Name: strings.Repeat("a", 100) + "2"})
	if a == b {
		t.Errorf("two targets share the Lease %q", a)
	}
	if got := LeaseName("otelcol-gpu-autoscaler", Ref{Kind: "Deployment", Namespace: "serving", Name: "llm-inference"}); got != "otelcol-gpu-autoscaler-serving-deployment-llm-inference" {
		t.Errorf("got %q", got)
	}
}
