package core

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/trial"
)

// DefaultHealthTimeout is how long a trial with a health check has to pass it, from its start,
// when its health check sets no timeout.
const DefaultHealthTimeout = time.Minute

// DefaultRestarts is how many times a service with a restart policy is started again when
// it sets no retries. Compose restarts without end; a run must end, so the budget is finite.
const DefaultRestarts = 5

// Config is a run as the core sees it.
type Config struct {
	RunID, Backend, Host string
	Trials               []trial.Trial
	// Jobs caps how many non-service attempts run at once (at least 1).
	Jobs     int
	FailFast bool
	// Journal holds each trial's last record from earlier runners of the run (a resume), by
	// trial name; nil for a new run.
	Journal map[string]*record.Trial
	// Capacity, when set, admits trials by their resources as well as by the cap, and gives
	// each attempt its GPU devices.
	Capacity *Capacity
	// Adopted names the attempts an earlier runner left running that the backend re-attaches
	// to instead of stopping (trial name -> attempt number): the core continues such an
	// attempt, rather than closing it and starting the next, so one pod is one attempt.
	Adopted map[string]int
	// Planner, when set, grows the plan as the run goes (plan.go); nil: Trials is the plan.
	Planner Planner
	// DeferAsk moves the ask of an Eager planner that a trial's end makes due out of that
	// step into one of its own (Ask), which the driver sends once it has carried out the
	// step's actions: a trial that starts in the step (one suggested ahead) is not held up by
	// the planner's thinking, nor by anything the planner adds.
	DeferAsk bool
	// Curves are, for a planner that prunes, the points of the last attempt of trials final in
	// the journal, by trial name (a pruned trial's cut where it was pruned): the curves later
	// trials are judged against.
	Curves map[string][]MetricPoint
	// Kept names the trials whose final record in the journal stands, failed or not (a search's
	// trials: their results are its history, which a resume must not change); only a trial the
	// journal shows killed runs again. Other trials run again unless they succeeded.
	Kept map[string]bool
}

// DeviceRecheck is how long the core leaves alone devices another run on the host holds
// before it asks for them again.
const DeviceRecheck = time.Second

// Core is a run's state machine. Its zero value is not usable; build one with New.
type Core struct {
	cfg    Config
	ts     []*trialState
	begun  bool
	halted bool
	// interrupted is set when a StopRequested halted the run (not fail-fast or a fault).
	interrupted bool
	haltReason  string
	fault       string
	now         time.Time

	running int // non-service attempts holding a slot
	active  int // attempts asked to start and not yet exited
	open    int // non-service trials not final
	// unsettled counts trials whose latest record is not yet in the record.
	unsettled int
	counts    Counts

	// waiting and services hold the trials that may start once a slot (services need none)
	// and their resources are free.
	waiting, services queues
	pool              pool
	dirty             []int
	acts              []Action
	// standalone are services nothing depends on: they run until every other trial ends.
	standalone []int
	// lazy are the services trials depend on: with counted resources, they start on demand.
	lazy []int
	// pinned are the services that hold a pin, in plan order: fill starts them on it.
	pinned []int
	// live is how far each trial's live metrics are stored (metrics.go); nil until reported.
	live []LiveMetrics

	// view is the plan as the planner sees it (plan.go), began the time of Begin; planDone is
	// set once the planner will add nothing more.
	view      []TrialView
	began     time.Time
	planDone  bool
	planAbort string
	planField string
	// eager is set for an Eager planner; early are the trials whose final records it may see
	// before they are stored, reask is set when it is to be asked at the end of the step.
	eager bool
	early []int
	reask bool
	// askDue is set, with DeferAsk, while an ask waits for its step (Ask); asking is set
	// during that step.
	askDue, asking bool
	// capGroup and capN are a Capped planner's cap (capN 0: none); capRunning counts the
	// attempts of capGroup's trials holding a slot.
	capGroup         string
	capN, capRunning int
	// curves are the points of each trial's attempt curveOf, for a planner that prunes.
	curves  map[int][]MetricPoint
	curveOf map[int]int
	// index finds a trial by name, for the after of trials a planner adds.
	index map[string]int
	// implied counts the trials that are services implied by depends (waitsOnServers).
	implied int
}

type phase uint8

const (
	idle     phase = iota // waiting for its dependencies, a slot or a retry
	starting              // StartAttempt sent, Started not yet received
	running
	final
)

type stopCause uint8

const (
	noStop stopCause = iota
	stopTimeout
	stopUnhealthy
	stopIdle        // a service no trial needs any more
	stopHalt        // interrupt, kill, fail-fast
	stopLostService // a service the trial needs ended
	stopPause       // a service no running trial uses, whose resources others wait for
	stopPrune       // a planner pruned it (plan.go)
)

type dep struct {
	t    int
	cond trial.Condition
}

type trialState struct {
	i    int
	spec *trial.Trial
	// svc is set for a declared service (trial.Trial.DeclaredService): it needs no slot
	// and is stopped once no trial needs it. A service implied by depends is a trial like the
	// others here, which its dependants need running (or succeeded) when they start.
	svc bool
	rec record.Trial
	ph  phase
	// attempt is the number of the attempt starting or running, or of the last one.
	attempt int
	// collected is the last attempt whose outputs went to the store (0: none).
	collected int
	// tries is how many attempts this runner may still start.
	tries       int
	retrying    bool
	healthy     bool
	startedHere bool
	stop        stopCause
	stopWhy     string
	// journalFinal is set when the journal already holds this trial's final record.
	journalFinal bool
	// noted is the attempt whose record says the run waits for it to end by itself.
	noted int
	// adopt is the attempt the backend re-attaches to (Config.Adopted); reopen is set while
	// that attempt, open in the journal and closed by Begin, is still to be continued, and
	// continued while it runs on.
	adopt             int
	reopen, continued bool
	// queued is set while the attempt waits in its engine's queue (Queued); its timeout counts
	// from timeoutAt, which leaving the queue moves.
	queued    bool
	timeoutAt time.Time

	ver, durable int
	// unreported are the changes not yet reported: each waits for its record to be stored.
	unreported []versioned
	// okDurable is set once a succeeded record of the trial is in the record.
	okDurable bool

	deps  []dep
	after []int
	// afterDeps and depDeps are the trials waiting for this one through after and depends.
	afterDeps, depDeps []int
	// services are the services this trial depends on.
	services []int
	// waitAfter counts after targets not yet durably succeeded; afterBlocked says why one
	// never will.
	waitAfter    int
	afterBlocked string
	// openDeps counts the trials depending on this one that are not final.
	openDeps int

	bucket  *int
	inReady bool
	inDirty bool

	req   request
	grant grant
	// pin is what a service that runs all along holds for the whole run, from New until it
	// ends (pinAlwaysOn): each of its attempts starts on those devices, and its req is zero,
	// as the pool already counts it.
	pin *grant
	// before is the record as it was before the attempt starting now, put back when the
	// attempt cannot have its devices.
	before record.Trial
	// pending is set while a trial a planner added waits for its first record to be stored:
	// it may not start before.
	pending bool
	// basis counts the final records of other trials, seen by an eager planner when it added
	// this trial, that are not stored yet: it may not start before they are. early is set
	// while this trial's final record (version earlyVer) is seen so and not stored; waiters
	// are the trials waiting for it.
	basis    int
	early    bool
	earlyVer int
	waiters  []int
	// pruneVer is the version of the record that says a planner pruned the trial (0: none),
	// pruneWhy why; the attempt is stopped once that record is stored.
	pruneVer int
	pruneWhy string
}

// New builds the core of a run. Trials recorded as succeeded in the journal are final; every
// other trial is pending (services always start again: they help this runner's trials).
func New(cfg Config) *Core {
	if cfg.Jobs < 1 {
		cfg.Jobs = 1
	}
	c := &Core{cfg: cfg, ts: make([]*trialState, len(cfg.Trials)), pool: newPool(cfg.Capacity)}
	index := make(map[string]int, len(cfg.Trials))
	for i := range cfg.Trials {
		index[cfg.Trials[i].Name] = i
	}
	c.index = index
	c.counts.Total = len(cfg.Trials)
	if cp, ok := cfg.Planner.(Capped); ok {
		c.capGroup, c.capN = cp.Cap()
	}
	for i := range cfg.Trials {
		spec := &cfg.Trials[i]
		t := &trialState{i: i, spec: spec, svc: spec.DeclaredService(), tries: spec.Retries + 1, req: c.requestOf(spec)}
		if spec.Service && spec.Retries == 0 && (spec.Restart == trial.RestartOnFailure || spec.Restart == trial.RestartAlways) {
			t.tries = 1 + DefaultRestarts
		}
		if old := cfg.Journal[spec.Name]; old != nil {
			t.rec = copyRecord(old)
		} else {
			t.rec = record.Trial{Run: cfg.RunID, Name: spec.Name, Index: spec.Index, Group: spec.Group,
				Status: record.Pending, Params: spec.Params, Seed: spec.Seed, Image: spec.Image}
		}
		t.rec.Backend = c.cfg.Backend
		switch {
		case t.rec.Status == record.Succeeded && !t.svc:
			t.ph, t.okDurable = final, true
		case (t.rec.Status == record.Pruned || t.rec.Status == record.Eliminated || cfg.Kept[spec.Name] && t.rec.Status.Final() && t.rec.Status != record.Killed) && !t.svc:
			// A pruned or eliminated trial is never run again: its record says why.
			t.ph = final
		case t.rec.Status.Final() && t.svc:
			t.journalFinal = true
			fallthrough
		default:
			t.rec.Status, t.rec.Reason = record.Pending, ""
		}
		if len(t.rec.Attempts) > 0 {
			t.attempt = t.rec.Attempts[len(t.rec.Attempts)-1].N
		}
		for _, a := range slices.Backward(t.rec.Attempts) {
			if !a.Finished.IsZero() {
				t.collected = a.N
				break
			}
		}
		if t.ph != final {
			t.adopt = cfg.Adopted[spec.Name]
		}
		c.ts[i] = t
		if !t.svc && t.ph != final {
			c.open++
		}
		if spec.ServiceImplied {
			c.implied++
		}
	}
	for i, t := range c.ts {
		for _, d := range t.spec.Depends {
			j := index[d.Trial]
			t.deps = append(t.deps, dep{t: j, cond: d.Condition})
			c.ts[j].depDeps = append(c.ts[j].depDeps, i)
			if c.ts[j].svc {
				t.services = append(t.services, j)
			}
			if t.ph != final {
				c.ts[j].openDeps++
			}
		}
		for _, a := range t.spec.After {
			j := index[a]
			t.after = append(t.after, j)
			c.ts[j].afterDeps = append(c.ts[j].afterDeps, i)
			if !c.ts[j].okDurable {
				t.waitAfter++
			}
		}
	}
	if e, ok := cfg.Planner.(Eager); ok {
		c.eager = e.Eager()
	}
	if cfg.Planner != nil {
		c.view = make([]TrialView, len(c.ts))
		for i, t := range c.ts {
			c.view[i] = viewOf(t)
			if pts, ok := cfg.Curves[t.spec.Name]; ok && t.ph == final {
				c.keepCurve(t, pts)
			}
		}
	}
	for i, t := range c.ts {
		if t.svc && len(t.depDeps) == 0 {
			c.standalone = append(c.standalone, i)
		}
		if t.svc && len(t.depDeps) > 0 {
			c.lazy = append(c.lazy, i)
		}
		c.place(t)
	}
	if c.pool.limited {
		for i, g := range pinAlwaysOn(cfg.Trials, &c.pool) {
			// One that does not fit stays unpinned: admission refuses such a plan.
			if t := c.ts[i]; g != nil {
				t.pin, t.req = g, request{}
				c.pinned = append(c.pinned, i)
			}
		}
	}
	return c
}

// Step applies one event and returns the actions that follow, in order.
func (c *Core) Step(ev Event) []Action {
	c.acts = nil
	if at := ev.time(); at.After(c.now) {
		c.now = at
	}
	switch e := ev.(type) {
	case Begin:
		c.begin()
	case Started:
		c.started(e)
	case Queued:
		c.queuedEv(e)
	case Healthy:
		c.healthyEv(e)
	case Unhealthy:
		// After the first pass it is liveness that failed: the attempt ends, and its restart
		// policy (or retries) says whether another starts.
		if t := c.current(e.Trial, e.Attempt, running); t != nil && t.stop == noStop {
			why := "not healthy: "
			if t.healthy {
				why = "not healthy any more: "
			}
			c.stopAttempt(t, stopUnhealthy, why+e.Reason)
		}
	case Exited:
		c.exited(e)
	case TimerFired:
		c.timer(e.Timer)
	case StopRequested:
		c.halt(e.Reason, true)
	case Persisted:
		c.persisted(e.Trial, e.Version)
	case Ask:
		c.asking = true
		defer func() { c.asking = false }()
		if c.askDue {
			c.askDue = false
			c.ask()
		}
	case DevicesBusy:
		c.devicesBusy(e)
	case MetricsReported:
		c.metricsReported(e)
		if e.Trial >= 0 && e.Trial < len(c.ts) && c.ts[e.Trial].attempt == e.Attempt && c.cfg.Planner != nil {
			c.pointsReported(c.ts[e.Trial], e.Points)
		}
	case PersistFailed:
		if c.fault == "" {
			c.fault = fmt.Sprintf("record %s: %s", c.ts[e.Trial].spec.Name, e.Err)
		}
		c.halt("the store cannot be written", false)
		c.persisted(e.Trial, e.Version)
	}
	c.schedule()
	return c.acts
}

// AskDue reports whether the driver is to send Ask (see Config.DeferAsk) before anything else.
func (c *Core) AskDue() bool { return c.askDue }

// Done reports whether the run has ended: nothing runs, every record is stored, and every
// trial is final (or the run was halted).
func (c *Core) Done() bool {
	if !c.begun || c.active > 0 || c.unsettled > 0 || c.askDue || !c.Planned() {
		return false
	}
	if c.halted {
		return true
	}
	return c.counts.Succeeded+c.counts.Failed+c.counts.Skipped+c.counts.Killed+c.counts.Stopped+c.counts.Pruned+c.counts.Eliminated == c.counts.Total
}

// Counts returns the trials by state.
func (c *Core) Counts() Counts { return c.counts }

// Record returns a copy of trial i's record as the core holds it.
func (c *Core) Record(i int) record.Trial { return copyRecord(&c.ts[i].rec) }

// Fault is the reason the run could not continue (its records could not be stored), or "".
func (c *Core) Fault() string { return c.fault }

// Interrupted reports whether a StopRequested halted the run.
func (c *Core) Interrupted() bool { return c.interrupted }

// Status is how the run ended (or stands): killed when it was halted with work left, failed
// when a trial failed or was skipped, else succeeded (pruned and eliminated trials ended as
// their plan meant them to).
func (c *Core) Status() record.Status {
	n := c.counts
	switch {
	case c.interrupted || n.Killed > 0 || (c.halted && n.Pending > 0):
		return record.Killed
	case n.Failed > 0 || n.Skipped > 0 || c.planAbort != "":
		return record.Failed
	}
	return record.Succeeded
}

func (c *Core) begin() {
	if c.begun {
		return
	}
	c.begun = true
	c.began = c.now
	for _, t := range c.ts {
		// An attempt the journal shows running was stopped by this runner's driver before Begin
		// (its runner died): close it so the record tells what happened.
		// One the backend re-attaches to is reopened when it starts; if the trial ends first,
		// the backend stops it at the run's end, as the record says.
		if n := len(t.rec.Attempts); n > 0 && t.rec.Attempts[n-1].Finished.IsZero() {
			a := &t.rec.Attempts[n-1]
			a.Finished, a.Reason = c.now, "its runner ended first; stopped by the next runner"
			t.rec.Live = nil
			t.reopen = a.N == t.adopt
			c.persist(t)
		}
		c.markDirty(t)
	}
	c.emit(Report{Trial: -1, Counts: c.counts})
	c.ask()
}

func (c *Core) schedule() {
	if !c.begun {
		return
	}
	for {
		for len(c.dirty) > 0 {
			i := c.dirty[0]
			c.dirty = c.dirty[1:]
			t := c.ts[i]
			t.inDirty = false
			c.evaluate(t)
		}
		if c.reask {
			c.reask = false
			if c.cfg.DeferAsk && !c.asking {
				c.askDue = true
			} else {
				c.ask()
				continue
			}
		}
		c.fill()
		if len(c.dirty) == 0 {
			c.stalled()
		}
		if len(c.dirty) == 0 {
			c.waitsOnServers()
		}
		if len(c.dirty) == 0 {
			return
		}
	}
}

// evaluate starts t, queues it for a slot, or ends it when it can never run.
func (c *Core) evaluate(t *trialState) {
	if t.ph != idle || t.retrying || c.halted || t.pending || t.basis > 0 {
		return
	}
	if t.svc && !c.needed(t) {
		c.finishUnneeded(t)
		return
	}
	ok, why := c.depsState(t)
	switch {
	case why != "":
		c.finish(t, record.Skipped, why)
	case !ok:
		// Services it waits for may start now (see demanded).
		for _, i := range t.services {
			if s := c.ts[i]; s.ph == idle && !s.retrying && !s.inReady {
				c.markDirty(s)
			}
		}
	case t.inReady:
	case t.pin != nil:
		// Its resources are held already: fill starts it once its devices are not held by
		// another run.
		t.inReady = true
	case t.svc:
		if c.pool.limited && len(t.depDeps) > 0 && !c.demanded(t) {
			return
		}
		t.inReady = true
		c.services.push(t.req, t.i)
	default:
		t.inReady = true
		c.waiting.push(t.req, t.i)
	}
}

// inUse reports whether a trial that depends on service s is starting or running.
func (c *Core) inUse(s *trialState) bool {
	for _, i := range s.depDeps {
		if d := c.ts[i]; d.ph == starting || d.ph == running {
			return true
		}
	}
	return false
}

// demanded reports whether service s should start now, on a host whose resources are counted:
// when a trial that needs it runs (a restart), or waits for nothing else and fits beside it.
// A service started before any trial can use it would hold resources those trials need.
func (c *Core) demanded(s *trialState) bool {
	if c.inUse(s) {
		return true
	}
	for _, i := range s.depDeps {
		d := c.ts[i]
		if d.ph != idle || d.retrying {
			continue
		}
		if ok, why := c.depsStateBesides(d, true); !ok || why != "" {
			continue
		}
		if d.svc && len(d.depDeps) > 0 && !c.demanded(d) {
			continue // a service that is not needed yet needs nothing yet
		}
		// d starts once the services it needs (and theirs) are up: each must be able to start
		// (its own dependencies met, services taken as up), and all must fit beside d.
		reqs := []request{d.req}
		startable := true
		seen := map[int]bool{}
		var visit func(x *trialState)
		visit = func(x *trialState) {
			for _, j := range x.services {
				u := c.ts[j]
				if seen[j] || u.ph != idle {
					continue
				}
				seen[j] = true
				reqs = append(reqs, u.req)
				ok, blocked := c.depsStateBesides(u, true)
				startable = startable && ok && blocked == "" && !u.retrying
				visit(u)
			}
		}
		visit(d)
		if startable && c.pool.fitsAll(reqs) {
			return true
		}
	}
	return false
}

// wakeServices looks again at the services waiting for demand, once resources are freed.
func (c *Core) wakeServices() {
	if !c.pool.limited {
		return
	}
	for _, i := range c.lazy {
		if s := c.ts[i]; s.ph == idle && !s.retrying && !s.inReady {
			c.markDirty(s)
		}
	}
}

// stalled pauses the services no running trial uses when nothing but services runs and nothing
// is due, so that what waits for their resources can start. A record on its way to the store is
// due: the trials that wait for it (after, depends: completed) may start once it is stored.
//
// Nothing more is needed for every trial to start at some point: once those services have
// stopped, the pool is the host less the pins of the services that run all along (pinAlwaysOn;
// whatever else held resources has ended), and admission (Unfit) made each trial fit there
// beside the services it needs. (This once also failed the trials that still could not start,
// with "cannot start": the services that run all along then took whatever devices were free
// when they started or restarted, and could leave the GPUs in pieces no trial fit in.)
func (c *Core) stalled() {
	if !c.pool.limited || c.halted || c.running > 0 || c.open == 0 || c.pool.holding() || c.unsettled > 0 || c.askDue {
		return
	}
	for _, t := range c.ts {
		switch {
		case t.retrying || t.pending || t.basis > 0:
			return // it waits for a retry, or for records to be stored
		case t.ph == starting || (t.ph == running && (!t.healthy || t.stop != noStop)):
			return // something is still to happen
		}
	}
	for _, t := range c.ts {
		if t.svc && t.pin == nil && t.ph == running && len(t.depDeps) > 0 && !c.inUse(t) {
			c.stopAttempt(t, stopPause, "paused: no trial uses it now, and others need its resources; it starts again when needed")
		}
	}
}

// waitsOnServers says so when the run cannot move on unless trials that others depended on to
// have started end by themselves: every attempt running is such a trial (or a declared
// service), none has a timeout, nothing else is due, and either a trial that waits for a slot
// needs one of them running beside it, or no trial waits at all. The runner never stops such
// a trial (it is not a declared service), so its record says why the run waits for it.
func (c *Core) waitsOnServers() {
	if c.halted || c.implied == 0 || c.askDue {
		return
	}
	var holders []*trialState
	for _, t := range c.ts {
		switch {
		case t.retrying || t.ph == starting:
			return
		case t.ph != running || t.svc:
		case t.stop != noStop || !t.healthy || !t.spec.ServiceImplied || t.spec.Timeout > 0:
			return // something is still to happen
		default:
			holders = append(holders, t)
		}
	}
	if len(holders) == 0 {
		return
	}
	var waiting []string
	beside := false
	for _, t := range c.ts {
		if t.svc || t.ph != idle || !t.inReady {
			continue
		}
		waiting = append(waiting, t.spec.Name)
		for _, d := range t.deps {
			beside = beside || slices.Contains(holders, c.ts[d.t])
		}
	}
	var why string
	switch {
	case beside:
		why = fmt.Sprintf("holds one of the %d slots (-j) that %s wait%s for while needing it running: the run goes on when it ends by itself, since only a trial marked service: true is stopped by the runner (raise -j, or mark it service: true)",
			c.cfg.Jobs, strings.Join(waiting, ", "), map[bool]string{true: "", false: "s"}[len(waiting) > 1])
	case len(waiting) == 0:
		for _, h := range holders {
			for _, i := range h.depDeps {
				if c.ts[i].ph != final {
					return // a trial still uses it
				}
			}
		}
		why = "runs on after the trials that depended on it ended: the run ends when it does, since only a trial marked service: true is stopped by the runner"
	default:
		return
	}
	for _, h := range holders {
		if h.noted != h.attempt {
			h.noted = h.attempt
			h.rec.Reason = why
			c.persist(h)
		}
	}
}

// fill starts queued trials, in plan order among those whose resources fit, services first,
// then other trials while slots are free.
func (c *Core) fill() {
	for _, i := range c.pinned {
		t := c.ts[i]
		if c.halted || t.pin == nil || !t.inReady || t.ph != idle || t.retrying || c.pool.heldElsewhere(*t.pin) {
			continue
		}
		// Like a queued trial (below): evaluate saw t since its dependencies last changed, but
		// a service it needs may have been asked to stop since; it stays ready until then.
		if ok, _ := c.depsState(t); ok {
			t.inReady = false
			c.start(t)
		}
	}
	for _, qs := range []*queues{&c.services, &c.waiting} {
		for !c.halted && (qs == &c.services || c.running < c.cfg.Jobs) {
			i, ok := qs.next(c.startable)
			if !ok {
				break
			}
			t := c.ts[i]
			t.inReady = false
			if t.ph != idle || t.retrying {
				continue
			}
			// Services started before this one in the same pass may have taken what the trial
			// that wanted it needs.
			if t.svc && c.pool.limited && len(t.depDeps) > 0 && !c.demanded(t) {
				continue
			}
			// evaluate saw t after its dependencies last changed (each change marks it dirty,
			// and the dirty are evaluated before fill), and starting trials neither ends a
			// dependency nor makes a service unneeded: t is needed and has no reason to be
			// skipped. A service it needs may have been asked to stop since: then it waits to
			// be marked dirty again.
			if ok, _ := c.depsState(t); ok {
				c.start(t)
			}
		}
	}
}

// startable reports whether a trial that asks r may start now as far as what it holds goes: its
// resources fit, and a Capped planner's trial is under the cap.
func (c *Core) startable(r request) bool {
	return c.pool.fits(r) && (!r.capped || c.capRunning < c.capN)
}

// requestOf is what a trial holds while it runs.
func (c *Core) requestOf(spec *trial.Trial) request {
	r := requestOf(spec.Resources)
	r.capped = c.capN > 0 && spec.Group == c.capGroup && !spec.DeclaredService()
	return r
}

// needed reports whether a service still has a trial to serve.
func (c *Core) needed(t *trialState) bool {
	if len(t.depDeps) > 0 {
		return t.openDeps > 0
	}
	return c.open > 0
}

// depsState reports whether t may start now, or why it never will.
func (c *Core) depsState(t *trialState) (ok bool, blocked string) {
	return c.depsStateBesides(t, false)
}

// depsStateBesides is depsState, taking the services t depends on as up when besides is set.
func (c *Core) depsStateBesides(t *trialState, besides bool) (ok bool, blocked string) {
	if t.afterBlocked != "" {
		return false, t.afterBlocked
	}
	ok = t.waitAfter == 0
	for _, d := range t.deps {
		u := c.ts[d.t]
		st := u.rec.Status
		var sat bool
		switch {
		case d.cond == trial.Completed:
			sat = u.ph == final && u.durable == u.ver
		case d.cond == trial.Succeeded:
			sat = u.okDurable
			if u.ph == final && st != record.Succeeded {
				return false, depReason(u)
			}
		case u.svc:
			sat = u.ph == running && u.stop == noStop && (d.cond == trial.Started || u.healthy)
			if u.ph == final {
				return false, depReason(u)
			}
			sat = sat || besides
		case u.spec.ServiceImplied:
			// A service only while it runs: its dependants start beside a running attempt, or
			// once it has succeeded; while it waits for a retry, so do they.
			up := u.ph == running && u.stop == noStop && (d.cond == trial.Started || u.healthy)
			if u.ph == final && st != record.Succeeded {
				return false, depReason(u)
			}
			ok = ok && (up || u.okDurable)
			continue
		case d.cond == trial.Started:
			sat = u.startedHere || u.okDurable
		default: // healthy
			sat = (u.ph == running && u.healthy) || u.okDurable
		}
		if !sat && u.ph == final && d.cond != trial.Completed && d.cond != trial.Succeeded {
			return false, depReason(u)
		}
		ok = ok && sat
	}
	return ok, ""
}

func depReason(u *trialState) string {
	s := fmt.Sprintf("depends: %s %s", u.spec.Name, u.rec.Status)
	if u.rec.Reason != "" {
		s += ": " + u.rec.Reason
	}
	return s
}

func (c *Core) start(t *trialState) {
	// fill starts only what fits now, and nothing is taken in between: the take succeeds. A
	// pinned service takes nothing (its req is zero) and starts on its pin.
	g, _ := c.pool.take(t.req)
	t.grant = g
	if t.pin != nil {
		g = *t.pin
	}
	t.before = copyRecord(&t.rec)
	clear := len(t.rec.Attempts) > 0
	t.attempt = 1
	if n := len(t.rec.Attempts); n > 0 {
		t.attempt = t.rec.Attempts[n-1].N + 1
	}
	// An adopted attempt is already under way: the runner that started it cleared the
	// earlier outputs, and one the journal shows goes on as itself. (Once it has ended,
	// neither case holds any more: the next attempt is a new one.)
	t.continued = false
	adopted := false
	if a := t.adopt; a > 0 && (a == t.attempt || a == t.attempt-1 && t.reopen) {
		clear, t.continued, t.attempt, adopted = false, a < t.attempt, a, true
	}
	t.reopen = false
	t.ph, t.healthy, t.stop, t.stopWhy, t.queued = starting, false, noStop, "", false
	if !t.svc {
		c.running++
	}
	if t.req.capped {
		c.capRunning++
	}
	c.active++
	if t.tries > 0 {
		t.tries--
	}
	devices := c.pool.ids(g)
	if t.continued {
		last := &t.rec.Attempts[len(t.rec.Attempts)-1]
		last.Finished, last.Reason, last.Devices = time.Time{}, "", devices
	} else {
		t.rec.Attempts = append(t.rec.Attempts, record.Attempt{N: t.attempt, Started: c.now, Devices: devices})
	}
	t.rec.Devices = devices
	if t.rec.Started == nil {
		now := c.now
		t.rec.Started = &now
	}
	t.rec.Status, t.rec.Finished, t.rec.ExitCode, t.rec.Reason = record.Running, nil, nil, ""
	t.rec.Live = &record.Live{Host: c.cfg.Host, Attempt: t.attempt}
	c.place(t)
	var shares []int
	for _, sh := range g.shares {
		shares = append(shares, int(sh))
	}
	c.emit(StartAttempt{Trial: t.i, Attempt: t.attempt, Clear: clear, Keep: t.collected, Devices: devices, Shares: shares, Adopted: adopted})
}

// current returns trial i if its attempt n is in one of the phases, else nil (a stale event).
// Events name trials by the index the core's actions gave them.
func (c *Core) current(i, n int, phases ...phase) *trialState {
	t := c.ts[i]
	if t.attempt != n || !slices.Contains(phases, t.ph) {
		return nil
	}
	return t
}

func (c *Core) started(e Started) {
	t := c.current(e.Trial, e.Attempt, starting)
	if t == nil {
		return
	}
	t.ph, t.startedHere = running, true
	t.rec.Live.Handle, t.rec.Live.Dir = e.Handle, e.Dir
	if e.ImageDigest != "" {
		t.rec.ImageDigest = e.ImageDigest
	}
	if !t.continued {
		a := &t.rec.Attempts[len(t.rec.Attempts)-1]
		a.Started, a.Checkpoint = c.now, e.Checkpoint
	}
	if t.spec.Health != nil || e.HealthCheck {
		timeout := DefaultHealthTimeout
		if t.spec.Health != nil && t.spec.Health.Timeout > 0 {
			timeout = time.Duration(t.spec.Health.Timeout)
		}
		at := c.now.Add(timeout)
		c.emit(WatchHealth{Trial: t.i, Attempt: t.attempt, Deadline: at})
		c.emit(SetTimer{Timer: Timer{Kind: HealthDeadline, Trial: t.i, Attempt: t.attempt}, At: at})
	} else {
		t.healthy = true
	}
	c.armTimeout(t)
	c.persist(t)
	if t.stop != noStop {
		c.emit(StopAttempt{Trial: t.i, Attempt: t.attempt, Reason: t.stopWhy})
	}
	c.dirtyDependants(t)
}

func (c *Core) healthyEv(e Healthy) {
	t := c.current(e.Trial, e.Attempt, running)
	if t == nil || t.healthy || t.stop != noStop {
		return
	}
	t.healthy = true
	c.dirtyDependants(t)
}

// armTimeout sets the timer of a running attempt's timeout, from now.
func (c *Core) armTimeout(t *trialState) {
	if t.spec.Timeout > 0 {
		// A trial that saves a checkpoint is warned its checkpoint's before ahead of the
		// timeout, so that it is killed at the timeout (the stop's grace is that before).
		d := time.Duration(t.spec.Timeout)
		if cp := t.spec.Checkpoint; cp != nil && cp.Before > 0 && time.Duration(cp.Before) < d {
			d -= time.Duration(cp.Before)
		}
		t.timeoutAt = c.now.Add(d)
		c.emit(SetTimer{Timer: Timer{Kind: Timeout, Trial: t.i, Attempt: t.attempt}, At: t.timeoutAt})
	}
}

// queuedEv records why an attempt waits in its engine's queue, so that 'jikken status' shows
// it from any shell. Time in the queue is not the trial's: its timeout starts again when it
// leaves the queue.
func (c *Core) queuedEv(e Queued) {
	t := c.current(e.Trial, e.Attempt, starting, running)
	if t == nil || t.rec.Live == nil || t.rec.Live.Queued == e.Reason {
		return
	}
	t.rec.Live.Queued = e.Reason
	left := t.queued && e.Reason == ""
	t.queued = e.Reason != ""
	if left && t.ph == running {
		c.armTimeout(t)
	}
	c.persist(t)
}

func (c *Core) timer(tm Timer) {
	switch tm.Kind {
	case Timeout:
		// A timer set before the attempt left its queue is superseded by the one set then.
		if t := c.current(tm.Trial, tm.Attempt, running); t != nil && t.stop == noStop && !t.queued && !c.now.Before(t.timeoutAt) {
			c.stopAttempt(t, stopTimeout, fmt.Sprintf("timed out after %s", time.Duration(t.spec.Timeout)))
		}
	case HealthDeadline:
		if t := c.current(tm.Trial, tm.Attempt, running); t != nil && !t.healthy && t.stop == noStop {
			d := DefaultHealthTimeout
			if h := t.spec.Health; h != nil && h.Timeout > 0 {
				d = time.Duration(h.Timeout)
			}
			c.stopAttempt(t, stopUnhealthy, fmt.Sprintf("not healthy after %s%s", d, describeHealth(t.spec.Health)))
		}
	case Retry:
		if t := c.current(tm.Trial, tm.Attempt, idle); t != nil && t.retrying {
			t.retrying = false
			c.markDirty(t)
		}
	case Recheck:
		c.pool.recheck()
		c.wakeServices()
	}
}

func describeHealth(h *trial.Health) string {
	switch {
	case h == nil:
		return " (the image's health check)"
	case h.TCP != "":
		return " (health check: tcp " + h.TCP + ")"
	case h.HTTP != "":
		return " (health check: http " + h.HTTP + ")"
	default:
		return " (health check: " + h.Cmd.String() + ")"
	}
}

// stopAttempt asks for t's attempt to end, for cause; a starting attempt is stopped once it
// has started.
func (c *Core) stopAttempt(t *trialState, cause stopCause, why string) {
	t.stop, t.stopWhy = cause, why
	if t.ph == running {
		c.emit(StopAttempt{Trial: t.i, Attempt: t.attempt, Reason: why})
	}
}

func (c *Core) exited(e Exited) {
	t := c.current(e.Trial, e.Attempt, starting, running)
	if t == nil {
		return
	}
	c.release(t)
	wasUp := t.ph == running
	t.ph, t.healthy, t.collected = idle, false, t.attempt
	att := &t.rec.Attempts[len(t.rec.Attempts)-1]
	att.Finished, att.Notes = c.now, e.Notes
	intr := e.Interrupted
	if t.stop == stopTimeout {
		intr = TimeLimit
	}
	att.Interrupted = intr.String()
	att.CheckpointEnd, att.CheckpointAt = e.Checkpoint, e.CheckpointAt
	account(&t.rec, att, intr != NotInterrupted)
	t.rec.Live, t.rec.ExitCode, att.ExitCode = nil, nil, nil
	if e.Err == "" {
		code := e.Code
		att.ExitCode, t.rec.ExitCode = &code, &code
	}
	if e.ImageDigest != "" {
		t.rec.ImageDigest = e.ImageDigest
	}
	reason := exitReason(e)
	clean := e.Err == "" && e.Code == 0
	service := t.svc
	var status record.Status
	retry := false
	if t.pruneVer > 0 {
		// The journal already says it was pruned, with the values it was judged on: that
		// stands, however the attempt ended (a halt, or by itself before the stop).
		t.stop = stopPrune
	} else {
		t.rec.Values = e.Values
	}
	switch t.stop {
	case stopPrune:
		status, reason = record.Pruned, t.pruneWhy
	case stopPause:
		// Not an end: the service waits, as before it first started, to be needed again.
		att.Reason = t.stopWhy
		t.rec.Status, t.rec.Reason = record.Pending, t.stopWhy
		if t.tries >= 0 {
			t.tries++
		}
		c.persist(t)
		c.place(t)
		c.markDirty(t)
		return
	case stopHalt:
		status, reason = record.Killed, t.stopWhy
	case stopIdle:
		// The runner ended it: whatever its exit code says, it did not succeed by itself.
		status, reason = record.Stopped, t.stopWhy
	case stopLostService:
		status, reason = record.Failed, t.stopWhy
	case stopTimeout, stopUnhealthy:
		reason = t.stopWhy
		retry = true
	default:
		switch {
		case service:
			// A service ended on its own while trials still need it: one that no trial needs
			// any more was asked to stop (idle), and starts only while needed.
			if clean {
				reason = "ended by itself (exit status 0) while trials still needed it"
			}
			retry = !clean || t.spec.Restart == trial.RestartAlways
			status = record.Failed
		case clean:
			status, reason = record.Succeeded, ""
		default:
			retry = true
		}
	}
	att.Reason = reason
	// A preemptible trial's interruption is the cluster's doing: it is requeued without using
	// up its retries, up to its requeues.
	requeue := retry && t.spec.Preemptible && intr != NotInterrupted && (t.stop == noStop || t.stop == stopTimeout) &&
		requeued(&t.rec) < t.spec.Requeues
	if retry && (t.tries != 0 || requeue) && !c.halted && (!service || c.needed(t)) {
		t.rec.Status = record.Pending
		delay := backoff(time.Duration(t.spec.Backoff), t.attempt)
		t.rec.Reason = fmt.Sprintf("%s; retrying in %s", reason, delay)
		if requeue {
			att.Requeued = true
			t.tries++
			delay = backoff(time.Duration(t.spec.Backoff), 1)
			t.rec.Reason = fmt.Sprintf("%s; requeued (%d of %d) in %s", reason, requeued(&t.rec), t.spec.Requeues, delay)
		}
		t.retrying = true
		c.emit(SetTimer{Timer: Timer{Kind: Retry, Trial: t.i, Attempt: t.attempt}, At: c.now.Add(delay)})
		c.persist(t)
		c.place(t)
		if service && wasUp {
			c.dirtyDependants(t)
		}
		return
	}
	if status == "" {
		status = record.Failed
	}
	c.finishWith(t, status, reason)
	if service && status == record.Failed {
		c.serviceLost(t)
	}
}

// requeued counts the attempts of a trial that were started again for an interruption.
func requeued(r *record.Trial) int {
	n := 0
	for _, a := range r.Attempts {
		if a.Requeued {
			n++
		}
	}
	return n
}

// account adds the wall time of attempt a, which has just ended, to the trial's compute; an
// interrupted attempt loses what it did after its last checkpoint (all of it without one).
func account(r *record.Trial, a *record.Attempt, interrupted bool) {
	if a.Started.IsZero() || a.Finished.Before(a.Started) {
		return
	}
	if r.Compute == nil {
		r.Compute = &record.Compute{}
	}
	spent := a.Finished.Sub(a.Started)
	r.Compute.Spent += spent.Seconds()
	if !interrupted {
		return
	}
	lost := spent
	if a.CheckpointEnd > a.Checkpoint && a.CheckpointAt.After(a.Started) && !a.CheckpointAt.After(a.Finished) {
		lost = a.Finished.Sub(a.CheckpointAt)
	}
	r.Compute.Lost += lost.Seconds()
}

// release gives back the slot and the resources of t's attempt, which has ended or not started.
func (c *Core) release(t *trialState) {
	c.active--
	if !t.svc {
		c.running--
	}
	if t.req.capped {
		c.capRunning--
	}
	c.pool.give(t.grant)
	t.grant = grant{}
	c.wakeServices()
}

// devicesBusy undoes the start of an attempt whose devices another run on the host holds: the
// trial waits again, and those devices are left alone until the next recheck.
func (c *Core) devicesBusy(e DevicesBusy) {
	t := c.current(e.Trial, e.Attempt, starting)
	if t == nil {
		return
	}
	c.release(t)
	c.pool.hold(e.Devices)
	c.emit(SetTimer{Timer: Timer{Kind: Recheck, Trial: -1}, At: c.now.Add(DeviceRecheck)})
	t.rec = t.before
	t.reopen = t.continued
	t.attempt = 0
	if n := len(t.rec.Attempts); n > 0 {
		t.attempt = t.rec.Attempts[n-1].N
	}
	if t.tries >= 0 {
		t.tries++
	}
	t.ph, t.stop, t.stopWhy = idle, noStop, ""
	c.place(t)
	c.markDirty(t)
}

// serviceLost fails the running trials that needed service s, which ended for good.
func (c *Core) serviceLost(s *trialState) {
	why := fmt.Sprintf("%s ended while this trial needed it: %s", s.spec.Name, s.rec.Reason)
	for _, i := range s.depDeps {
		if d := c.ts[i]; (d.ph == running || d.ph == starting) && d.stop == noStop {
			c.stopAttempt(d, stopLostService, why)
		}
	}
}

func exitReason(e Exited) string {
	switch {
	case e.Err != "":
		return e.Err
	case e.Reason != "":
		return e.Reason
	}
	return fmt.Sprintf("exit status %d", e.Code)
}

// backoff is how long attempt attempt waits before the next: base doubled attempt-1 times,
// at most a minute. It doubles only below the cap, so it never overflows.
func backoff(base time.Duration, attempt int) time.Duration {
	if base <= 0 {
		base = time.Second
	}
	d := base
	for n := 1; n < attempt && d < time.Minute; n++ {
		d *= 2
	}
	return min(d, time.Minute)
}

// finish ends a trial that has no attempt running.
func (c *Core) finish(t *trialState, st record.Status, reason string) {
	c.finishWith(t, st, reason)
}

func (c *Core) finishWith(t *trialState, st record.Status, reason string) {
	t.rec.Status, t.rec.Reason = st, reason
	now := c.now
	t.rec.Finished = &now
	c.persist(t)
	c.ended(t)
}

// ended does what follows from t reaching its final status: services it needed may go idle,
// trials waiting for it move, fail-fast halts the run.
func (c *Core) ended(t *trialState) {
	st := t.rec.Status
	t.ph, t.retrying = final, false
	c.place(t)
	if t.pin != nil {
		c.pool.give(*t.pin)
		t.pin = nil
		c.wakeServices()
	}
	c.endedView(t)
	if !t.svc {
		c.open--
		if c.open == 0 {
			for _, i := range c.standalone {
				c.idle(c.ts[i])
			}
		}
	}
	for _, i := range t.services {
		s := c.ts[i]
		s.openDeps--
		if s.openDeps == 0 {
			c.idle(s)
		}
	}
	for _, i := range t.afterDeps {
		if d := c.ts[i]; st != record.Succeeded && d.afterBlocked == "" {
			d.afterBlocked = fmt.Sprintf("after: %s %s", t.spec.Name, st)
		}
	}
	c.dirtyDependants(t)
	if st == record.Failed && c.cfg.FailFast {
		c.halt("fail-fast: "+t.spec.Name+" failed", false)
	}
}

// finishUnneeded ends a service that is not running and that no trial needs any more.
func (c *Core) finishUnneeded(t *trialState) {
	if t.journalFinal && !t.startedHere {
		// Its record from the earlier runner stands.
		old := c.cfg.Journal[t.spec.Name]
		t.rec.Status, t.rec.Reason = old.Status, old.Reason
		c.ended(t)
		return
	}
	reason := "not started: every trial that needs it has ended"
	if t.startedHere {
		reason = "not restarted: every trial that needs it has ended"
		if n := len(t.rec.Attempts); n > 0 && t.rec.Attempts[n-1].Reason != "" {
			reason += " (its last attempt: " + t.rec.Attempts[n-1].Reason + ")"
		}
	}
	c.finish(t, record.Stopped, reason)
}

// idle stops or ends a service that no trial needs any more.
func (c *Core) idle(s *trialState) {
	switch {
	case s.ph == running || s.ph == starting:
		if s.stop == noStop {
			c.stopAttempt(s, stopIdle, "stopped after its dependants ended")
		}
	case s.ph == idle:
		s.retrying = false
		c.markDirty(s)
	}
}

// halt stops every attempt, and ends as killed the trials waiting to retry (their records said
// they would); trials not started stay pending.
func (c *Core) halt(reason string, interrupt bool) {
	if c.halted {
		return
	}
	c.halted, c.haltReason = true, reason
	c.interrupted = interrupt
	why := "killed: " + reason
	for _, t := range c.ts {
		if t.ph == starting || t.ph == running {
			c.stopAttempt(t, stopHalt, why)
		}
	}
	// Once every attempt is asked to stop: ending a trial makes the services it needed idle,
	// which must not ask one still running to stop a second time, for another cause.
	for _, t := range c.ts {
		if t.ph == idle && t.retrying {
			t.retrying = false
			c.finish(t, record.Killed, why)
		}
	}
	c.waiting.clear()
	c.services.clear()
	for _, t := range c.ts {
		t.inReady = false
	}
}

func (c *Core) persisted(i, v int) {
	t := c.ts[i]
	if v <= t.durable || v > t.ver {
		return
	}
	t.durable = v
	c.earlyStored(t)
	if t.pending {
		t.pending = false
		c.markDirty(t)
	}
	if t.pruneVer > 0 && v >= t.pruneVer && t.stop == noStop && (t.ph == running || t.ph == starting) {
		c.stopAttempt(t, stopPrune, t.pruneWhy)
	}
	// Every change is reported once the store holds it, or a later record that supersedes it.
	k := 0
	for k < len(t.unreported) && t.unreported[k].Version <= v {
		r := t.unreported[k].Report
		r.Counts = c.counts
		c.emit(r)
		k++
	}
	t.unreported = t.unreported[k:]
	if t.durable == t.ver {
		c.unsettled--
		if t.ph == final && t.rec.Status == record.Succeeded && !t.okDurable {
			t.okDurable = true
			for _, j := range t.afterDeps {
				c.ts[j].waitAfter--
			}
		}
		if t.ph == final {
			c.dirtyDependants(t)
		}
		c.settledView(t)
	}
}

func (c *Core) persist(t *trialState) {
	if t.durable == t.ver {
		c.unsettled++
	}
	t.ver++
	rec := copyRecord(&t.rec)
	c.emit(Persist{Trial: t.i, Version: t.ver, Record: &rec})
	r := Report{Trial: t.i, Name: t.spec.Name, Status: rec.Status, Attempt: len(rec.Attempts), Reason: rec.Reason}
	t.unreported = append(t.unreported, versioned{Version: t.ver, Report: r})
}

// versioned is a report waiting for the store to hold its record's version.
type versioned struct {
	Version int
	Report  Report
}

func (c *Core) emit(a Action) { c.acts = append(c.acts, a) }

func (c *Core) markDirty(t *trialState) {
	if !t.inDirty {
		t.inDirty = true
		c.dirty = append(c.dirty, t.i)
	}
}

func (c *Core) dirtyDependants(t *trialState) {
	for _, i := range t.depDeps {
		c.markDirty(c.ts[i])
	}
	for _, i := range t.afterDeps {
		c.markDirty(c.ts[i])
	}
}

// place moves t to the count of its current state.
func (c *Core) place(t *trialState) {
	var b *int
	switch {
	case t.ph == starting || t.ph == running:
		b = &c.counts.Running
	case t.ph != final:
		b = &c.counts.Pending
	case t.rec.Status == record.Succeeded:
		b = &c.counts.Succeeded
	case t.rec.Status == record.Failed:
		b = &c.counts.Failed
	case t.rec.Status == record.Skipped:
		b = &c.counts.Skipped
	case t.rec.Status == record.Stopped:
		b = &c.counts.Stopped
	case t.rec.Status == record.Pruned:
		b = &c.counts.Pruned
	case t.rec.Status == record.Eliminated:
		b = &c.counts.Eliminated
	default:
		b = &c.counts.Killed
	}
	if t.bucket != b {
		if t.bucket != nil {
			*t.bucket--
		}
		*b++
		t.bucket = b
	}
}

func copyRecord(r *record.Trial) record.Trial {
	out := *r
	out.Attempts = slices.Clone(r.Attempts)
	for i := range out.Attempts {
		out.Attempts[i].Notes = slices.Clone(out.Attempts[i].Notes)
		out.Attempts[i].Devices = slices.Clone(out.Attempts[i].Devices)
	}
	out.Devices = slices.Clone(r.Devices)
	if r.Live != nil {
		l := *r.Live
		out.Live = &l
	}
	if r.Compute != nil {
		cp := *r.Compute
		out.Compute = &cp
	}
	return out
}
