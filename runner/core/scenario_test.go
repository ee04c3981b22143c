package core_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/trial"
)

// script is how attempt n of a trial goes in a scenario: it runs for dur and exits with code,
// or runs until it is stopped when hang is set.
type script struct {
	dur  time.Duration
	code int
	hang bool
}

// scenario drives a core in simulated time: attempts start at once and end as their script
// says, records are stored at once, health checks pass at once, timers fire when due.
type scenario struct {
	t      *testing.T
	c      *core.Core
	trials []trial.Trial
	now    time.Time
	seq    int
	script func(trial, attempt int) script
	queue  []pending
	// starts counts the attempts started, stops the attempts the core stopped, by trial name.
	starts, stops map[string]int
	// running are the attempts that run now; peak is the most non-service ones at once.
	running map[[2]int]bool
	peak    int
	reports []core.Report
	// notes are the reasons records of running attempts gave, by trial name.
	notes map[string]string
}

type pending struct {
	at  time.Time
	seq int
	ev  core.Event
}

func newScenario(t *testing.T, trials []trial.Trial, jobs int, sc func(trial, attempt int) script) *scenario {
	return newScenarioOn(t, nil, trials, jobs, sc)
}

// newScenarioOn is newScenario on a host whose resources are counted.
func newScenarioOn(t *testing.T, c *core.Capacity, trials []trial.Trial, jobs int, sc func(trial, attempt int) script) *scenario {
	for i := range trials {
		trials[i].Index = i
	}
	return &scenario{t: t, c: core.New(core.Config{RunID: "r", Backend: "sim", Host: "h", Trials: trials, Jobs: jobs, Capacity: c}),
		trials: trials, now: epoch, script: sc, starts: map[string]int{}, stops: map[string]int{}, running: map[[2]int]bool{}, notes: map[string]string{}}
}

func (s *scenario) at(d time.Duration, ev core.Event) {
	s.seq++
	s.queue = append(s.queue, pending{at: s.now.Add(d), seq: s.seq, ev: ev})
}

// run feeds events until the core is done, or fails the test after limit of simulated time.
func (s *scenario) run(limit time.Duration) {
	s.t.Helper()
	s.apply(s.c.Step(core.Begin{At: s.now}))
	for !s.c.Done() {
		if len(s.queue) == 0 {
			s.t.Fatalf("at %s nothing can happen and the run is not done: %+v", s.now.Sub(epoch), s.c.Counts())
		}
		k := 0
		for i, p := range s.queue {
			if p.at.Before(s.queue[k].at) || p.at.Equal(s.queue[k].at) && p.seq < s.queue[k].seq {
				k = i
			}
		}
		p := s.queue[k]
		s.queue = slices.Delete(s.queue, k, k+1)
		s.now = p.at
		if s.now.Sub(epoch) > limit {
			s.t.Fatalf("the run was not done after %s: %+v", limit, s.c.Counts())
		}
		ev := withTime(p.ev, s.now)
		if e, ok := ev.(core.Exited); ok {
			if !s.running[[2]int{e.Trial, e.Attempt}] {
				continue // stopped earlier
			}
			delete(s.running, [2]int{e.Trial, e.Attempt})
		}
		s.apply(s.c.Step(ev))
	}
}

func withTime(ev core.Event, at time.Time) core.Event {
	switch e := ev.(type) {
	case core.Started:
		e.At = at
		return e
	case core.Exited:
		e.At = at
		return e
	case core.Healthy:
		e.At = at
		return e
	case core.Persisted:
		e.At = at
		return e
	case core.TimerFired:
		e.At = at
		return e
	}
	return ev
}

func (s *scenario) apply(acts []core.Action) {
	for _, a := range acts {
		switch a := a.(type) {
		case core.StartAttempt:
			name := s.trials[a.Trial].Name
			s.starts[name]++
			s.running[[2]int{a.Trial, a.Attempt}] = true
			n := 0
			for k := range s.running {
				if !s.trials[k[0]].DeclaredService() {
					n++
				}
			}
			s.peak = max(s.peak, n)
			s.at(0, core.Started{Trial: a.Trial, Attempt: a.Attempt, Handle: "h"})
			if sc := s.script(a.Trial, a.Attempt); !sc.hang {
				s.at(sc.dur, core.Exited{Trial: a.Trial, Attempt: a.Attempt, Code: sc.code})
			}
		case core.StopAttempt:
			s.stops[s.trials[a.Trial].Name]++
			s.at(0, core.Exited{Trial: a.Trial, Attempt: a.Attempt, Code: 143, Reason: "killed by signal terminated"})
		case core.WatchHealth:
			s.at(0, core.Healthy{Trial: a.Trial, Attempt: a.Attempt})
		case core.Persist:
			if a.Record.Status == record.Running && a.Record.Reason != "" {
				s.notes[a.Record.Name] = a.Record.Reason
			}
			s.at(0, core.Persisted{Trial: a.Trial, Version: a.Version})
		case core.SetTimer:
			s.seq++
			s.queue = append(s.queue, pending{at: a.At, seq: s.seq, ev: core.TimerFired{Timer: a.Timer}})
		case core.Report:
			s.reports = append(s.reports, a)
		}
	}
}

func (s *scenario) record(name string) record.Trial {
	for i, t := range s.trials {
		if t.Name == name {
			return s.c.Record(i)
		}
	}
	s.t.Fatalf("no trial %s", name)
	return record.Trial{}
}

func sh(cmd string) trial.Command { return trial.Command{Shell: cmd} }

// The matrix: ten training trials an evaluation depends on (so services implied by
// depends) at -j 2. They take slots like any trial, end by themselves and succeed; the
// evaluation starts once each has started or succeeded; nothing is stopped.
func TestImpliedServicesTakeSlotsAndSucceed(t *testing.T) {
	var trials []trial.Trial
	var deps []trial.Dependency
	for i := 1; i <= 10; i++ {
		name := fmt.Sprintf("train[i=%d]", i)
		trials = append(trials, trial.Trial{Name: name, Cmd: sh("sleep 3"), Service: true, ServiceImplied: true})
		deps = append(deps, trial.Dependency{Trial: name, Condition: trial.Started})
	}
	trials = append(trials, trial.Trial{Name: "eval", Cmd: sh("sleep 1"), Depends: deps})
	s := newScenario(t, trials, 2, func(trial, _ int) script {
		if trial == 10 {
			return script{dur: time.Second}
		}
		return script{dur: 3 * time.Second}
	})
	s.run(time.Hour)
	if n := s.c.Counts(); n.Succeeded != 11 {
		t.Fatalf("counts = %+v", n)
	}
	if s.peak > 2 {
		t.Errorf("%d trials ran at once at -j 2", s.peak)
	}
	if len(s.stops) > 0 {
		t.Errorf("the runner stopped %v", s.stops)
	}
	for _, tr := range trials {
		if rec := s.record(tr.Name); rec.Reason != "" || len(rec.Attempts) != 1 {
			t.Errorf("%s: reason %q, %d attempts", tr.Name, rec.Reason, len(rec.Attempts))
		}
	}
}

// A loader others depend on, which they leave running, is not stopped when they end: the
// run waits for it to end by itself, and it succeeds.
func TestImpliedServiceIsNeverStopped(t *testing.T) {
	trials := []trial.Trial{
		{Name: "loader", Cmd: sh("serve"), Service: true, ServiceImplied: true},
		{Name: "sim-1", Cmd: sh("true"), Depends: []trial.Dependency{{Trial: "loader", Condition: trial.Started}}},
		{Name: "sim-2", Cmd: sh("true"), Depends: []trial.Dependency{{Trial: "loader", Condition: trial.Started}}},
	}
	s := newScenario(t, trials, 3, func(trial, _ int) script {
		if trial == 0 {
			return script{dur: time.Minute}
		}
		return script{dur: time.Second}
	})
	s.run(time.Hour)
	if len(s.stops) > 0 {
		t.Fatalf("the runner stopped %v", s.stops)
	}
	if rec := s.record("loader"); rec.Status != record.Succeeded || rec.Finished.Sub(epoch) != time.Minute || rec.Reason != "" {
		t.Fatalf("loader: %s at %v (%q)", rec.Status, rec.Finished, rec.Reason)
	}
	// While the run waited for it alone, its record said so.
	if n := s.notes["loader"]; !strings.HasPrefix(n, "runs on after the trials that depended on it ended: the run ends when it does") {
		t.Errorf("loader's note while the run waited for it: %q", n)
	}
}

// At -j 1 a dependant cannot start beside the server it depends on, which holds the only
// slot: the server's record says so (the run goes on when it ends by itself).
func TestWaitForAServerThatHoldsTheSlotIsSaid(t *testing.T) {
	trials := []trial.Trial{
		{Name: "db", Cmd: sh("serve"), Service: true, ServiceImplied: true},
		{Name: "client", Cmd: sh("query"), Depends: []trial.Dependency{{Trial: "db", Condition: trial.Started}}},
	}
	s := newScenario(t, trials, 1, func(trial, _ int) script {
		if trial == 0 {
			return script{dur: time.Hour}
		}
		return script{dur: time.Second}
	})
	s.run(2 * time.Hour)
	if n := s.notes["db"]; !strings.HasPrefix(n, "holds one of the 1 slots (-j) that client waits for while needing it running") {
		t.Fatalf("db's note: %q", n)
	}
	if s.c.Counts().Succeeded != 2 || len(s.stops) > 0 {
		t.Fatalf("counts %+v, stops %v", s.c.Counts(), s.stops)
	}
	if _, ok := s.notes["client"]; ok {
		t.Errorf("client was noted: %q", s.notes["client"])
	}
}

// A declared service the runner stops once its dependants end is recorded stopped, never
// succeeded, with the reason.
func TestDeclaredServiceStoppedIsNotSucceeded(t *testing.T) {
	trials := []trial.Trial{
		{Name: "cache", Cmd: sh("serve"), Service: true},
		{Name: "a", Cmd: sh("true"), Depends: []trial.Dependency{{Trial: "cache", Condition: trial.Started}}},
	}
	s := newScenario(t, trials, 1, func(trial, _ int) script {
		if trial == 0 {
			return script{hang: true}
		}
		return script{dur: time.Second}
	})
	s.run(time.Hour)
	if rec := s.record("cache"); rec.Status != record.Stopped || rec.Reason != "stopped after its dependants ended" {
		t.Fatalf("cache: %s (%q)", rec.Status, rec.Reason)
	}
	if s.c.Status() != record.Succeeded {
		t.Errorf("run %s", s.c.Status())
	}
}

// restart: on-failure starts a service again, after its backoff, while a dependant still
// needs it: one that dies twice while its only dependant runs 8 s is started 3 times, on a
// host whose resources are counted too (a service there used to start again only for a
// dependant about to start, never for one that runs).
func TestServiceRestartsWhileItsDependantRuns(t *testing.T) {
	for _, host := range []*core.Capacity{nil, {CPU: 4, Memory: 8 << 30}} {
		restartsWhileItsDependantRuns(t, host)
	}
}

func restartsWhileItsDependantRuns(t *testing.T, host *core.Capacity) {
	trials := []trial.Trial{
		{Name: "svc", Cmd: sh("serve"), Service: true, Restart: trial.RestartOnFailure, Resources: trial.Resources{CPU: 1}},
		{Name: "client", Cmd: sh("sleep 8"), Depends: []trial.Dependency{{Trial: "svc", Condition: trial.Started}}},
	}
	s := newScenarioOn(t, host, trials, 1, func(trial, attempt int) script {
		switch {
		case trial == 1:
			return script{dur: 8 * time.Second}
		case attempt < 3:
			return script{dur: time.Second, code: 1}
		}
		return script{hang: true}
	})
	s.run(time.Hour)
	if n := s.starts["svc"]; n != 3 {
		t.Fatalf("host %+v: svc started %d times, want 3", host, n)
	}
	rec := s.record("svc")
	if rec.Status != record.Stopped || s.record("client").Status != record.Succeeded {
		t.Fatalf("svc %s (%q), client %s", rec.Status, rec.Reason, s.record("client").Status)
	}
	// The backoff doubles: the second restart waits longer than the first.
	a := rec.Attempts
	if gap1, gap2 := a[1].Started.Sub(a[0].Finished), a[2].Started.Sub(a[1].Finished); gap2 <= gap1 {
		t.Errorf("backoffs %s then %s", gap1, gap2)
	}
	if !strings.Contains(a[0].Reason, "exit status 1") {
		t.Errorf("attempt 1 reason %q", a[0].Reason)
	}
}
