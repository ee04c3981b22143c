package plan_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/runner/plan"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/store"
)

// The properties of a search run by the core, checked over seeded random interleavings of
// attempts, metric reports and store writes (a failure prints the seed that replays it):
//   - never more than -j attempts at once, nor more search trials running than the search's
//     parallel (its trials suggested ahead wait for one of those to end);
//   - never more trials than the budget;
//   - every attempt starts after its trial's pending record is in the store, and after the final
//     records of the trials it was suggested from (the planner is eager: it sees them issued);
//   - a trial is stopped for pruning only once the store says it is pruned, and never runs again;
//   - a runner killed at random moments and resumed from what the store holds ends with the same
//     history as one never interrupted: the same params, statuses and values for each number,
//     none lost, none twice.

// trialLen is how many points each simulated trial logs.
const trialLen = 6

// objective is what a simulated trial computes of its params: deterministic, so that a trial run
// again gives what it gave before, unless noise (a runner's number, in a world whose trials give
// something else each time they run) is added.
func objective(p map[string]any, noise float64) (value float64, fails bool) {
	x, y := p["x"].(float64), p["y"].(float64)
	return (x-1)*(x-1) + (y+2)*(y+2) + noise, x > 4
}

// point is the value a simulated trial logs at step s: it falls towards its objective.
func point(p map[string]any, s int, noise float64) float64 {
	v, _ := objective(p, noise)
	return v + float64(trialLen-1-s)
}

// genSearch returns a search, the run's -j and the trials suggested ahead.
func genSearch(rng *rand.Rand) (*experiment.Search, int, int) {
	blk := map[string]any{"name": "s", "cmd": "f {{x}} {{y}}", "objective": "loss", "sampler": []string{"random", "tpe"}[rng.IntN(2)],
		"space":  map[string]any{"x": map[string]any{"low": -5, "high": 5}, "y": map[string]any{"low": -5, "high": 5}},
		"trials": 1 + rng.IntN(30), "seed": rng.IntN(1000), "pruner": []string{"none", "median"}[rng.IntN(2)]}
	if n := rng.IntN(5); n > 0 {
		blk["parallel"] = n
	}
	src, _ := json.Marshal(map[string]any{"search": blk})
	exp, err := experiment.Parse("sim.jsonnet", src)
	if err != nil {
		panic(err)
	}
	return exp.Search, 1 + rng.IntN(4), rng.IntN(2)
}

// attempt is a simulated attempt.
type attempt struct {
	trial, n int
	started  bool
	logged   int // points written
	reported int // points the feeder has stored
	stopping bool
}

// world is the store, the backend and the clock around a core.
type world struct {
	rng   *rand.Rand
	s     *experiment.Search
	jobs  int
	ahead int
	// deferAsk builds the core as the runner does (core.Config.DeferAsk), else the planner is
	// asked in the step that makes it due.
	deferAsk bool
	// window is the planner's (parallel plus ahead), parallel its cap on trials at once.
	window, parallel int
	c                *core.Core
	now              time.Time
	// began is when the run was created; grew when the plan last gained a trial.
	began, grew time.Time

	store    map[string]*store.TrialRecord // the journal: each trial's last stored record
	live     map[string][]core.MetricPoint // stored points by trial@attempt
	queued   map[int]core.Persist          // by trial: the latest record not yet written
	attempts map[int]*attempt
	timers   []core.SetTimer
	started  map[string]int // attempts started, by trial
	steps    int
	// noisy worlds add the number of runners so far (boots) to what trials compute.
	noisy bool
	boots int
}

// noise is what a trial run now adds to its objective.
func (w *world) noise() float64 {
	if !w.noisy {
		return 0
	}
	return float64(w.boots)
}

func newWorld(rng *rand.Rand, s *experiment.Search, jobs, ahead int) *world {
	start := time.Unix(1_700_000_000, 0)
	w := &world{rng: rng, s: s, jobs: jobs, ahead: ahead, now: start, began: start, store: map[string]*store.TrialRecord{},
		live: map[string][]core.MetricPoint{}, started: map[string]int{}}
	w.deferAsk = rng.IntN(2) == 1
	w.boot()
	return w
}

// boot builds a core from the journal, as a new or resumed runner does.
func (w *world) boot() {
	w.boots++
	p, added, err := plan.Resume(w.s, plan.Settings{Jobs: w.jobs, Ahead: w.ahead, Began: w.began}, w.store)
	if err != nil {
		panic(err)
	}
	w.window = p.(interface{ Window() int }).Window()
	_, w.parallel = p.(core.Capped).Cap()
	curves := map[string][]core.MetricPoint{}
	for name, rec := range w.store {
		if (rec.Status == store.Succeeded || rec.Status == store.Pruned) && len(rec.Attempts) > 0 {
			pts := w.live[fmt.Sprintf("%s@%d", name, rec.Attempts[len(rec.Attempts)-1].N)]
			if rec.Status == store.Pruned {
				pts = pts[:rec.PrunedAt]
			}
			curves[name] = pts
		}
	}
	journal := map[string]*store.TrialRecord{}
	for k, r := range w.store {
		c := *r
		journal[k] = &c
	}
	kept := map[string]bool{}
	for _, t := range added {
		kept[t.Name] = true
	}
	w.c = core.New(core.Config{RunID: "r", Backend: "sim", Trials: added, Jobs: w.jobs, Journal: journal, Planner: p, Curves: curves, Kept: kept, DeferAsk: w.deferAsk})
	w.queued, w.attempts, w.timers = map[int]core.Persist{}, map[int]*attempt{}, nil
}

func (w *world) step(ev core.Event) error {
	w.steps++
	planned := w.c.Len()
	for _, a := range w.c.Step(ev) {
		if err := w.apply(a); err != nil {
			return err
		}
	}
	// As the runner's driver does, once the step's actions are carried out.
	for w.c.AskDue() {
		for _, a := range w.c.Step(core.Ask{At: w.now}) {
			if err := w.apply(a); err != nil {
				return err
			}
		}
	}
	if w.c.Len() > planned {
		w.grew = w.now
	}
	return w.check()
}

func (w *world) apply(a core.Action) error {
	switch a := a.(type) {
	case core.Persist:
		w.queued[a.Trial] = a
	case core.StartAttempt:
		name := w.c.Trial(a.Trial).Name
		rec := w.store[name]
		if rec == nil {
			return fmt.Errorf("%s started before its record was stored", name)
		}
		if rec.Status == store.Pruned {
			return fmt.Errorf("%s started again after it was pruned", name)
		}
		if k, ok := w.s.IsTrial(name); ok {
			for n := 0; n <= k-w.window; n++ {
				if r := w.store[w.s.TrialName(n)]; r == nil || !r.Status.Final() {
					return fmt.Errorf("%s started before the final record of %s, which it was suggested from, was stored", name, w.s.TrialName(n))
				}
			}
		}
		w.attempts[a.Trial] = &attempt{trial: a.Trial, n: a.Attempt}
		w.started[name]++
	case core.StopAttempt:
		at := w.attempts[a.Trial]
		if at == nil || at.n != a.Attempt {
			return nil
		}
		if w.c.Record(a.Trial).Status == store.Pruned {
			if rec := w.store[w.c.Trial(a.Trial).Name]; rec == nil || rec.Status != store.Pruned {
				return fmt.Errorf("%s stopped for pruning before the store said so", w.c.Trial(a.Trial).Name)
			}
		}
		at.stopping = true
	case core.SetTimer:
		w.timers = append(w.timers, a)
	}
	return nil
}

func (w *world) check() error {
	running, searching := 0, 0
	for _, at := range w.attempts {
		running++
		if _, ok := w.s.IsTrial(w.c.Trial(at.trial).Name); ok {
			searching++
		}
	}
	switch {
	case running > w.jobs:
		return fmt.Errorf("%d attempts at once, -j %d", running, w.jobs)
	case searching > w.parallel:
		return fmt.Errorf("%d search trials at once, parallel %d", searching, w.parallel)
	case w.c.Len() > w.s.Trials:
		return fmt.Errorf("%d trials, budget %d", w.c.Len(), w.s.Trials)
	}
	return nil
}

// next does one random thing that can happen; false when nothing can.
func (w *world) next() (bool, error) {
	w.now = w.now.Add(time.Duration(1+w.rng.IntN(1000)) * time.Millisecond)
	var moves []func() error
	for _, i := range slices.Sorted(maps.Keys(w.queued)) {
		moves = append(moves, func() error {
			p := w.queued[i]
			delete(w.queued, i)
			rec := *p.Record
			w.store[rec.Name] = &rec
			return w.step(core.Persisted{Trial: i, Version: p.Version, At: w.now})
		})
	}
	for _, i := range slices.Sorted(maps.Keys(w.attempts)) {
		at := w.attempts[i]
		t := w.c.Trial(i)
		key := fmt.Sprintf("%s@%d", t.Name, at.n)
		switch {
		case !at.started:
			moves = append(moves, func() error {
				at.started = true
				return w.step(core.Started{Trial: i, Attempt: at.n, Handle: "h", At: w.now})
			})
		case at.reported < at.logged:
			moves = append(moves, func() error {
				n := at.reported + 1 + w.rng.IntN(at.logged-at.reported)
				var pts []core.MetricPoint
				for s := at.reported; s < n; s++ {
					pts = append(pts, core.MetricPoint{Metric: "loss", Step: int64(s), Value: point(t.Params, s, w.noise())})
				}
				w.live[key] = append(w.live[key], pts...)
				at.reported = n
				return w.step(core.MetricsReported{Trial: i, Attempt: at.n, UpTo: int64(n), Points: pts, At: w.now})
			})
		case at.logged < trialLen && !at.stopping:
			moves = append(moves, func() error { at.logged++; return nil })
		default:
			moves = append(moves, func() error {
				delete(w.attempts, i)
				v, fails := objective(t.Params, w.noise())
				ex := core.Exited{Trial: i, Attempt: at.n, At: w.now}
				switch {
				case at.stopping:
					ex.Code, ex.Reason = -1, "killed by signal 15"
				case fails:
					ex.Code = 1
				default:
					ex.Values = map[string]float64{"loss": v}
				}
				return w.step(ex)
			})
		}
	}
	if len(w.timers) > 0 {
		moves = append(moves, func() error {
			tm := w.timers[0]
			w.timers = w.timers[1:]
			return w.step(core.TimerFired{Timer: tm.Timer, At: w.now})
		})
	}
	if len(moves) == 0 {
		return false, nil
	}
	return true, moves[w.rng.IntN(len(moves))]()
}

// run steps until the core is done, or until stopAt steps (0: no limit).
func (w *world) run(stopAt int) error {
	return w.runUntil(func() bool { return stopAt > 0 && w.steps >= stopAt })
}

// runUntil steps until the core is done or stop says so.
func (w *world) runUntil(stop func() bool) error {
	if err := w.step(core.Begin{At: w.now}); err != nil {
		return err
	}
	for !w.c.Done() {
		if stop() {
			return nil
		}
		moved, err := w.next()
		if err != nil {
			return err
		}
		if !moved {
			return fmt.Errorf("stuck after %d steps: counts %+v, planned %v", w.steps, w.c.Counts(), w.c.Planned())
		}
	}
	return nil
}

// entry is one trial of a finished search, as compared between runs.
type entry struct {
	Name   string
	Params map[string]any
	Status store.Status
	Values map[string]float64
}

func (w *world) history() ([]entry, error) {
	var out []entry
	for n := 0; ; n++ {
		rec := w.store[w.s.TrialName(n)]
		if rec == nil {
			break
		}
		if !rec.Status.Final() {
			return nil, fmt.Errorf("%s is %s at the end", rec.Name, rec.Status)
		}
		out = append(out, entry{Name: rec.Name, Params: rec.Params, Status: rec.Status, Values: rec.Values})
	}
	if len(out) != len(w.store) {
		return nil, fmt.Errorf("%d records, %d trials numbered without a gap", len(w.store), len(out))
	}
	return out, nil
}

func TestSearchProperties(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 27))
		s, jobs, ahead := genSearch(rng)
		ref := newWorld(rand.New(rand.NewPCG(seed, 1)), s, jobs, ahead)
		if err := ref.run(0); err != nil {
			t.Fatalf("seed %d, uninterrupted: %v", seed, err)
		}
		want, err := ref.history()
		if err != nil {
			t.Fatalf("seed %d, uninterrupted: %v", seed, err)
		}
		if len(want) != s.Trials {
			t.Fatalf("seed %d: %d trials run, budget %d", seed, len(want), s.Trials)
		}
		// The same search, killed 1 to 3 times at random moments and resumed.
		w := newWorld(rand.New(rand.NewPCG(seed, 2)), s, jobs, ahead)
		for range 1 + rng.IntN(3) {
			if err := w.run(w.steps + 1 + rng.IntN(4*s.Trials*trialLen)); err != nil {
				t.Fatalf("seed %d, before a kill: %v", seed, err)
			}
			w.boot()
		}
		if err := w.run(0); err != nil {
			t.Fatalf("seed %d, resumed: %v", seed, err)
		}
		got, err := w.history()
		if err != nil {
			t.Fatalf("seed %d, resumed: %v", seed, err)
		}
		if !reflect.DeepEqual(got, want) {
			for n := range max(len(got), len(want)) {
				if n >= len(got) || n >= len(want) || !reflect.DeepEqual(got[n], want[n]) {
					t.Fatalf("seed %d (window %d, parallel %d, -j %d, pruner %s): first difference at trial %d:\n resumed       %+v\n uninterrupted %+v",
						seed, w.window, w.parallel, jobs, s.Pruner.Name, n, at(got, n), at(want, n))
				}
			}
		}
	}
}

func at(es []entry, n int) any {
	if n < len(es) {
		return es[n]
	}
	return "(none)"
}

// TestWindowOrder checks the ordering rule itself: trial k is suggested from exactly the trials
// numbered k-W or less, whatever order trials end in.
func TestWindowOrder(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 28))
		s, jobs, ahead := genSearch(rng)
		ref := newWorld(rand.New(rand.NewPCG(seed, 4)), s, jobs, ahead)
		if err := ref.run(0); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		hist, _ := ref.history()
		if err := followsRule(s, hist, ref.window); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// followsRule replays the sampler on a search's numbered history: each trial's params must be
// what the sampler suggests from the trials numbered its own less the window or less (their
// final values) and the params of those between.
func followsRule(s *experiment.Search, hist []entry, win int) error {
	sp, _ := search.New(s.Sampler.Name, s.Sampler.Options)
	var obs []search.Observation
	for k, e := range hist {
		req := search.Request{Space: s.Space, Objectives: s.Objectives, Seed: s.Seed, Number: k, History: obs[:max(0, k-win+1)]}
		for n := max(0, k-win+1); n < k; n++ {
			req.Pending = append(req.Pending, plan.Coerce(s.Space, hist[n].Params))
		}
		params, err := sp.Suggest(req)
		if err != nil {
			return err
		}
		if !reflect.DeepEqual(params, plan.Coerce(s.Space, e.Params)) {
			return fmt.Errorf("trial %d has %v; the rule gives %v", k, e.Params, params)
		}
		o := search.Observation{Number: k, Params: plan.Coerce(s.Space, e.Params), State: search.Failed}
		if v, ok := e.Values["loss"]; ok && !math.IsNaN(v) && e.Status == store.Succeeded {
			o.State, o.Values = search.Complete, []float64{v}
		} else if e.Status == store.Pruned {
			o.State = search.Pruned
			if ok {
				o.Values = []float64{v}
			}
		}
		obs = append(obs, o)
	}
	return nil
}

// TestResumedHistoryFollowsTheRule kills and resumes searches whose trials give something else
// each time they run: the history a resumed search ends with must still follow the window rule,
// so no trial kept from before a kill was suggested from a final record the store lost (the
// trial it came from ran again, and gave another value).
func TestResumedHistoryFollowsTheRule(t *testing.T) {
	seeds := 300
	if testing.Short() {
		seeds = 50
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 29))
		s, jobs, ahead := genSearch(rng)
		w := newWorld(rand.New(rand.NewPCG(seed, 5)), s, jobs, ahead)
		w.noisy = true
		for range 1 + rng.IntN(4) {
			if err := w.run(w.steps + 1 + rng.IntN(2*s.Trials*trialLen)); err != nil {
				t.Fatalf("seed %d, before a kill: %v", seed, err)
			}
			w.boot()
		}
		if err := w.run(0); err != nil {
			t.Fatalf("seed %d, resumed: %v", seed, err)
		}
		hist, err := w.history()
		if err != nil {
			t.Fatalf("seed %d, resumed: %v", seed, err)
		}
		if err := followsRule(s, hist, w.window); err != nil {
			t.Fatalf("seed %d (window %d, -j %d): %v", seed, w.window, jobs, err)
		}
	}
}

// TestWallAcrossResume: a search's wall budget counts from the run's start, so a runner killed
// part way and resumed after a while adds no trial once the budget is spent, however long it
// has itself been up; a runner that counted from its own start would go on for a second
// budget.
func TestWallAcrossResume(t *testing.T) {
	src, _ := json.Marshal(map[string]any{"search": map[string]any{"name": "s", "cmd": "f {{x}} {{y}}", "objective": "loss", "sampler": "random",
		"space":  map[string]any{"x": map[string]any{"low": -5, "high": 5}, "y": map[string]any{"low": -5, "high": 5}},
		"trials": 100_000, "parallel": 2, "wall": "100s"}})
	exp, err := experiment.Parse("wall.jsonnet", src)
	if err != nil {
		t.Fatal(err)
	}
	const wall = 100 * time.Second
	for seed := range uint64(20) {
		w := newWorld(rand.New(rand.NewPCG(seed, 9)), exp.Search, 2, int(seed%2))
		killAt := time.Duration(30+3*seed) * time.Second
		if err := w.runUntil(func() bool { return w.now.Sub(w.began) >= killAt }); err != nil {
			t.Fatalf("seed %d, before the kill: %v", seed, err)
		}
		w.now = w.now.Add(time.Duration(seed%3) * 5 * time.Second) // the run stays stopped a while
		w.boot()
		if err := w.run(0); err != nil {
			t.Fatalf("seed %d, resumed: %v", seed, err)
		}
		if w.grew.Sub(w.began) >= wall {
			t.Fatalf("seed %d: killed at %v, the plan gained a trial %v after the run began; the wall budget is %v",
				seed, killAt, w.grew.Sub(w.began), wall)
		}
		if _, err := w.history(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}
