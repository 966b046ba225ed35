package gpunodereceiver

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"time"
)

// podNames tells a pod's namespace and name from its UID, by the kubelet's
// log directories: the kubelet makes one per pod, named
// <namespace>_<name>_<uid> (BuildPodLogsDirectory in
// pkg/kubelet/kuberuntime/helpers.go, logPathDelimiter "_"), under
// /var/log/pods, whatever the container runtime. The cgroup names a pod
// only by its UID, and the kubelet's pod resources name the pod holding a
// GPU only by namespace and name: these directories join the two, so that
// a GPU's verdict reads its own pod's cgroup without per-process
// collection. Neither a namespace nor a pod name can hold "_" (both are
// DNS names), so the split is unambiguous.
type podNames struct {
	dir    string
	byUID  map[string]podName
	listed time.Time
	// missing: the directory could not be read at the last listing (not
	// mounted): pods go unnamed until a later listing finds it.
	missing bool
}

type podName struct{ namespace, name string }

// podNamesMaxAge is how long a listing serves. A pod is read by its cgroup
// from the first scrape after it starts; its name follows within this, or
// at once where the UID is new to the listing (lookup), at most once per
// podNamesMinAge.
const (
	podNamesMaxAge = time.Minute
	podNamesMinAge = 10 * time.Second
)

func newPodNames(dir string) *podNames { return &podNames{dir: dir, byUID: map[string]podName{}} }

// lookup names the pod with the UID, listing the directory again when the
// listing is old, or when the UID is new to it and the listing is not
// recent. ok is false for a pod the directory does not (yet) name.
func (p *podNames) lookup(uid string, now time.Time) (n podName, ok bool, err error) {
	n, ok = p.byUID[uid]
	age := now.Sub(p.listed)
	if (ok && age < podNamesMaxAge) || (!ok && age < podNamesMinAge) {
		return n, ok, nil
	}
	err = p.list(now)
	n, ok = p.byUID[uid]
	return n, ok, err
}

// list reads the directory afresh. A name that is not three parts, or
// whose parts are empty, is not a pod's directory and is passed by.
func (p *podNames) list(now time.Time) error {
	p.listed = now
	entries, err := os.ReadDir(p.dir)
	if err != nil {
		p.missing = true
		if errors.Is(err, fs.ErrNotExist) {
			return nil // not mounted: pods unnamed, as on a node without kubelet
		}
		return err
	}
	p.missing = false
	clear(p.byUID)
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		ns, name, uid, ok := splitPodLogDir(e.Name())
		if ok {
			p.byUID[uid] = podName{namespace: ns, name: name}
		}
	}
	return nil
}

// splitPodLogDir reads <namespace>_<name>_<uid>.
func splitPodLogDir(dir string) (namespace, name, uid string, ok bool) {
	parts := strings.Split(dir, "_")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return "", "", "", false
	}
	return parts[0], parts[1], parts[2], true
}
