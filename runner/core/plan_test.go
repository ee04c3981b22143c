package core_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/trial"
)

// steps is a planner that adds one trial each time it is asked, up to n (counted in the view), dropping the pending
// trial drop (when >= 0) on the first ask and aborting with abort once it has added them all.
type steps struct {
	n, drop int
	abort   string
	asked   []int // how many trials the view had each time
}

func (s *steps) Next(v core.View) core.Decision {
	s.asked = append(s.asked, len(v.Trials))
	var d core.Decision
	if len(s.asked) == 1 && s.drop >= 0 {
		d.Drop = []core.Drop{{Index: s.drop, Reason: "eliminated by the test"}}
	}
	added := 0
	for _, t := range v.Trials {
		if t.Group == "g" {
			added++
		}
	}
	if added < s.n {
		d.Add = []trial.Trial{{Name: fmt.Sprintf("g-%d", added), Group: "g", Cmd: trial.Command{Shell: "true"}}}
	} else {
		d.Complete, d.Abort = true, s.abort
	}
	return d
}

// drive steps a core to its end with every store write at once and every attempt succeeding,
// and returns the order in which trials started.
func drive(t *testing.T, c *core.Core) []string {
	t.Helper()
	var started []string
	settle(c, c.Step(core.Begin{At: epoch}), func(a core.StartAttempt) []core.Action {
		started = append(started, c.Trial(a.Trial).Name)
		return c.Step(core.Exited{Trial: a.Trial, Attempt: a.Attempt, Values: map[string]float64{"v": 1}, At: epoch})
	})
	if !c.Done() {
		t.Fatalf("not done: %+v", c.Counts())
	}
	return started
}

func TestPlannerGrowsThePlan(t *testing.T) {
	p := &steps{n: 3, drop: 1}
	fixed := []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}, {Name: "b", Index: 1, Cmd: trial.Command{Shell: "true"}}}
	c := core.New(core.Config{RunID: "r", Trials: fixed, Jobs: 1, Planner: p})
	started := drive(t, c)
	if fmt.Sprint(started) != "[a g-0 g-1 g-2]" {
		t.Fatalf("started %v", started)
	}
	if r := c.Record(1); r.Status != record.Eliminated || r.Reason != "eliminated by the test" {
		t.Fatalf("dropped trial: %s %q", r.Status, r.Reason)
	}
	if r := c.Record(3); r.Index != 3 || r.Group != "g" || r.Values["v"] != 1 {
		t.Fatalf("added trial's record: %+v", r)
	}
	// An elimination is the plan working as meant: the run succeeds.
	if n := c.Counts(); n.Total != 5 || n.Succeeded != 4 || n.Eliminated != 1 || n.Skipped != 0 || c.Status() != record.Succeeded {
		t.Fatalf("counts %+v, status %s", n, c.Status())
	}
}

// Eliminations do not hide a failure: a run with both ends failed.
func TestEliminatedWithAFailureFails(t *testing.T) {
	p := &steps{n: 1, drop: 1}
	fixed := []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}, {Name: "b", Index: 1, Cmd: trial.Command{Shell: "true"}}}
	c := core.New(core.Config{RunID: "r", Trials: fixed, Jobs: 1, Planner: p})
	settle(c, c.Step(core.Begin{At: epoch}), func(a core.StartAttempt) []core.Action {
		return c.Step(core.Exited{Trial: a.Trial, Attempt: a.Attempt, Code: 1, At: epoch})
	})
	if n := c.Counts(); !c.Done() || n.Failed != 2 || n.Eliminated != 1 || c.Status() != record.Failed {
		t.Fatalf("done %v, counts %+v, status %s", c.Done(), n, c.Status())
	}
}

// A trial the journal shows eliminated is never run again, even when the planner does not keep
// it: a resumed race keeps its eliminations.
func TestEliminatedStaysFinalOnResume(t *testing.T) {
	fixed := []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}, {Name: "b", Index: 1, Cmd: trial.Command{Shell: "true"}}}
	journal := map[string]*record.Trial{"b": {Name: "b", Index: 1, Status: record.Eliminated, Reason: "eliminated by the test"}}
	c := core.New(core.Config{RunID: "r", Trials: fixed, Jobs: 1, Planner: idle{}, Journal: journal})
	started := drive(t, c)
	if fmt.Sprint(started) != "[a]" {
		t.Fatalf("started %v", started)
	}
	if r := c.Record(1); r.Status != record.Eliminated || r.Reason != "eliminated by the test" {
		t.Fatalf("eliminated trial after resume: %s %q", r.Status, r.Reason)
	}
	if n := c.Counts(); n.Succeeded != 1 || n.Eliminated != 1 || c.Status() != record.Succeeded {
		t.Fatalf("counts %+v, status %s", n, c.Status())
	}
}

func TestPlannerAbortFailsTheRun(t *testing.T) {
	p := &steps{n: 2, drop: -1, abort: "no objective"}
	c := core.New(core.Config{RunID: "r", Jobs: 2, Planner: p})
	drive(t, c)
	if why, _ := c.PlanAborted(); c.Status() != record.Failed || why != "no objective" || c.Counts().Succeeded != 2 {
		t.Fatalf("status %s, aborted %q, counts %+v", c.Status(), why, c.Counts())
	}
}

// A planner that adds nothing while every trial is final ends the plan: the run does not hang.
type idle struct{}

func (idle) Next(core.View) core.Decision { return core.Decision{} }

func TestIdlePlannerEnds(t *testing.T) {
	c := core.New(core.Config{RunID: "r", Jobs: 1, Planner: idle{}, Trials: []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}}})
	drive(t, c)
	if !c.Planned() || c.Status() != record.Succeeded {
		t.Fatalf("planned %v, status %s", c.Planned(), c.Status())
	}
}

// dropAll is a planner that names trial 0 to drop each time it is asked once it has started,
// and adds trial "b" once, so that it is asked while trial 0 runs and after it has ended.
type dropAll struct{}

func (dropAll) Next(v core.View) core.Decision {
	var d core.Decision
	if v.Trials[0].Status != record.Pending {
		d.Drop = []core.Drop{{Index: 0, Reason: "c=3 eliminated by the test"}}
	}
	if len(v.Trials) == 1 {
		d.Add = []trial.Trial{{Name: "b", Cmd: trial.Command{Shell: "true"}}}
	}
	return d
}

// A trial that has started when the planner drops it runs on, and its record notes why, once:
// its status and values stand, and no report says it changed.
func TestDropOfAStartedTrialIsNoted(t *testing.T) {
	c := core.New(core.Config{RunID: "r", Jobs: 2, Planner: dropAll{},
		Trials: []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}}})
	var reports, persists, notedRunning int
	queue := c.Step(core.Begin{At: epoch})
	var running []core.StartAttempt
	for len(queue) > 0 || len(running) > 0 {
		if len(queue) == 0 {
			// The last started ends first: b ends while a runs.
			a := running[len(running)-1]
			running = running[:len(running)-1]
			queue = c.Step(core.Exited{Trial: a.Trial, Attempt: a.Attempt, Values: map[string]float64{"v": 1}, At: epoch})
			continue
		}
		a := queue[0]
		queue = queue[1:]
		switch a := a.(type) {
		case core.Persist:
			if a.Trial == 0 {
				persists++
				if a.Record.Eliminated != "" && a.Record.Status == record.Running {
					notedRunning++
				}
			}
			queue = append(queue, c.Step(core.Persisted{Trial: a.Trial, Version: a.Version, At: epoch})...)
		case core.StartAttempt:
			queue = append(queue, c.Step(core.Started{Trial: a.Trial, Attempt: a.Attempt, At: epoch})...)
			running = append(running, a)
		case core.Report:
			if a.Trial == 0 {
				reports++
			}
		}
	}
	r := c.Record(0)
	if !c.Done() || r.Status != record.Succeeded || r.Values["v"] != 1 || r.Eliminated != "c=3 eliminated by the test" {
		t.Fatalf("done %v, record %+v", c.Done(), r)
	}
	if n := c.Counts(); n.Succeeded != 2 || n.Eliminated != 0 || c.Status() != record.Succeeded {
		t.Fatalf("counts %+v, status %s", n, c.Status())
	}
	// Running, the note (while it runs), succeeded: the note is stored once and never reported.
	if persists != 3 || reports != 2 || notedRunning != 1 {
		t.Fatalf("trial 0 persisted %d times (noted while running: %d), reported %d times", persists, notedRunning, reports)
	}
}

// settle carries out actions and those that follow, each record stored at once and each attempt
// started at once; onStart is told of each start, and returns the actions of what it did next.
func settle(c *core.Core, queue []core.Action, onStart func(core.StartAttempt) []core.Action) {
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		switch a := a.(type) {
		case core.Persist:
			queue = append(queue, c.Step(core.Persisted{Trial: a.Trial, Version: a.Version, At: epoch})...)
		case core.StartAttempt:
			queue = append(queue, c.Step(core.Started{Trial: a.Trial, Attempt: a.Attempt, At: epoch})...)
			queue = append(queue, onStart(a)...)
		}
	}
}

// capped adds five trials of group g at once and caps them at two running.
type capped struct{ asked bool }

func (p *capped) Next(v core.View) core.Decision {
	if p.asked {
		return core.Decision{Complete: true}
	}
	p.asked = true
	var d core.Decision
	for k := range 5 {
		d.Add = append(d.Add, trial.Trial{Name: fmt.Sprintf("g-%d", k), Group: "g", Cmd: trial.Command{Shell: "true"}})
	}
	return d
}

func (p *capped) Cap() (string, int) { return "g", 2 }

// TestCappedPlanner: a Capped planner's trials never run more than its cap at once, whatever
// -j allows; the slots they leave go to other trials, which are not held behind them.
func TestCappedPlanner(t *testing.T) {
	fixed := []trial.Trial{{Name: "a", Cmd: trial.Command{Shell: "true"}}, {Name: "b", Index: 1, Cmd: trial.Command{Shell: "true"}}}
	c := core.New(core.Config{RunID: "r", Trials: fixed, Jobs: 4, Planner: &capped{}})
	running := map[int]int{} // trial -> attempt
	most, order := 0, ""
	onStart := func(a core.StartAttempt) []core.Action {
		running[a.Trial] = a.Attempt
		order += c.Trial(a.Trial).Name + " "
		g := 0
		for i := range running {
			if c.Trial(i).Group == "g" {
				g++
			}
		}
		most = max(most, g)
		return nil
	}
	settle(c, c.Step(core.Begin{At: epoch}), onStart)
	for len(running) > 0 {
		// The first trial still running ends.
		i := slices.Min(slices.Collect(maps.Keys(running)))
		n := running[i]
		delete(running, i)
		settle(c, c.Step(core.Exited{Trial: i, Attempt: n, At: epoch}), onStart)
	}
	if !c.Done() || c.Counts().Succeeded != 7 {
		t.Fatalf("not done: %+v", c.Counts())
	}
	if most != 2 {
		t.Fatalf("%d trials of the capped group ran at once, cap 2 (started %s)", most, order)
	}
	if order != "a b g-0 g-1 g-2 g-3 g-4 " {
		t.Fatalf("started %s", order)
	}
}
