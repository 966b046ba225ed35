// Package kubeauth turns a component's `auth` settings into a client
// configuration for the Kubernetes API, the same way for every component
// that talks to it.
package kubeauth

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// RESTConfig returns the client configuration for an auth type: in_cluster
// (the pod's service account) or kubeconfig (a file, and optionally one of
// its contexts). Any other type has no API.
func RESTConfig(authType, kubeconfig, context string) (*rest.Config, error) {
	switch authType {
	case "in_cluster":
		c, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster Kubernetes config: %w", err)
		}
		return c, nil
	case "kubeconfig":
		rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
		overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
		c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides).ClientConfig()
		if err != nil {
			return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("no Kubernetes API for auth type %q", authType)
}
