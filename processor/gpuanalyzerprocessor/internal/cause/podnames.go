package cause

// A pod's cgroup comes by its UID; the pod that holds a GPU, from the
// kubelet's pod resources, by its namespace and name. The gpu_node
// receiver names each pod where the kubelet's log directories do, and the
// store joins the two here, so that a GPU's verdict reads its pod's cgroup
// without per-process collection (which binds a GPU to its pod through the
// pod's processes, BindGPU: a shared GPU's pods, which the kubelet's pod
// resources do not name on the GPU).

// podRef is a pod by its host, namespace and name. A struct, not a joined
// string: the lookup, once per waiting GPU per batch, allocates nothing.
type podRef struct{ host, namespace, name string }

// NamePod records the namespace and name of the pod with the UID on host.
func (s *Store) NamePod(host, namespace, name, uid string) {
	if name == "" || uid == "" {
		return
	}
	r := podRef{host, namespace, name}
	if cur, ok := s.podByName[r]; ok && cur == uid {
		return
	}
	if len(s.podByName) >= maxEntries {
		return
	}
	// A pod recreated under its name (a StatefulSet's) has a new UID:
	// the name follows it.
	s.podByName[r] = uid
}

// BindGPUByName binds the GPU to the pod of that namespace and name on
// host, where the store knows its UID; it says whether it did. The pod the
// kubelet gives a GPU holds it now, so this binding replaces one made
// earlier (a GPU handed from a finished pod to the next).
func (s *Store) BindGPUByName(gpuID, host, namespace, name string) bool {
	if name == "" {
		return false
	}
	uid, ok := s.podByName[podRef{host, namespace, name}]
	if !ok {
		return false
	}
	s.BindGPU(gpuID, host, uid)
	return true
}

// sweepNames forgets the names of pods the store no longer holds.
func (s *Store) sweepNames() {
	for r, uid := range s.podByName {
		if s.pods[key(r.host, uid)] == nil {
			delete(s.podByName, r)
		}
	}
}
