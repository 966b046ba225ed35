package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseLine: any line parses without panicking, and what it returns is
// well formed: a pod UID and container ID of the forms validUID and
// validContainerID accept, a container only in a pod, and a line that
// parses keeps parsing to the same identity (ParseLine is a function of
// the line alone).
func FuzzParseLine(f *testing.F) {
	// Every line of the fake /proc tree seeds the corpus.
	files, _ := filepath.Glob(filepath.Join(procRoot, "*", "cgroup"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			f.Add(strings.TrimSuffix(line, "\n"))
		}
	}
	f.Add("0::/kubepods-pod" + strings.ReplaceAll(uid, "-", "_") + ".slice:crio:" + cid)
	f.Add("1:name=systemd:/../../../kubepods/pod" + uid)
	f.Add("0::/system.slice/n1_slurmstepd.scope/job_12/step_0+1/user/task_special")
	f.Fuzz(func(t *testing.T, line string) {
		id, err := ParseLine(line)
		if err != nil {
			if id != (Identity{}) {
				t.Fatalf("%q: an error with an identity %+v", line, id)
			}
			return
		}
		if id.PodUID != "" && !validUID(id.PodUID) {
			t.Fatalf("%q: pod UID %q", line, id.PodUID)
		}
		if id.ContainerID != "" && (!validContainerID(id.ContainerID) || id.PodUID == "") {
			t.Fatalf("%q: container %q in pod %q", line, id.ContainerID, id.PodUID)
		}
		if sl := id.Slurm; sl.InJob() || sl != (SlurmStep{}) {
			if (sl.JobID == "") == (sl.SLUID == "") || (sl.JobID != "" && !isDigits(sl.JobID)) || (sl.SLUID != "" && !validSLUID(sl.SLUID)) {
				t.Fatalf("%q: Slurm job %+v", line, sl)
			}
			if (sl.Step != "" && !validStep(sl.Step)) || (sl.Step == "" && sl.Task != "") {
				t.Fatalf("%q: Slurm step %+v", line, sl)
			}
		}
		again, err := ParseLine(line)
		if err != nil || again != id {
			t.Fatalf("%q: parsed to %+v, then %+v, %v", line, id, again, err)
		}
		// Parse of the line as a file agrees with ParseLine: the file form
		// adds only the line splitting.
		if !strings.Contains(line, "\n") {
			whole, err := Parse("f", []byte(line+"\n"))
			if err != nil || whole != id {
				t.Fatalf("%q: Parse gives %+v, %v; ParseLine %+v", line, whole, err, id)
			}
		}
	})
}

// FuzzPathRoundTrip: a pod and container written in each driver's and
// runtime's form parse back to themselves, wherever the kubelet's root is.
func FuzzPathRoundTrip(f *testing.F) {
	f.Add(uid, cid, uint8(0), "")
	f.Add("8c0a5fb2e3d14b7c9a1f6e2d3c4b5a69", cid, uint8(5), "/../..")
	f.Fuzz(func(t *testing.T, podUID, containerID string, form uint8, root string) {
		if !validUID(podUID) || !validContainerID(containerID) || strings.ContainsAny(root, "\n:") {
			return
		}
		u := strings.ReplaceAll(podUID, "-", "_")
		qos := []string{"burstable", "besteffort", ""}[int(form/8)%3]
		slice, dir := "kubepods-"+qos+"-pod"+u+".slice", "kubepods/"+qos+"/pod"+podUID
		if qos == "" {
			slice, dir = "kubepods-pod"+u+".slice", "kubepods/pod"+podUID
		}
		var path string
		switch form % 8 {
		case 0:
			path = "/kubepods.slice/" + slice + "/cri-containerd-" + containerID + ".scope"
		case 1:
			path = "/kubepods.slice/" + slice + "/crio-" + containerID + ".scope"
		case 2:
			path = "/kubepods.slice/" + slice + "/docker-" + containerID + ".scope"
		case 3:
			path = "/" + dir + "/" + containerID
		case 4:
			path = "/" + dir + "/crio-" + containerID
		case 5:
			path = "/" + slice + ":cri-containerd:" + containerID
		default:
			path = "/kubepods.slice/" + slice + "/crio-conmon-" + containerID + ".scope"
			containerID = ""
		}
		if strings.Contains(root, "kubepods") || strings.Contains(root, "pod") || strings.Contains(root, "slurmstepd.scope") ||
			strings.Contains(root, "uid_") || (root != "" && root[0] != '/') {
			return // a root that itself names a pod or a Slurm job is another path; a cgroup path is absolute
		}
		line := "0::" + strings.TrimSuffix(root, "/") + path
		got, err := ParseLine(line)
		if err != nil || got != (Identity{PodUID: podUID, ContainerID: containerID}) {
			t.Fatalf("%q: got %+v, %v", line, got, err)
		}
	})
}
