package slurm

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Job is what scontrol show job -o says of a job.
type Job struct {
	ID, Name, User, Account, Partition, State string        // State as Slurm prints it: RUNNING, COMPLETED, ...
	Nodes                                     []string      // expanded hostlist
	TimeLimit                                 time.Duration // 0 when UNLIMITED
	RunTime                                   time.Duration
	StartTime, EndTime                        time.Time
	GRES                                      string // e.g. "gpu:2" as Slurm reports it (TRES per node)
	// ArrayJobID and ArrayTaskID are set for a task of a job array.
	ArrayJobID, ArrayTaskID string
	// GPUs are the GPU indices the job holds on each of its nodes, from
	// show job -d ("GRES=gpu:2(IDX:0-1)"): the gres.conf order of the
	// node's GPUs, which is the device minor number where gres.conf lists
	// /dev/nvidia[0-7] in order. Empty when the job holds no GPU or
	// Slurm does not say.
	GPUs map[string][]int
	// Requeue is false for a job that may not be requeued (--no-requeue,
	// or JobRequeue=0 in slurm.conf).
	Requeue bool
}

// Running says whether the job is running (or completing) on its nodes.
func (j Job) Running() bool {
	return j.State == "RUNNING" || j.State == "COMPLETING" || j.State == "SUSPENDED"
}

// HoldsGPU says whether the job holds GPU index idx on node.
func (j Job) HoldsGPU(node string, idx int) bool { return slices.Contains(j.GPUs[node], idx) }

// Job returns the job with id. A job array's id returns its first task.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	if id == "" || strings.ContainsAny(id, " \t\n=") {
		return Job{}, fmt.Errorf("slurm job id %q: want a job id such as 4242 or 4242_7", id)
	}
	out, err := c.scontrol(ctx, "show", "job", "-d", "-o", id)
	if err != nil {
		return Job{}, err
	}
	jobs, err := c.parseJobs(out)
	if err != nil {
		return Job{}, err
	}
	if len(jobs) == 0 {
		return Job{}, fmt.Errorf("scontrol show job %s: %w (no record printed)", id, ErrNotFound)
	}
	return jobs[0], nil
}

// Jobs returns every job the controller knows (running, pending, and
// those finished within MinJobAge).
func (c *Client) Jobs(ctx context.Context) ([]Job, error) {
	out, err := c.scontrol(ctx, "show", "job", "-d", "-o")
	if err != nil {
		return nil, err
	}
	return c.parseJobs(out)
}

// JobsOnNode returns the jobs running on node.
func (c *Client) JobsOnNode(ctx context.Context, node string) ([]Job, error) {
	jobs, err := c.Jobs(ctx)
	if err != nil {
		return nil, err
	}
	var on []Job
	for _, j := range jobs {
		if j.Running() && slices.Contains(j.Nodes, node) {
			on = append(on, j)
		}
	}
	return on, nil
}

func (c *Client) parseJobs(out string) ([]Job, error) {
	var jobs []Job
	var errs []error
	for i, l := range lines(out) {
		if strings.HasPrefix(l, "No jobs in the system") {
			continue
		}
		j, err := parseJob(l, c.loc())
		if err != nil {
			errs = append(errs, fmt.Errorf("scontrol show job, record %d: %w", i+1, err))
			continue
		}
		jobs = append(jobs, j)
	}
	return jobs, errors.Join(errs...)
}

// parseJob reads one line of scontrol show job -d -o.
func parseJob(line string, loc *time.Location) (Job, error) {
	rec := parseRecord(line)
	j := Job{
		ID: rec.get("JobId"), Name: rec.get("JobName"), State: rec.get("JobState"),
		Partition: rec.get("Partition"), Account: rec.get("Account"),
		ArrayJobID: rec.get("ArrayJobId"), ArrayTaskID: rec.get("ArrayTaskId"),
		Requeue: rec.get("Requeue") == "1",
	}
	if j.ID == "" {
		return Job{}, fmt.Errorf("no JobId= in %q", clip(line))
	}
	if unset(j.Account) {
		j.Account = ""
	}
	if unset(j.Partition) {
		j.Partition = ""
	}
	// UserId=alice(1000): the name, without the uid.
	j.User, _, _ = strings.Cut(rec.get("UserId"), "(")
	// TresPerNode=gres:gpu:2 (Slurm 21.08 and later; earlier: Gres=gpu:2).
	gres := rec.get("TresPerNode")
	if gres == "" {
		gres = rec.get("Gres")
	}
	if !unset(gres) {
		j.GRES = strings.ReplaceAll(gres, "gres:", "")
	}
	var err error
	if j.Nodes, err = ExpandHostlist(rec.get("NodeList")); err != nil {
		return Job{}, fmt.Errorf("job %s: NodeList: %w", j.ID, err)
	}
	for key, dst := range map[string]*time.Duration{"TimeLimit": &j.TimeLimit, "RunTime": &j.RunTime} {
		v := rec.get(key)
		if unset(v) || v == "Partition_Limit" {
			continue
		}
		if *dst, err = ParseDuration(v); err != nil {
			return Job{}, fmt.Errorf("job %s: %s: %w", j.ID, key, err)
		}
	}
	if j.StartTime, err = parseTime(rec.get("StartTime"), loc); err != nil {
		return Job{}, fmt.Errorf("job %s: StartTime: %w", j.ID, err)
	}
	if j.EndTime, err = parseTime(rec.get("EndTime"), loc); err != nil {
		return Job{}, fmt.Errorf("job %s: EndTime: %w", j.ID, err)
	}
	if j.GPUs, err = jobGPUs(rec); err != nil {
		return Job{}, fmt.Errorf("job %s: %w", j.ID, err)
	}
	return j, nil
}

// jobGPUs reads show job -d's per-node groups, "Nodes=gpu[01-02]
// CPU_IDs=0-3 Mem=0 GRES=gpu:2(IDX:0-1)": each GRES= applies to the
// nodes of the Nodes= before it.
func jobGPUs(rec record) (map[string][]int, error) {
	var out map[string][]int
	var nodes []string
	for _, f := range rec {
		switch f.key {
		case "Nodes":
			var err error
			if nodes, err = ExpandHostlist(f.value); err != nil {
				return nil, fmt.Errorf("the job's Nodes=%s: %w", f.value, err)
			}
		case "GRES":
			idx, err := gpuIndices(f.value)
			if err != nil {
				return nil, fmt.Errorf("GRES=%s: %w", f.value, err)
			}
			if len(idx) == 0 {
				continue
			}
			if out == nil {
				out = map[string][]int{}
			}
			for _, n := range nodes {
				out[n] = append(out[n], idx...)
			}
		}
	}
	return out, nil
}

// gpuIndices reads the gpu and shard entries of a GRES allocation such as
// "gpu:a100:2(IDX:0-1),mps:100(0/100)" or "shard:2(IDX:0)"; entries of
// other GRES are ignored, and IDX:N/A is none. A shard's IDX is the GPU
// its shards are on (gres.conf gives each GPU's shards that GPU's File),
// as Slurm 22.05's scontrol -d prints it: two jobs of two shards each on
// GPU 0 both read "shard:2(IDX:0)".
func gpuIndices(s string) ([]int, error) {
	var out []int
	for _, entry := range splitTop(s) {
		name, _, _ := strings.Cut(entry, ":")
		name, _, _ = strings.Cut(name, "(")
		if name != "gpu" && name != "shard" {
			continue
		}
		open := strings.Index(entry, "(IDX:")
		if open < 0 {
			continue
		}
		inner, _, ok := strings.Cut(entry[open+len("(IDX:"):], ")")
		if !ok {
			return nil, fmt.Errorf("%q: '(IDX:' not closed", entry)
		}
		if unset(inner) {
			continue
		}
		idx, err := parseIndices(inner)
		if err != nil {
			return nil, err
		}
		for _, i := range idx {
			if !slices.Contains(out, i) { // a GPU both as gpu and as shards: once
				out = append(out, i)
			}
		}
	}
	return out, nil
}

// splitTop splits at commas outside parentheses.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Requeue puts a running job back in the queue (scontrol requeue): it is
// killed where it runs and starts again elsewhere, or on the same node
// once it is back.
func (c *Client) Requeue(ctx context.Context, jobID string) error {
	if jobID == "" || strings.ContainsAny(jobID, " \t\n=") {
		return fmt.Errorf("slurm job id %q: want a job id such as 4242", jobID)
	}
	_, err := c.scontrol(ctx, "requeue", jobID)
	return err
}
