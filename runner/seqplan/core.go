// This file joins the planner to the runner core's Planner interface (runner/core/plan.go, from
// the searchcore branch). Remove the build constraint above once that branch is merged.

package seqplan

import "github.com/jikken-dev/jikken/runner/core"

// Next implements core.Planner.
func (p *Planner) Next(v core.View) core.Decision {
	ts := make([]Trial, len(v.Trials))
	for i, t := range v.Trials {
		ts[i] = Trial{Name: t.Name, Seed: t.Seed, Status: t.Status, Values: t.Values}
	}
	d := p.Decide(ts)
	return core.Decision{Add: d.Add, Complete: d.Complete, Abort: d.Abort}
}

var _ core.Planner = (*Planner)(nil)
