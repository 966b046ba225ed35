package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otelcol-gpu/otelcol-gpu/internal/jobreport"
	"github.com/otelcol-gpu/otelcol-gpu/internal/trace"
)

// TestJobSection: the unit tests' fleet is one job, ml/train; its report
// is in the page's data and in a section of its own, advice first, each
// item a rule's code, the evidence's markup shown as text.
func TestJobSection(t *testing.T) {
	d, err := fleet(true).Build(Options{Source: "causes.csv"})
	require.NoError(t, err)
	require.Len(t, d.Jobs, 1)
	j := d.Jobs[0]
	assert.Equal(t, jobreport.Key{Scheduler: jobreport.Kubernetes, Scope: "ml", ID: "train"}, j.Job)
	assert.Equal(t, 4, j.GPUs)
	assert.True(t, j.Running, "the GPUs report for the job to the trace's end")
	var codes []string
	for _, a := range j.Advice {
		codes = append(codes, a.Code)
	}
	assert.Equal(t, []string{jobreport.AdviceInputStarved, jobreport.AdviceStraggler}, codes)

	assert.Equal(t, "1 job in the trace (1 with advice): each one's report is at the end of the page.", d.Summary[len(d.Summary)-1])

	page := render(t, d)
	s := section(t, page, "jobs")
	assert.Greater(t, strings.Index(page, `<section id="jobs">`), strings.Index(page, `<section id="alerts">`), "the jobs last")
	assert.Contains(t, s, `<article class="job" data-job="ml/train">`)
	assert.Contains(t, s, `<li data-code="input_starved">The data loader starves h1/gpu0, waiting for input 52 % of the time: its CPU limit throttles it`)
	assert.Less(t, strings.Index(s, `class="advice"`), strings.Index(s, `class="job-gpus"`), "advice before the facts")
	assert.NotContains(t, s, "<script>", "the evidence's markup is text")
	assert.Contains(t, s, "&lt;script&gt;")
	assert.Contains(t, page, jobStyle)
}

// TestJobSectionChosen: -job's choice leaves the other jobs out; a name
// the trace lacks is an error listing those it has; a trace of no job has
// no section.
func TestJobSectionChosen(t *testing.T) {
	c := fleet(false)
	for i := range 3 {
		r := trace.Row{Time: float64(t0 + 60*i), UUID: "GPU-x", Host: "h3", Namespace: "cv", Job: "eval"}
		c.Add(&r, Verdict{Class: "idle", Usage: "workload_idle"})
	}
	d, err := c.Build(Options{})
	require.NoError(t, err)
	require.Len(t, d.Jobs, 2)
	d, err = c.Build(Options{Jobs: JobOptions{Job: "eval"}})
	require.NoError(t, err)
	require.Len(t, d.Jobs, 1)
	assert.Equal(t, "cv/eval", d.Jobs[0].Job.String())
	assert.False(t, d.Jobs[0].Running, "eval's GPU stopped at minute 2 of 30")
	_, err = c.Build(Options{Jobs: JobOptions{Job: "nope"}})
	require.EqualError(t, err, `no job "nope" in the trace; its jobs: cv/eval, ml/train`)

	n := NewCollector()
	r := trace.Row{Time: t0, UUID: "GPU-s", Namespace: "serving", Deployment: "chat"}
	n.Add(&r, Verdict{Class: "compute_bound"})
	d, err = n.Build(Options{})
	require.NoError(t, err)
	assert.Empty(t, d.Jobs)
	assert.NotContains(t, render(t, d), `<section id="jobs">`)
}
