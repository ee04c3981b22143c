package core_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/store"
)

// windowed adds trial g-k once g-0..g-(k-w) are final in its view, up to n trials, as a search
// does; eager says whether it asks to be asked early. It notes what each ask and each prune
// question saw of g-0.
type windowed struct {
	n, w   int
	eager  bool
	seen   []store.Status // g-0's status at each ask that added a trial
	pruned []store.Status // g-0's status at each prune question
}

func (p *windowed) Eager() bool { return p.eager }

func (p *windowed) Next(v core.View) core.Decision {
	final := 0
	for final < len(v.Trials) && v.Trials[final].Status.Final() {
		final++
	}
	var d core.Decision
	for k := len(v.Trials); k < p.n && k-p.w < final; k++ {
		d.Add = append(d.Add, experiment.Trial{Name: fmt.Sprintf("g-%d", k), Group: "g", Cmd: experiment.Command{Shell: "true"}})
	}
	if len(d.Add) > 0 && len(v.Trials) > 0 {
		p.seen = append(p.seen, v.Trials[0].Status)
	}
	d.Complete = len(v.Trials)+len(d.Add) >= p.n
	return d
}

func (p *windowed) Prune(v core.View, trial int, curves map[int][]core.MetricPoint) (bool, string) {
	p.pruned = append(p.pruned, v.Trials[0].Status)
	return false, ""
}

// split sorts a step's actions into the records to store and the trials started.
func split(acts []core.Action) (persists []core.Persist, starts []string) {
	for _, a := range acts {
		switch a := a.(type) {
		case core.Persist:
			persists = append(persists, a)
		case core.StartAttempt:
			starts = append(starts, fmt.Sprint(a.Trial))
		}
	}
	return persists, starts
}

// eagerRun brings a window-2 plan of an eager planner to the moment g-0 has ended: it returns the
// core, the planner and the records that step issued (g-1 still runs).
func eagerRun(t *testing.T) (*core.Core, *windowed, []core.Persist) {
	t.Helper()
	p := &windowed{n: 4, w: 2, eager: true}
	c := core.New(core.Config{RunID: "r", Jobs: 2, Planner: p})
	persists, _ := split(c.Step(core.Begin{At: epoch}))
	var starts []string
	for _, r := range persists {
		_, s := split(c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch}))
		starts = append(starts, s...)
	}
	if fmt.Sprint(starts) != "[0 1]" {
		t.Fatalf("started %v, want g-0 and g-1", starts)
	}
	for i := range 2 {
		persists, _ := split(c.Step(core.Started{Trial: i, Attempt: 1, At: epoch}))
		for _, r := range persists {
			c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch})
		}
	}
	persists, starts = split(c.Step(core.Exited{Trial: 0, Attempt: 1, At: epoch}))
	if len(starts) > 0 {
		t.Fatalf("started %v before any record of the step was stored", starts)
	}
	return c, p, persists
}

// An eager planner is asked in the step a trial ends: that trial's final record and the pending
// record of the trial it lets in are issued together, for one write.
func TestEagerPlannerAsksInTheStepATrialEnds(t *testing.T) {
	_, p, persists := eagerRun(t)
	var got []string
	for _, r := range persists {
		got = append(got, r.Record.Name+":"+string(r.Record.Status))
	}
	if fmt.Sprint(got) != "[g-0:succeeded g-2:pending]" {
		t.Fatalf("records issued when g-0 ended: %v, want g-0's final record and g-2's pending one", got)
	}
	if fmt.Sprint(p.seen) != "[succeeded]" {
		t.Fatalf("g-0 as the planner saw it when it added g-2: %v", p.seen)
	}
}

// The trial an eager ask added starts only once both records are stored, in whichever order the
// store holds them.
func TestEagerTrialWaitsForTheRecordsItCameFrom(t *testing.T) {
	for _, first := range []string{"g-0", "g-2"} {
		c, _, persists := eagerRun(t)
		slices.SortStableFunc(persists, func(a, b core.Persist) int {
			if a.Record.Name == first {
				return -1
			}
			if b.Record.Name == first {
				return 1
			}
			return 0
		})
		_, starts := split(c.Step(core.Persisted{Trial: persists[0].Trial, Version: persists[0].Version, At: epoch}))
		if len(starts) > 0 {
			t.Fatalf("%s stored first: started %v with the other record not stored", first, starts)
		}
		_, starts = split(c.Step(core.Persisted{Trial: persists[1].Trial, Version: persists[1].Version, At: epoch}))
		if fmt.Sprint(starts) != "[2]" {
			t.Fatalf("%s stored first, then the other: started %v, want g-2", first, starts)
		}
	}
}

// A planner that is not eager is asked once the final record is stored, as before.
func TestPlannerNotEagerWaitsForTheFinalRecord(t *testing.T) {
	p := &windowed{n: 4, w: 2}
	c := core.New(core.Config{RunID: "r", Jobs: 2, Planner: p})
	persists, _ := split(c.Step(core.Begin{At: epoch}))
	for _, r := range persists {
		c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch})
	}
	for i := range 2 {
		c.Step(core.Started{Trial: i, Attempt: 1, At: epoch})
	}
	persists, _ = split(c.Step(core.Exited{Trial: 0, Attempt: 1, At: epoch}))
	for _, r := range persists {
		if r.Record.Status == store.Pending {
			t.Fatalf("%s added before g-0's final record was stored", r.Record.Name)
		}
	}
	for _, r := range persists {
		if r.Trial != 0 {
			continue
		}
		added, _ := split(c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch}))
		if len(added) != 1 || added[0].Record.Name != "g-2" {
			t.Fatalf("once g-0's final record was stored: %v, want g-2's pending record", added)
		}
	}
}

// Pruning decides from stored records only: a trial whose final record is on its way is not
// final yet to Prune, though an eager Next saw it so.
func TestEagerPlannerPrunesFromStoredRecords(t *testing.T) {
	c, p, persists := eagerRun(t)
	c.Step(core.MetricsReported{Trial: 1, Attempt: 1, UpTo: 1, Points: []core.MetricPoint{{Metric: "loss", Step: 0, Value: 1}}, At: epoch})
	for _, r := range persists {
		c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch})
	}
	c.Step(core.MetricsReported{Trial: 1, Attempt: 1, UpTo: 2, Points: []core.MetricPoint{{Metric: "loss", Step: 1, Value: 1}}, At: epoch})
	if fmt.Sprint(p.pruned) != "[running succeeded]" {
		t.Fatalf("g-0 as Prune saw it before and after its final record was stored: %v", p.pruned)
	}
}

// With DeferAsk, the step a trial ends in only issues its final record: the eager ask waits for
// a step of its own (Ask), which adds the next trial and sees the ended one final though its
// record is not stored yet; until that step the run is not done, whatever else holds.
func TestDeferredAskComesInAStepOfItsOwn(t *testing.T) {
	p := &windowed{n: 4, w: 2, eager: true}
	c := core.New(core.Config{RunID: "r", Jobs: 2, Planner: p, DeferAsk: true})
	persists, _ := split(c.Step(core.Begin{At: epoch}))
	for _, r := range persists {
		c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch})
	}
	for i := range 2 {
		persists, _ := split(c.Step(core.Started{Trial: i, Attempt: 1, At: epoch}))
		for _, r := range persists {
			c.Step(core.Persisted{Trial: r.Trial, Version: r.Version, At: epoch})
		}
	}
	persists, _ = split(c.Step(core.Exited{Trial: 0, Attempt: 1, At: epoch}))
	if len(persists) != 1 || persists[0].Record.Name != "g-0" || !c.AskDue() || c.Len() != 2 {
		t.Fatalf("the step g-0 ended in: records %v, ask due %v, %d trials; want g-0's final record alone, the ask due, 2 trials", persists, c.AskDue(), c.Len())
	}
	if c.Done() {
		t.Fatal("done with an ask due")
	}
	added, _ := split(c.Step(core.Ask{At: epoch}))
	if len(added) != 1 || added[0].Record.Name != "g-2" || c.AskDue() || fmt.Sprint(p.seen) != "[succeeded]" {
		t.Fatalf("the Ask step: records %v, ask due %v, g-0 seen %v; want g-2's pending record, g-0 seen succeeded", added, c.AskDue(), p.seen)
	}
	// g-2 waits for g-0's final record as well as its own.
	if _, starts := split(c.Step(core.Persisted{Trial: added[0].Trial, Version: added[0].Version, At: epoch})); len(starts) > 0 {
		t.Fatalf("g-2 started before g-0's final record was stored")
	}
	if _, starts := split(c.Step(core.Persisted{Trial: persists[0].Trial, Version: persists[0].Version, At: epoch})); fmt.Sprint(starts) != "[2]" {
		t.Fatalf("both records stored: started %v, want g-2", starts)
	}
}
