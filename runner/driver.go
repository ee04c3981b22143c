package runner

import (
	"container/heap"
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// driver executes a core's actions: it owns the goroutines, the backend, the store and the
// clock, and feeds what happens back to the core as events. It decides nothing.
//
// The goroutine that has an event (an attempt that ended, the store writer, the timer loop)
// steps the core itself, under a lock, and carries out the actions: a trial that ends starts
// the next one from the same goroutine, with no hand-off to another thread on the way.
type driver struct {
	r   *Runner
	m   *store.Manifest
	ctx context.Context

	// mu serialises the core and everything below it.
	mu       sync.Mutex
	c        *core.Core
	attempts map[int]*attempt // by trial index: the attempt that trial runs now
	timers   timerQueue
	seq      uint64
	ended    bool
	done     chan struct{} // closed once the core is done
	wake     chan struct{} // tells the timer loop the earliest timer changed

	// starting counts the attempts inside Backend.Start; beyond startLimit (a StartLimiter's,
	// 0: none) the attempts to start wait in startQueue, in order.
	starting, startLimit int
	startQueue           []*attempt

	persist *persister
	folders *folders // nil without a work root
}

func newDriver(r *Runner, m *store.Manifest, c *core.Core) *driver {
	d := &driver{
		r: r, m: m, c: c,
		attempts: map[int]*attempt{},
		done:     make(chan struct{}),
		wake:     make(chan struct{}, 1),
	}
	d.persist = newPersister(r.Runs, d.send, r.Log)
	if sl, ok := r.Backend.(StartLimiter); ok {
		d.startLimit = sl.MaxStarts()
	}
	if r.WorkRoot != "" {
		d.folders = &folders{root: filepath.Join(r.WorkRoot, m.RunID)}
	}
	return d
}

// send steps the core with ev and carries out what follows; once the run is done, events are
// dropped.
func (d *driver) send(ev core.Event) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended {
		return
	}
	acts := d.c.Step(ev)
	recs := records(acts)
	d.carry(acts)
	// The planner is asked once what the step started is on its way (core.Config.DeferAsk);
	// the records of both steps go to the store as one group: a trial's final record and the
	// pending record of the trial suggested from it, one write.
	for d.c.AskDue() {
		acts := d.c.Step(core.Ask{At: time.Now()})
		recs = append(recs, records(acts)...)
		d.carry(acts)
	}
	d.persist.add(recs)
	if d.c.Done() {
		d.ended = true
		close(d.done)
	}
}

func (d *driver) run(ctx context.Context) (*Summary, error) {
	d.ctx = context.WithoutCancel(ctx)
	d.persist.start(d.ctx)
	defer d.persist.close()

	d.send(core.Begin{At: time.Now()})
	wake := time.NewTimer(time.Hour)
	defer wake.Stop()
	stop := ctx.Done()
	for {
		d.mu.Lock()
		next, armed := time.Time{}, d.timers.Len() > 0
		if armed {
			next = d.timers[0].at
		}
		d.mu.Unlock()
		if !wake.Stop() {
			select {
			case <-wake.C:
			default:
			}
		}
		if armed {
			wake.Reset(max(0, time.Until(next)))
		}
		select {
		case <-d.done:
			return d.finish()
		case <-d.wake:
		case now := <-wake.C:
			d.mu.Lock()
			var due []core.Timer
			for d.timers.Len() > 0 && !d.timers[0].at.After(now) {
				due = append(due, heap.Pop(&d.timers).(timerEntry).timer)
			}
			d.mu.Unlock()
			for _, tm := range due {
				d.send(core.TimerFired{Timer: tm, At: now})
			}
		case <-stop:
			stop = nil
			d.send(core.StopRequested{Reason: "interrupted", At: time.Now()})
		}
	}
}

func (d *driver) finish() (*Summary, error) {
	if d.folders != nil {
		d.folders.drain()
	}
	// Processes a trial left behind when it ended (a daemon it started) end with the run.
	if err := d.r.reapOrphans(d.ctx, d.m.RunID, true); err != nil {
		d.r.Log.Warn("stop what the trials left running", "err", err)
	}
	d.mu.Lock()
	sum := d.summary()
	fault := d.c.Fault()
	d.mu.Unlock()
	if fault != "" {
		return sum, fmt.Errorf("%w: %s; free space (or fix access), then 'jikken resume %s'", ErrStore, fault, d.m.RunID)
	}
	return sum, nil
}

// records are the records a step's actions store.
func records(acts []core.Action) []core.Persist {
	var recs []core.Persist
	for _, a := range acts {
		if p, ok := a.(core.Persist); ok {
			recs = append(recs, p)
		}
	}
	return recs
}

// carry carries out a step's actions but its records (send hands those to the store writer);
// the caller holds mu. Nothing here waits: attempts, stops and health checks run in goroutines
// of their own. No action waits for a record of its own step: the core starts an attempt only
// once its trial's pending record is stored.
func (d *driver) carry(acts []core.Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case core.StartAttempt:
			at := &attempt{d: d, trial: a.Trial, spec: d.c.Trial(a.Trial), n: a.Attempt, clear: a.Clear, adopted: a.Adopted, keep: a.Keep, devices: a.Devices, shares: a.Shares, ended: make(chan struct{})}
			d.attempts[a.Trial] = at
			d.launch(at)
		case core.StopAttempt:
			if at := d.attempts[a.Trial]; at != nil && at.n == a.Attempt {
				// A trial that saves checkpoints gets its signal, and its before to save.
				grace, signal := d.r.StopGrace, ""
				if t := at.spec; t.Checkpoint != nil {
					cp := t.CheckpointSettings()
					grace, signal = time.Duration(cp.Before), cp.Signal
				}
				at.stop(grace, signal)
			}
		case core.WatchHealth:
			if at := d.attempts[a.Trial]; at != nil && at.n == a.Attempt {
				at.watchHealth(a.Deadline)
			}
		case core.SetTimer:
			d.seq++
			first := d.timers.Len() == 0 || a.At.Before(d.timers[0].at)
			heap.Push(&d.timers, timerEntry{at: a.At, seq: d.seq, timer: a.Timer})
			if first {
				select {
				case d.wake <- struct{}{}:
				default:
				}
			}
		case core.Report:
			d.report(a)
		}
	}
}

// launch starts at's goroutine, or queues it while the backend's limit of Starts at once is
// reached; the caller holds mu.
func (d *driver) launch(at *attempt) {
	if d.startLimit > 0 && d.starting >= d.startLimit {
		d.startQueue = append(d.startQueue, at)
		return
	}
	d.starting++
	go at.run(d.ctx)
}

// startDone is told by an attempt that its Start has returned: the next queued attempt starts.
func (d *driver) startDone() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.starting--
	if len(d.startQueue) > 0 {
		at := d.startQueue[0]
		d.startQueue[0] = nil
		d.startQueue = d.startQueue[1:]
		d.launch(at)
	}
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
	sum.Stopped, sum.StoppedField = d.c.PlanAborted()
	for i := range d.c.Len() {
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
//
// Up to `writers` groups are written at once, each by a goroutine of its own: a record that
// something waits for (the final record a search suggests from, the pending record of the
// trial it suggests) does not wait behind a group that nothing waits for (the records of
// attempts that have just started). A trial's records are written one at a time, in order:
// one being written keeps its next record queued.
type persister struct {
	runs store.Runs
	send func(core.Event)
	log  interface{ Error(string, ...any) }

	mu    sync.Mutex
	ready *sync.Cond // signalled when there may be records to take, or on close
	queue map[int]queued
	order []int
	// writing are the trials whose records a writer is storing now.
	writing map[int]bool
	closed  bool
	done    sync.WaitGroup
}

// writers is how many groups of records are written at once.
const writers = 3

type queued struct {
	version int
	rec     *store.TrialRecord
}

func newPersister(runs store.Runs, send func(core.Event), log interface{ Error(string, ...any) }) *persister {
	p := &persister{runs: runs, send: send, log: log, queue: map[int]queued{}, writing: map[int]bool{}}
	p.ready = sync.NewCond(&p.mu)
	return p
}

// add queues records to write, in order, as one: a writer takes all of them at once, but for
// those of trials being written already.
func (p *persister) add(recs []core.Persist) {
	if len(recs) == 0 {
		return
	}
	p.mu.Lock()
	for _, r := range recs {
		if _, queuedAlready := p.queue[r.Trial]; !queuedAlready {
			p.order = append(p.order, r.Trial)
		}
		p.queue[r.Trial] = queued{version: r.Version, rec: r.Record}
	}
	p.mu.Unlock()
	p.ready.Signal()
}

// close returns once the writers have written what was queued and stopped.
func (p *persister) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.ready.Broadcast()
	p.done.Wait()
}

// start starts the writers.
func (p *persister) start(ctx context.Context) {
	p.done.Add(writers)
	for range writers {
		go p.write(ctx)
	}
}

// take removes from the queue the records of the trials not being written, in order, and marks
// those trials written; the caller holds mu.
func (p *persister) take() ([]int, []queued) {
	var order, rest []int
	var qs []queued
	for _, i := range p.order {
		if p.writing[i] {
			rest = append(rest, i)
			continue
		}
		order = append(order, i)
		qs = append(qs, p.queue[i])
		delete(p.queue, i)
		p.writing[i] = true
	}
	p.order = rest
	return order, qs
}

// write is one writer: it takes what is queued, stores it and reports it, until closed.
func (p *persister) write(ctx context.Context) {
	defer p.done.Done()
	for {
		p.mu.Lock()
		order, qs := p.take()
		for len(order) == 0 {
			if p.closed && len(p.order) == 0 {
				p.mu.Unlock()
				return
			}
			p.ready.Wait()
			order, qs = p.take()
		}
		p.mu.Unlock()
		recs := make([]*store.TrialRecord, len(qs))
		for k, q := range qs {
			recs[k] = q.rec
		}
		errs := p.runs.WriteTrials(ctx, recs)
		for k, i := range order {
			q := qs[k]
			if err := errs[k]; err != nil {
				p.log.Error("record trial", "trial", q.rec.Name, "err", err)
				p.send(core.PersistFailed{Trial: i, Version: q.version, Err: describeStoreError(err), At: time.Now()})
				continue
			}
			p.send(core.Persisted{Trial: i, Version: q.version, At: time.Now()})
		}
		p.mu.Lock()
		for _, i := range order {
			delete(p.writing, i)
		}
		// Records of these trials may have queued meanwhile, for a writer that waits; once
		// closed, the writers that wait may stop.
		wake := len(p.order) > 0 || p.closed
		p.mu.Unlock()
		if wake {
			p.ready.Broadcast()
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
