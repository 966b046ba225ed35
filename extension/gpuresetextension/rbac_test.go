package gpuresetextension

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/otelcol-gpu/otelcol-gpu/internal/kubetest"
	"github.com/otelcol-gpu/otelcol-gpu/internal/nodeagent"
)

// TestExampleRBAC applies examples/kubernetes/gpu-reset-rbac.yaml and
// checks, as the agent's service account on its node, that it is enough
// for the actor and no more: the admission policy refuses a write to
// another node, to another annotation, to the node's spec or labels.
func TestExampleRBAC(t *testing.T) {
	s := server(t)
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "observability"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		require.NoError(t, err)
	}
	objs, err := kubetest.Decode("../../examples/kubernetes/gpu-reset-rbac.yaml")
	require.NoError(t, err)
	for _, obj := range objs {
		if err := s.Create(obj, false); err != nil && !apierrors.IsAlreadyExists(err) {
			require.NoError(t, err, "%s %s", obj.GetKind(), obj.GetName())
		}
	}
	other := newFixture(t).node

	// The agent's pod on f.node, as its bound token authenticates it.
	as := s.Config(kubetest.AdminToken)
	as.Impersonate.UserName = "system:serviceaccount:observability:otelcol-gpu-agent"
	as.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {f.node}}
	sa := kubernetes.NewForConfigOrDie(as)
	patch := func(node string, body map[string]any) error {
		raw, err := json.Marshal(body)
		require.NoError(t, err)
		_, err = sa.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, raw, metav1.PatchOptions{})
		return err
	}
	annotate := func(node, key, value string) error {
		return patch(node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: value}}})
	}
	// The policy is in force once the API server has loaded it. Each try
	// writes a new value: a write that changes nothing passes the policy.
	require.Eventually(t, func() bool {
		return apierrors.IsInvalid(annotate(f.node, "example.com/other", time.Now().String()))
	}, 20*time.Second, 100*time.Millisecond, "the admission policy never refused another annotation")

	// Enough for the actor.
	f.start(f.config(0, 0), as)
	f.request(f.uuid(0), "inc-rbac")
	require.Equal(t, nodeagent.ResetOK, f.answer("inc-rbac").Outcome)

	// No more than that.
	for what, c := range map[string]struct {
		err  error
		rule string
	}{
		"another node":             {annotate(other, nodeagent.ResetResult, "{}"), "writes only the node it runs on"},
		"another annotation":       {annotate(f.node, "example.com/other", "changed"), "writes only the reset annotations"},
		"the ownership annotation": {annotate(f.node, nodeagent.Prefix+"owner", "{}"), "writes only the reset annotations"},
		"a label":                  {patch(f.node, map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}}), "does not change a node's spec or labels"},
		"cordon":                   {patch(f.node, map[string]any{"spec": map[string]any{"unschedulable": true}}), "does not change a node's spec or labels"},
	} {
		require.True(t, apierrors.IsInvalid(c.err), "%s: want refused by the admission policy, got %v", what, c.err)
		require.ErrorContains(t, c.err, c.rule, what)
	}
	forbidden := map[string]error{}
	forbidden["delete node"] = sa.CoreV1().Nodes().Delete(ctx, other, metav1.DeleteOptions{})
	_, forbidden["node status"] = sa.CoreV1().Nodes().Patch(ctx, f.node, types.MergePatchType, []byte(`{"status":{"phase":"Running"}}`), metav1.PatchOptions{}, "status")
	_, forbidden["list pods"] = sa.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	_, forbidden["list secrets"] = sa.CoreV1().Secrets("observability").List(ctx, metav1.ListOptions{})
	for what, err := range forbidden {
		require.True(t, apierrors.IsForbidden(err), "%s: want forbidden, got %v", what, err)
	}
}
