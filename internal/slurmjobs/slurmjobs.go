// Package slurmjobs keeps what Slurm says of the jobs on a node's GPUs
// (name, user, account, partition), so that the receiver can attribute a
// GPU to its job's owner without asking slurmctld at every scrape.
//
// A node knows its GPUs' job IDs (the processes' cgroups, a prolog's
// mapping files); the rest is slurmctld's. A scrape never waits for it:
// Lookup answers from the cache, and a miss queues a query that one
// background worker makes, bounded by a timeout. A failed query is retried
// with a capped back-off, and in the meantime the GPU keeps its job ID
// alone: a Slurm that cannot be reached costs attributes, never a scrape.
package slurmjobs

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// Details is what Slurm says of a job beyond its ID.
type Details struct {
	Name, User, Account, Partition string
}

// Source asks Slurm about one job (scontrol show job, slurmrestd).
type Source interface {
	Job(ctx context.Context, id string) (Details, error)
}

// SourceFunc adapts a function to Source.
type SourceFunc func(ctx context.Context, id string) (Details, error)

// Job implements Source.
func (f SourceFunc) Job(ctx context.Context, id string) (Details, error) { return f(ctx, id) }

// Options tune the cache.
type Options struct {
	// Timeout bounds one query.
	Timeout time.Duration
	// TTL is how long an answer is used before it is asked again (a job's
	// name, account and partition can be changed with scontrol update
	// while it runs); the old answer is used until the new one comes.
	TTL time.Duration
	// RetryMin and RetryMax bound the back-off after a failed query.
	RetryMin, RetryMax time.Duration
	// MaxJobs bounds the cache; past it the least recently used job goes.
	MaxJobs int
}

// DefaultOptions suit a node: a handful of jobs at once.
func DefaultOptions() Options {
	return Options{Timeout: 5 * time.Second, TTL: 10 * time.Minute, RetryMin: 10 * time.Second, RetryMax: 5 * time.Minute, MaxJobs: 1024}
}

type entry struct {
	d       Details
	ok      bool      // d is an answer
	fetched time.Time // when d came
	next    time.Time // no query before this (back-off)
	backoff time.Duration
	queued  bool
	used    time.Time
}

// Cache is a job-details cache with one background worker.
type Cache struct {
	src    Source
	opts   Options
	logger *zap.Logger
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
	lastErr string

	queue  chan string
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts a cache over src; Close stops its worker.
func New(src Source, opts Options, logger *zap.Logger) *Cache {
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{
		src: src, opts: opts, logger: logger, now: time.Now,
		entries: map[string]*entry{},
		queue:   make(chan string, 64),
		cancel:  cancel, done: make(chan struct{}),
	}
	go c.work(ctx)
	return c
}

// Close stops the worker and waits for it.
func (c *Cache) Close() {
	c.cancel()
	<-c.done
}

// Lookup returns what is known of job id, and whether anything is. It
// never waits: a job not known, or known for longer than the TTL, is
// queued for a query unless one is queued already or a failure's back-off
// holds.
func (c *Cache) Lookup(id string) (Details, bool) {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil {
		c.evict()
		e = &entry{}
		c.entries[id] = e
	}
	e.used = now
	stale := !e.ok || now.Sub(e.fetched) >= c.opts.TTL
	if stale && !e.queued && !now.Before(e.next) {
		select {
		case c.queue <- id:
			e.queued = true
		default: // the worker is behind: asked again at the next lookup
		}
	}
	return e.d, e.ok
}

// evict drops the least recently used job when the cache is full.
func (c *Cache) evict() {
	if len(c.entries) < c.opts.MaxJobs {
		return
	}
	var oldest string
	var t time.Time
	for id, e := range c.entries {
		if !e.queued && (oldest == "" || e.used.Before(t)) {
			oldest, t = id, e.used
		}
	}
	delete(c.entries, oldest)
}

func (c *Cache) work(ctx context.Context) {
	defer close(c.done)
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-c.queue:
			c.fetch(ctx, id)
		}
	}
}

func (c *Cache) fetch(ctx context.Context, id string) {
	qctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	d, err := c.src.Job(qctx, id)
	cancel()
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[id]
	if e == nil {
		return // evicted meanwhile
	}
	e.queued = false
	if err != nil {
		e.backoff = min(max(2*e.backoff, c.opts.RetryMin), c.opts.RetryMax)
		e.next = now.Add(e.backoff)
		// One warning per distinct failure: a Slurm down for an hour
		// logs once, not at every retry.
		if msg := err.Error(); msg != c.lastErr {
			c.lastErr = msg
			c.logger.Warn("Slurm job details unavailable; the GPU keeps its job ID, retrying with back-off",
				zap.String("slurm.job.id", id), zap.Error(err), zap.Duration("next_attempt_in", e.backoff))
		}
		return
	}
	c.lastErr = ""
	e.d, e.ok, e.fetched, e.backoff, e.next = d, true, now, 0, time.Time{}
}
