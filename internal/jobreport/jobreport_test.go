package jobreport

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		want  Key
		ok    bool
		str   string
	}{
		{"kubernetes job", map[string]string{"k8s.namespace.name": "ml", "k8s.job.name": "llm-pretrain"}, Key{Kubernetes, "ml", "llm-pretrain"}, true, "ml/llm-pretrain"},
		{"slurm job with cluster", map[string]string{"slurm.job.id": "4242", "slurm.cluster.name": "della", "host.name": "n1"}, Key{Slurm, "della", "4242"}, true, "slurm job della/4242"},
		{"slurm job without cluster", map[string]string{"slurm.job.id": "77", "slurm.job.step": "0"}, Key{Slurm, "", "77"}, true, "slurm job 77"},
		// Slurm on Kubernetes: the pod is where the job runs, the Slurm job owns the GPU.
		{"slurm on kubernetes", map[string]string{"slurm.job.id": "9", "k8s.namespace.name": "slurm", "k8s.job.name": "x"}, Key{Slurm, "", "9"}, true, "slurm job 9"},
		{"a deployment", map[string]string{"k8s.namespace.name": "serving", "k8s.deployment.name": "chat"}, Key{}, false, ""},
		{"empty slurm id", map[string]string{"slurm.job.id": ""}, Key{}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := pcommon.NewMap()
			for k, v := range tc.attrs {
				m.PutStr(k, v)
			}
			got, ok := KeyOf(m)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("KeyOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
			if ok && got.String() != tc.str {
				t.Errorf("String() = %q, want %q", got.String(), tc.str)
			}
		})
	}
	k := Key{Slurm, "della", "4242"}
	for q, want := range map[string]bool{"4242": true, "della/4242": true, "slurm job della/4242": true, "424": false, "": false, "other/4242": false} {
		if k.Matches(q) != want {
			t.Errorf("Matches(%q) = %v, want %v", q, !want, want)
		}
	}
}

// gen feeds a job: gpus GPUs on hosts of two GPUs each, one sample a
// minute for n samples, the sample shaped by fn.
func gen(k Key, gpus, n int, fn func(g, i int, s *Sample)) *Job {
	const dt = 60.0
	j := NewJob(k)
	for i := range n {
		for g := range gpus {
			s := NewSample()
			s.Time = 1767225600 + float64(i)*dt
			s.UUID = "GPU-" + string(rune('a'+g))
			s.Host = "node-" + string(rune('0'+g/2))
			s.Name = s.Host + "/gpu" + string(rune('0'+g%2))
			s.Util, s.MemUsed, s.MemTotal = 90, 40e9, 80e9
			s.Class, s.Usage, s.PricePerHour, s.Health = "compute_bound", "used", 3.6, "ok"
			fn(g, i, &s)
			j.Add(&s)
		}
	}
	return j
}

var slurmKey = Key{Slurm, "c1", "4242"}

func codes(adv []Advice) []string {
	var out []string
	for _, a := range adv {
		out = append(out, a.Code)
	}
	return out
}

func TestFactsJobstats(t *testing.T) {
	// 4 GPUs on 2 nodes, 11 samples a minute apart: 10 min each.
	j := gen(slurmKey, 4, 11, func(g, i int, s *Sample) {
		s.Util = float64(10 * (g + 1)) // means 10, 20, 30, 40
		s.MemUsed = float64(g+1) * 10e9
		if i == 5 {
			s.MemUsed = 70e9 // the peak, once
		}
	})
	f := j.Facts()
	if f.GPUs != 4 || len(f.Nodes) != 2 || len(f.Nodes[0].GPUs) != 2 {
		t.Fatalf("GPUs %d, nodes %+v", f.GPUs, f.Nodes)
	}
	if f.RunSeconds() != 600 || f.GPUSeconds != 2400 {
		t.Errorf("run %v s, GPU time %v s; want 600, 2400", f.RunSeconds(), f.GPUSeconds)
	}
	if f.Util != 25 {
		t.Errorf("utilization %v, want the mean of the GPU means, 25", f.Util)
	}
	if g := f.Nodes[1].GPUs[1]; g.Util != 40 || g.MemPeak != 70e9 || g.MemTotal != 80e9 {
		t.Errorf("node-1/gpu1: %+v", g)
	}
	if want := 4 * 70e9 / (4 * 80e9); math.Abs(f.MemShare-want) > 1e-12 {
		t.Errorf("memory share %v, want the peaks over the totals, %v", f.MemShare, want)
	}
	// Cost: 2400 GPU-s at $3.60 an hour.
	if c := f.Cost(""); math.Abs(c-2.4) > 1e-9 {
		t.Errorf("cost %v, want 2.40", c)
	}
	if !math.IsNaN(f.CPUEfficiency) {
		t.Errorf("CPU efficiency %v without node evidence, want NaN", f.CPUEfficiency)
	}
}

func TestCPUEfficiency(t *testing.T) {
	// Two GPUs of one pod at an 8-CPU limit using 2 CPUs: 25 %, counted once.
	j := gen(Key{Kubernetes, "ml", "x"}, 2, 11, func(_, i int, s *Sample) {
		s.Pod, s.CPULimit, s.CPUSeconds = "pod-a", 8, float64(i)*60*2
	})
	f := j.Facts()
	if math.Abs(f.CPUEfficiency-0.25) > 1e-12 {
		t.Fatalf("CPU efficiency %v, want 0.25", f.CPUEfficiency)
	}
}

func TestAdviceRules(t *testing.T) {
	base := func(_, _ int, _ *Sample) {}
	for _, tc := range []struct {
		name      string
		gpus, n   int
		fn        func(g, i int, s *Sample)
		limit     float64
		running   bool
		want      []string
		inText    string
		notInText string
	}{
		{name: "a busy job needs nothing", gpus: 4, n: 11, fn: base, want: nil},
		{name: "one GPU unused", gpus: 1, n: 11, fn: func(_, _ int, s *Sample) { s.Util = 0; s.Class = "idle" }, want: []string{AdviceGPUUnused}, inText: "did not use the GPU"},
		{name: "two of four unused", gpus: 4, n: 11, fn: func(g, _ int, s *Sample) {
			if g >= 2 {
				s.Util, s.Class = 0, "idle"
			}
		}, want: []string{AdviceGPUUnused}, inText: "did not use 2 of its 4 GPUs (node-1/gpu0, node-1/gpu1: 0 % utilization): ask for 2."},
		// jobstats' MIN_RUNTIME_SECONDS: a 4-minute job gets no such note.
		{name: "unused but short", gpus: 1, n: 5, fn: func(_, _ int, s *Sample) { s.Util = 0 }, want: nil},
		{name: "low utilization", gpus: 2, n: 11, fn: func(_, _ int, s *Sample) { s.Util = 12 }, want: []string{AdviceLowUtil}, inText: "only 12 % over 2 GPUs: ask for fewer GPUs"},
		{name: "somewhat low", gpus: 1, n: 11, fn: func(_, _ int, s *Sample) { s.Util = 20 }, want: []string{AdviceLowUtil}, notInText: "only"},
		{name: "utilization at 25 % is fine", gpus: 1, n: 11, fn: func(_, _ int, s *Sample) { s.Util = 25 }, want: nil},
		{name: "input starved by its CPU limit", gpus: 2, n: 11, fn: func(g, i int, s *Sample) {
			if g == 1 && i >= 6 {
				s.Class, s.Cause, s.Why = "input_bound", "cpu_throttled", "throttled in 38 % of periods at an 8-CPU limit"
			}
		}, want: []string{AdviceInputStarved}, inText: "The data loader starves node-0/gpu1, waiting for input 40 % of the time: its CPU limit throttles it (throttled in 38 % of periods"},
		// 1 minute of 10 is input bound: 10 % is the bar.
		{name: "input bound at the bar", gpus: 1, n: 11, fn: func(_, i int, s *Sample) {
			if i == 3 {
				s.Class = "input_bound"
			}
		}, want: []string{AdviceInputStarved}},
		{name: "input bound under the bar", gpus: 1, n: 21, fn: func(_, i int, s *Sample) {
			if i == 3 {
				s.Class = "input_bound"
			}
		}, want: nil},
		{name: "a straggler", gpus: 4, n: 11, fn: func(g, i int, s *Sample) {
			if g == 3 && i >= 2 && i < 6 {
				s.Straggler, s.Score, s.Cause = true, 2.5, "fabric_errors"
			}
		}, want: []string{AdviceStraggler}, inText: "node-1/gpu1 held the job back for 4 min from 2026-01-01 00:02:00 (score up to 2.50): its rail counts link errors"},
		{name: "collectives", gpus: 2, n: 11, fn: func(_, i int, s *Sample) {
			if i >= 7 {
				s.Class = "communication_bound"
			}
		}, want: []string{AdviceCommunication}, inText: "waited on collectives 30 % of their time"},
		{name: "throttled", gpus: 1, n: 11, fn: func(_, i int, s *Sample) {
			if i == 0 {
				s.Class, s.Cause = "throttled", "thermal"
			}
		}, want: []string{AdviceThrottled}, inText: "too hot"},
		{name: "held idle", gpus: 2, n: 11, fn: func(_, i int, s *Sample) {
			if i >= 7 {
				s.Usage = "workload_idle"
			}
		}, want: []string{AdviceIdleHeld}, inText: "0.10 GPU-h (30 % of its GPU time, $0.36)"},
		// 2 × 2 minutes: under the 300 GPU-seconds worth a word.
		{name: "held idle briefly", gpus: 2, n: 11, fn: func(_, i int, s *Sample) {
			if i >= 8 {
				s.Usage = "workload_idle"
			}
		}, want: nil},
		{name: "time limit far off", gpus: 1, n: 21, fn: base, limit: 4 * 3600, want: []string{AdviceTimeLimit}, inText: "ran 20 min of its 4 h 00 min time limit (8.3 %)"},
		{name: "time limit while running", gpus: 1, n: 21, fn: base, limit: 4 * 3600, running: true, want: nil},
		{name: "time limit nearly used", gpus: 1, n: 21, fn: base, limit: 1800, want: nil},
		{name: "a failed GPU", gpus: 2, n: 11, fn: func(g, i int, s *Sample) {
			if g == 0 && i >= 4 {
				s.Health, s.Class = "failed", "faulted"
			}
		}, want: []string{AdviceGPUUnhealthy}, inText: "node-0/gpu0 became failed at 2026-01-01 00:04:00"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := gen(slurmKey, tc.gpus, tc.n, tc.fn).Build(tc.running, tc.limit)
			got := codes(r.Advice)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("advice %v, want %v: %+v", got, tc.want, r.Advice)
			}
			var b strings.Builder
			for _, a := range r.Advice {
				b.WriteString(a.Text + "\n")
			}
			text := b.String()
			if tc.inText != "" && !strings.Contains(text, tc.inText) {
				t.Errorf("advice %q does not say %q", text, tc.inText)
			}
			if tc.notInText != "" && strings.Contains(text, tc.notInText) {
				t.Errorf("advice %q says %q", text, tc.notInText)
			}
		})
	}
}

func TestAdviceIsShort(t *testing.T) {
	r := gen(slurmKey, 4, 11, func(g, i int, s *Sample) {
		s.Util, s.Usage, s.Class = 5, "workload_idle", "input_bound"
		if g == 0 {
			s.Util, s.Health, s.Straggler, s.Score = 0, "degraded", true, 3
		}
		if i == 0 {
			s.Class = "throttled"
		}
	}).Build(false, 100*3600)
	if len(r.Advice) != MaxAdvice {
		t.Fatalf("%d items, want at most %d: %v", len(r.Advice), MaxAdvice, codes(r.Advice))
	}
	if r.Advice[0].Code != AdviceGPUUnhealthy {
		t.Errorf("first advice %s, want the unhealthy GPU first", r.Advice[0].Code)
	}
}

func TestEpisodes(t *testing.T) {
	j := gen(slurmKey, 2, 11, func(g, i int, s *Sample) {
		if g == 1 && i >= 3 && i < 5 {
			s.Pending = []string{"GPUStraggler"}
		}
		if g == 1 && i >= 5 && i < 8 {
			s.Firing = []string{"GPUStraggler"}
		}
		if g == 0 && i >= 9 {
			s.Straggler, s.Score = true, 1.4
		}
	})
	f := j.Facts()
	if len(f.Alerts) != 1 {
		t.Fatalf("alerts %+v", f.Alerts)
	}
	if a := f.Alerts[0]; a.Pending != 1767225600+180 || a.Firing != 1767225600+300 || a.Resolved != 1767225600+480 {
		t.Errorf("alert %+v", a)
	}
	if len(f.Stragglers) != 1 || !f.Stragglers[0].Open || f.Stragglers[0].To != 1767225600+600 {
		t.Errorf("stragglers %+v, want one still open at the end", f.Stragglers)
	}
	// Bounded: a flapping GPU keeps maxEpisodes and counts the rest.
	j = gen(slurmKey, 1, 200, func(_, i int, s *Sample) { s.Straggler = i%2 == 0 })
	if f := j.Facts(); len(f.Stragglers) != maxEpisodes || f.Dropped == 0 {
		t.Errorf("%d stragglers, %d dropped: want %d kept and the rest counted", len(f.Stragglers), f.Dropped, maxEpisodes)
	}
}

func TestFleetEnded(t *testing.T) {
	fl := NewFleet(2)
	a, b := Key{Kubernetes, "ml", "a"}, Key{Slurm, "", "7"}
	add := func(k Key, uuid string, at float64) {
		s := NewSample()
		s.Time, s.UUID, s.Class = at, uuid, "compute_bound"
		fl.Add(k, &s)
	}
	// Both jobs scraped every 30 s; b stops at 300 s.
	for t := 0.0; t <= 300; t += 30 {
		add(a, "GPU-a", t)
		add(b, "GPU-b", t)
	}
	// Between scrapes: a minute with no sample of either is not an end.
	if got := fl.Ended(360, 60); len(got) != 0 {
		t.Fatalf("ended at 360 s: %v", keys(got))
	}
	for t := 330.0; t <= 600; t += 30 {
		add(a, "GPU-a", t)
	}
	got := fl.Ended(600, 60)
	if len(got) != 1 || got[0].Key() != b {
		t.Fatalf("ended at 600 s: %v, want only %v", keys(got), b)
	}
	if again := fl.Ended(630, 60); len(again) != 0 {
		t.Errorf("ended twice: %v", keys(again))
	}
	// A slow scrape (every 5 min) waits three intervals, not quiet.
	add(b, "GPU-b", 1000)
	add(b, "GPU-b", 1300)
	if got := fl.Ended(1300+600, 60); len(got) != 1 || got[0].Key() != a {
		t.Errorf("ended %v, want a only", keys(got))
	}
	if got := fl.Ended(1300+901, 60); len(got) != 1 || got[0].Key() != b {
		t.Errorf("ended %v, want b after 3 × 300 s", keys(got))
	}
	// The bound: a third job is refused and counted.
	add(Key{Kubernetes, "x", "1"}, "u1", 0)
	add(Key{Kubernetes, "x", "2"}, "u2", 0)
	add(Key{Kubernetes, "x", "3"}, "u3", 0)
	if fl.Len() != 2 || fl.Refused != 1 {
		t.Errorf("%d jobs, %d refused; want 2 and 1", fl.Len(), fl.Refused)
	}
}

func keys(js []*Job) []Key {
	var out []Key
	for _, j := range js {
		out = append(out, j.Key())
	}
	return out
}

func TestLogLine(t *testing.T) {
	r := gen(slurmKey, 2, 11, func(_, i int, s *Sample) {
		if i >= 7 {
			s.Usage, s.Class = "workload_idle", "idle"
		}
	}).Build(false, 0)
	msg, fields := LogLine(&r)
	want := "Job slurm job c1/4242 ended after 10 min on 2 GPUs: compute_bound 70 %, idle 30 %; 0.10 GPU-h held idle ($0.36). The job held its GPUs idle"
	if !strings.HasPrefix(msg, want) || strings.Contains(msg, "\n") {
		t.Errorf("message\n%q\nwant it to start\n%q", msg, want)
	}
	names := map[string]bool{}
	for _, f := range fields {
		names[f.Key] = true
	}
	for _, k := range []string{"job", "gpus", "run_seconds", "gpu_hours_idle", "cost_idle", "share.compute_bound", "advice"} {
		if !names[k] {
			t.Errorf("no field %s", k)
		}
	}
}

func TestJSONHasNoNaN(t *testing.T) {
	j := gen(slurmKey, 1, 3, func(_, _ int, s *Sample) { s.Util, s.MemUsed, s.MemTotal = math.NaN(), math.NaN(), math.NaN() })
	r := j.Build(true, 0)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"util":null`, `"mem_share":null`, `"cpu_efficiency":null`, `"mem_peak":null`, `"advice":`, `"scheduler":"slurm"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s: %s", want, b)
		}
	}
}

// TestJobstatsAggregates holds the job's figures to jobstats' way of
// taking them where another would differ: utilization is the mean of the
// GPUs' means (not of all samples pooled), memory the sum of the peaks
// over the sum of the totals (not the mean of the GPUs' shares).
func TestJobstatsAggregates(t *testing.T) {
	j := NewJob(slurmKey)
	add := func(uuid string, at, util, used, total float64) {
		s := NewSample()
		s.Time, s.UUID, s.Util, s.MemUsed, s.MemTotal, s.Class = at, uuid, util, used, total, "compute_bound"
		j.Add(&s)
	}
	for i := range 10 {
		add("GPU-a", float64(60*i), 100, 70e9, 80e9)
	}
	add("GPU-b", 0, 0, 2e9, 20e9)
	add("GPU-b", 60, 0, 1e9, 20e9)
	f := j.Facts()
	if f.Util != 50 {
		t.Errorf("utilization %v, want the mean of the means, 50 (pooled: 83)", f.Util)
	}
	if want := 72e9 / 100e9; math.Abs(f.MemShare-want) > 1e-12 {
		t.Errorf("memory %v, want the sum of the peaks over the totals, %v (mean of the shares: 0.4875)", f.MemShare, want)
	}
	// jobstats asks for less time only after three of its minimum run
	// times (900 s): 15 min exactly is not enough.
	r := gen(slurmKey, 1, 16, func(_, _ int, _ *Sample) {}).Build(false, 4*3600)
	if got := codes(r.Advice); len(got) != 0 {
		t.Errorf("a 15-minute job got %v", got)
	}
}

// TestTextSlurm: a Slurm job's report, from GPUs whose resources name it
// as the Slurm attribution does, reads as jobstats' does: the job, its
// nodes and GPUs, run time against the limit, the notes.
func TestTextSlurm(t *testing.T) {
	fl := NewFleet(0)
	for i := range 21 {
		for g, host := range []string{"della-i14g2", "della-i14g2", "della-i14g3", "della-i14g3"} {
			m := pcommon.NewMap()
			m.PutStr("slurm.job.id", "39798795")
			m.PutStr("slurm.job.step", "0")
			m.PutStr("slurm.job.user", "aturing")
			m.PutStr("slurm.cluster.name", "della")
			m.PutStr("host.name", host)
			k, ok := KeyOf(m)
			require(t, ok)
			s := NewSample()
			s.Time, s.UUID, s.Host, s.Name = 1767225600+60*float64(i), "GPU-"+string(rune('a'+g)), host, host+"/gpu"+string(rune('0'+g%2))
			s.Util, s.MemUsed, s.MemTotal, s.Class, s.Usage = 66, 26.5e9, 40e9, "compute_bound", "used"
			fl.Add(k, &s)
		}
	}
	js := fl.Find("39798795")
	require(t, len(js) == 1)
	r := js[0].Build(false, 4*3600)
	var b strings.Builder
	if err := WriteText(&b, &r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"              Job: slurm job della/39798795\n",
		"        Scheduler: slurm\n",
		"            State: ended\n",
		"             GPUs: 4 (della-i14g2: 2, della-i14g3: 2)\n",
		"       Time Limit: 4 h 00 min (8.3 % used)\n",
		"      della-i14g3/gpu1: 66.0%\n",
		"      della-i14g2/gpu0: 26.5 GB/40.0 GB (66 %)\n",
		"  * This job ran 20 min of its 4 h 00 min time limit (8.3 %): ask for less time,\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}

func require(t *testing.T, ok bool) {
	t.Helper()
	if !ok {
		t.Fatal("unexpected")
	}
}
