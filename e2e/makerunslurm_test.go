//go:build e2e

package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2EMakeRunSlurm runs `make run-slurm` (examples/slurm/config.yaml)
// with the full binary already built (gpu_remediation is not in the demo
// build), and reads what a person sees: the banner, a summary naming the
// straggler of the two-node Slurm job and the idle GPU a job holds, the
// straggler's own line with its job, the dry-run decision to drain node
// gpu-a-2 with the reason Slurm would get, and the metrics page with the
// jobs' owners and their cost. It needs port 9400.
func TestE2EMakeRunSlurm(t *testing.T) {
	bin, err := filepath.Abs(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	logs, began, _ := startMake(t, "run-slurm", "SLURM_RUN_BIN="+bin)

	// The slow rank starts at 20 s of data time (the wall clock here); the
	// straggler is found within the analyzer's window after.
	want := map[string]*regexp.Regexp{
		"the straggler's line":  regexp.MustCompile(`(?m)^.*GPU is a straggler.*gpu-a-1.*gpu3.*4242.*$`),
		"the summary naming it": regexp.MustCompile(`(?m)^.* GPUs: .*held by a Slurm job.*gpu-a-1/gpu3 in slurm job 4242 \(climate-ensemble\).*$`),
		// The XID 79 at 40 s: the drain of gpu-a-2 that would be written.
		"the drain decision": regexp.MustCompile(`(?m)^.*GPU remediation decision.*gpu-a-2.*xid_79.*dry_run.*true.*would act \(dry run\) on gpu-a-2.*Slurm: state=DRAIN reason=\\?"otelcol-gpu incident xid_79-[0-9a-f]+: xid_79 on GPU-.*$`),
	}
	seen := map[string]string{}
	var page string
	for time.Since(began) < 2*time.Minute && (len(seen) < len(want) || page == "") {
		out := logs.String()
		for what, re := range want {
			if _, ok := seen[what]; !ok && re.MatchString(out) {
				seen[what] = time.Since(began).Round(time.Second).String()
			}
		}
		if body, err := scrape("http://127.0.0.1:9400/metrics"); err == nil && strings.Contains(body, "otelgpu_cost_total{") {
			page = body
		}
		time.Sleep(time.Second)
	}
	out := logs.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	banner := "otelcol-gpu on a simulated Slurm cluster: 24 H100s, 10 Slurm jobs (job 4242 on two nodes, with a straggler), an XID 79 on gpu-a-2 at 40 s (its drain logged, dry run). Metrics: http://127.0.0.1:9400/metrics. Log: stragglers as they happen, a summary within 10 s, then every 30 s."
	if lines[0] != banner {
		t.Errorf("first line %q, want the banner %q", lines[0], banner)
	}
	for what, re := range want {
		if at, ok := seen[what]; ok {
			t.Logf("%s after %s: %s", what, at, re.FindString(out))
		} else {
			t.Errorf("no %s within two minutes", what)
		}
	}
	for _, s := range []string{`slurm_job_id="4242"`, `slurm_job_account="physics"`, `slurm_job_user="alice"`, `slurm_cluster_name="hpc1"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the metrics page has no %s", s)
		}
	}
	if regexp.MustCompile(`(?m)^otelgpu_cost_total\{[^}]*slurm_job_account="physics"`).FindString(page) == "" {
		t.Error("no otelgpu_cost_total of account physics")
	}
	if strings.Contains(out, "Slurm job details unavailable") {
		t.Error("the simulated cluster asked scontrol for its jobs' details (slurm::details is to be off there)")
	}
	if strings.Contains(page, `k8s_`) {
		t.Error("k8s_* labels on a Slurm cluster's series")
	}
	if t.Failed() {
		t.Logf("make run-slurm's log:\n%s", out)
	}
}
