package gpuanalyzerprocessor

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/processor/processortest"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/otelcol-gpu/otelcol-gpu/internal/metricnames"
	"github.com/otelcol-gpu/otelcol-gpu/internal/simulated"
	"github.com/otelcol-gpu/otelcol-gpu/processor/gpuanalyzerprocessor/internal/metadata"
)

// attributeJobs rewrites each GPU resource of a batch at second sec of the
// simulated fleet: the Kubernetes Job's GPUs (gpu-node-0) report for it
// until k8sEnd, and gpu-node-1/gpu6 and gpu7 belong to Slurm job 4242 on
// cluster della until slurmEnd, as the Slurm attribution names them (no
// k8s.* on a Slurm job). After its end a job's GPUs go on reporting for
// no job: what a finished job looks like to the collector.
func attributeJobs(md pmetric.Metrics, sec, k8sEnd, slurmEnd int) {
	rms := md.ResourceMetrics()
	for i := 0; i < rms.Len(); i++ {
		a := rms.At(i).Resource().Attributes()
		host, _ := a.Get(metricnames.AttrHostName)
		name, _ := a.Get(metricnames.AttrHWName)
		if _, ok := a.Get(metricnames.AttrK8sJobName); ok && sec >= k8sEnd {
			a.Remove(metricnames.AttrK8sJobName)
		}
		if host.AsString() == "gpu-node-1" && (name.AsString() == "gpu6" || name.AsString() == "gpu7") && sec < slurmEnd {
			a.PutStr("slurm.job.id", "4242")
			a.PutStr("slurm.job.step", "0")
			a.PutStr("slurm.job.user", "aturing")
			a.PutStr("slurm.cluster.name", "della")
		}
	}
}

func jobLines(logs *observer.ObservedLogs) []observer.LoggedEntry {
	var out []observer.LoggedEntry
	for _, e := range logs.All() {
		if strings.HasPrefix(e.Message, "Job ") {
			out = append(out, e)
		}
	}
	return out
}

// TestJobEndLog runs the simulated fleet at 1 s: its Kubernetes Job ends
// at 200 s, a Slurm job on two free GPUs at 180 s, the GPUs of both go on reporting. Each
// job's line comes once, job_report::end_after (2 min) after its last
// sample, with the job's figures; the serving GPUs, of no job, give none.
func TestJobEndLog(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	cfg := everySample()
	cfg.JobReport.Enabled = true
	cfg.Cost.PerGPUHour = map[string]float64{"H100": 3.6}
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, cfg, set)
	at := map[string]int{} // job -> second its line came
	for sec := range 400 {
		md := f.next(t)
		attributeJobs(md, sec, 200, 180)
		require.NoError(t, p.ConsumeMetrics(context.Background(), md))
		for _, e := range jobLines(logs) {
			if _, seen := at[e.ContextMap()["job"].(string)]; !seen {
				at[e.ContextMap()["job"].(string)] = sec
			}
		}
	}
	lines := jobLines(logs)
	require.Len(t, lines, 2, "one line per job, never twice: %v", lines)
	// The Slurm job's last sample is at 179 s: ended once 179 + 120 is
	// passed; the Kubernetes Job's at 199 s.
	assert.Equal(t, map[string]int{"slurm job della/4242": 300, "ml/llm-pretrain": 320}, at)

	for _, l := range lines {
		t.Logf("%s %v", l.Message, l.ContextMap())
	}
	slurm := lines[0].ContextMap()
	assert.Equal(t, "slurm job della/4242", slurm["job"])
	assert.Equal(t, "slurm", slurm["scheduler"])
	assert.Equal(t, int64(2), slurm["gpus"])
	assert.Equal(t, 179.0, slurm["run_seconds"])
	assert.Equal(t, "idle_held", slurm["advice"], "two free GPUs held by the job and never used")
	assert.InDelta(t, 2*179.0/3600*3.6, slurm["cost"].(float64), 1e-3)
	assert.True(t, strings.HasPrefix(lines[0].Message, "Job slurm job della/4242 ended after 3 min on 2 GPUs: idle 100 %; 0.10 GPU-h held idle ($0.36). The job held its GPUs idle"), lines[0].Message)
	assert.Equal(t, zapcore.InfoLevel, lines[0].Level)

	k8s := lines[1].ContextMap()
	assert.Equal(t, "ml/llm-pretrain", k8s["job"])
	assert.Equal(t, int64(8), k8s["gpus"])
	assert.Equal(t, int64(1), k8s["nodes"])
	assert.Equal(t, 199.0, k8s["run_seconds"])
	assert.Contains(t, k8s, "share.compute_bound")
	assert.Contains(t, lines[1].Message, "Job ml/llm-pretrain ended after 3 min on 8 GPUs: compute_bound")
	assert.NotContains(t, lines[1].Message, "\n")
	// The fleet's throttled GPU (gpu-node-0/gpu2 from 30 s) is degraded:
	// the first advice; its slow rank (gpu5 from 20 s) a straggler.
	assert.Contains(t, lines[1].Message, "gpu-node-0/gpu2 became degraded")
	assert.Equal(t, "gpu_unhealthy", k8s["advice"])
	assert.Contains(t, k8s, "stragglers")
}

// TestJobNotEndedBetweenScrapes: scraped every 30 s, the job's GPUs are
// silent 29 s of every 30, and once a scrape is missed (60 s): no line.
// Past three intervals and end_after the job has ended, and its line
// comes once. With job_report off, none.
func TestJobNotEndedBetweenScrapes(t *testing.T) {
	for _, enabled := range []bool{true, false} {
		f := newFleet(t, simulated.DefaultConfig())
		cfg := everySample()
		cfg.JobReport.Enabled = enabled
		core, logs := observer.New(zapcore.InfoLevel)
		set := processortest.NewNopSettings(metadata.Type)
		set.Logger = zap.New(core)
		p, _ := newProcessor(t, cfg, set)
		for sec := range 600 {
			md := f.next(t)
			if sec%30 != 0 || sec == 150 {
				continue // between scrapes; the scrape at 150 s missed
			}
			attributeJobs(md, sec, 1000, 0)
			require.NoError(t, p.ConsumeMetrics(context.Background(), md))
		}
		require.Empty(t, jobLines(logs), "a job between scrapes has not ended")
		// Nothing more comes for a while; then the GPUs report without it.
		for sec := 600; sec < 1000; sec++ {
			md := f.next(t)
			if sec%30 != 0 {
				continue
			}
			attributeJobs(md, sec, 600, 0)
			require.NoError(t, p.ConsumeMetrics(context.Background(), md))
		}
		if !enabled {
			require.Empty(t, jobLines(logs))
			continue
		}
		require.Len(t, jobLines(logs), 1)
	}
}

func TestJobReportConfig(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	require.False(t, cfg.JobReport.Enabled, "off by default: it holds memory per GPU until the job ends")
	require.Equal(t, 2*time.Minute, cfg.JobReport.EndAfter)
	cfg.JobReport.EndAfter = 0
	require.EqualError(t, cfg.JobReport.Validate(), "job_report::end_after must be positive, got 0s")
}

// TestJobEndLogVerdictInterval: as shipped, the report takes the verdicts
// sent (on change and every verdict_interval, 30 s), not every one: the
// same jobs end once each, with the same GPUs and, within an interval,
// the same run time and shares.
func TestJobEndLogVerdictInterval(t *testing.T) {
	f := newFleet(t, simulated.DefaultConfig())
	cfg := createDefaultConfig().(*Config)
	cfg.JobReport.Enabled = true
	core, logs := observer.New(zapcore.InfoLevel)
	set := processortest.NewNopSettings(metadata.Type)
	set.Logger = zap.New(core)
	p, _ := newProcessor(t, cfg, set)
	for sec := range 400 {
		md := f.next(t)
		attributeJobs(md, sec, 200, 180)
		require.NoError(t, p.ConsumeMetrics(context.Background(), md))
	}
	lines := jobLines(logs)
	require.Len(t, lines, 2, "%v", lines)
	slurm, k8s := lines[0].ContextMap(), lines[1].ContextMap()
	assert.Equal(t, "slurm job della/4242", slurm["job"])
	assert.Equal(t, int64(2), slurm["gpus"])
	assert.InDelta(t, 179.0, slurm["run_seconds"], 30)
	assert.Equal(t, "ml/llm-pretrain", k8s["job"])
	assert.Equal(t, int64(8), k8s["gpus"])
	assert.InDelta(t, 199.0, k8s["run_seconds"], 30)
	assert.InDelta(t, 0.903, k8s["share.compute_bound"], 0.05)
}
