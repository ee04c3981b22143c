package runner

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// driver executes a core's actions: it owns the goroutines, the backend, the store and the
// clock, and feeds what happens back to the core as events. It decides nothing.
type driver struct {
	r    *Runner
	m    *store.Manifest
	c    *core.Core
	base []string // the trial environment's start, shared by every attempt

	events chan core.Event
	quit   chan struct{}
	timers timerQueue
	seq    uint64

	mu       sync.Mutex
	attempts map[int]*attempt // by trial index: the attempt that trial runs now

	persist *persister
}

func newDriver(r *Runner, m *store.Manifest, c *core.Core) *driver {
	d := &driver{
		r: r, m: m, c: c,
		events:   make(chan core.Event, 256),
		quit:     make(chan struct{}),
		attempts: map[int]*attempt{},
	}
	d.persist = newPersister(r.Runs, d.send, r.Log)
	return d
}

// send hands an event to the loop; once the loop has ended, events are dropped.
func (d *driver) send(ev core.Event) {
	select {
	case d.events <- ev:
	case <-d.quit:
	}
}

func (d *driver) run(ctx context.Context) (*Summary, error) {
	defer close(d.quit)
	go d.persist.run(context.WithoutCancel(ctx))
	defer d.persist.close()

	d.do(ctx, d.c.Step(core.Begin{At: time.Now()}))
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	stop := ctx.Done()
	for !d.c.Done() {
		d.armTimer(wake)
		select {
		case ev := <-d.events:
			d.do(ctx, d.c.Step(ev))
		case now := <-wake.C:
			for d.timers.Len() > 0 && !d.timers[0].at.After(now) {
				e := heap.Pop(&d.timers).(timerEntry)
				d.do(ctx, d.c.Step(core.TimerFired{Timer: e.timer, At: now}))
			}
		case <-stop:
			stop = nil
			d.do(ctx, d.c.Step(core.StopRequested{Reason: "interrupted", At: time.Now()}))
		}
	}
	// Processes a trial left behind when it ended (a daemon it started) end with the run.
	if err := d.r.reapOrphans(context.WithoutCancel(ctx), d.m.RunID, true); err != nil {
		d.r.Log.Warn("stop what the trials left running", "err", err)
	}
	sum := d.summary()
	if f := d.c.Fault(); f != "" {
		return sum, fmt.Errorf("%w: %s; free space (or fix access), then 'jikken resume %s'", ErrStore, f, d.m.RunID)
	}
	return sum, nil
}

// armTimer makes wake fire at the earliest timer.
func (d *driver) armTimer(wake *time.Timer) {
	if d.timers.Len() == 0 {
		return
	}
	if !wake.Stop() {
		select {
		case <-wake.C:
		default:
		}
	}
	wake.Reset(max(0, time.Until(d.timers[0].at)))
}

func (d *driver) do(ctx context.Context, acts []core.Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case core.Persist:
			d.persist.add(a.Trial, a.Version, a.Record)
		case core.StartAttempt:
			at := &attempt{d: d, trial: a.Trial, n: a.Attempt, clear: a.Clear, keep: a.Keep, ended: make(chan struct{})}
			d.mu.Lock()
			d.attempts[a.Trial] = at
			d.mu.Unlock()
			go at.run(context.WithoutCancel(ctx))
		case core.StopAttempt:
			if at := d.attempt(a.Trial, a.Attempt); at != nil {
				at.stop(d.r.StopGrace)
			}
		case core.WatchHealth:
			if at := d.attempt(a.Trial, a.Attempt); at != nil {
				at.watchHealth(a.Deadline)
			}
		case core.SetTimer:
			d.seq++
			heap.Push(&d.timers, timerEntry{at: a.At, seq: d.seq, timer: a.Timer})
		case core.Report:
			d.report(a)
		}
	}
}

func (d *driver) attempt(trial, n int) *attempt {
	d.mu.Lock()
	defer d.mu.Unlock()
	if at := d.attempts[trial]; at != nil && at.n == n {
		return at
	}
	return nil
}

func (d *driver) report(a core.Report) {
	if d.r.OnEvent == nil {
		return
	}
	ev := Event{Counts: a.Counts, Reason: a.Reason}
	if a.Trial >= 0 {
		ev.Trial, ev.Status, ev.Attempt = a.Name, a.Status, a.Attempt
	}
	d.r.OnEvent(ev)
}

func (d *driver) summary() *Summary {
	sum := &Summary{RunID: d.m.RunID, Counts: d.c.Counts(), Interrupted: d.c.Interrupted(), Status: d.c.Status()}
	for i := range d.m.Trials {
		rec := d.c.Record(i)
		if rec.Status == store.Pending && len(rec.Attempts) == 0 {
			sum.Trials = append(sum.Trials, nil)
			continue
		}
		sum.Trials = append(sum.Trials, &rec)
	}
	return sum
}

// persister writes records in the background, in groups: what queues up while one group is
// being written goes out together, sharing the cost of making it durable. Only the latest
// record of a trial is written; the versions it supersedes are reported stored with it.
type persister struct {
	runs store.Runs
	send func(core.Event)
	log  interface{ Error(string, ...any) }

	mu      sync.Mutex
	queue   map[int]queued
	order   []int
	wake    chan struct{}
	closed  bool
	stopped chan struct{}
}

type queued struct {
	version int
	rec     *store.TrialRecord
}

func newPersister(runs store.Runs, send func(core.Event), log interface{ Error(string, ...any) }) *persister {
	return &persister{runs: runs, send: send, log: log, queue: map[int]queued{}, wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

func (p *persister) add(trial, version int, rec *store.TrialRecord) {
	p.mu.Lock()
	if _, queuedAlready := p.queue[trial]; !queuedAlready {
		p.order = append(p.order, trial)
	}
	p.queue[trial] = queued{version: version, rec: rec}
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *persister) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
	<-p.stopped
}

func (p *persister) run(ctx context.Context) {
	defer close(p.stopped)
	for {
		<-p.wake
		for {
			p.mu.Lock()
			order, queue, closed := p.order, p.queue, p.closed
			p.order, p.queue = nil, map[int]queued{}
			p.mu.Unlock()
			if len(order) == 0 {
				if closed {
					return
				}
				break
			}
			recs := make([]*store.TrialRecord, len(order))
			for k, i := range order {
				recs[k] = queue[i].rec
			}
			errs := p.runs.WriteTrials(ctx, recs)
			for k, i := range order {
				q := queue[i]
				if err := errs[k]; err != nil {
					p.log.Error("record trial", "trial", q.rec.Name, "err", err)
					p.send(core.PersistFailed{Trial: i, Version: q.version, Err: describeStoreError(err), At: time.Now()})
					continue
				}
				p.send(core.Persisted{Trial: i, Version: q.version, At: time.Now()})
			}
		}
	}
}

// describeStoreError says what to do about a store that cannot be written.
func describeStoreError(err error) string {
	if store.IsNoSpace(err) {
		return err.Error() + " (the disk is full)"
	}
	return err.Error()
}

type timerEntry struct {
	at    time.Time
	seq   uint64
	timer core.Timer
}

// timerQueue orders timers by (time, sequence), so timers due together fire in the order set.
type timerQueue []timerEntry

func (q timerQueue) Len() int { return len(q) }
func (q timerQueue) Less(i, j int) bool {
	if !q[i].at.Equal(q[j].at) {
		return q[i].at.Before(q[j].at)
	}
	return q[i].seq < q[j].seq
}
func (q timerQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *timerQueue) Push(x any)   { *q = append(*q, x.(timerEntry)) }
func (q *timerQueue) Pop() any {
	old := *q
	x := old[len(old)-1]
	*q = old[:len(old)-1]
	return x
}
