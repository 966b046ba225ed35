package gpunodereceiver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSplitPodLogDir(t *testing.T) {
	for _, tc := range []struct {
		dir           string
		ns, name, uid string
		ok            bool
	}{
		{dir: "ml_loader-0_0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c", ns: "ml", name: "loader-0", uid: "0f3b2c1a-6d4e-4f5a-9b8c-7d6e5f4a3b2c", ok: true},
		// A static pod's UID is its manifest's hash: 32 hex digits.
		{dir: "kube-system_etcd-node-1_1c5ba0a7f4e9f3a4c2d6d0b6e2a1f9c3", ns: "kube-system", name: "etcd-node-1", uid: "1c5ba0a7f4e9f3a4c2d6d0b6e2a1f9c3", ok: true},
		{dir: "stray"},
		{dir: "a_b"},
		{dir: "a_b_c_d"},
		{dir: "_name_uid"},
		{dir: "ns__uid"},
		{dir: "ns_name_"},
	} {
		ns, name, uid, ok := splitPodLogDir(tc.dir)
		require.Equal(t, tc.ok, ok, tc.dir)
		require.Equal(t, []string{tc.ns, tc.name, tc.uid}, []string{ns, name, uid}, tc.dir)
	}
}

// TestPodNamesRelist: a pod whose directory appears after the first
// listing is named once the listing is podNamesMinAge old, without waiting
// for podNamesMaxAge; a pod gone from the directory loses its name at the
// next listing; a missing directory is no error.
func TestPodNamesRelist(t *testing.T) {
	dir := t.TempDir()
	const a, b = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"
	require.NoError(t, os.Mkdir(filepath.Join(dir, "ml_a_"+a), 0o750))
	p := newPodNames(dir)
	t0 := time.Unix(1_800_000_000, 0)

	n, ok, err := p.lookup(a, t0)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, podName{namespace: "ml", name: "a"}, n)

	require.NoError(t, os.Mkdir(filepath.Join(dir, "serving_b_"+b), 0o750))
	_, ok, _ = p.lookup(b, t0.Add(time.Second))
	require.False(t, ok, "listed a second ago: not listed again for one new UID")
	n, ok, _ = p.lookup(b, t0.Add(podNamesMinAge))
	require.True(t, ok, "a new UID lists again once the listing is podNamesMinAge old")
	require.Equal(t, "serving", n.namespace)

	require.NoError(t, os.Remove(filepath.Join(dir, "ml_a_"+a)))
	_, ok, _ = p.lookup(a, t0.Add(podNamesMinAge+time.Second))
	require.True(t, ok, "a known UID keeps its name until the listing is podNamesMaxAge old")
	_, ok, _ = p.lookup(a, t0.Add(podNamesMinAge+podNamesMaxAge))
	require.False(t, ok, "gone from the directory at the next listing")

	gone := newPodNames(filepath.Join(dir, "absent"))
	_, ok, err = gone.lookup(a, t0)
	require.NoError(t, err, "not mounted is not an error")
	require.False(t, ok)
	require.True(t, gone.missing)
}

// TestPodNamesInScrape: the fake host's limited pod has a kubelet log
// directory and is named; the unlimited one has none and goes by its UID;
// the directory's stray entry names nothing.
func TestPodNamesInScrape(t *testing.T) {
	md := scrapeTree(t, "hostfs-v2")
	named := map[string][2]string{}
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		attrs := md.ResourceMetrics().At(i).Resource().Attributes().AsRaw()
		uid, _ := attrs["k8s.pod.uid"].(string)
		if uid == "" {
			require.NotContains(t, attrs, "k8s.pod.name")
			continue
		}
		ns, _ := attrs["k8s.namespace.name"].(string)
		name, _ := attrs["k8s.pod.name"].(string)
		named[uid] = [2]string{ns, name}
	}
	require.Equal(t, map[string][2]string{uidLimited: {"ml", "loader-0"}, uidUnlimited: {"", ""}}, named)

	// cgroup v1's fake host has no /var/log/pods: no names, no error.
	md = scrapeTree(t, "hostfs-v1")
	for i := 0; i < md.ResourceMetrics().Len(); i++ {
		require.NotContains(t, md.ResourceMetrics().At(i).Resource().Attributes().AsRaw(), "k8s.pod.name")
	}
}
