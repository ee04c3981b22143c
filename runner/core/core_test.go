package core_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
	"github.com/jikken-dev/jikken/trial"
)

var (
	seedFlag = flag.Uint64("seed", 0, "replay one interleaving: the seed a failure printed")
	rounds   = flag.Int("rounds", 100_000, "interleavings to try")
)

var epoch = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// forSeeds runs check for each seed (or the one given with -seed); a failure prints the seed
// and how to replay it with a trace.
func forSeeds(t *testing.T, name string, n int, check func(seed uint64, trace bool) (string, []string)) {
	t.Helper()
	seeds := make([]uint64, 0, n)
	if *seedFlag != 0 {
		seeds = append(seeds, *seedFlag)
	} else {
		for i := 1; i <= n; i++ {
			seeds = append(seeds, uint64(i))
		}
	}
	for _, seed := range seeds {
		v, _ := check(seed, false)
		if v == "" {
			continue
		}
		_, trace := check(seed, true)
		if len(trace) > 400 {
			trace = append(trace[:200], append([]string{"..."}, trace[len(trace)-200:]...)...)
		}
		t.Fatalf("seed %d: %s\nreplay with: go test ./runner/core -run '^%s$' -seed %d -v\n%s", seed, v, name, seed, strings.Join(trace, "\n"))
	}
	t.Logf("%d interleavings", len(seeds))
}

// TestInterleavings runs random plans in random interleavings of starts, exits, health, timers,
// interrupts and store writes, and checks the runner's invariants after every step: the cap
// holds, no trial starts before its dependencies allow, each attempt ends once, services live
// while needed and their loss fails their dependants with the reason, every run ends.
func TestInterleavings(t *testing.T) {
	n := *rounds
	if testing.Short() {
		n = 10_000
	}
	forSeeds(t, "TestInterleavings", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 1))
		p := genPlan(rng, planOptions{})
		w := newWorld(rng, p, nil, nil, epoch)
		w.tracing = trace
		stopAt := -1
		if rng.IntN(8) == 0 {
			stopAt = rng.IntN(30)
		}
		v := w.run(stopAt)
		return v, append([]string{fmt.Sprintf("plan: jobs %d fail-fast %v", p.jobs, p.failFast), describePlan(p)}, w.trace...)
	})
}

// TestCrowdedHost runs plans whose services crowd the host's GPUs, in random interleavings: a
// plan admission accepts must run to its end with every trial started at some point (none
// fails for want of room), however the services restart and whatever other runs hold.
func TestCrowdedHost(t *testing.T) {
	n := *rounds / 5
	if testing.Short() {
		n = 2_000
	}
	forSeeds(t, "TestCrowdedHost", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 3))
		p := genCrowded(rng)
		w := newWorld(rng, p, nil, nil, epoch)
		w.tracing = trace
		v := w.run(-1)
		if v == "" && w.c.Status() != store.Killed {
			for i, spec := range p.trials {
				if rec := w.c.Record(i); !spec.Service && rec.Status != store.Skipped && len(rec.Attempts) == 0 {
					v = fmt.Sprintf("%s ended %s (%q) without ever starting", spec.Name, rec.Status, rec.Reason)
				}
			}
		}
		return v, append([]string{fmt.Sprintf("plan: jobs %d fail-fast %v", p.jobs, p.failFast), describePlan(p)}, w.trace...)
	})
}

// TestResumeFromAnyPrefix runs a plan to its end, then, for a prefix of its journal (the store
// after k records were written, as a runner killed at that moment leaves it), resumes the run
// in a new core and another interleaving, re-attaching to some of the attempts left open: it
// must end in the same state, an adopted attempt continued as itself.
func TestResumeFromAnyPrefix(t *testing.T) {
	n := *rounds / 5
	if testing.Short() {
		n = 2_000
	}
	forSeeds(t, "TestResumeFromAnyPrefix", n, func(seed uint64, trace bool) (string, []string) {
		rng := rand.New(rand.NewPCG(seed, 2))
		p := genPlan(rng, planOptions{deterministic: true})
		full := newWorld(rng, p, nil, nil, epoch)
		full.tracing, full.fastIO = trace, true
		if v := full.run(-1); v != "" {
			return "first run: " + v, append([]string{describePlan(p)}, full.trace...)
		}
		k := rng.IntN(len(full.journal) + 1)
		var journal map[string]*record.Trial
		if k > 0 {
			journal = full.journal[k-1]
		}
		// Half the attempts the journal shows open are still running, and the backend
		// re-attaches to them (a cluster's Jobs outlive their runner).
		adopted := map[string]int{}
		for _, spec := range p.trials {
			if rec := journal[spec.Name]; rec != nil && len(rec.Attempts) > 0 && rng.IntN(2) == 0 {
				if a := rec.Attempts[len(rec.Attempts)-1]; a.Finished.IsZero() {
					adopted[spec.Name] = a.N
				}
			}
		}
		resumed := newWorld(rng, p, journal, adopted, full.now.Add(time.Hour))
		resumed.tracing, resumed.fastIO = trace, true
		v := resumed.run(-1)
		tr := append([]string{describePlan(p), fmt.Sprintf("resumed after %d of %d records", k, len(full.journal))}, full.trace...)
		tr = append(append(tr, "--- resumed"), resumed.trace...)
		if v != "" {
			return "resumed run: " + v, tr
		}
		for i, spec := range p.trials {
			if spec.DeclaredService() {
				continue
			}
			a, b := full.c.Record(i), resumed.c.Record(i)
			if a.Status != b.Status {
				return fmt.Sprintf("%s ended %s in the whole run but %s when resumed after %d records", spec.Name, a.Status, b.Status, k), tr
			}
		}
		return "", tr
	})
}

func describePlan(p plan) string {
	var b strings.Builder
	if c := p.capacity; c != nil {
		fmt.Fprintf(&b, "  capacity: %g cores, %d bytes, GPUs %+v\n", c.CPU, c.Memory, c.GPUs)
	}
	for i, t := range p.trials {
		fmt.Fprintf(&b, "  %d %s service=%v implied=%v restart=%q retries=%d timeout=%s health=%v depends=%v after=%v resources=%+v behaviour=%+v\n",
			i, t.Name, t.Service, t.ServiceImplied, t.Restart, t.Retries, time.Duration(t.Timeout), t.Health != nil, t.Depends, t.After, t.Resources, p.behave[i])
	}
	return b.String()
}

// TestQueued: a cluster's pending reason is written to the attempt's live record, so status
// shows it from any shell, and cleared once the attempt runs; a report about another attempt
// changes nothing.
func TestQueued(t *testing.T) {
	c := core.New(core.Config{RunID: "r", Backend: "slurm", Trials: []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}}})
	at := epoch
	step := func(ev core.Event) []core.Action {
		at = at.Add(time.Second)
		return c.Step(ev)
	}
	queued := func(acts []core.Action) (string, bool) {
		for _, a := range acts {
			if p, ok := a.(core.Persist); ok && p.Record.Live != nil {
				return p.Record.Live.Queued, true
			}
		}
		return "", false
	}
	step(core.Begin{At: at})
	if q, ok := queued(step(core.Queued{Trial: 0, Attempt: 1, Reason: "Resources", At: at})); !ok || q != "Resources" {
		t.Fatalf("a pending reason was not recorded: %q, %v", q, ok)
	}
	step(core.Started{Trial: 0, Attempt: 1, Handle: "42", At: at})
	if c.Record(0).Live.Queued != "Resources" {
		t.Errorf("Started dropped the pending reason")
	}
	if _, ok := queued(step(core.Queued{Trial: 0, Attempt: 1, Reason: "Resources", At: at})); ok {
		t.Errorf("the same reason was recorded twice")
	}
	if _, ok := queued(step(core.Queued{Trial: 0, Attempt: 2, Reason: "Priority", At: at})); ok {
		t.Errorf("a reason about another attempt was recorded")
	}
	if q, ok := queued(step(core.Queued{Trial: 0, Attempt: 1, At: at})); !ok || q != "" {
		t.Errorf("the reason was not cleared once the attempt ran: %q, %v", q, ok)
	}
}

// TestQueuedTimeout: the time an attempt waits in its cluster's queue is not counted against
// its trial's timeout, which starts when the attempt leaves the queue.
func TestQueuedTimeout(t *testing.T) {
	const limit = 10 * time.Second
	c := core.New(core.Config{RunID: "r", Backend: "slurm", Trials: []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}, Timeout: trial.Duration(limit)}}})
	stops := func(acts []core.Action) bool {
		for _, a := range acts {
			if _, ok := a.(core.StopAttempt); ok {
				return true
			}
		}
		return false
	}
	var timeout core.SetTimer
	timers := func(acts []core.Action) {
		for _, a := range acts {
			if st, ok := a.(core.SetTimer); ok && st.Timer.Kind == core.Timeout {
				timeout = st
			}
		}
	}
	c.Step(core.Begin{At: epoch})
	timers(c.Step(core.Started{Trial: 0, Attempt: 1, Handle: "42", At: epoch}))
	c.Step(core.Queued{Trial: 0, Attempt: 1, Reason: "Priority", At: epoch.Add(time.Second)})
	if stops(c.Step(core.TimerFired(timeout))) {
		t.Fatalf("an attempt was stopped for its timeout while it waited in the queue")
	}
	ran := epoch.Add(time.Minute)
	timers(c.Step(core.Queued{Trial: 0, Attempt: 1, At: ran}))
	if want := ran.Add(limit); !timeout.At.Equal(want) {
		t.Fatalf("the timeout was set for %s once the attempt left the queue, want %s", timeout.At, want)
	}
	if stops(c.Step(core.TimerFired{Timer: timeout.Timer, At: ran.Add(limit / 2)})) {
		t.Errorf("an attempt was stopped before its timeout counted from leaving the queue")
	}
	if !stops(c.Step(core.TimerFired(timeout))) {
		t.Errorf("an attempt past its timeout was not stopped")
	}

	// An attempt that ended in the queue leaves nothing behind: the next one's timeout holds.
	c = core.New(core.Config{RunID: "r", Backend: "slurm", Trials: []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}, Timeout: trial.Duration(limit), Retries: 1}}})
	c.Step(core.Begin{At: epoch})
	c.Step(core.Started{Trial: 0, Attempt: 1, Handle: "42", At: epoch})
	c.Step(core.Queued{Trial: 0, Attempt: 1, Reason: "Priority", At: epoch})
	at := epoch.Add(time.Second)
	for acts := c.Step(core.Exited{Trial: 0, Attempt: 1, Code: 1, At: at}); ; {
		var retry *core.SetTimer
		for _, a := range acts {
			if st, ok := a.(core.SetTimer); ok && st.Timer.Kind == core.Retry {
				retry = &st
			}
		}
		if retry == nil {
			break
		}
		at = retry.At
		acts = c.Step(core.TimerFired{Timer: retry.Timer, At: at})
	}
	timers(c.Step(core.Started{Trial: 0, Attempt: 2, Handle: "43", At: at}))
	if timeout.Timer.Attempt != 2 || !stops(c.Step(core.TimerFired(timeout))) {
		t.Errorf("the timeout of an attempt after one that ended in the queue did not hold (timer %+v)", timeout)
	}
}
