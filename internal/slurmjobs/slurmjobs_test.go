package slurmjobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// fakeSource answers from a table, counts its queries, and fails while
// down is set.
type fakeSource struct {
	mu      sync.Mutex
	jobs    map[string]Details
	down    error
	queries map[string]int
	asked   chan string
}

func (f *fakeSource) Job(_ context.Context, id string) (Details, error) {
	f.mu.Lock()
	f.queries[id]++
	d, ok := f.jobs[id]
	down := f.down
	f.mu.Unlock()
	defer func() { f.asked <- id }()
	if down != nil {
		return Details{}, down
	}
	if !ok {
		return Details{}, errors.New("scontrol: Invalid job id specified")
	}
	return d, nil
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newCache(t *testing.T, src *fakeSource) (*Cache, *clock, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.WarnLevel)
	c := New(src, Options{Timeout: time.Second, TTL: time.Minute, RetryMin: 10 * time.Second, RetryMax: 40 * time.Second, MaxJobs: 2}, zap.New(core))
	clk := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	c.now = clk.now
	t.Cleanup(c.Close)
	return c, clk, logs
}

func newSource() *fakeSource {
	return &fakeSource{
		jobs:    map[string]Details{"4242": {Name: "climate", User: "alice", Account: "physics", Partition: "gpu"}},
		queries: map[string]int{}, asked: make(chan string, 16),
	}
}

// TestLookup: a miss answers nothing at once and queues one query; the
// answer is then used without asking again until the TTL.
func TestLookup(t *testing.T) {
	src := newSource()
	c, clk, _ := newCache(t, src)
	_, ok := c.Lookup("4242")
	require.False(t, ok, "a miss never waits for Slurm")
	_, _ = c.Lookup("4242") // queued already: not asked twice
	require.Equal(t, "4242", <-src.asked)
	require.Eventually(t, func() bool { _, ok := c.Lookup("4242"); return ok }, 5*time.Second, time.Millisecond)
	d, _ := c.Lookup("4242")
	require.Equal(t, Details{Name: "climate", User: "alice", Account: "physics", Partition: "gpu"}, d)
	src.mu.Lock()
	require.Equal(t, 1, src.queries["4242"])
	src.mu.Unlock()

	// Past the TTL the old answer is used while a new one is asked for.
	src.mu.Lock()
	src.jobs["4242"] = Details{Name: "climate", User: "alice", Account: "physics2", Partition: "gpu"}
	src.mu.Unlock()
	clk.add(time.Minute)
	d, ok = c.Lookup("4242")
	require.True(t, ok)
	require.Equal(t, "physics", d.Account)
	<-src.asked
	require.Eventually(t, func() bool { d, _ := c.Lookup("4242"); return d.Account == "physics2" }, 5*time.Second, time.Millisecond)
}

// TestRetry: a failure is retried after a back-off that doubles to its
// cap, logged once while it stays the same, and the job is answered once
// Slurm is back.
func TestRetry(t *testing.T) {
	src := newSource()
	src.down = errors.New("slurm_load_jobs error: Unable to contact slurm controller")
	c, clk, logs := newCache(t, src)
	_, _ = c.Lookup("4242")
	<-src.asked
	for _, wait := range []time.Duration{10 * time.Second, 20 * time.Second, 40 * time.Second, 40 * time.Second} {
		// Within the back-off: no query.
		require.Eventually(t, func() bool {
			c.mu.Lock()
			defer c.mu.Unlock()
			return !c.entries["4242"].queued
		}, 5*time.Second, time.Millisecond)
		clk.add(wait - time.Second)
		_, _ = c.Lookup("4242")
		select {
		case <-src.asked:
			t.Fatalf("asked within the %v back-off", wait)
		case <-time.After(20 * time.Millisecond):
		}
		clk.add(time.Second)
		_, ok := c.Lookup("4242")
		require.False(t, ok)
		<-src.asked
	}
	require.Equal(t, 1, logs.Len(), "one warning while the failure stays the same")
	require.Contains(t, logs.All()[0].Message, "the GPU keeps its job ID")

	src.mu.Lock()
	src.down = nil
	src.mu.Unlock()
	require.Eventually(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.entries["4242"].queued
	}, 5*time.Second, time.Millisecond)
	clk.add(40 * time.Second)
	_, _ = c.Lookup("4242")
	<-src.asked
	require.Eventually(t, func() bool { _, ok := c.Lookup("4242"); return ok }, 5*time.Second, time.Millisecond)
}

// TestEvict: the cache holds MaxJobs jobs; the least recently used goes.
func TestEvict(t *testing.T) {
	src := newSource()
	src.jobs["1"], src.jobs["2"] = Details{User: "u1"}, Details{User: "u2"}
	c, clk, _ := newCache(t, src)
	for _, id := range []string{"1", "2"} {
		_, _ = c.Lookup(id)
		<-src.asked
		require.Eventually(t, func() bool { _, ok := c.Lookup(id); return ok }, 5*time.Second, time.Millisecond)
		clk.add(time.Second)
	}
	_, _ = c.Lookup("2")
	_, _ = c.Lookup("4242") // evicts 1, the least recently used
	<-src.asked
	c.mu.Lock()
	_, has1 := c.entries["1"]
	_, has2 := c.entries["2"]
	c.mu.Unlock()
	require.False(t, has1)
	require.True(t, has2)
}
