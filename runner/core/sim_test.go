package core_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/trial"
)

// behaviour is how a simulated attempt of a trial goes.
type behaviour struct {
	startErr bool // the backend cannot start it
	hang     bool // runs until stopped
	code     int  // exit code when it ends by itself
	healthy  bool // passes its health check (when it has one)
	// flaky trials succeed from attempt flakyUntil on, whatever code says.
	flakyUntil int
	// interrupted attempts are ended by their engine (preempted, node lost, time limit): the
	// first `interrupted` attempts of the trial, each of class classes[n % len].
	interrupted int
	classes     []core.Interruption
}

// plan is a random experiment with the behaviour of each trial.
type plan struct {
	trials   []trial.Trial
	behave   []behaviour
	jobs     int
	failFast bool
	capacity *core.Capacity
}

// genCapacity returns a host (or none), and a function drawing resources that fit it.
func genCapacity(rng *rand.Rand) (*core.Capacity, func() trial.Resources) {
	if rng.IntN(3) == 0 {
		return nil, func() trial.Resources { return trial.Resources{} }
	}
	c := &core.Capacity{CPU: float64(1 + rng.IntN(4)), Memory: int64(1+rng.IntN(8)) << 30}
	whole := rng.IntN(4)
	for i := 0; i < whole; i++ {
		c.GPUs = append(c.GPUs, core.Device{ID: fmt.Sprintf("GPU-%d", i)})
	}
	migs := rng.IntN(3)
	for i := 0; i < migs; i++ {
		c.GPUs = append(c.GPUs, core.Device{ID: fmt.Sprintf("MIG-%d", i), MIG: "1g.10gb"})
	}
	draw := func() trial.Resources {
		var r trial.Resources
		if rng.IntN(2) == 0 {
			r.CPU = float64(rng.IntN(int(c.CPU)*2)+1) / 4
		}
		if rng.IntN(2) == 0 {
			r.Memory = int64(rng.IntN(int(c.Memory>>29))+1) << 28
		}
		switch k := rng.IntN(6); {
		case k == 0 && whole > 0:
			r.GPU = float64(1 + rng.IntN(whole))
		case k == 1 && whole > 0:
			r.GPU = []float64{0.5, 0.25, 0.125, 0.333}[rng.IntN(4)]
		case k == 2 && migs > 0:
			r.MIG = "1g.10gb"
		}
		return r
	}
	return c, draw
}

type planOptions struct {
	// deterministic keeps to behaviours whose outcome does not depend on the interleaving, for
	// the resume property: services are healthy and run until stopped, nothing is flaky, no
	// started condition on a trial that may end early, no fail-fast.
	deterministic bool
	// preempt makes some trials preemptible and lets engines interrupt attempts.
	preempt bool
}

func genPlan(rng *rand.Rand, o planOptions) plan {
	n := 2 + rng.IntN(7)
	p := plan{jobs: 1 + rng.IntN(3), failFast: !o.deterministic && rng.IntN(6) == 0}
	var draw func() trial.Resources
	p.capacity, draw = genCapacity(rng)
	// Trials are created in dependency order, then shuffled into plan order.
	order := rng.Perm(n)
	specs := make([]trial.Trial, n)
	behave := make([]behaviour, n)
	for k := 0; k < n; k++ {
		t := trial.Trial{Name: fmt.Sprintf("t%d", k), Retries: rng.IntN(3) - 1}
		if t.Retries < 0 {
			t.Retries = 0
		}
		b := behaviour{healthy: true}
		t.Resources = draw()
		t.Service = rng.IntN(4) == 0
		// Half the services are implied (others depend on them to have started): trials like
		// the others that jikken never stops for being idle, so they end by themselves.
		t.ServiceImplied = t.Service && rng.IntN(2) == 0
		if t.ServiceImplied {
			switch r := rng.IntN(4); {
			case o.deterministic || r == 0:
				b.code = 0
			case r == 1:
				b.code = 1
			default:
				b.hang = true
				t.Timeout = trial.Duration(time.Duration(1+rng.IntN(10)) * time.Second)
			}
			if !o.deterministic && rng.IntN(3) == 0 {
				t.Restart = trial.RestartOnFailure
			}
		} else if t.Service {
			b.hang = true
			if rng.IntN(3) == 0 {
				t.Health = &trial.Health{TCP: "127.0.0.1:1", Timeout: trial.Duration(time.Duration(1+rng.IntN(5)) * time.Second)}
				b.healthy = o.deterministic || rng.IntN(3) > 0
			}
			if !o.deterministic {
				switch rng.IntN(5) {
				case 0:
					b.hang, b.code = false, rng.IntN(2)
				case 1:
					t.Restart = trial.RestartOnFailure
				case 2:
					t.Restart = trial.RestartAlways
					b.hang, b.code = false, 0
				}
			}
		} else {
			switch r := rng.IntN(10); {
			case r == 0:
				b.startErr = true
			case r == 1:
				b.hang = true
				t.Timeout = trial.Duration(time.Duration(1+rng.IntN(10)) * time.Second)
			case r < 4:
				b.code = 1 + rng.IntN(3)
			}
			if !o.deterministic && b.code != 0 && rng.IntN(2) == 0 {
				b.flakyUntil = 2 + rng.IntN(2)
			}
			if !o.deterministic && rng.IntN(5) == 0 && !b.hang {
				t.Timeout = trial.Duration(time.Duration(5+rng.IntN(10)) * time.Second)
			}
		}
		if o.preempt && !t.Service && !b.startErr {
			t.Preemptible = rng.IntN(3) > 0
			if t.Preemptible {
				t.Requeues = rng.IntN(4)
			}
			if rng.IntN(2) == 0 {
				b.interrupted = 1 + rng.IntN(6)
				for range 1 + rng.IntN(3) {
					b.classes = append(b.classes, core.Interruption(1+rng.IntN(3)))
				}
			}
		}
		t.Backoff = trial.Duration(time.Duration(rng.IntN(3)) * 500 * time.Millisecond)
		for j := 0; j < k; j++ {
			if rng.IntN(3) != 0 {
				continue
			}
			target := &specs[j]
			switch {
			case target.Service:
				cond := trial.Started
				if target.Health != nil {
					cond = trial.Healthy
				}
				t.Depends = append(t.Depends, trial.Dependency{Trial: target.Name, Condition: cond})
			case rng.IntN(2) == 0:
				t.After = append(t.After, target.Name)
			default:
				conds := []trial.Condition{trial.Completed, trial.Succeeded}
				if !o.deterministic {
					conds = append(conds, trial.Started)
				}
				t.Depends = append(t.Depends, trial.Dependency{Trial: target.Name, Condition: conds[rng.IntN(len(conds))]})
			}
		}
		specs[k], behave[k] = t, b
	}
	p.trials = make([]trial.Trial, n)
	p.behave = make([]behaviour, n)
	for k, pos := range order {
		p.trials[pos], p.behave[pos] = specs[k], behave[k]
		p.trials[pos].Index = pos
	}
	// A runner refuses a plan that cannot fit the host before anything starts: take resources
	// away from services first (what they hold all along is what makes plans unfit), then from
	// everything.
	for _, which := range []func(t trial.Trial) bool{
		func(t trial.Trial) bool { return t.Service },
		func(trial.Trial) bool { return true },
	} {
		if len(core.Unfit(p.trials, p.capacity)) == 0 {
			break
		}
		for i := range p.trials {
			if which(p.trials[i]) {
				p.trials[i].Resources = trial.Resources{}
			}
		}
	}
	return p
}

// genCrowded returns a plan for a host whose GPUs services crowd: services that run all along
// (some restarting, some with a health check), services trials depend on, and trials, each
// asking for a share of a GPU or a whole one, in sizes that leave pieces too small for others.
// It returns a plan admission accepts, drawing again until one is.
func genCrowded(rng *rand.Rand) plan {
	shares := []float64{0.2, 0.3, 0.4, 0.5, 0.6, 0.7}
	gpu := func() float64 {
		if rng.IntN(6) == 0 {
			return 1
		}
		return shares[rng.IntN(len(shares))]
	}
	for {
		c := &core.Capacity{CPU: 8}
		for i := range 1 + rng.IntN(3) {
			c.GPUs = append(c.GPUs, core.Device{ID: fmt.Sprintf("GPU-%d", i)})
		}
		p := plan{jobs: 1 + rng.IntN(3), failFast: rng.IntN(6) == 0, capacity: c}
		add := func(t experiment.Trial, b behaviour) {
			t.Index = len(p.trials)
			p.trials, p.behave = append(p.trials, t), append(p.behave, b)
		}
		service := func(name string) (experiment.Trial, behaviour) {
			t := experiment.Trial{Name: name, Service: true, Resources: experiment.Resources{GPU: gpu()}}
			b := behaviour{hang: true, healthy: true}
			switch rng.IntN(4) {
			case 0:
				t.Restart, b.hang, b.code = experiment.RestartOnFailure, false, 1
			case 1:
				t.Health = &experiment.Health{TCP: "127.0.0.1:1", Timeout: experiment.Duration(time.Second)}
			}
			return t, b
		}
		var lazy []string
		for k := range rng.IntN(3) {
			t, b := service(fmt.Sprintf("lazy%d", k))
			add(t, b)
			lazy = append(lazy, t.Name)
		}
		for k := range 1 + rng.IntN(4) {
			add(service(fmt.Sprintf("svc%d", k)))
		}
		for k := range 1 + rng.IntN(4) {
			t := experiment.Trial{Name: fmt.Sprintf("t%d", k), Retries: rng.IntN(2), Resources: experiment.Resources{GPU: gpu()}}
			if len(lazy) > 0 && rng.IntN(2) == 0 {
				t.Depends = []experiment.Dependency{{Trial: lazy[rng.IntN(len(lazy))], Condition: experiment.Started}}
			}
			b := behaviour{healthy: true}
			if rng.IntN(4) == 0 {
				b.code = 1
			}
			add(t, b)
		}
		// Services in plan order among the trials, as a file may list them.
		perm := rng.Perm(len(p.trials))
		trials, behave := make([]experiment.Trial, len(p.trials)), make([]behaviour, len(p.trials))
		for from, to := range perm {
			trials[to], behave[to] = p.trials[from], p.behave[from]
			trials[to].Index = to
		}
		p.trials, p.behave = trials, behave
		if len(core.Unfit(p.trials, p.capacity)) == 0 {
			return p
		}
	}
}

// world is everything outside the core: attempts, timers and the store, advanced one event at a
// time in an order drawn from rng.
type world struct {
	rng  *rand.Rand
	p    plan
	c    *core.Core
	now  time.Time
	name map[string]int

	attempts map[[2]int]*simAttempt // by (trial, attempt)
	timers   []core.SetTimer
	persists []core.Persist
	// stored is the store: each trial's last persisted record. journal lists every state of the
	// store, one per persisted record, for the resume property.
	stored  map[int]*record.Trial
	journal []map[string]*record.Trial
	// everStarted is set for trials an attempt of which started in this world.
	everStarted map[int]bool
	lastAttempt map[int]int
	// adopted are the attempts open in the journal that the backend re-attaches to (resume).
	adopted map[int]int
	steps   int
	fastIO  bool
	// persisted and reported count the records asked for and the changes reported, by trial.
	persisted, reported map[int]int
	// checkpoint is each trial's newest checkpoint version; startedFrom the version each
	// attempt (trial, attempt) was told it started from.
	checkpoint  map[int]int
	startedFrom map[[2]int]int
	trace       []string
	tracing     bool
}

type simAttempt struct {
	trial, n     int
	devices      []string
	shares       []int
	busy         bool // another run holds one of its devices: it will not start
	b            behaviour
	started      bool
	watching     bool
	stopAsked    bool
	exited       bool
	healthPassed bool
	// queued tells whether the attempt waits in its engine's queue; it enters and leaves it
	// at most once (queueMoves counts those, and starts at 2 for one that never queues).
	queued     bool
	queueMoves int
}

func newWorld(rng *rand.Rand, p plan, journal map[string]*record.Trial, adopted map[string]int, start time.Time) *world {
	w := &world{rng: rng, p: p, now: start, attempts: map[[2]int]*simAttempt{}, stored: map[int]*record.Trial{},
		everStarted: map[int]bool{}, lastAttempt: map[int]int{}, adopted: map[int]int{}, name: map[string]int{}, persisted: map[int]int{}, reported: map[int]int{},
		checkpoint: map[int]int{}, startedFrom: map[[2]int]int{}}
	for i, t := range p.trials {
		w.name[t.Name] = i
		if rec := journal[t.Name]; rec != nil {
			r := *rec
			w.stored[i] = &r
			if n := len(rec.Attempts); n > 0 {
				w.lastAttempt[i] = rec.Attempts[n-1].N
			}
		}
		if n, ok := adopted[t.Name]; ok {
			w.adopted[i] = n
		}
	}
	w.c = core.New(core.Config{RunID: "run", Backend: "sim", Host: "h", Trials: p.trials, Jobs: p.jobs, FailFast: p.failFast,
		Journal: journal, Capacity: p.capacity, Adopted: adopted})
	return w
}

// step feeds ev to the core and applies its actions; it returns a violated invariant, or "".
func (w *world) step(ev core.Event) string {
	w.steps++
	if w.tracing {
		w.trace = append(w.trace, fmt.Sprintf("%s %T%+v", w.now.Format("15:04:05.000"), ev, ev))
	}
	for _, a := range w.c.Step(ev) {
		if w.tracing {
			w.trace = append(w.trace, fmt.Sprintf("    -> %T%+v", a, a))
		}
		if v := w.apply(a); v != "" {
			return v
		}
	}
	return w.check()
}

func (w *world) apply(a core.Action) string {
	switch a := a.(type) {
	case core.StartAttempt:
		if v := w.checkStart(a); v != "" {
			return v
		}
		w.lastAttempt[a.Trial] = a.Attempt
		b := w.p.behave[a.Trial]
		if b.flakyUntil > 0 && a.Attempt >= b.flakyUntil {
			b.code = 0
		}
		at := &simAttempt{trial: a.Trial, n: a.Attempt, b: b, devices: a.Devices, shares: a.Shares, queueMoves: 2 * w.rng.IntN(2)}
		// Now and then another run on the host holds a device.
		at.busy = len(a.Devices) > 0 && !w.fastIO && w.rng.IntN(8) == 0
		w.attempts[[2]int{a.Trial, a.Attempt}] = at
		if v := w.checkResources(); v != "" {
			return v
		}
	case core.StopAttempt:
		at := w.attempts[[2]int{a.Trial, a.Attempt}]
		if at == nil || !at.started || at.exited {
			return fmt.Sprintf("stop of %s attempt %d, which is not running", w.p.trials[a.Trial].Name, a.Attempt)
		}
		at.stopAsked = true
		// (Its own limits, a stop of the run, or the loss of a declared service it needs.)
		if t := w.p.trials[a.Trial]; t.ServiceImplied && !strings.HasPrefix(a.Reason, "killed: ") &&
			!strings.HasPrefix(a.Reason, "timed out") && !strings.HasPrefix(a.Reason, "not healthy") &&
			!strings.Contains(a.Reason, " ended while this trial needed it: ") {
			return fmt.Sprintf("%s, a service implied by depends, stopped by the runner: %q", t.Name, a.Reason)
		}
		// A pause is for trials that wait for resources alone: none while a record, which other
		// trials may be waiting for, is on its way to the store.
		if strings.HasPrefix(a.Reason, "paused: ") && len(w.persists) > 0 {
			return fmt.Sprintf("%s paused while %d records are on their way to the store", w.p.trials[a.Trial].Name, len(w.persists))
		}
		if t := w.p.trials[a.Trial]; t.DeclaredService() && a.Reason == "stopped after its dependants ended" {
			// A service is stopped for being idle only once no trial needs it.
			for i, u := range w.p.trials {
				for _, d := range u.Depends {
					if d.Trial == t.Name && !w.c.Record(i).Status.Final() {
						return fmt.Sprintf("service %s stopped as idle while %s still needs it", t.Name, u.Name)
					}
				}
			}
		}
	case core.WatchHealth:
		at := w.attempts[[2]int{a.Trial, a.Attempt}]
		if at == nil || !at.started || at.exited {
			return fmt.Sprintf("health watch of %s attempt %d, which is not running", w.p.trials[a.Trial].Name, a.Attempt)
		}
		at.watching = true
	case core.SetTimer:
		if a.At.Before(w.now) {
			return fmt.Sprintf("timer %+v set in the past", a)
		}
		w.timers = append(w.timers, a)
	case core.Persist:
		w.persists = append(w.persists, a)
		w.persisted[a.Trial]++
	case core.Report:
		if a.Trial >= 0 {
			w.reported[a.Trial]++
			if w.stored[a.Trial] == nil {
				return fmt.Sprintf("%s reported before any record of it was stored", a.Name)
			}
		}
	}
	return ""
}

// checkResources checks that the attempts running (or starting) fit the host: cores, memory,
// no device given beyond its whole, each attempt the devices it asked for.
func (w *world) checkResources() string {
	c := w.p.capacity
	if c == nil {
		return ""
	}
	var cpu float64
	var mem int64
	used := map[string]int{}
	for _, at := range w.attempts {
		if at.exited {
			continue
		}
		r := w.p.trials[at.trial].Resources
		cpu += r.CPU
		mem += r.Memory
		name := w.p.trials[at.trial].Name
		switch {
		case r.GPU >= 1 && (len(at.devices) != int(r.GPU) || slices.ContainsFunc(at.shares, func(s int) bool { return s != 1000 })):
			return fmt.Sprintf("%s asked for %g GPUs and got %v %v", name, r.GPU, at.devices, at.shares)
		case r.GPU > 0 && r.GPU < 1 && (len(at.devices) != 1 || at.shares[0] != int(r.GPU*1000+0.5)):
			return fmt.Sprintf("%s asked for a %g share and got %v %v", name, r.GPU, at.devices, at.shares)
		case r.MIG != "" && (len(at.devices) != 1 || !strings.HasPrefix(at.devices[0], "MIG-")):
			return fmt.Sprintf("%s asked for a MIG instance and got %v", name, at.devices)
		case r.GPU >= 1 && slices.ContainsFunc(at.devices, func(d string) bool { return strings.HasPrefix(d, "MIG-") }):
			return fmt.Sprintf("%s asked for whole GPUs and got a MIG instance: %v", name, at.devices)
		case !r.UsesGPU() && len(at.devices) > 0:
			return fmt.Sprintf("%s asked for no GPU and got %v", name, at.devices)
		}
		for k, d := range at.devices {
			used[d] += at.shares[k]
		}
	}
	if cpu > c.CPU+1e-9 || mem > c.Memory {
		return fmt.Sprintf("attempts hold %g cores and %d bytes of a host with %g and %d", cpu, mem, c.CPU, c.Memory)
	}
	for d, u := range used {
		if u > 1000 {
			return fmt.Sprintf("device %s is given %d thousandths at once", d, u)
		}
	}
	return ""
}

// checkStart checks that a trial starts only when its dependencies allow it, as the store and
// the attempts show them.
func (w *world) checkStart(a core.StartAttempt) string {
	t := w.p.trials[a.Trial]
	want := w.lastAttempt[a.Trial] + 1
	if n, ok := w.adopted[a.Trial]; ok {
		// The first start of an adopted attempt continues it: one pod, one attempt.
		delete(w.adopted, a.Trial)
		if a.Attempt != n || a.Clear {
			return fmt.Sprintf("%s started as attempt %d (clear %v), not as its adopted attempt %d", t.Name, a.Attempt, a.Clear, n)
		}
		want = n
	}
	if a.Attempt != want {
		return fmt.Sprintf("%s started as attempt %d after attempt %d", t.Name, a.Attempt, w.lastAttempt[a.Trial])
	}
	for _, at := range w.attempts {
		if at.trial == a.Trial && !at.exited {
			return fmt.Sprintf("%s started twice at once", t.Name)
		}
	}
	stored := func(name string) record.Status {
		if r := w.stored[w.name[name]]; r != nil {
			return r.Status
		}
		return ""
	}
	for _, x := range t.After {
		if stored(x) != record.Succeeded {
			return fmt.Sprintf("%s started before %s (after) was stored succeeded (%q)", t.Name, x, stored(x))
		}
	}
	for _, d := range t.Depends {
		j := w.name[d.Trial]
		target := w.p.trials[j]
		up, healthy := false, false
		for _, at := range w.attempts {
			if at.trial == j && at.started && !at.exited && !at.stopAsked {
				up, healthy = true, at.healthPassed || (target.Health == nil)
			}
		}
		switch d.Condition {
		case trial.Completed:
			if !stored(d.Trial).Final() || stored(d.Trial) == record.Running {
				return fmt.Sprintf("%s started before %s completed", t.Name, d.Trial)
			}
		case trial.Succeeded:
			if stored(d.Trial) != record.Succeeded {
				return fmt.Sprintf("%s started before %s succeeded", t.Name, d.Trial)
			}
		case trial.Started:
			if target.DeclaredService() && !up {
				return fmt.Sprintf("%s started while service %s is not up", t.Name, d.Trial)
			}
			if target.ServiceImplied && !up && stored(d.Trial) != record.Succeeded {
				return fmt.Sprintf("%s started while %s neither runs nor has succeeded", t.Name, d.Trial)
			}
			if !target.Service && !w.everStarted[j] && stored(d.Trial) != record.Succeeded {
				return fmt.Sprintf("%s started before %s started", t.Name, d.Trial)
			}
		case trial.Healthy:
			if !healthy && !(!target.DeclaredService() && stored(d.Trial) == record.Succeeded) {
				return fmt.Sprintf("%s started before %s was healthy", t.Name, d.Trial)
			}
		}
	}
	return ""
}

// check verifies the invariants that hold between steps.
func (w *world) check() string {
	running := 0
	for _, at := range w.attempts {
		if !at.exited && !w.p.trials[at.trial].DeclaredService() {
			running++
		}
	}
	if running > w.p.jobs {
		return fmt.Sprintf("%d trials run at once with a cap of %d", running, w.p.jobs)
	}
	// A trial the runner stopped is never recorded as succeeded: its last attempt ended by
	// itself, or the record says something else.
	for i, t := range w.p.trials {
		rec := w.c.Record(i)
		if rec.Status != record.Succeeded || len(rec.Attempts) == 0 {
			continue
		}
		last := rec.Attempts[len(rec.Attempts)-1]
		if at := w.attempts[[2]int{i, last.N}]; at != nil && at.stopAsked {
			return fmt.Sprintf("%s is recorded succeeded although the runner stopped its attempt %d (%q)", t.Name, last.N, last.Reason)
		}
	}
	// A trial is never requeued more than its requeues, nor at all unless preemptible.
	for i, t := range w.p.trials {
		n := 0
		for _, a := range w.c.Record(i).Attempts {
			if a.Requeued {
				n++
			}
		}
		if n > t.Requeues || (n > 0 && !t.Preemptible) {
			return fmt.Sprintf("%s was requeued %d times (preemptible %v, requeues %d)", t.Name, n, t.Preemptible, t.Requeues)
		}
	}
	// A running trial whose service ended for good is being stopped.
	for _, at := range w.attempts {
		if at.exited || at.stopAsked || !at.started {
			continue
		}
		for _, d := range w.p.trials[at.trial].Depends {
			j := w.name[d.Trial]
			if !w.p.trials[j].DeclaredService() {
				continue
			}
			rec := w.c.Record(j)
			if rec.Status == record.Failed {
				return fmt.Sprintf("%s runs on although service %s failed for good", w.p.trials[at.trial].Name, d.Trial)
			}
		}
	}
	return ""
}

// enabled lists the events the world can deliver now, timers last.
func (w *world) enabled() []core.Event {
	var evs []core.Event
	keys := make([][2]int, 0, len(w.attempts))
	for k := range w.attempts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	for _, k := range keys {
		at := w.attempts[k]
		if at.exited {
			continue
		}
		if at.queueMoves < 2 && !at.busy {
			reason := "Resources"
			if at.queued {
				reason = ""
			}
			evs = append(evs, core.Queued{Trial: at.trial, Attempt: at.n, Reason: reason})
		}
		switch {
		case !at.started && at.busy:
			evs = append(evs, core.DevicesBusy{Trial: at.trial, Attempt: at.n, Devices: at.devices[:1]})
		case !at.started && at.b.startErr:
			evs = append(evs, core.Exited{Trial: at.trial, Attempt: at.n, Code: -1, Err: "cannot start"})
		case !at.started:
			evs = append(evs, core.Started{Trial: at.trial, Attempt: at.n, Handle: "h"})
		default:
			if at.watching && at.b.healthy && !at.healthPassed {
				evs = append(evs, core.Healthy{Trial: at.trial, Attempt: at.n})
			}
			if at.stopAsked {
				evs = append(evs, core.Exited{Trial: at.trial, Attempt: at.n, Code: 143, Reason: "killed by signal terminated"})
			} else if at.n <= at.b.interrupted {
				class := at.b.classes[at.n%len(at.b.classes)]
				evs = append(evs, core.Exited{Trial: at.trial, Attempt: at.n, Code: -1, Reason: "ended by its engine: " + class.String(), Interrupted: class})
			} else if !at.b.hang {
				evs = append(evs, core.Exited{Trial: at.trial, Attempt: at.n, Code: at.b.code})
			}
		}
	}
	for _, p := range w.persists {
		evs = append(evs, core.Persisted{Trial: p.Trial, Version: p.Version})
	}
	return evs
}

// next picks and delivers one event; it returns false when nothing can happen.
func (w *world) next() (string, bool) {
	evs := w.enabled()
	// Timers race with everything else, except in deterministic plans, where work that can
	// happen happens before any deadline.
	fireTimer := len(w.timers) > 0 && (len(evs) == 0 || (!w.fastIO && w.rng.IntN(4) == 0))
	if fireTimer {
		k := 0
		for i, t := range w.timers {
			if t.At.Before(w.timers[k].At) {
				k = i
			}
		}
		tm := w.timers[k]
		w.timers = slices.Delete(w.timers, k, k+1)
		if tm.At.After(w.now) {
			w.now = tm.At
		}
		return w.step(core.TimerFired{Timer: tm.Timer, At: w.now}), true
	}
	if len(evs) == 0 {
		return "", false
	}
	w.now = w.now.Add(time.Duration(w.rng.IntN(50)) * time.Millisecond)
	ev := evs[w.rng.IntN(len(evs))]
	switch e := ev.(type) {
	case core.Started:
		at := w.attempts[[2]int{e.Trial, e.Attempt}]
		at.started = true
		w.everStarted[e.Trial] = true
		e.At = w.now
		e.Checkpoint = w.checkpoint[e.Trial]
		w.startedFrom[[2]int{e.Trial, e.Attempt}] = e.Checkpoint
		ev = e
	case core.Healthy:
		w.attempts[[2]int{e.Trial, e.Attempt}].healthPassed = true
		e.At = w.now
		ev = e
	case core.Queued:
		at := w.attempts[[2]int{e.Trial, e.Attempt}]
		at.queued, at.queueMoves = e.Reason != "", at.queueMoves+1
		e.At = w.now
		ev = e
	case core.DevicesBusy:
		// The start is taken back: the attempt never was.
		at := w.attempts[[2]int{e.Trial, e.Attempt}]
		delete(w.attempts, [2]int{e.Trial, e.Attempt})
		w.lastAttempt[e.Trial] = at.n - 1
		e.At = w.now
		ev = e
	case core.Exited:
		at := w.attempts[[2]int{e.Trial, e.Attempt}]
		if at.exited {
			return fmt.Sprintf("%s attempt %d ended twice", w.p.trials[e.Trial].Name, e.Attempt), true
		}
		if t := w.p.trials[e.Trial]; t.DeclaredService() && at.started && !at.stopAsked && !w.needed(e.Trial) {
			return fmt.Sprintf("service %s runs on, not asked to stop, although no trial needs it", t.Name), true
		}
		at.exited = true
		e.At = w.now
		if at.started && w.p.trials[e.Trial].Checkpointed() && w.rng.IntN(2) == 0 {
			// The attempt saved a checkpoint on its way.
			w.checkpoint[e.Trial]++
			e.CheckpointAt = w.now.Add(-time.Duration(w.rng.IntN(20)) * time.Millisecond)
		}
		if at.started {
			e.Checkpoint = w.checkpoint[e.Trial]
		}
		ev = e
	case core.Persisted:
		// The driver may write only the latest version of a trial's record.
		var latest core.Persist
		rest := w.persists[:0]
		for _, p := range w.persists {
			if p.Trial == e.Trial {
				if p.Version > latest.Version {
					latest = p
				}
				continue
			}
			rest = append(rest, p)
		}
		w.persists = rest
		w.stored[e.Trial] = latest.Record
		w.snapshot()
		ev = core.Persisted{Trial: e.Trial, Version: latest.Version, At: w.now}
	}
	return w.step(ev), true
}

func (w *world) snapshot() {
	s := make(map[string]*record.Trial, len(w.stored))
	for i, r := range w.stored {
		s[w.p.trials[i].Name] = r
	}
	w.journal = append(w.journal, s)
}

// run drives the world until the core is done; it returns a violated invariant, or "".
func (w *world) run(stopAt int) string {
	if v := w.step(core.Begin{At: w.now}); v != "" {
		return v
	}
	finals := map[int]record.Status{}
	for step := 0; !w.c.Done(); step++ {
		if step == stopAt {
			if v := w.step(core.StopRequested{Reason: "interrupted", At: w.now}); v != "" {
				return v
			}
		}
		if step > 5000 {
			return "the run did not end within 5000 steps"
		}
		v, moved := w.next()
		if v != "" {
			return v
		}
		if !moved {
			return fmt.Sprintf("the run is stuck: nothing can happen and it is not done (counts %+v)", w.c.Counts())
		}
		for i := range w.p.trials {
			st := w.c.Record(i).Status
			if prev, ok := finals[i]; ok && prev != st {
				return fmt.Sprintf("%s went from %s to %s", w.p.trials[i].Name, prev, st)
			}
			if st.Final() && st != record.Pending {
				if _, ok := finals[i]; !ok && w.c.Record(i).Finished != nil && !w.p.trials[i].DeclaredService() {
					finals[i] = st
				}
			}
		}
	}
	return w.checkEnd()
}

// checkEnd verifies the state of a run that is done.
func (w *world) checkEnd() string {
	for _, at := range w.attempts {
		if !at.exited {
			return fmt.Sprintf("%s attempt %d still runs after the run ended", w.p.trials[at.trial].Name, at.n)
		}
	}
	if len(w.persists) > 0 {
		return "the run ended with records not stored"
	}
	for i, n := range w.persisted {
		if w.reported[i] != n {
			return fmt.Sprintf("%s: %d records stored, %d changes reported", w.p.trials[i].Name, n, w.reported[i])
		}
	}
	halted := w.c.Status() == record.Killed
	for i, t := range w.p.trials {
		rec := w.c.Record(i)
		if stored := w.stored[i]; stored != nil && stored.Status != rec.Status {
			return fmt.Sprintf("%s ended %s but the store says %s", t.Name, rec.Status, stored.Status)
		}
		if !rec.Status.Final() && !halted {
			return fmt.Sprintf("%s is %s at the end of a run that was not stopped", t.Name, rec.Status)
		}
		for k, a := range rec.Attempts {
			if a.Finished.IsZero() {
				return fmt.Sprintf("%s attempt %d never ended in its record", t.Name, a.N)
			}
			if a.N != k+1 {
				return fmt.Sprintf("%s lists attempt %d in place %d", t.Name, a.N, k+1)
			}
		}
		if rec.Status == record.Skipped {
			if !strings.HasPrefix(rec.Reason, "depends: ") && !strings.HasPrefix(rec.Reason, "after: ") {
				return fmt.Sprintf("%s skipped without naming the dependency: %q", t.Name, rec.Reason)
			}
			dep := strings.Fields(strings.SplitN(rec.Reason, ": ", 2)[1])[0]
			if st := w.c.Record(w.name[dep]).Status; st == record.Succeeded && strings.HasPrefix(rec.Reason, "after: ") {
				return fmt.Sprintf("%s skipped for %s, which succeeded", t.Name, dep)
			}
		}
		// A trial that failed because a service ended names one it depends on.
		if rec.Status == record.Failed && w.lostService(i) {
			named := false
			for _, d := range t.Depends {
				named = named || (w.p.trials[w.name[d.Trial]].DeclaredService() && strings.HasPrefix(rec.Reason, d.Trial+" ended"))
			}
			if !named {
				return fmt.Sprintf("%s failed for a service it does not depend on: %q", t.Name, rec.Reason)
			}
		}
	}
	return ""
}

// lostService reports whether trial i's last attempt was stopped because a service ended.
func (w *world) lostService(i int) bool {
	rec := w.c.Record(i)
	return len(rec.Attempts) > 0 && strings.Contains(rec.Attempts[len(rec.Attempts)-1].Reason, "ended while this trial needed it")
}

// needed reports whether a declared service has a trial to serve, as the records show: one
// that depends on it is not final, or, for a service nothing depends on, a trial that is no
// declared service is not final.
func (w *world) needed(svc int) bool {
	name, alone := w.p.trials[svc].Name, true
	for i, t := range w.p.trials {
		for _, d := range t.Depends {
			if d.Trial == name {
				alone = false
				if !w.c.Record(i).Status.Final() {
					return true
				}
			}
		}
	}
	if !alone {
		return false
	}
	for i, t := range w.p.trials {
		if !t.DeclaredService() && !w.c.Record(i).Status.Final() {
			return true
		}
	}
	return false
}
