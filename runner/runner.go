package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/store"
)

// Runner runs the trials of one run.
type Runner struct {
	Backend Backend
	Runs    store.Runs
	// Jobs caps how many trials run at once; services do not count against it.
	Jobs     int
	FailFast bool
	// WorkRoot holds attempt folders while they run.
	WorkRoot string
	// Workdir is where trials run unless they set workdir: the experiment's folder or its
	// materialised code snapshot.
	Workdir string
	Host    string
	// OnEvent, when set, is told of every change of a trial's state, from one goroutine.
	OnEvent func(Event)
	Log     *slog.Logger
	// StopGrace is how long a stopped trial gets between SIGTERM and SIGKILL (default 5s).
	StopGrace time.Duration
}

// Event reports a change in a run.
type Event struct {
	Trial   string
	Status  store.Status
	Attempt int
	Reason  string
	Counts  Counts
}

// Counts are the run's trials by state.
type Counts struct {
	Total, Pending, Running, Succeeded, Failed, Skipped, Killed int
}

// Summary is how a run ended.
type Summary struct {
	RunID       string
	Status      store.Status
	Trials      []*store.TrialRecord // in plan order; nil where a trial never started
	Counts      Counts
	Interrupted bool
}

// ErrTrialsFailed is returned (wrapped) when the run ended with trials that did not succeed.
var ErrTrialsFailed = errors.New("some trials did not succeed")

type trialState struct {
	t   *experiment.Trial
	rec *store.TrialRecord
	// active is set while an attempt goroutine owns rec.
	active   bool
	proc     Process
	started  bool // an attempt is running or has run in this runner
	healthy  bool
	stopping bool
	killed   atomic.Bool
	// retryAt is set while waiting to retry.
	retryAt    time.Time
	triesLeft  int
	dependants []int
}

type event struct {
	i       int
	kind    eventKind
	proc    Process
	rec     *store.TrialRecord // the updated record handed back on exit
	retryIn time.Duration
}

type eventKind int

const (
	evStarted eventKind = iota
	evHealthy
	evExited
	evRetry
)

// Run runs the trials of m that have not succeeded in prior (the records of an earlier runner
// of the same run, for resume), and returns when every trial has ended or ctx is cancelled.
func (r *Runner) Run(ctx context.Context, m *store.Manifest, prior map[string]*store.TrialRecord) (*Summary, error) {
	if r.Jobs < 1 {
		r.Jobs = 1
	}
	if r.StopGrace == 0 {
		r.StopGrace = 5 * time.Second
	}
	if r.Log == nil {
		r.Log = slog.New(slog.DiscardHandler)
	}
	if c, ok := r.Backend.(Checker); ok {
		if err := c.Check(ctx, m.Trials); err != nil {
			return nil, err
		}
	}
	if err := r.reapOrphans(ctx, m.RunID); err != nil {
		return nil, err
	}

	states := make([]*trialState, len(m.Trials))
	index := make(map[string]int, len(m.Trials))
	for i := range m.Trials {
		t := &m.Trials[i]
		index[t.Name] = i
		rec := prior[t.Name]
		if rec == nil {
			rec = &store.TrialRecord{Run: m.RunID, Name: t.Name, Index: t.Index, Group: t.Group, Status: store.Pending,
				Service: t.Service, Params: t.Params, Seed: t.Seed, Backend: r.Backend.Name(), Image: t.Image}
		} else if rec.Status != store.Succeeded || t.Service {
			// Services are helpers of this runner's trials: they always start again.
			rec.Status, rec.Live, rec.Reason, rec.Backend = store.Pending, nil, "", r.Backend.Name()
		}
		states[i] = &trialState{t: t, rec: rec, triesLeft: t.Retries + 1}
	}
	for i, s := range states {
		for _, d := range s.t.Depends {
			states[index[d.Trial]].dependants = append(states[index[d.Trial]].dependants, i)
		}
		for _, a := range s.t.After {
			states[index[a]].dependants = append(states[index[a]].dependants, i)
		}
	}
	l := &loop{r: r, m: m, states: states, index: index, events: make(chan event, 64)}
	return l.run(ctx)
}

// reapOrphans stops attempts an earlier runner of this run left behind (it was killed).
func (r *Runner) reapOrphans(ctx context.Context, run string) error {
	live, err := r.Backend.Live(ctx, run)
	if err != nil {
		return fmt.Errorf("find trials left running by an earlier runner: %w", err)
	}
	for _, lt := range live {
		r.Log.Info("stopping trial left running by an earlier runner", "trial", lt.Trial, "handle", lt.Handle)
		if err := r.Backend.StopLive(ctx, lt); err != nil {
			return fmt.Errorf("stop %s left running by an earlier runner: %w", lt.Trial, err)
		}
	}
	return nil
}

type loop struct {
	r       *Runner
	m       *store.Manifest
	states  []*trialState
	index   map[string]int
	events  chan event
	running int // non-service attempts holding a slot
	active  int // attempt goroutines alive
	halted  bool
	// timer wakes the loop for the earliest pending retry, due at timerAt.
	timer   *time.Timer
	timerAt time.Time
}

func (l *loop) run(ctx context.Context) (*Summary, error) {
	interrupted := false
	l.emit(-1, "")
	for {
		if !l.halted {
			l.schedule(ctx)
		}
		if l.active == 0 && (l.halted || l.allFinal()) {
			break
		}
		var timerC <-chan time.Time
		if l.timer != nil {
			timerC = l.timer.C
		}
		select {
		case ev := <-l.events:
			l.handle(ev)
		case <-timerC:
			l.timer = nil
		case <-ctx.Done():
			if !l.halted {
				interrupted = true
				l.halt("interrupted")
			}
			ctx = context.WithoutCancel(ctx)
		}
	}
	return l.summary(interrupted), nil
}

// schedule starts every trial that is ready, and skips those that can no longer run. A skip
// can doom a trial earlier in the plan, so it passes over the plan until nothing changes.
func (l *loop) schedule(ctx context.Context) {
	for l.schedulePass(ctx) {
	}
	l.stopIdleServices()
}

// schedulePass makes one pass over the plan and reports whether it ended any trial.
func (l *loop) schedulePass(ctx context.Context) (ended bool) {
	now := time.Now()
	var nextRetry time.Time
	for i, s := range l.states {
		if s.active || s.rec.Status.Final() {
			continue
		}
		if !s.retryAt.IsZero() {
			if now.Before(s.retryAt) {
				if nextRetry.IsZero() || s.retryAt.Before(nextRetry) {
					nextRetry = s.retryAt
				}
				continue
			}
			s.retryAt = time.Time{}
		}
		if s.t.Service && len(s.dependants) > 0 && l.allEnded(s.dependants) {
			l.finish(i, store.Succeeded, "not started: every trial that needs it has ended")
			ended = true
			continue
		}
		ready, blocked := l.deps(s)
		if blocked != "" {
			l.finish(i, store.Skipped, blocked)
			ended = true
			continue
		}
		if !ready {
			continue
		}
		if !s.t.Service && l.running >= l.r.Jobs {
			continue
		}
		l.start(ctx, i)
	}
	if !nextRetry.IsZero() && (l.timer == nil || nextRetry.Before(l.timerAt)) {
		if l.timer != nil {
			l.timer.Stop()
		}
		l.timer, l.timerAt = time.NewTimer(time.Until(nextRetry)), nextRetry
	}
	return ended
}

// deps reports whether s may start, or why it never will.
func (l *loop) deps(s *trialState) (ready bool, blocked string) {
	ready = true
	for _, a := range s.t.After {
		d := l.states[l.index[a]]
		switch {
		case d.rec.Status == store.Succeeded:
		case d.rec.Status.Final():
			return false, fmt.Sprintf("after: %s %s", a, d.rec.Status)
		default:
			ready = false
		}
	}
	for _, dep := range s.t.Depends {
		d := l.states[l.index[dep.Trial]]
		st := d.rec.Status
		if st.Final() && st != store.Succeeded && !(dep.Condition == experiment.Completed && st == store.Failed) {
			if dep.Condition != experiment.Started || !d.started {
				return false, fmt.Sprintf("depends: %s %s", dep.Trial, st)
			}
		}
		switch dep.Condition {
		case experiment.Started:
			ready = ready && (d.started || st == store.Succeeded)
		case experiment.Healthy:
			ready = ready && (d.healthy || st == store.Succeeded)
		case experiment.Completed:
			ready = ready && st.Final()
		case experiment.Succeeded:
			ready = ready && st == store.Succeeded
		}
	}
	return ready, ""
}

// stopIdleServices stops services whose dependants have all ended (or, for services nothing
// depends on, once every other trial has ended).
func (l *loop) stopIdleServices() {
	for _, s := range l.states {
		if !s.t.Service || !s.active || s.stopping || s.proc == nil {
			continue
		}
		idle := l.allEnded(s.dependants)
		if len(s.dependants) == 0 {
			for _, o := range l.states {
				if !o.t.Service && !o.rec.Status.Final() {
					idle = false
				}
			}
		}
		if idle {
			s.stopping = true
			go s.proc.Stop(l.r.StopGrace)
		}
	}
}

func (l *loop) allEnded(idx []int) bool {
	for _, d := range idx {
		if !l.states[d].rec.Status.Final() {
			return false
		}
	}
	return true
}

func (l *loop) allFinal() bool {
	for _, s := range l.states {
		if !s.rec.Status.Final() {
			return false
		}
	}
	return true
}

// halt stops everything running; trials that never started stay pending for resume.
func (l *loop) halt(reason string) {
	l.halted = true
	for _, s := range l.states {
		if s.active {
			s.killed.Store(true)
			if s.proc != nil {
				go s.proc.Stop(l.r.StopGrace)
			}
		}
	}
	l.r.Log.Info("stopping run", "reason", reason)
}

func (l *loop) handle(ev event) {
	s := l.states[ev.i]
	switch ev.kind {
	case evStarted:
		s.proc, s.started = ev.proc, true
		if s.killed.Load() {
			go ev.proc.Stop(l.r.StopGrace)
		}
		if !hasHealthCheck(s.t, ev.proc) {
			s.healthy = true
		}
		l.emit(ev.i, "")
	case evHealthy:
		s.healthy = true
	case evExited, evRetry:
		s.active, s.proc, s.stopping = false, nil, false
		s.rec = ev.rec
		l.active--
		if !s.t.Service {
			l.running--
		}
		if ev.kind == evRetry && !l.halted {
			s.retryAt = time.Now().Add(ev.retryIn)
		}
		l.emit(ev.i, s.rec.Reason)
		if l.r.FailFast && s.rec.Status == store.Failed && !l.halted {
			l.halt("fail-fast: " + s.t.Name + " failed")
		}
	}
}

// finish records a final status for a trial that no attempt goroutine owns.
func (l *loop) finish(i int, st store.Status, reason string) {
	s := l.states[i]
	s.rec.Status, s.rec.Reason = st, reason
	now := time.Now()
	s.rec.Finished = &now
	if err := l.r.Runs.WriteTrial(context.Background(), s.rec); err != nil {
		l.r.Log.Error("record trial", "trial", s.t.Name, "err", err)
	}
	l.emit(i, reason)
}

func (l *loop) counts() Counts {
	c := Counts{Total: len(l.states)}
	for _, s := range l.states {
		switch {
		case s.active:
			c.Running++
		case s.rec.Status == store.Succeeded:
			c.Succeeded++
		case s.rec.Status == store.Failed:
			c.Failed++
		case s.rec.Status == store.Skipped:
			c.Skipped++
		case s.rec.Status == store.Killed:
			c.Killed++
		default:
			c.Pending++
		}
	}
	return c
}

func (l *loop) emit(i int, reason string) {
	if l.r.OnEvent == nil {
		return
	}
	ev := Event{Counts: l.counts(), Reason: reason}
	if i >= 0 {
		s := l.states[i]
		ev.Trial, ev.Status, ev.Attempt = s.t.Name, s.rec.Status, len(s.rec.Attempts)
		if s.active {
			ev.Status = store.Running
		}
	}
	l.r.OnEvent(ev)
}

func (l *loop) summary(interrupted bool) *Summary {
	sum := &Summary{RunID: l.m.RunID, Counts: l.counts(), Interrupted: interrupted}
	for _, s := range l.states {
		rec := s.rec
		if rec.Status == store.Pending && len(rec.Attempts) == 0 {
			rec = nil
		}
		sum.Trials = append(sum.Trials, rec)
	}
	c := sum.Counts
	switch {
	case interrupted || c.Killed > 0 || (l.halted && c.Pending > 0):
		sum.Status = store.Killed
	case c.Failed > 0 || c.Skipped > 0:
		sum.Status = store.Failed
	default:
		sum.Status = store.Succeeded
	}
	return sum
}

// start launches the next attempt of trial i in its own goroutine, which owns the trial's
// record until it sends evExited or evRetry.
func (l *loop) start(ctx context.Context, i int) {
	s := l.states[i]
	s.active = true
	s.healthy = false
	l.active++
	if !s.t.Service {
		l.running++
	}
	s.triesLeft--
	rec := *s.rec
	rec.Attempts = append([]store.Attempt(nil), s.rec.Attempts...)
	a := &attemptRun{l: l, i: i, s: s, rec: &rec, lastTry: s.triesLeft == 0}
	go a.run(context.WithoutCancel(ctx))
}

// workdir resolves where trial t runs.
func (r *Runner) workdir(t *experiment.Trial) string {
	switch {
	case t.Workdir == "":
		return r.Workdir
	case filepath.IsAbs(t.Workdir):
		return t.Workdir
	default:
		return filepath.Join(r.Workdir, t.Workdir)
	}
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}
