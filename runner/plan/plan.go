// Package plan grows a run's plan from an experiment's search block: it is the core.Planner
// that asks a sampler (package search) for the next trial's params and a pruner (package prune)
// whether a running trial should stop.
//
// Its order makes a search reproducible on every backend and across resumes. At most P trials
// of the search run at once (its parallel, else the run's -j), and the search suggests A more
// (Settings.Ahead, 1 since runs recorded it): with the window W = P+A, trial k is suggested
// only once every trial numbered k-W or less has a final record, and the sampler is shown
// exactly those trials (0..k-W, by number) as history and the params of trials k-W+1..k-1 as
// pending. What a suggestion depends on is thus fixed by the numbers, not by which trial
// happened to end first. The A trials suggested ahead wait, journaled, for one of the P to
// end, and start at once when it does: the suggestion and its durable write are off the path
// from a trial's end to the next start (core.Capped holds the P). The planner is eager
// (core.Eager): it suggests as soon as those final records are issued, and trial k starts
// once they and its own pending record are in the store.
// Pruning follows the same rule: trial k is judged, point by point, against the curves of the
// finished trials numbered k-W or less (all final before k starts).
package plan

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jikken-dev/jikken/experiment"
	"github.com/jikken-dev/jikken/prune"
	"github.com/jikken-dev/jikken/runner/core"
	"github.com/jikken-dev/jikken/search"
	"github.com/jikken-dev/jikken/store"
)

// Search is the planner of a search block. Build it with New or Resume.
type Search struct {
	spec    *experiment.Search
	sampler search.Sampler
	// window is how many trials are suggested without the results of each other (parallel
	// plus ahead); parallel how many run at once.
	window, parallel int
	// began is when the run's wall budget started (see Began); zero: the runner's start.
	began time.Time
	// numbers maps a search trial's number to its index in the plan, as far as the view has
	// been read (views only grow).
	numbers []int
	seen    int
	// suggested are the params of trials 0..len(numbers)-1, typed as the space says.
	suggested []search.Params
	// obs are the observations of trials 0..len(obs)-1, all final; succeeded says which of
	// them succeeded.
	obs       []search.Observation
	succeeded []bool
	// aborted is why the search stopped early, once it has; checked is set once the first
	// window of trials was looked at for the objectives.
	aborted string
	checked bool
}

// pruning is a Search whose trials a pruner may stop.
type pruning struct {
	*Search
	pruner prune.Pruner
}

// Settings are what a run adds to its search block; its manifest records them (SettingsOf), so
// that a resumed run plans as the first one did.
type Settings struct {
	// Jobs is the run's -j: how many trials run at once when the search sets no parallel.
	Jobs int
	// Ahead is how many trials are suggested beyond those that run at once (Ahead, for runs
	// that record it; 0 for older runs).
	Ahead int
	// Began is when the search's wall budget started (Began); zero: the runner's start.
	Began time.Time
}

// Ahead is the Settings.Ahead of a new run.
const Ahead = 1

// SettingsOf are the settings run m was created with.
func SettingsOf(m *store.Manifest) Settings {
	return Settings{Jobs: m.Options.Jobs, Ahead: m.Options.SearchAhead, Began: Began(m)}
}

// New builds the planner of search s for a run with settings set. It returns a core.Planner,
// which also implements core.Capped, and core.Pruning when s has a pruner.
func New(s *experiment.Search, set Settings) (core.Planner, error) {
	sp, err := search.New(s.Sampler.Name, s.Sampler.Options)
	if err != nil {
		return nil, fmt.Errorf("search %s: sampler: %w", s.Name, err)
	}
	par := s.Parallel
	if par < 1 {
		par = max(1, set.Jobs)
	}
	p := &Search{spec: s, sampler: sp, parallel: par, window: par + max(0, set.Ahead), began: set.Began}
	if s.Pruner.Name == "" || s.Pruner.Name == "none" {
		return p, nil
	}
	pr, err := prune.New(s.Pruner.Name, s.Pruner.Options)
	if err != nil {
		return nil, fmt.Errorf("search %s: pruner: %w", s.Name, err)
	}
	return pruning{Search: p, pruner: pr}, nil
}

// Resume builds the planner of search s as New does, and the trials it had added before, rebuilt
// from their records (journal: an earlier runner's records by trial name), in number order. A
// number missing from the journal ends the list: trials after it were never stored. So does a
// trial that never started whose window of history (the trials numbered its own less the window
// or less) is not all final in the journal: the planner is eager (core.Eager), so it was
// suggested from final records that did not reach the store, and is suggested again from those
// that did. Trials after it cannot have started either: their history holds its own. The
// search's wall budget counts from set.Began (see Began; zero: from this runner's start), so
// that a resumed run does not get the whole budget again.
func Resume(s *experiment.Search, set Settings, journal map[string]*store.TrialRecord) (core.Planner, []experiment.Trial, error) {
	p, err := New(s, set)
	if err != nil {
		return nil, nil, err
	}
	w := p.(interface{ Window() int }).Window()
	var trials []experiment.Trial
	// done counts the trials from number 0 whose records are final for good (a killed trial
	// runs again).
	done := 0
	for n := 0; ; n++ {
		rec := journal[s.TrialName(n)]
		if rec == nil {
			break
		}
		if rec.Status == store.Pending && len(rec.Attempts) == 0 && done < n-w+1 {
			break
		}
		if done == n && rec.Status.Final() && rec.Status != store.Killed {
			done++
		}
		t, err := s.Trial(n, Coerce(s.Space, rec.Params))
		if err != nil {
			return nil, nil, fmt.Errorf("search %s: rebuild trial %s from its record: %w", s.Name, rec.Name, err)
		}
		trials = append(trials, t)
	}
	return p, trials, nil
}

// Began is when the wall budget of run m's search started: the run's creation, or its latest
// extension ('jikken extend' asks for more of a search, so it gets a budget of its own). Time
// the run spent stopped between an interruption and its resume counts: the budget is the
// researcher's wall clock, not the runners' up time.
func Began(m *store.Manifest) time.Time {
	t := m.Created
	for _, e := range m.Extensions {
		if e.At.After(t) {
			t = e.At
		}
	}
	return t
}

// MinChecked is how many trials at least a search looks at before it stops for want of its
// objective.
const MinChecked = 3

// Eager implements core.Eager: a search is asked as soon as a trial's final record is issued, so
// that record and the pending records of the trials it lets in are stored in one write (Resume
// discards what a crash left of a suggestion whose history was not stored).
func (p *Search) Eager() bool { return true }

// Window is how many trials are suggested without the results of each other: those that run at
// once and those suggested ahead.
func (p *Search) Window() int { return p.window }

// Cap implements core.Capped: at most the search's parallel trials run at once.
func (p *Search) Cap() (string, int) { return p.spec.Name, p.parallel }

// Next implements core.Planner.
func (p *Search) Next(v core.View) core.Decision {
	p.read(v)
	k := len(p.numbers)
	if p.aborted != "" || k >= p.spec.Trials {
		return core.Decision{Complete: true}
	}
	p.advance(v)
	if why := p.noObjective(); why != "" {
		p.aborted = why
		field := "search.objective"
		if len(p.spec.Objectives) > 1 {
			field = "search.objectives"
		}
		return core.Decision{Complete: true, Abort: why, Field: field}
	}
	if p.spec.Wall > 0 && v.Now.Sub(p.wallStart(v)) >= time.Duration(p.spec.Wall) {
		return core.Decision{Complete: true}
	}
	var d core.Decision
	pending := slices.Clone(p.suggested[max(0, k-p.window+1):k])
	for ; k < p.spec.Trials && k-p.window < len(p.obs); k++ {
		req := search.Request{Space: p.spec.Space, Objectives: p.spec.Objectives, Seed: p.spec.Seed, Number: k,
			History: p.obs[:max(0, k-p.window+1)], Pending: pending}
		params, err := p.sampler.Suggest(req)
		if errors.Is(err, search.ErrExhausted) {
			d.Complete = true
			break
		}
		if err != nil {
			p.aborted = fmt.Sprintf("search %s: the %s sampler failed at trial %d: %v", p.spec.Name, p.spec.Sampler.Name, k, err)
			return core.Decision{Complete: true, Abort: p.aborted}
		}
		t, err := p.spec.Trial(k, params)
		if err != nil {
			p.aborted = fmt.Sprintf("search %s: trial %d: %v", p.spec.Name, k, err)
			return core.Decision{Complete: true, Abort: p.aborted}
		}
		d.Add = append(d.Add, t)
		if pending = append(pending, params); len(pending) > p.window-1 {
			pending = pending[1:]
		}
	}
	if k >= p.spec.Trials {
		d.Complete = true
	}
	return d
}

// wallStart is when the wall budget started: the run's start if known, else this runner's.
func (p *Search) wallStart(v core.View) time.Time {
	if p.began.IsZero() {
		return v.Began
	}
	return p.began
}

// read notes the search trials the view holds beyond those seen.
func (p *Search) read(v core.View) {
	for ; p.seen < len(v.Trials); p.seen++ {
		t := &v.Trials[p.seen]
		if t.Group != p.spec.Name {
			continue
		}
		if n, ok := p.spec.IsTrial(t.Name); ok && n == len(p.numbers) {
			p.numbers = append(p.numbers, p.seen)
			p.suggested = append(p.suggested, p.params(t.Params))
		}
	}
}

// advance extends the observations over the trials that are final, in number order.
func (p *Search) advance(v core.View) {
	for len(p.obs) < len(p.numbers) {
		t := &v.Trials[p.numbers[len(p.obs)]]
		if !t.Status.Final() {
			return
		}
		p.obs = append(p.obs, p.observe(len(p.obs), t))
		p.succeeded = append(p.succeeded, t.Status == store.Succeeded)
	}
}

// observe is a final trial as the sampler sees it.
func (p *Search) observe(n int, t *core.TrialView) search.Observation {
	o := search.Observation{Number: n, Params: p.params(t.Params), State: search.Failed}
	values, complete := make([]float64, len(p.spec.Objectives)), true
	for i, obj := range p.spec.Objectives {
		x, ok := t.Values[obj.Metric]
		complete = complete && ok && !math.IsNaN(x)
		values[i] = x
	}
	switch {
	case t.Status == store.Succeeded && complete:
		o.State, o.Values = search.Complete, values
	case t.Status == store.Pruned:
		o.State = search.Pruned
		if complete {
			o.Values = values
		}
	}
	for _, c := range p.spec.Constraints {
		x, ok := t.Values[c]
		if !ok || math.IsNaN(x) {
			x = math.Inf(1) // a constraint never logged is not met
		}
		o.Constraints = append(o.Constraints, x)
	}
	return o
}

// noObjective says why the search stops when none of its first trials (a window of them, at
// least MinChecked) logged the objectives though some succeeded: a misspelt metric would
// otherwise spend the whole budget learning nothing. Trials that failed prove nothing about the
// metric: the search goes on while they are all it has.
func (p *Search) noObjective() string {
	first := min(max(p.window, MinChecked), p.spec.Trials)
	if p.checked || len(p.obs) < first {
		return ""
	}
	p.checked = true
	failed := 0
	for k, o := range p.obs[:first] {
		if o.State == search.Complete || o.Values != nil {
			return ""
		}
		if !p.succeeded[k] {
			failed++
		}
	}
	if failed == first {
		return ""
	}
	var names []string
	for _, o := range p.spec.Objectives {
		names = append(names, o.Metric)
	}
	why := ""
	if failed > 0 {
		why = fmt.Sprintf(" (%d of them failed)", failed)
	}
	return fmt.Sprintf("search %s stopped: none of its first %d trials (%s..%s%s) logged the objective %s; check the metric's name, "+
		"or log it (print '::metric %s=VALUE' or write $JIKKEN_OUTPUT_DIR/metrics.jsonl); 'jikken logs RUN %s' shows what the first trial printed",
		p.spec.Name, first, p.spec.TrialName(0), p.spec.TrialName(first-1), why, strings.Join(names, ", "), names[0], p.spec.TrialName(0))
}

// params are the space's params of a trial's params, typed as the space says.
func (p *Search) params(all map[string]any) search.Params {
	return Coerce(p.spec.Space, all)
}

// Coerce returns the params of the space found in all, typed as a sampler suggests them: a
// record read back from JSON has float64 for every number.
func Coerce(sp search.Space, all map[string]any) search.Params {
	out := search.Params{}
	for _, prm := range sp.Params {
		v, ok := all[prm.Name]
		if !ok {
			continue
		}
		switch prm.Kind {
		case search.Int:
			if f, isF := v.(float64); isF {
				v = int64(math.Round(f))
			}
		case search.Float:
			if i, isI := v.(int64); isI {
				v = float64(i)
			}
		case search.Categorical:
			s := experiment.ParamString(v)
			if i := slices.IndexFunc(prm.Choices, func(c any) bool { return experiment.ParamString(c) == s }); i >= 0 {
				v = prm.Choices[i]
			}
		}
		out[prm.Name] = v
	}
	return out
}

// Prune implements core.Pruning: trial is judged on its first objective against the curves of
// the finished search trials numbered at most its own less the window.
func (p pruning) Prune(v core.View, trial int, curves map[int][]core.MetricPoint) (bool, string) {
	p.read(v)
	t := &v.Trials[trial]
	k, ok := p.spec.IsTrial(t.Name)
	if !ok || t.Group != p.spec.Name || len(p.spec.Objectives) == 0 {
		return false, ""
	}
	obj := p.spec.Objectives[0]
	if last := curves[trial]; len(last) == 0 || last[len(last)-1].Metric != obj.Metric {
		return false, "" // the curve it is judged on has not moved
	}
	var cs []prune.Curve
	for n := 0; n <= k-p.window && n < len(p.numbers); n++ {
		u := &v.Trials[p.numbers[n]]
		if u.Status != store.Succeeded && u.Status != store.Pruned {
			continue
		}
		cs = append(cs, prune.Curve{Number: n, Points: pointsOf(curves[p.numbers[n]], obj.Metric), Done: u.Status == store.Succeeded, Pruned: u.Status == store.Pruned})
	}
	own := pointsOf(curves[trial], obj.Metric)
	if len(own) == 0 {
		return false, ""
	}
	cs = append(cs, prune.Curve{Number: k, Points: own})
	return p.pruner.Prune(k, cs, obj.Direction == search.Minimize)
}

func pointsOf(pts []core.MetricPoint, metric string) []prune.Point {
	var out []prune.Point
	for _, pt := range pts {
		if pt.Metric == metric {
			out = append(out, prune.Point{Step: pt.Step, Value: pt.Value})
		}
	}
	return out
}

// Entry is one trial of a search as its records tell it, for reading a search's history.
type Entry struct {
	Number int
	Name   string
	Status store.Status
	Reason string
	// Observation is the trial as the sampler sees it; only meaningful once Status is final.
	Observation search.Observation
}

// History reads a search's trials from their records (by trial name), in number order, up to
// the first number that has none.
func History(s *experiment.Search, recs map[string]*store.TrialRecord) []Entry {
	p := &Search{spec: s}
	var out []Entry
	for n := 0; ; n++ {
		rec := recs[s.TrialName(n)]
		if rec == nil {
			return out
		}
		tv := core.TrialView{Name: rec.Name, Group: rec.Group, Params: rec.Params, Status: rec.Status, Values: rec.Values}
		out = append(out, Entry{Number: n, Name: rec.Name, Status: rec.Status, Reason: rec.Reason, Observation: p.observe(n, &tv)})
	}
}

// Best returns the numbers of a search's best trials from its history, in increasing order: the
// best one with one objective, the Pareto front with several (search.Best over the trials that
// have ended). 'jikken results', 'jikken search show' and the browser's run page all ask it, so
// they name the same trials.
func Best(s *experiment.Search, hist []Entry) []int {
	var obs []search.Observation
	for _, e := range hist {
		if e.Status.Final() {
			obs = append(obs, e.Observation)
		}
	}
	return search.Best(s.Objectives, obs)
}
