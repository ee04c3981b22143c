package core

import (
	"fmt"
	"time"

	"github.com/jikken-dev/jikken/record"
	"github.com/jikken-dev/jikken/trial"
)

// Planner grows a run's plan while it runs (a search suggesting trials from the results of
// earlier ones). It must be pure: its answer depends only on the View, so that a resumed run,
// whose core is rebuilt from the journal, asks the same questions and gets the same answers.
type Planner interface {
	// Next is asked after Begin and each time a trial's final record is in the store (an Eager
	// planner also when the record is issued, in the same step as the trial's end); it
	// returns the trials to add (in order), pending trials to drop, and whether the plan is
	// complete (nothing will ever be added: the run ends once every trial is final). A planner
	// that adds nothing while every trial is final and stored ends the plan too, since nothing
	// would ask it again. The View's slices are the core's: read them, keep none of them.
	Next(v View) Decision
}

// Eager is implemented by planners that may be asked as soon as a trial's final record is issued,
// before the store holds it: the trial that ends and the trials it lets the planner add then go
// to the store together, one write where waiting would take two in a row. Nothing is lost for
// it: a trial such an ask adds starts only once the records the planner saw are stored as well
// as its own, so whatever a started trial was suggested from survives a crash. A crash before
// then may leave a trial's pending record stored without the final records it was suggested
// from; the planner's resume must not keep such a trial (one that never started, suggested from
// trials whose records are not all final), but suggest it again from what the store holds.
// Pruning is unchanged: Prune sees only stored records.
type Eager interface {
	Planner
	// Eager reports whether to ask early.
	Eager() bool
}

// Capped is implemented by planners that add trials ahead of a free slot (a search that suggests
// the next trial while every slot is busy, so that the slot that frees starts it at once) but
// must not run more than some of them at once: at most n trials of group run at a time,
// whatever the run's -j. The answer must not change during a run.
type Capped interface {
	Planner
	Cap() (group string, n int)
}

// Pruning is implemented by planners that stop trials early from their intermediate values. The
// core asks it once per new point of a running trial that is not being stopped, with curves
// holding every trial's points of its current (or last) attempt, the asked trial's cut at that
// point, so that how the points were batched on their way changes nothing.
type Pruning interface {
	Prune(v View, trial int, curves map[int][]MetricPoint) (stop bool, why string)
}

// MetricPoint is one value a trial logged.
type MetricPoint struct {
	Metric string
	Step   int64
	Value  float64
}

// View is the run as a planner sees it.
type View struct {
	// Trials are every trial of the plan so far, by index. A trial's Status and Values are
	// those of its last record in the store: a trial is final here once its final record is
	// durable, so whatever a planner decides from it survives a crash. An Eager planner's Next
	// sees a trial final as soon as its final record is issued instead.
	Trials []TrialView
	// Now is the time of the event being handled; Began that of this runner's Begin.
	Now, Began time.Time
	// Slots is the run's cap on trials at once (-j).
	Slots int
}

// TrialView is one trial as a planner sees it.
type TrialView struct {
	Index  int
	Name   string
	Group  string
	Params map[string]any
	Seed   *int64
	Status record.Status
	// Values are the trial's final metric values (the last value of each metric), once final.
	Values map[string]float64
}

// Decision is a planner's answer.
type Decision struct {
	// Add are trials to append to the plan; their Index is set by the core. Each is journaled
	// (its pending record stored) before its first attempt starts. They may wait for trials of
	// the plan to succeed (After), but not depend on them otherwise.
	Add []trial.Trial
	// Drop are trials not to run, with why: a pending one ends eliminated (final, not a
	// failure); one that has started runs on, and its record notes why (Eliminated).
	Drop     []Drop
	Complete bool
	// Abort, with Complete, says why the plan cannot go on as it should (a search whose
	// trials log no objective): the run ends failed, with that reason. Field names the field
	// of the experiment at fault when the experiment is ("search.objective"), or is empty.
	Abort, Field string
}

// Drop names a trial a planner gives up, and why.
type Drop struct {
	Index  int
	Reason string
}

// Trial returns trial i of the plan as the core holds it (Len trials: the plan grows).
func (c *Core) Trial(i int) *trial.Trial { return c.ts[i].spec }

// Len is how many trials the plan has now.
func (c *Core) Len() int { return len(c.ts) }

// PlanAborted is why the planner ended the plan early as a failure, or "", and the field of the
// experiment at fault, if any.
func (c *Core) PlanAborted() (why, field string) { return c.planAbort, c.planField }

// Planned reports whether the plan is complete: no planner, one that said so, or a halted run,
// whose planner is asked nothing more.
func (c *Core) Planned() bool { return c.cfg.Planner == nil || c.planDone || c.halted }

// viewOf is trial t as a planner sees it.
func viewOf(t *trialState) TrialView {
	return TrialView{Index: t.i, Name: t.spec.Name, Group: t.spec.Group, Params: t.spec.Params, Seed: t.spec.Seed,
		Status: t.rec.Status, Values: t.rec.Values}
}

// ask asks the planner what to add, and adds it.
func (c *Core) ask() {
	if c.cfg.Planner == nil || c.planDone || c.halted || !c.begun {
		return
	}
	// An eager planner sees the trials whose final records are on their way to the store as
	// final; what it adds waits for those records (basis) as well as its own.
	var basis []int
	var saved []TrialView
	for _, i := range c.early {
		if t := c.ts[i]; t.early {
			basis = append(basis, i)
			saved = append(saved, c.view[i])
			c.view[i].Status, c.view[i].Values = t.rec.Status, t.rec.Values
		}
	}
	c.early = append(c.early[:0], basis...)
	d := c.cfg.Planner.Next(View{Trials: c.view, Now: c.now, Began: c.began, Slots: c.cfg.Jobs})
	for k, i := range basis {
		c.view[i] = saved[k] // Prune sees stored records only
	}
	for _, dr := range d.Drop {
		if dr.Index >= 0 && dr.Index < len(c.ts) {
			switch t := c.ts[dr.Index]; {
			case t.ph == idle:
				t.retrying = false
				c.finish(t, record.Eliminated, dr.Reason)
			case t.rec.Status != record.Eliminated && t.rec.Eliminated == "" && !t.svc:
				// Started already: noted once (a planner may name it again), not reported,
				// since its state did not change.
				t.rec.Eliminated = dr.Reason
				c.persist(t)
				t.unreported = t.unreported[:len(t.unreported)-1]
			}
		}
	}
	for _, spec := range d.Add {
		t := c.add(spec)
		t.basis = len(basis)
		for _, i := range basis {
			c.ts[i].waiters = append(c.ts[i].waiters, t.i)
		}
	}
	if d.Complete || (len(d.Add) == 0 && c.open == 0 && c.unsettled == 0) {
		c.planDone, c.planAbort, c.planField = true, d.Abort, d.Field
	}
}

// add appends a trial to the plan and persists its pending record: it starts once that record
// is stored (persisted marks it journaled).
func (c *Core) add(spec trial.Trial) *trialState {
	spec.Index = len(c.ts)
	sp := &spec
	t := &trialState{i: spec.Index, spec: sp, tries: spec.Retries + 1, req: c.requestOf(sp)}
	t.rec = record.Trial{Run: c.cfg.RunID, Name: spec.Name, Index: spec.Index, Group: spec.Group,
		Status: record.Pending, Params: spec.Params, Seed: spec.Seed, Image: spec.Image, Backend: c.cfg.Backend}
	c.ts = append(c.ts, t)
	c.index[spec.Name] = t.i
	for _, name := range spec.After {
		j, ok := c.index[name]
		if !ok {
			continue
		}
		u := c.ts[j]
		t.after = append(t.after, j)
		u.afterDeps = append(u.afterDeps, t.i)
		if !u.okDurable {
			t.waitAfter++
		}
		if u.ph == final && u.rec.Status != record.Succeeded && t.afterBlocked == "" {
			t.afterBlocked = fmt.Sprintf("after: %s %s", u.spec.Name, u.rec.Status)
		}
	}
	c.view = append(c.view, viewOf(t))
	if c.live != nil {
		c.live = append(c.live, LiveMetrics{})
	}
	c.counts.Total++
	c.open++
	t.pending = true
	c.place(t)
	c.persist(t)
	return t
}

// endedView notes, for an eager planner, that t's final record was just issued: the planner is
// asked at the end of the step (not from inside whatever ended t, which may be an ask), and
// sees t final until the record is stored (earlyStored).
func (c *Core) endedView(t *trialState) {
	if !c.eager || t.durable == t.ver {
		return
	}
	t.early, t.earlyVer = true, t.ver
	c.early = append(c.early, t.i)
	c.reask = true
}

// earlyStored releases the trials added from t's final record before it was stored, once the
// store holds that record (or a later one).
func (c *Core) earlyStored(t *trialState) {
	if !t.early || t.durable < t.earlyVer {
		return
	}
	t.early = false
	for _, i := range t.waiters {
		if w := c.ts[i]; w.basis > 0 {
			w.basis--
			if w.basis == 0 {
				c.markDirty(w)
			}
		}
	}
	t.waiters = nil
}

// settledView updates a planner's view of t once its latest record is in the store, and asks
// the planner again when that record is final.
func (c *Core) settledView(t *trialState) {
	if c.cfg.Planner == nil {
		return
	}
	c.view[t.i].Status, c.view[t.i].Values = t.rec.Status, t.rec.Values
	if t.ph != final && t.pruneVer > 0 {
		// Pruned, but its attempt still ends: it holds its place in the window until then.
		c.view[t.i].Status = record.Running
	}
	if t.ph == final {
		c.ask()
	}
}

// pointsReported keeps the new points of a trial's current attempt and asks the planner, point
// by point, whether to prune it. A decision is persisted first (status pruned, with why); the
// attempt is stopped once that record is in the store (see persisted).
func (c *Core) pointsReported(t *trialState, pts []MetricPoint) {
	pr, ok := c.cfg.Planner.(Pruning)
	if !ok || len(pts) == 0 {
		return
	}
	if c.curveOf[t.i] != t.attempt {
		c.keepCurve(t, nil)
	}
	for _, p := range pts {
		if t.pruneVer > 0 {
			return // its curve ends where it was judged, as its record says (PrunedAt)
		}
		c.curves[t.i] = append(c.curves[t.i], p)
		if t.stop != noStop || c.halted || (t.ph != running && t.ph != starting) {
			continue
		}
		stop, why := pr.Prune(View{Trials: c.view, Now: c.now, Began: c.began, Slots: c.cfg.Jobs}, t.i, c.curves)
		if !stop {
			continue
		}
		t.rec.Status, t.rec.Reason = record.Pruned, why
		t.rec.Values = lastValues(c.curves[t.i])
		t.rec.PrunedAt = int64(len(c.curves[t.i]))
		t.pruneWhy = why
		c.persist(t)
		// Reported once, when the trial has ended pruned: the decision is not an end yet.
		t.unreported = t.unreported[:len(t.unreported)-1]
		t.pruneVer = t.ver
	}
}

// keepCurve makes pts the curve of t's current (or last) attempt.
func (c *Core) keepCurve(t *trialState, pts []MetricPoint) {
	if c.curves == nil {
		c.curves, c.curveOf = map[int][]MetricPoint{}, map[int]int{}
	}
	c.curves[t.i], c.curveOf[t.i] = pts, t.attempt
}

// lastValues is the last value of each metric of a curve.
func lastValues(pts []MetricPoint) map[string]float64 {
	out := map[string]float64{}
	for _, p := range pts {
		out[p.Metric] = p.Value
	}
	return out
}
